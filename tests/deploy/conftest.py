"""The Kustomize overlays of deploy/, rendered once per session with `kubectl kustomize`,
and serve with deploy/components/consolidation, rendered as a user's overlay would
include it."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
from typing import Any

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
OVERLAYS = ("serve", "cronjob", "soft-taint")
CONSOLIDATION = "serve+consolidation"

Manifest = dict[str, Any]


def render(directory: pathlib.Path) -> list[Manifest]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.fail("kubectl (with its built-in kustomize) is needed to render deploy/")
    result = subprocess.run(
        [kubectl, "kustomize", str(directory)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def render_overlay(name: str) -> list[Manifest]:
    return render(ROOT / "deploy" / "overlays" / name)


def write_overlay(
    directory: pathlib.Path, deploy: pathlib.Path, overlay: str, components: list[str]
) -> pathlib.Path:
    """A user's overlay in `directory`: deploy/overlays/<overlay> plus deploy/components/<c>.

    Kustomize takes only relative paths to other kustomizations, wherever they are."""
    directory.mkdir(parents=True, exist_ok=True)

    def relative(path: pathlib.Path) -> str:
        return os.path.relpath(path, directory)

    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [relative(deploy / "overlays" / overlay)],
        "components": [relative(deploy / "components" / name) for name in components],
    }
    (directory / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    return directory


@pytest.fixture(scope="session")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Manifest]]:
    docs = {name: render_overlay(name) for name in OVERLAYS}
    user = tmp_path_factory.mktemp("consolidation")
    docs[CONSOLIDATION] = render(write_overlay(user, ROOT / "deploy", "serve", ["consolidation"]))
    return docs


def of_kind(docs: list[Manifest], kind: str) -> list[Manifest]:
    return [doc for doc in docs if doc["kind"] == kind]
