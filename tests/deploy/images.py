"""The container images rendered manifests run, and the one reference they must all name."""

from __future__ import annotations

from typing import Any

from loadaware import __version__

Manifest = dict[str, Any]
# Where deploy/components/image and charts/loadaware point by default: the
# release of this version.
REFERENCE = f"ghcr.io/loadaware/loadaware:v{__version__}"
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod")


def pod_spec(doc: Manifest) -> dict[str, Any]:
    if doc["kind"] == "Pod":
        return doc["spec"]
    if doc["kind"] == "CronJob":
        return doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return doc["spec"]["template"]["spec"]


def images(docs: list[Manifest]) -> dict[str, str]:
    """ "Kind/name/container" -> image, for every container of every workload."""
    found = {}
    for doc in docs:
        if doc["kind"] not in WORKLOAD_KINDS:
            continue
        spec = pod_spec(doc)
        for container in [*spec.get("initContainers", []), *spec["containers"]]:
            key = f"{doc['kind']}/{doc['metadata']['name']}/{container['name']}"
            found[key] = container["image"]
    return found


def is_bare(image: str) -> bool:
    """No registry host: a node would pull it from Docker Hub's library/."""
    first = image.split("/", 1)[0]
    return "/" not in image or not ("." in first or ":" in first or first == "localhost")
