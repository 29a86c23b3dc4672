"""Builders for cases taken from kube-scheduler's Go test tables.

Unlike make_node / make_pod, these add nothing of their own: a node has exactly
the labels the Go case gives (st.MakeNode() sets no hostname label), a pod has
exactly its labels, no owner and no requests unless the case says so, as
st.MakePod() and bare v1.Pod literals do. Only what the model needs and the Go
test does not care about is filled in: room for the pods (allocatable cpu,
memory and pod count), so that no case node fails the Filter the Go tests skip.

go_node("node-a", {"zone": "zone1"}), go_pod("p-a1", node="node-a", labels={"foo": ""})
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping

from loadaware.cluster._types import (
    ContainerImage,
    LabelSelector,
    Node,
    OwnerRef,
    Pod,
    Requirement,
    Taint,
    TopologySpreadConstraint,
)

# A Go case that leaves metadata.namespace empty: the model compares namespaces as
# strings, so the empty one works as any other.
UNSET_NAMESPACE = ""
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
# Enough for every case; the Go tests call Score without Filter.
ROOMY_CPU_MILLICORES = 64_000
ROOMY_MEMORY_BYTES = 256 * 1024**3
_CREATED = datetime.datetime(2026, 11, 28, 8, 0, 0, tzinfo=datetime.UTC)


def go_node(
    name: str,
    labels: Mapping[str, str] | None = None,
    *,
    taints: Iterable[Taint] = (),
    cpu_millicores: int = ROOMY_CPU_MILLICORES,
    memory_bytes: int = ROOMY_MEMORY_BYTES,
    pods: int = 110,
    images: Iterable[ContainerImage] = (),
) -> Node:
    return Node(
        name=name,
        uid=f"uid-node-{name}",
        labels=dict(labels or {}),
        allocatable_cpu_millicores=cpu_millicores,
        allocatable_memory_bytes=memory_bytes,
        allocatable_pods=pods,
        taints=tuple(taints),
        images=tuple(images),
    )


def go_pod(
    name: str,
    *,
    node: str | None = None,
    namespace: str = UNSET_NAMESPACE,
    labels: Mapping[str, str] | None = None,
    cpu_millicores: int = 0,
    memory_bytes: int = 0,
    owner: OwnerRef | None = None,
    **fields: object,
) -> Pod:
    """A pod as the Go case writes it; `node` None for the pod being scheduled."""
    return Pod(
        namespace=namespace,
        name=name,
        uid=f"uid-pod-{namespace}-{name}",
        node_name=node,
        labels=dict(labels or {}),
        owner=owner,
        workload=owner,
        cpu_request_millicores=cpu_millicores,
        memory_request_bytes=memory_bytes,
        creation_timestamp=_CREATED,
        **fields,  # type: ignore[arg-type]
    )


def pods_on(node: str, count: int, labels: Mapping[str, str], *, first: int = 1) -> list[Pod]:
    """`count` pods named as the Go tables do (p-a1, p-a2, ... on node-a)."""
    short = node.removeprefix("node-")
    return [go_pod(f"p-{short}{i}", node=node, labels=labels) for i in range(first, first + count)]


def exists(key: str) -> LabelSelector:
    """st.MakeLabelSelector().Exists(key)."""
    return LabelSelector(match_expressions=(Requirement(key=key, operator="Exists"),))


def soft_spread(
    max_skew: int, topology_key: str, selector: LabelSelector | None, **fields: object
) -> TopologySpreadConstraint:
    """A ScheduleAnyway constraint, as st.MakePod().SpreadConstraint(..., ScheduleAnyway, ...)."""
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=topology_key,
        when_unsatisfiable="ScheduleAnyway",
        label_selector=selector,
        **fields,  # type: ignore[arg-type]
    )
