"""Every rendered workload runs the same image reference, set in one place.

Covered: each overlay under deploy/overlays (found on disk, so a new overlay is
checked too) renders with at least one workload, and every container of every
Deployment and CronJob names the reference deploy/components/image sets, with
a registry host (a bare `loadaware` would be pulled from Docker Hub) and the
tag of this version; the component is the only place in deploy/ that names it.
(The Helm chart's default is checked against the same reference in
tests/deploy/test_chart.py.)
"""

from __future__ import annotations

import pytest
import yaml

from tests.deploy import images
from tests.deploy.conftest import OVERLAYS, ROOT, render_overlay

OVERLAY_DIRS = sorted(path.name for path in (ROOT / "deploy" / "overlays").iterdir())


def test_the_overlays_on_disk_are_the_rendered_ones() -> None:
    assert set(OVERLAY_DIRS) == set(OVERLAYS)


@pytest.mark.parametrize("overlay", OVERLAY_DIRS)
def test_every_workload_names_the_one_image(overlay: str) -> None:
    found = images.images(render_overlay(overlay))
    assert found, f"deploy/overlays/{overlay} renders no workload"
    for where, image in found.items():
        assert not images.is_bare(image), f"{where}: {image} has no registry"
        assert image == images.REFERENCE, f"{where}: {image}"


def test_the_image_is_set_in_one_place() -> None:
    component = yaml.safe_load((ROOT / "deploy/components/image/kustomization.yaml").read_text())
    (rewrite,) = component["images"]
    assert f"{rewrite['newName']}:{rewrite['newTag']}" == images.REFERENCE
    repository = images.REFERENCE.rsplit(":", 1)[0]
    naming = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "deploy").rglob("*.yaml")
        if repository
        in "".join(
            line for line in path.read_text().splitlines() if not line.lstrip().startswith("#")
        )
    )
    assert naming == ["deploy/components/image/kustomization.yaml"]


@pytest.mark.parametrize(
    ("image", "bare"),
    [
        ("loadaware", True),
        ("loadaware:v1", True),
        ("library/loadaware", True),
        ("ghcr.io/loadaware/loadaware:v0.1.0", False),
        ("localhost/loadaware:test", False),
        ("registry:5000/loadaware", False),
    ],
)
def test_bare_references_are_told_apart(image: str, bare: bool) -> None:
    assert images.is_bare(image) is bare
