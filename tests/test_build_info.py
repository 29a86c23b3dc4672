"""The version and source revision loadaware reports.

Covered: `loadaware version` prints the package version and the revision; a
revision baked in by a build (loadaware/_revision.py) wins, an empty one is
"unknown", and a checkout without one answers with git's HEAD; /metrics carries
loadaware_build_info with both as labels.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import types
from collections.abc import Iterator

import pytest

from loadaware import __version__, build_info, cli
from loadaware.runtime import _service_metrics

ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh_revision() -> Iterator[None]:
    build_info.revision.cache_clear()
    yield
    sys.modules.pop("loadaware._revision", None)
    build_info.revision.cache_clear()


def _bake(revision: str) -> None:
    module = types.ModuleType("loadaware._revision")
    module.REVISION = revision  # type: ignore[attr-defined]
    sys.modules["loadaware._revision"] = module


def test_version_command_prints_version_and_revision(
    capsys: pytest.CaptureFixture[str], fresh_revision: None
) -> None:
    _bake("0123abcd")
    assert cli.main(["version"]) == 0
    assert capsys.readouterr().out == f"loadaware {__version__} (revision 0123abcd)\n"


def test_an_empty_baked_revision_is_unknown(fresh_revision: None) -> None:
    _bake("  ")
    assert build_info.revision() == "unknown"


def test_a_checkout_asks_git(fresh_revision: None) -> None:
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if head.returncode != 0 or (ROOT / "loadaware" / "_revision.py").exists():
        pytest.skip("not a git checkout, or a revision is baked in")
    assert build_info.revision() == head.stdout.strip()


def test_metrics_carry_build_info() -> None:
    text = _service_metrics.render_metrics()[0].decode()
    revision = build_info.revision()
    line = f'loadaware_build_info{{revision="{revision}",version="{__version__}"}} 1.0'
    assert line in text.splitlines()
