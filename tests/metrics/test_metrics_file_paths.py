"""The metrics file reader's quick ways agree with its general ones.

Covers: RFC 3339 times of the common shape (read with datetime.fromisoformat)
give what the strict reading gives, for fractions of 1 to 20 digits, offsets,
out-of-range fields and any generated text; forms outside that shape (t or z, a
space, a leap second, hour 24, other digits) are still read, or refused with the
same message; a plain entry loads as the general path loads it (entries with
`named: {}` take that path), bad ones are listed in file order even when they
share a timestamp string; plain_sample builds what UsageSample() builds; the
file is parsed (by msgspec) to what json.loads gives.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import pathlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadaware import errors, metrics
from loadaware.metrics import _file, _types


def utc(*fields: int) -> datetime.datetime:
    return datetime.datetime(*fields, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("2026-11-29T07:59:45Z", utc(2026, 11, 29, 7, 59, 45), id="zulu"),
        pytest.param("2026-11-29T07:59:45.5Z", utc(2026, 11, 29, 7, 59, 45, 500000), id="f1"),
        pytest.param("2026-11-29T07:59:45.12Z", utc(2026, 11, 29, 7, 59, 45, 120000), id="f2"),
        pytest.param("2026-11-29T07:59:45.123Z", utc(2026, 11, 29, 7, 59, 45, 123000), id="f3"),
        pytest.param(
            "2026-11-29T07:59:45.000001Z", utc(2026, 11, 29, 7, 59, 45, 1), id="microseconds"
        ),
        pytest.param("2026-11-29T07:59:45.1234567Z", utc(2026, 11, 29, 7, 59, 45, 123456), id="f7"),
        pytest.param(
            "2026-11-29T07:59:45.999999999Z",
            utc(2026, 11, 29, 7, 59, 45, 999999),
            id="nanoseconds-truncated",
        ),
        pytest.param(
            "2026-11-29T07:59:45.12345678901234567890Z",
            utc(2026, 11, 29, 7, 59, 45, 123456),
            id="f20",
        ),
        pytest.param("2026-11-29T08:59:45+01:00", utc(2026, 11, 29, 7, 59, 45), id="offset"),
        pytest.param("2026-11-29T02:29:45-05:30", utc(2026, 11, 29, 7, 59, 45), id="negative"),
        pytest.param("2026-11-29T07:59:45-00:00", utc(2026, 11, 29, 7, 59, 45), id="minus-zero"),
        pytest.param(
            "2026-11-30T07:58:45+23:59", utc(2026, 11, 29, 7, 59, 45), id="largest-offset"
        ),
        pytest.param(
            "2026-11-29T00:30:00.25+01:00",
            utc(2026, 11, 28, 23, 30, 0, 250000),
            id="offset-into-the-day-before",
        ),
        pytest.param("2024-02-29T00:00:00Z", utc(2024, 2, 29), id="leap-day"),
        # The strict reading only:
        pytest.param("2026-11-29t07:59:45z", utc(2026, 11, 29, 7, 59, 45), id="lower-case"),
        pytest.param("2026-11-29 07:59:45Z", utc(2026, 11, 29, 7, 59, 45), id="space"),
        pytest.param(
            "2026-12-31T23:59:60Z", utc(2026, 12, 31, 23, 59, 59, 999999), id="leap-second"
        ),
        pytest.param(
            "2026-11-29T07:59:45+05:75", utc(2026, 11, 29, 1, 44, 45), id="offset-minutes-75"
        ),
        pytest.param(
            "2026-11-29T07:59:45.\uff15Z",
            utc(2026, 11, 29, 7, 59, 45, 500000),
            id="fullwidth-digit",
        ),
        # Refused by both:
        pytest.param("2026-11-29T07:59:45", None, id="no-zone"),
        pytest.param("2026-11-29", None, id="date-only"),
        pytest.param("2026-02-30T07:59:45Z", None, id="no-such-day"),
        pytest.param("2025-02-29T07:59:45Z", None, id="not-a-leap-year"),
        pytest.param("0000-01-01T00:00:00Z", None, id="year-zero"),
        pytest.param("2026-13-01T00:00:00Z", None, id="month-13"),
        pytest.param("2026-11-29T24:00:00Z", None, id="hour-24"),
        pytest.param("2026-11-29T07:60:00Z", None, id="minute-60"),
        pytest.param("2026-11-29T07:59:61Z", None, id="second-61"),
        pytest.param("2026-11-29T07:59:45.Z", None, id="empty-fraction"),
        pytest.param("2026-11-29T07:59:45,5Z", None, id="comma-fraction"),
        pytest.param("2026-11-29T07:59:45+24:00", None, id="offset-24h"),
        pytest.param("2026-11-29T07:59:45+0100", None, id="offset-without-colon"),
        pytest.param("2026-11-29T07:59:45+01", None, id="offset-hours-only"),
        pytest.param("2026-11-29T07:59:45ZZ", None, id="two-zones"),
        pytest.param("2026-11-29T07:59:45Z ", None, id="trailing-space"),
        pytest.param("20261129T075945Z", None, id="basic-format"),
        pytest.param("2026-W48-7T07:59:45Z", None, id="week-date"),
        pytest.param("2026-11-29T07:59Z", None, id="no-seconds"),
        pytest.param("", None, id="empty"),
    ],
)
def test_timestamp_forms(text: str, expected: datetime.datetime | None) -> None:
    moment = _file._parse_timestamp(text)
    assert moment == expected
    assert moment == _file._parse_rfc3339(text)
    if moment is not None:
        assert moment.tzinfo is datetime.UTC


def _two_digits(low: int, high: int) -> st.SearchStrategy[str]:
    return st.integers(low, high).map(lambda n: f"{n:02d}")


# Near the common shape, with fields out of range, other separators and zones.
RFC3339_LIKE = st.builds(
    "{}-{}-{}{}{}:{}:{}{}{}".format,
    st.sampled_from(["0000", "0001", "1970", "2024", "2025", "2026", "9999"]),
    _two_digits(0, 13),
    _two_digits(0, 32),
    st.sampled_from(["T", "t", " ", "_"]),
    _two_digits(0, 25),
    _two_digits(0, 61),
    _two_digits(0, 61),
    st.one_of(st.just(""), st.text("0123456789", max_size=12).map(lambda f: "." + f)),
    st.one_of(
        st.sampled_from(["Z", "z", "", "+00:00", "-00:00", "Z0"]),
        st.builds("{}{}:{}".format, st.sampled_from("+-"), _two_digits(0, 25), _two_digits(0, 61)),
    ),
)


@given(RFC3339_LIKE)
def test_the_quick_reading_is_the_strict_reading(text: str) -> None:
    assert _file._parse_timestamp(text) == _file._parse_rfc3339(text)


@given(st.text(alphabet="0123456789-+:.TtZz ", max_size=40))
def test_the_quick_reading_is_the_strict_reading_for_any_text(text: str) -> None:
    assert _file._parse_timestamp(text) == _file._parse_rfc3339(text)


def _load(tmp_path: pathlib.Path, pods: dict[str, Any]) -> metrics.Usage:
    document = {"collectedAt": "2026-11-29T08:00:00Z", "nodes": {}, "pods": pods}
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return metrics.load_metrics_file(path)


def _problems(tmp_path: pathlib.Path, pods: dict[str, Any]) -> str:
    with pytest.raises(errors.InputError) as info:
        _load(tmp_path, pods)
    return str(info.value)


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param({"cpu": 0.45, "memory": 536870912, "timestamp": "2026-11-29T07:59:45Z"}),
        pytest.param({"cpu": 2, "memory": 5.5e8, "timestamp": "2026-11-29T07:59:45.25+01:00"}),
        pytest.param({"cpu": -0.5, "memory": 0, "timestamp": "2026-11-29t07:59:45z"}),
        pytest.param({"cpu": 0, "memory": 1, "timestamp": "2026-11-29T07:59:45Z", "x": "y"}),
    ],
)
def test_a_plain_entry_loads_as_the_general_path_loads_it(
    tmp_path: pathlib.Path, entry: dict[str, Any]
) -> None:
    usage = _load(tmp_path, {"shop/plain": entry, "shop/general": entry | {"named": {}}})
    plain, general = usage.pods["shop/plain"], usage.pods["shop/general"]
    assert plain == general
    assert type(plain.cpu_cores) is float
    assert type(plain.memory_bytes) is float
    assert plain.timestamp.tzinfo is datetime.UTC
    assert type(plain.named) is dict


def test_equal_timestamp_strings_give_equal_times(tmp_path: pathlib.Path) -> None:
    entry = {"cpu": 0.1, "memory": 1, "timestamp": "2026-11-29T07:59:45.5Z"}
    usage = _load(tmp_path, {f"shop/web-{i}": dict(entry) for i in range(3)})
    assert {sample.timestamp for sample in usage.pods.values()} == {
        utc(2026, 11, 29, 7, 59, 45, 500000)
    }


def test_bad_entries_are_listed_in_file_order(tmp_path: pathlib.Path) -> None:
    good = {"cpu": 0.1, "memory": 1, "timestamp": "2026-11-29T07:59:45Z"}
    pods = {
        "shop/a": good,
        "shop/b": good | {"timestamp": "2026-11-29T24:00:00Z"},
        "shop/c": good | {"cpu": True},
        "no-namespace": good,
        "shop/d": good | {"timestamp": "2026-11-29T24:00:00Z"},
        "shop/e": good | {"memory": "1"},
        "shop/f": [good],
        "shop/g": good | {"timestamp": None},
        "shop/h": {"cpu": 0.1, "timestamp": 5},
        "shop/i": good | {"named": {"gpu": "1"}},
        "shop/j": good,
    }
    zone = "expected an RFC 3339 time with a zone such as 2026-11-29T07:59:45Z"
    assert _problems(tmp_path, pods).splitlines()[1:] == [
        f'  - pods["shop/b"].timestamp: {zone}, got "2026-11-29T24:00:00Z"',
        '  - pods["shop/c"].cpu: expected a JSON number (cores), got true',
        '  - pods["no-namespace"]: pod keys must be namespace/name',
        f'  - pods["shop/d"].timestamp: {zone}, got "2026-11-29T24:00:00Z"',
        '  - pods["shop/e"].memory: expected a JSON number (bytes), got a string',
        '  - pods["shop/f"]: expected an object with cpu, memory and timestamp',
        '  - pods["shop/g"].timestamp: required (an RFC 3339 time such as 2026-11-29T07:59:45Z)',
        '  - pods["shop/h"].memory: required (bytes)',
        f'  - pods["shop/h"].timestamp: {zone}, got 5',
        '  - pods["shop/i"].named.gpu: expected a JSON number (in the resource\'s unit), '
        "got a string",
    ]


def test_plain_sample_is_the_sample_init_builds() -> None:
    moment = utc(2026, 11, 29, 7, 59, 45)
    quick = _types.plain_sample(0.5, 1024.0, moment)
    built = _types.UsageSample(cpu_cores=0.5, memory_bytes=1024.0, timestamp=moment)
    # Reading every field fails if plain_sample left one unset.
    for field in dataclasses.fields(_types.UsageSample):
        assert getattr(quick, field.name) == getattr(built, field.name), field.name
    assert quick == built
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.cpu_cores = 1.0  # type: ignore[misc]
    assert quick.named is not _types.plain_sample(0.5, 1024.0, moment).named


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(JSON_VALUES, st.sampled_from([None, 2]))
def test_the_quick_parser_gives_what_json_gives(value: Any, indent: int | None) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    parsed = _file._JSON.decode(text)
    assert parsed == json.loads(text)
    assert json.dumps(parsed) == json.dumps(json.loads(text))  # the same types, -0.0 too
