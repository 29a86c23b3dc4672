"""kube-scheduler's Filter plugins, one function each, for one pod on one node.

These are the checks that need nothing but the pod, the node and what is
requested there; `Occupancy.fit_failure` runs them in kube-scheduler's order
with the inter-pod affinity checks of `_affinity_index` after them, and
reports the first failing one as a reason of `FIT_REASONS`. The readiness check
is the descheduler's (a NotReady node takes no pod), not a scheduler plugin.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from loadaware.cluster._types import Node, Pod, Taint, Toleration

# Every reason fit_failure can return, in the order the checks run.
FIT_REASONS: tuple[str, ...] = (
    "node-not-ready",
    "node-unschedulable",
    "untolerated-taint",
    "node-selector",
    "node-affinity",
    "insufficient-cpu",
    "insufficient-memory",
    "insufficient-extended-resource",
    "too-many-pods",
    "host-port",
    "pod-affinity",
    "pod-anti-affinity",
)

HARD_TAINT_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
# NodeUnschedulable lets a pod onto a cordoned node when it tolerates this taint,
# which is how DaemonSet pods land on cordoned nodes.
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


def tolerates(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    return any(tol.tolerates(taint) for tol in tolerations)


def untolerated_hard_taint(tolerations: Sequence[Toleration], taints: Iterable[Taint]) -> bool:
    """TaintToleration's Filter: a NoSchedule or NoExecute taint the pod does not tolerate."""
    return any(
        taint.effect in HARD_TAINT_EFFECTS and not tolerates(tolerations, taint) for taint in taints
    )


def node_unschedulable(pod: Pod, node: Node) -> bool:
    """NodeUnschedulable's Filter: the node is cordoned and the pod does not tolerate it."""
    return node.unschedulable and not tolerates(pod.tolerations, UNSCHEDULABLE_TAINT)


def node_affinity_failure(pod: Pod, node: Node) -> str | None:
    """NodeAffinity's Filter: the pod's nodeSelector, then its required node affinity."""
    labels = node.labels
    for key, value in pod.node_selector.items():
        if labels.get(key) != value:
            return "node-selector"
    if pod.required_node_affinity and not any(
        term.matches(node) for term in pod.required_node_affinity
    ):
        return "node-affinity"
    return None


def static_failure(pod: Pod, node: Node, extra_taints: Sequence[Taint] = ()) -> str | None:
    """The checks that depend on the pod and the node only, never on what else is placed."""
    if not node.ready:
        return "node-not-ready"
    if node_unschedulable(pod, node):
        return "node-unschedulable"
    if untolerated_hard_taint(pod.tolerations, node.taints) or (
        extra_taints and untolerated_hard_taint(pod.tolerations, extra_taints)
    ):
        return "untolerated-taint"
    return node_affinity_failure(pod, node)


def node_admits(pod: Pod, node: Node) -> bool:
    """Whether the node passes the checks that depend on the pod and the node alone
    (readiness, cordon, NoSchedule/NoExecute taints, nodeSelector, required node
    affinity), whatever else is placed there."""
    return static_failure(pod, node) is None


def node_resources_fit_failure(
    pod: Pod,
    node: Node,
    requested: tuple[int, int, int],
    extended_free: Callable[[str], int],
) -> str | None:
    """NodeResourcesFit's Filter: `requested` is the node's cpu millicores, memory bytes
    and pod count without `pod`; `extended_free` gives a resource's free amount there."""
    cpu, mem, count = requested
    # As NodeResourcesFit: a zero request fits even on an overcommitted node.
    want = pod.cpu_request_millicores
    if want > 0 and want > node.allocatable_cpu_millicores - cpu:
        return "insufficient-cpu"
    want = pod.memory_request_bytes
    if want > 0 and want > node.allocatable_memory_bytes - mem:
        return "insufficient-memory"
    for name, want in pod.extended_requests.items():
        if want > extended_free(name):
            return "insufficient-extended-resource"
    if count + 1 > node.allocatable_pods:
        return "too-many-pods"
    return None


def node_ports_conflict(pod: Pod, used_ports: Mapping[int, int], own: Pod | None) -> bool:
    """NodePorts' Filter: a host port of the pod is in use on the node (`used_ports`:
    port -> pods using it), not counting `own`, the pod itself when placed there."""
    if not used_ports:
        return False
    for port in pod.host_ports:
        used = used_ports.get(port, 0)
        if own is not None:
            used -= own.host_ports.count(port)
        if used > 0:
            return True
    return False
