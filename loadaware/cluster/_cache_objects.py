"""Converting one object of each kind the cluster cache keeps, as the file loader would:
each kind's converter gives the key the object is kept under and what is kept.

Pods are kept with what completing them at the snapshot needs (`PodEntry`); the kinds
a pod's completion reads are `RESOLUTION_PATHS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from loadaware.cluster import _convert, _fields, _types
from loadaware.errors import InputError


@dataclasses.dataclass(slots=True)
class PodEntry:
    pod: _types.Pod
    class_priority: bool  # its priority comes from its class (completed at the snapshot)
    unschedulable: bool  # kube-scheduler found no node for it (PodScheduled False)
    published: bool = False  # in a snapshot: never changed in place from then on
    # The pod as the executor's reads give it (ClusterCache), built at its first read:
    # a watch event replaces the entry rather than change it, so the view goes with it.
    view: dict[str, Any] | None = None


def _reader(raw: Any, kind: str, position: int, namespaced: bool) -> _fields.FieldReader:
    if not isinstance(raw, dict):
        raise InputError(f"{kind}: expected an object")
    return _convert._reader_for(raw, kind, position, namespaced)


def _namespace(converter: _convert.Converter, raw: Any, position: int) -> tuple[str, Any]:
    name, labels = converter.namespace(raw, _reader(raw, "Namespace", position, False))
    return name, labels


def _priority_class(converter: _convert.Converter, raw: Any, position: int) -> tuple[str, Any]:
    r = _reader(raw, "PriorityClass", position, False)
    name, value = converter.priority_class(raw, r)
    return name, (value, r.boolean(raw.get("globalDefault"), "globalDefault"))


def _node(converter: _convert.Converter, raw: Any, position: int) -> tuple[str, Any]:
    node = converter.node(raw, _reader(raw, "Node", position, False))
    return node.name, node


def _pod(converter: _convert.Converter, raw: Any, position: int) -> tuple[str, Any]:
    pod, class_priority = converter.pod(raw, _reader(raw, "Pod", position, True))
    conditions = (raw.get("status") or {}).get("conditions") or []
    unschedulable = any(
        isinstance(c, dict) and found_no_node(c.get("type"), c.get("status"), c.get("reason"))
        for c in conditions
    )
    return pod.key, PodEntry(pod, class_priority, unschedulable)


def found_no_node(condition_type: Any, status: Any, reason: Any) -> bool:
    """Whether a pod's condition says kube-scheduler found no node for it."""
    return condition_type == "PodScheduled" and status == "False" and reason == "Unschedulable"


def _pdb(converter: _convert.Converter, raw: Any, position: int) -> tuple[str, Any]:
    pdb = converter.pdb(raw, _reader(raw, "PodDisruptionBudget", position, True))
    return pdb.key, pdb


def _workload(kind: str) -> Callable[[_convert.Converter, Any, int], tuple[str, Any]]:
    def convert(converter: _convert.Converter, raw: Any, position: int) -> tuple[str, Any]:
        if isinstance(raw, dict) and not raw.get("kind"):
            raw["kind"] = kind
        workload = converter.workload(raw, _reader(raw, kind, position, True))
        return workload.key, workload

    return convert


PODS = "/api/v1/pods"
NODES = "/api/v1/nodes"
WORKLOAD_PATHS = (
    "/apis/apps/v1/replicasets",
    "/apis/apps/v1/deployments",
    "/apis/apps/v1/statefulsets",
    "/apis/apps/v1/daemonsets",
    "/apis/batch/v1/jobs",
)
# Kinds a pod's completion reads: a change to one re-completes every pod.
RESOLUTION_PATHS = frozenset({*WORKLOAD_PATHS, "/apis/scheduling.k8s.io/v1/priorityclasses"})
# Each kind's conversion of one object, through the cache's converter.
CONVERTERS: dict[str, Callable[[_convert.Converter, Any, int], tuple[str, Any]]] = {
    "/api/v1/namespaces": _namespace,
    "/apis/scheduling.k8s.io/v1/priorityclasses": _priority_class,
    NODES: _node,
    PODS: _pod,
    "/apis/policy/v1/poddisruptionbudgets": _pdb,
    "/apis/apps/v1/replicasets": _workload("ReplicaSet"),
    "/apis/apps/v1/deployments": _workload("Deployment"),
    "/apis/apps/v1/statefulsets": _workload("StatefulSet"),
    "/apis/apps/v1/daemonsets": _workload("DaemonSet"),
    "/apis/batch/v1/jobs": _workload("Job"),
}
