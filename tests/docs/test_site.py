"""The documentation site builds strictly: `mkdocs build --strict`, as `make docs`
and `make test` run it.

Covered: every page of docs/ is in the nav, every link and anchor between pages
resolves, and the build needs nothing beyond the `test` extra (no plugin that
fetches from the network).
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_site_builds_strictly(tmp_path: pathlib.Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "reference" / "policy" / "index.html").is_file()
    assert (tmp_path / "runbooks" / "LoadawareBreakerOpen" / "index.html").is_file()
