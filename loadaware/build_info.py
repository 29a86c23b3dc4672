"""What was built: the package version and the source revision it came from.

The revision is baked in when an image or wheel is built (the build writes
`loadaware/_revision.py`, git-ignored); a checkout without it asks git, and
anything else says "unknown". It is read once: a long-running `serve` reports
the revision it started with.
"""

from __future__ import annotations

import functools
import importlib
import pathlib
import subprocess

from loadaware import __version__

VERSION = __version__
UNKNOWN = "unknown"


@functools.cache
def revision() -> str:
    """The source revision (a git commit), or "unknown"."""
    try:
        baked = importlib.import_module("loadaware._revision")
    except ImportError:
        return _git_revision() or UNKNOWN
    return str(getattr(baked, "REVISION", "")).strip() or UNKNOWN


def _git_revision() -> str | None:
    # Only the checkout this package is imported from: an installed wheel sits in
    # site-packages, where git would answer for whatever repository encloses it.
    checkout = pathlib.Path(__file__).resolve().parents[1]
    if not (checkout / ".git").exists():
        return None
    try:
        result = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=checkout,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = result.stdout.strip()
    return text if result.returncode == 0 and text else None
