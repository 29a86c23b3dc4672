"""report.json_text: the JSON text the CLI prints is what json.dumps(indent=2) wrote,
value for value, on real plans; ASCII only, as json.dumps escapes; NaN and the
infinities as null (valid JSON); what msgspec cannot encode goes to json.dumps."""

from __future__ import annotations

import datetime
import json
import pathlib

import numpy as np
import pytest

from loadaware import plan, report, runtime
from loadaware.sim import builtin_scenario
from loadaware.sim.scenarios import generate_cluster

NOW = datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)
REPO = pathlib.Path(__file__).resolve().parents[2]


def _strict(text: str) -> object:
    def refuse(constant: str) -> object:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("scenario", ["small", "generated"])
def test_a_real_plan_reads_back_as_json_dumps_wrote_it(
    scenario: str, tmp_path: pathlib.Path
) -> None:
    built = (
        builtin_scenario("small", now=NOW)
        if scenario == "small"
        else generate_cluster(nodes=100, seed=0, family="usage-independent", now=NOW)
    )
    (tmp_path / "cluster.json").write_text(json.dumps(built.cluster_document()))
    (tmp_path / "metrics.json").write_text(json.dumps(built.metrics))
    planned = runtime.plan_from_files(
        cluster_file=tmp_path / "cluster.json",
        metrics_file=tmp_path / "metrics.json",
        policy_file=REPO / "policy/default.yaml",
        now=NOW,
    )
    document = plan.plan_to_json(planned)
    assert document["evictions"]
    text = report.json_text(document)
    old = json.dumps(document, indent=2) + "\n"
    assert _strict(text) == json.loads(old)
    assert text.isascii()
    # The same layout: a line for every value, indented by two spaces a level.
    assert text.count("\n") == old.count("\n")
    assert [len(line) - len(line.lstrip()) for line in text.splitlines()] == [
        len(line) - len(line.lstrip()) for line in old.splitlines()
    ]


def test_text_beyond_ascii_is_escaped_as_json_dumps_escapes_it() -> None:
    document = {"note": "café → 😀", "del": "a\x7fb", "controls": "\t\n\x01", "": []}
    assert report.json_text(document) == json.dumps(document, indent=2) + "\n"


def test_floats_are_the_same_values() -> None:
    values = [1e-05, 2.5e-07, 1e16, 1.2345678901234567e19, 0.1 + 0.2, -0.0, 5e-324, 13.0]
    document = {"values": values, "numpy": np.float64(0.25), "int": 7, "big": 2**70}
    text = report.json_text(document)
    assert _strict(text) == json.loads(json.dumps(document))
    assert '"numpy": 0.25' in text


def test_nan_and_infinities_are_null() -> None:
    document = {"a": float("nan"), "b": [float("inf"), -float("inf")], "c": 1.5}
    assert _strict(report.json_text(document)) == {"a": None, "b": [None, None], "c": 1.5}


def test_what_msgspec_cannot_encode_is_given_to_json_dumps() -> None:
    keys = {None: 1, True: 2, "s": [1, 2]}
    assert report.json_text(keys) == json.dumps(keys, indent=2) + "\n"
    with pytest.raises(TypeError, match="not JSON serializable"):
        report.json_text({"when": object()})
