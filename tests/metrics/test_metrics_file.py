"""The `--metrics FILE` format: write and read back, timestamps (Z, offsets,
nanoseconds, UTC), values loaded as they are (NaN, negative), and the errors for
malformed files, each naming the entry (`pods["ns/name"].cpu`).
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import json
import math
import pathlib
from typing import Any

import pytest

from loadaware import errors, metrics
from tests.lib.builders import NOW, GiB, MiB, make_usage, sample

DESIGN_EXAMPLE = {
    "collectedAt": "2026-11-29T08:00:00Z",
    "nodes": {"node-a": {"cpu": 3.2, "memory": 12884901888, "timestamp": "2026-11-29T07:59:45Z"}},
    "pods": {
        "shop/web-7d9f-abcde": {
            "cpu": 0.45,
            "memory": 536870912,
            "timestamp": "2026-11-29T07:59:45Z",
        }
    },
}


def write_json(tmp_path: pathlib.Path, data: Any) -> pathlib.Path:
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def load_problems(tmp_path: pathlib.Path, data: Any) -> str:
    with pytest.raises(errors.InputError) as info:
        metrics.load_metrics_file(write_json(tmp_path, data))
    assert info.value.exit_code == 2
    return str(info.value)


def with_pod(**fields: Any) -> dict[str, Any]:
    entry = {"cpu": 0.45, "memory": 536870912, "timestamp": "2026-11-29T07:59:45Z"} | fields
    return {**DESIGN_EXAMPLE, "pods": {"shop/web": {k: v for k, v in entry.items() if v != ...}}}


def test_design_example_loads(tmp_path: pathlib.Path) -> None:
    usage = metrics.load_metrics_file(write_json(tmp_path, DESIGN_EXAMPLE))
    sampled = datetime.datetime(2026, 11, 29, 7, 59, 45, tzinfo=datetime.UTC)
    assert usage.collected_at == datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)
    assert usage.nodes["node-a"] == metrics.UsageSample(
        cpu_cores=3.2, memory_bytes=12 * GiB, timestamp=sampled
    )
    assert usage.pods["shop/web-7d9f-abcde"].cpu_cores == 0.45
    assert usage.pods["shop/web-7d9f-abcde"].memory_bytes == 512 * MiB


def test_round_trip_through_a_file(tmp_path: pathlib.Path) -> None:
    usage = make_usage(
        {"n1": sample(3.5, 12 * GiB), "n2": sample(0.25, 1.5 * GiB, age_seconds=0.5)},
        {"default/web-1": sample(0.4, 300 * MiB), "shop/cart-2": sample(1.0, 0)},
    )
    path = tmp_path / "m.json"
    metrics.write_metrics_file(usage, path)
    assert metrics.load_metrics_file(path) == usage
    assert path.read_text(encoding="utf-8").endswith("}\n")


def test_round_trip_through_a_stream(tmp_path: pathlib.Path) -> None:
    usage = make_usage({"n1": sample(1.0, GiB)})
    stream = io.StringIO()
    metrics.write_metrics_file(usage, stream)
    path = tmp_path / "m.json"
    path.write_text(stream.getvalue(), encoding="utf-8")
    assert metrics.load_metrics_file(path) == usage


def test_usage_to_json_writes_the_design_form() -> None:
    usage = make_usage({"node-a": sample(3.2, 12 * GiB)}, {"shop/web": sample(0.45, 512 * MiB)})
    assert metrics.usage_to_json(usage) == {
        "collectedAt": "2026-11-29T08:00:00Z",
        "nodes": {
            "node-a": {"cpu": 3.2, "memory": 12884901888, "timestamp": "2026-11-29T07:59:45Z"}
        },
        "pods": {
            "shop/web": {"cpu": 0.45, "memory": 536870912, "timestamp": "2026-11-29T07:59:45Z"}
        },
    }


def test_usage_to_json_sorts_names_and_keeps_microseconds() -> None:
    usage = make_usage({"b": sample(1, 1, age_seconds=0.25), "a": sample(1, 1)})
    data = metrics.usage_to_json(usage)
    assert list(data["nodes"]) == ["a", "b"]
    assert data["nodes"]["b"]["timestamp"] == "2026-11-29T07:59:59.750000Z"


def test_writing_a_naive_time_is_a_bug() -> None:
    usage = metrics.Usage(collected_at=NOW.replace(tzinfo=None))
    with pytest.raises(ValueError, match="no time zone"):
        metrics.usage_to_json(usage)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("2026-11-29T07:59:45Z", (7, 59, 45, 0), id="zulu"),
        pytest.param("2026-11-29t07:59:45z", (7, 59, 45, 0), id="lower-case"),
        pytest.param("2026-11-29T08:59:45+01:00", (7, 59, 45, 0), id="offset-to-utc"),
        pytest.param("2026-11-29T02:29:45-05:30", (7, 59, 45, 0), id="negative-offset"),
        pytest.param("2026-11-29T07:59:45.5Z", (7, 59, 45, 500000), id="fraction"),
        pytest.param("2026-11-29T07:59:45.123456789Z", (7, 59, 45, 123456), id="nanoseconds"),
    ],
)
def test_timestamps_are_utc(tmp_path: pathlib.Path, text: str, expected: tuple[int, ...]) -> None:
    usage = metrics.load_metrics_file(write_json(tmp_path, with_pod(timestamp=text)))
    moment = usage.pods["shop/web"].timestamp
    assert moment.tzinfo == datetime.UTC
    assert (moment.hour, moment.minute, moment.second, moment.microsecond) == expected


def test_nan_and_negative_values_are_loaded_as_they_are(tmp_path: pathlib.Path) -> None:
    # The plausibility check refuses these with its own reason code; the file is fine.
    path = tmp_path / "m.json"
    text = json.dumps(with_pod(cpu=-0.5)).replace('"memory": 536870912', '"memory": NaN')
    path.write_text(text, encoding="utf-8")
    usage = metrics.load_metrics_file(path)
    assert usage.pods["shop/web"].cpu_cores == -0.5
    assert math.isnan(usage.pods["shop/web"].memory_bytes)


def test_nan_survives_a_round_trip(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "m.json"
    metrics.write_metrics_file(make_usage({"n1": sample(math.nan, math.inf)}), path)
    loaded = metrics.load_metrics_file(path).nodes["n1"]
    assert math.isnan(loaded.cpu_cores)
    assert loaded.memory_bytes == math.inf


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param(
            {"cpu": "0.45"},
            'pods["shop/web"].cpu: expected a JSON number (cores), got a string',
            id="string-cpu",
        ),
        pytest.param(
            {"memory": True},
            'pods["shop/web"].memory: expected a JSON number (bytes), got true',
            id="boolean-memory",
        ),
        pytest.param(
            {"memory": None},
            'pods["shop/web"].memory: expected a JSON number (bytes), got null',
            id="null-memory",
        ),
        pytest.param({"cpu": ...}, 'pods["shop/web"].cpu: required (cores)', id="missing-cpu"),
        pytest.param(
            {"timestamp": ...}, 'pods["shop/web"].timestamp: required', id="missing-timestamp"
        ),
        pytest.param(
            {"timestamp": "2026-11-29T07:59:45"},
            'pods["shop/web"].timestamp: expected an RFC 3339 time with a zone',
            id="naive-timestamp",
        ),
        pytest.param(
            {"timestamp": "2026-11-29"},
            'pods["shop/web"].timestamp: expected an RFC 3339 time',
            id="date-only",
        ),
        pytest.param(
            {"timestamp": "2026-02-30T07:59:45Z"},
            'pods["shop/web"].timestamp: expected an RFC 3339 time',
            id="no-such-day",
        ),
        pytest.param(
            {"timestamp": 1764403185},
            'pods["shop/web"].timestamp: expected an RFC 3339 time',
            id="epoch-number",
        ),
    ],
)
def test_bad_entries_are_named(
    tmp_path: pathlib.Path, fields: dict[str, Any], expected: str
) -> None:
    assert expected in load_problems(tmp_path, with_pod(**fields))


@pytest.mark.parametrize("key", ["web", "/web", "shop/", "a/b/c"])
def test_pod_keys_must_be_namespace_and_name(tmp_path: pathlib.Path, key: str) -> None:
    data = {**DESIGN_EXAMPLE, "pods": {key: DESIGN_EXAMPLE["pods"]["shop/web-7d9f-abcde"]}}
    assert f"pods[{json.dumps(key)}]: pod keys must be namespace/name" in load_problems(
        tmp_path, data
    )


def test_every_problem_is_listed(tmp_path: pathlib.Path) -> None:
    data = {
        "nodes": {"n1": {"cpu": "1", "memory": 1}},
        "pods": {"shop/web": {"cpu": 1, "memory": "1", "timestamp": "2026-11-29T07:59:45Z"}},
    }
    text = load_problems(tmp_path, data)
    assert text.startswith("metrics file ")
    for expected in (
        "collectedAt: required",
        'nodes["n1"].cpu: expected a JSON number',
        'nodes["n1"].timestamp: required',
        'pods["shop/web"].memory: expected a JSON number',
    ):
        assert expected in text


@pytest.mark.parametrize("section", ["nodes", "pods"])
def test_sections_are_required(tmp_path: pathlib.Path, section: str) -> None:
    data = {k: v for k, v in DESIGN_EXAMPLE.items() if k != section}
    assert f"{section}: required" in load_problems(tmp_path, data)


def test_empty_sections_are_fine(tmp_path: pathlib.Path) -> None:
    data = {"collectedAt": "2026-11-29T08:00:00Z", "nodes": {}, "pods": {}}
    usage = metrics.load_metrics_file(write_json(tmp_path, data))
    assert (dict(usage.nodes), dict(usage.pods)) == ({}, {})


def test_unknown_fields_are_ignored_for_forward_compatibility(tmp_path: pathlib.Path) -> None:
    data = {**DESIGN_EXAMPLE, "source": "prometheus"}
    data["nodes"] = {"node-a": {**DESIGN_EXAMPLE["nodes"]["node-a"], "window": "5m"}}
    assert "node-a" in metrics.load_metrics_file(write_json(tmp_path, data)).nodes


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("", "is empty", id="empty"),
        pytest.param('{\n  "nodes": {,\n}', r"metrics\.json:2:\d+: invalid JSON", id="bad-json"),
        pytest.param("[]", "expected a JSON object at the top level", id="list"),
        pytest.param(
            '{"collectedAt": "x", "nodes": [], "pods": {}}',
            "nodes: expected an object",
            id="nodes-list",
        ),
    ],
)
def test_malformed_files(tmp_path: pathlib.Path, text: str, expected: str) -> None:
    path = tmp_path / "metrics.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(errors.InputError, match=expected):
        metrics.load_metrics_file(path)


def test_missing_file(tmp_path: pathlib.Path) -> None:
    with pytest.raises(errors.InputError, match=r"metrics file .* does not exist"):
        metrics.load_metrics_file(tmp_path / "nope.json")


def test_public_names_are_pinned() -> None:
    assert set(metrics.__all__) >= {
        "Usage",
        "UsageSample",
        "load_metrics_file",
        "usage_to_json",
        "write_metrics_file",
    }


def test_named_resources_and_capacity_round_trip(tmp_path: pathlib.Path) -> None:
    gpu_node = dataclasses.replace(sample(2.0, 8 * GiB), named={"gpu": 2.85})
    gpu_pod = dataclasses.replace(sample(0.5, GiB), named={"gpu": 0.95})
    usage = dataclasses.replace(
        make_usage({"gpu-1": gpu_node, "cpu-1": sample(1.0, GiB)}, {"ml/train-a": gpu_pod}),
        capacity={"gpu-1": {"gpu": 4.0}},
    )
    path = tmp_path / "m.json"
    metrics.write_metrics_file(usage, path)
    document = json.loads(path.read_text())
    assert document["nodes"]["gpu-1"]["named"] == {"gpu": 2.85}
    assert "named" not in document["nodes"]["cpu-1"]
    assert document["capacity"] == {"gpu-1": {"gpu": 4}}
    assert metrics.load_metrics_file(path) == usage


def test_a_named_value_that_is_not_a_number_is_named(tmp_path: pathlib.Path) -> None:
    text = load_problems(tmp_path, with_pod(named={"gpu": "lots"}))
    assert 'pods["shop/web"].named.gpu: expected a JSON number' in text
