"""Raw Kubernetes objects (the API's JSON, as dicts), with keyword modifiers.

raw_pod("p1", node="n1", cpu="400m", owners=[{"kind": "ReplicaSet", "name": "web-7d9f"}])

Only what a modifier asks for is written: a pod without `node` is unbound, one
without `phase` or `status` has no status, a container without `cpu`, `memory`
or `image` has only its name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def raw_pod(
    name: str,
    *,
    namespace: str = "default",
    node: str | None = None,
    container: str = "app",
    image: str | None = None,
    cpu: str | None = None,
    memory: str | None = None,
    limits: Mapping[str, str] | None = None,
    containers: Sequence[Mapping[str, Any]] | None = None,
    labels: Mapping[str, str] | None = None,
    owners: Sequence[Mapping[str, Any]] | None = None,
    uid: str | None = None,
    created: str | None = None,
    phase: str | None = None,
    status: Mapping[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A Pod named `name` in `namespace`, with one container `container` (or `containers`).

    cpu, memory: the container's requests; limits: its limits. created: metadata.creationTimestamp.
    phase and status make status (phase first, status's fields over it); spec:
    more spec fields, over the defaults."""
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if uid is not None:
        metadata["uid"] = uid
    if created is not None:
        metadata["creationTimestamp"] = created
    if labels is not None:
        metadata["labels"] = dict(labels)
    if owners is not None:
        metadata["ownerReferences"] = [dict(o) for o in owners]
    if containers is None:
        one: dict[str, Any] = {"name": container}
        if image is not None:
            one["image"] = image
        requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
        resources: dict[str, Any] = {"requests": requests} if requests else {}
        if limits is not None:
            resources["limits"] = dict(limits)
        if resources:
            one["resources"] = resources
        containers = [one]
    body: dict[str, Any] = {"containers": [dict(c) for c in containers]}
    if node is not None:
        body["nodeName"] = node
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {**body, **spec},
    }
    if phase is not None or status is not None:
        pod["status"] = {**({"phase": phase} if phase is not None else {}), **(status or {})}
    return pod
