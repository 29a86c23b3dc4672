"""The Kustomize overlays of deploy/, rendered once per session with `kubectl kustomize`."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
from typing import Any

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
OVERLAYS = ("serve", "cronjob", "soft-taint")

Manifest = dict[str, Any]


def render_overlay(name: str) -> list[Manifest]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.fail("kubectl (with its built-in kustomize) is needed to render deploy/")
    result = subprocess.run(
        [kubectl, "kustomize", str(ROOT / "deploy" / "overlays" / name)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


@pytest.fixture(scope="session")
def rendered() -> dict[str, list[Manifest]]:
    return {name: render_overlay(name) for name in OVERLAYS}


def of_kind(docs: list[Manifest], kind: str) -> list[Manifest]:
    return [doc for doc in docs if doc["kind"] == kind]
