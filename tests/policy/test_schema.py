"""The JSON schema: generated from the model, committed as policy/schema.json and
kept current (`python -m loadaware.policy --check`).
"""

from __future__ import annotations

import pathlib

import pytest

from loadaware import policy
from loadaware.policy import __main__ as schema_cli

REPO = pathlib.Path(__file__).resolve().parents[2]
COMMITTED = REPO / "policy" / "schema.json"


def test_committed_schema_is_current() -> None:
    assert schema_cli.main(["--check", "--output", str(COMMITTED)]) == 0, (
        "policy/schema.json is stale: run `python -m loadaware.policy` from the repository root"
    )


def test_schema_identity() -> None:
    schema = policy.policy_json_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == "https://loadaware.io/schemas/v1alpha1/policy.json"
    assert schema["$id"] == policy.SCHEMA_ID
    assert "LoadAwarePolicy" in schema["title"]
    assert schema["additionalProperties"] is False


def test_schema_uses_file_spelling_and_duration_text() -> None:
    schema = policy.policy_json_schema()
    assert "nodePools" in schema["properties"]
    metrics = schema["$defs"]["MetricsSettings"]["properties"]
    assert metrics["maxSampleAge"]["default"] == "2m"
    assert metrics["maxSampleAge"]["type"] == "string"
    assert metrics["onStaleNode"]["enum"] == ["Refuse", "Exclude"]
    percent = schema["$defs"]["ResourcePercents"]["properties"]["cpu"]["anyOf"][0]
    assert (percent["minimum"], percent["maximum"]) == (0, 100)


def test_check_fails_on_a_stale_file(tmp_path: pathlib.Path) -> None:
    stale = tmp_path / "schema.json"
    stale.write_text("{}\n", encoding="utf-8")
    assert schema_cli.main(["--check", "--output", str(stale)]) == 1
    assert schema_cli.main(["--check", "--output", str(tmp_path / "missing.json")]) == 1


def test_write_then_check(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "schema.json"
    assert schema_cli.main(["--output", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert text.startswith('{\n  "$defs": {')
    assert schema_cli.main(["--check", "--output", str(out)]) == 0


def test_write_refuses_a_missing_directory(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert schema_cli.main(["--output", str(tmp_path / "no" / "schema.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
