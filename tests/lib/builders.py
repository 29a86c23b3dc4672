"""Builders for internal types, with keyword modifiers.

make_pod("p1", cpu_millicores=400, node="n1")
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping

from loadaware.cluster._types import (
    ClusterState,
    LabelSelector,
    Node,
    OwnerRef,
    Pod,
    PodDisruptionBudget,
    Taint,
    Workload,
)
from loadaware.metrics._types import Usage, UsageSample

NOW = datetime.datetime(2026, 11, 29, 8, 0, 0, tzinfo=datetime.UTC)
GiB = 1024**3
MiB = 1024**2


def make_node(
    name: str,
    *,
    cpu_millicores: int = 4000,
    memory_bytes: int = 16 * GiB,
    pods: int = 110,
    labels: Mapping[str, str] | None = None,
    zone: str | None = None,
    taints: Iterable[Taint] = (),
    unschedulable: bool = False,
    ready: bool = True,
    extended: Mapping[str, float] | None = None,
) -> Node:
    all_labels = {"kubernetes.io/hostname": name}
    if zone is not None:
        all_labels["topology.kubernetes.io/zone"] = zone
    all_labels.update(labels or {})
    return Node(
        name=name,
        uid=f"uid-node-{name}",
        labels=all_labels,
        allocatable_cpu_millicores=cpu_millicores,
        allocatable_memory_bytes=memory_bytes,
        allocatable_pods=pods,
        allocatable_extended=dict(extended or {}),
        taints=tuple(taints),
        unschedulable=unschedulable,
        ready=ready,
    )


def replicaset(name: str, deployment: str | None = None) -> tuple[OwnerRef, OwnerRef]:
    """(owner, workload) for a pod of a ReplicaSet, owned by a Deployment when named."""
    owner = OwnerRef(kind="ReplicaSet", name=name, uid=f"uid-rs-{name}")
    if deployment is None:
        return owner, owner
    return owner, OwnerRef(kind="Deployment", name=deployment, uid=f"uid-deploy-{deployment}")


def make_pod(
    name: str,
    *,
    node: str | None = "n1",
    namespace: str = "default",
    cpu_millicores: int = 100,
    memory_bytes: int = 128 * MiB,
    owner: OwnerRef | str | None = "rs",
    workload: OwnerRef | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    created: datetime.datetime | None = None,
    **fields: object,
) -> Pod:
    """A running pod. owner="rs" (default) gives a ReplicaSet named after the pod's app label
    (or the pod name), owned by a Deployment of the same name."""
    labels = dict(labels or {"app": name.rsplit("-", 1)[0]})
    created = created or NOW - datetime.timedelta(days=1)
    # A running pod started when it was created, unless a test says otherwise.
    fields.setdefault("start_time", created)
    if owner == "rs":
        app = labels.get("app", name)
        owner, workload = replicaset(f"{app}-rs", app)
    elif isinstance(owner, OwnerRef) and workload is None:
        workload = owner
    return Pod(
        namespace=namespace,
        name=name,
        uid=f"uid-pod-{namespace}-{name}",
        node_name=node,
        labels=labels,
        annotations=dict(annotations or {}),
        owner=owner if isinstance(owner, OwnerRef) else None,
        workload=workload,
        cpu_request_millicores=cpu_millicores,
        memory_request_bytes=memory_bytes,
        qos_class="Burstable",
        creation_timestamp=created,
        **fields,  # type: ignore[arg-type]
    )


def daemonset(name: str = "ds") -> OwnerRef:
    return OwnerRef(kind="DaemonSet", name=name, uid=f"uid-ds-{name}")


def make_pdb(
    name: str,
    match_labels: Mapping[str, str],
    *,
    namespace: str = "default",
    disruptions_allowed: int = 1,
) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        namespace=namespace,
        name=name,
        selector=LabelSelector(match_labels=dict(match_labels)),
        disruptions_allowed=disruptions_allowed,
    )


def make_cluster(
    nodes: Iterable[Node],
    pods: Iterable[Pod] = (),
    *,
    pdbs: Iterable[PodDisruptionBudget] = (),
    workloads: Iterable[Workload] = (),
    namespace_labels: Mapping[str, Mapping[str, str]] | None = None,
    priority_classes: Mapping[str, int] | None = None,
) -> ClusterState:
    return ClusterState(
        nodes=tuple(nodes),
        pods=tuple(pods),
        pdbs=tuple(pdbs),
        workloads=tuple(workloads),
        namespace_labels=dict(namespace_labels or {}),
        priority_classes=dict(priority_classes or {}),
    )


def sample(cpu: float, memory: float, *, age_seconds: float = 15.0) -> UsageSample:
    return UsageSample(
        cpu_cores=cpu,
        memory_bytes=memory,
        timestamp=NOW - datetime.timedelta(seconds=age_seconds),
    )


def make_usage(
    nodes: Mapping[str, UsageSample], pods: Mapping[str, UsageSample] | None = None
) -> Usage:
    return Usage(collected_at=NOW, nodes=dict(nodes), pods=dict(pods or {}))
