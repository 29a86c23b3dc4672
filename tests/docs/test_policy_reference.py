"""The policy reference page: generated from the policy models, committed as
docs/reference/policy.md and kept current (`make docs-reference`).

Covered: every policy field has a description, and a field without one stops the
generator naming it; the committed page is the generated one, and a stale or
missing page fails the check with the command that regenerates it; the page has a
row for every field of every model the policy holds, by its dotted path, with
enum values, defaults and constraints as a file spells them; `python -m
loadaware.policy` without a target still writes the JSON schema.
"""

from __future__ import annotations

import pathlib
import typing
from typing import Literal

import pydantic
import pytest
from pydantic import Field

from loadaware import policy
from loadaware.policy import __main__ as policy_cli
from loadaware.policy import _reference

REPO = pathlib.Path(__file__).resolve().parents[2]
COMMITTED = REPO / "docs" / "reference" / "policy.md"


class _Inner(pydantic.BaseModel):
    level: Literal["low", "high"] = Field(default="low", description="How much.")
    forgotten: int = 3


class _Outer(pydantic.BaseModel):
    inner: _Inner = Field(default_factory=_Inner, description="Held object.")
    items: list[_Inner] = Field(default_factory=list)


def test_every_policy_field_has_a_description() -> None:
    assert _reference.undocumented_fields() == [], (
        "add Field(description=...) to these policy fields, in their section's module "
        "under loadaware/policy/"
    )


def test_a_field_without_a_description_stops_the_generator() -> None:
    assert sorted(_reference.undocumented_fields(_Outer)) == [
        "inner.forgotten",
        "items",
        "items[].forgotten",
    ]
    with pytest.raises(_reference.UndocumentedFieldError, match=r"inner\.forgotten"):
        _reference.render_policy_reference(_Outer)


def test_committed_page_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    code = policy_cli.main(["reference", "--check", "--output", str(COMMITTED)])
    assert code == 0, (
        "docs/reference/policy.md is stale: run `make docs-reference`\n" + capsys.readouterr().err
    )


def test_check_names_the_command_for_a_stale_or_missing_page(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "policy.md"
    stale.write_text("# Policy reference\n", encoding="utf-8")
    assert policy_cli.main(["reference", "--check", "--output", str(stale)]) == 1
    assert "stale; regenerate it with `make docs-reference`" in capsys.readouterr().err
    missing = tmp_path / "missing.md"
    assert policy_cli.main(["reference", "--check", "--output", str(missing)]) == 1
    assert "missing" in capsys.readouterr().err


def test_write_then_check(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "policy.md"
    assert policy_cli.main(["reference", "--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == _reference.render_policy_reference()
    assert policy_cli.main(["reference", "--check", "--output", str(out)]) == 0


def test_without_a_target_the_schema_is_written_as_before(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "schema.json"
    assert policy_cli.main(["--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8").startswith('{\n  "$defs": {')


def _field_paths(model: type[pydantic.BaseModel], path: str = "") -> list[str]:
    """Every field's dotted path, walked independently of the generator."""
    paths = []
    for info in model.model_fields.values():
        here = f"{path}.{info.alias}" if path else str(info.alias)
        paths.append(here)
        for nested, suffix in _models_in(info.annotation):
            paths.extend(_field_paths(nested, here + suffix))
    return paths


def _models_in(annotation: object, suffix: str = "") -> list[tuple[type[pydantic.BaseModel], str]]:
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return [(annotation, suffix)]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is list:
        return _models_in(args[0], suffix + "[]")
    if origin is dict:
        return _models_in(args[1], suffix + ".*")
    if origin is typing.Annotated:
        return _models_in(args[0], suffix)
    return [found for arg in args for found in _models_in(arg, suffix)]


def test_the_page_has_a_row_for_every_field() -> None:
    page = COMMITTED.read_text(encoding="utf-8")
    paths = _field_paths(policy.LoadAwarePolicy)
    assert len(paths) > 150
    for path in paths:
        assert f"| `{path}` |" in page, path
    for path in (
        "metrics.prometheus.resources.*.capacity",
        "nodePools[].targetThresholds.cpu",
        "profiles[].strategies.podLifeTime.maxPodLifeTimeSeconds",
        "evictor.labelSelector.matchExpressions[].operator",
    ):
        assert path in paths


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(
            "| `metrics.onStaleNode` | one of `Refuse`, `Exclude` | `Refuse` |", id="an enum"
        ),
        pytest.param("| `metrics.maxSampleAge` | duration | `2m` |", id="a duration"),
        pytest.param(
            "| `nodePools[].thresholds.cpu` | number (0-100), or null | `null` |", id="a percent"
        ),
        pytest.param(
            "| `evictor.podProtections.extraEnabled` | list of values, each one of "
            "`PodsWithPVC`, `PodsWithoutPDB`, `PodsWithResourceClaims` | `[]` |",
            id="a list of enum values",
        ),
        pytest.param("| `metrics.prometheus.url` | URL | required |", id="a required field"),
        pytest.param("| `apiVersion` | always `loadaware.io/v1alpha1` |", id="a constant"),
    ],
)
def test_rows_spell_types_defaults_and_allowed_values_as_a_file_does(row: str) -> None:
    assert row in COMMITTED.read_text(encoding="utf-8")


def test_object_fields_link_to_their_section() -> None:
    page = COMMITTED.read_text(encoding="utf-8")
    assert "[NodePool](#nodepools)" in page
    assert "## `nodePools[]`" in page
    assert _reference.anchor("nodePools[]") == "nodepools"
    assert _reference.anchor("metrics.prometheus.resources.*") == "metricsprometheusresources"
