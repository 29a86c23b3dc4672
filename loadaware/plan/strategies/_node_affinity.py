"""RemovePodsViolatingNodeAffinity: pods whose node no longer matches their node affinity.

requiredDuringSchedulingIgnoredDuringExecution: a pod with required node
affinity whose node no longer passes it (or its nodeSelector), e.g. after a
label change. Whether another node qualifies is left to the planner's landing
check, so that a pod nothing can take is reported (no-fit) rather than ignored.

preferredDuringSchedulingIgnoredDuringExecution (opt-in): a pod whose node
scores lower on its preferred terms than another node it fits; its replacement
must land on a node that scores higher than the one it leaves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from loadaware import scheduling
from loadaware.cluster._types import ClusterState, Node, Pod
from loadaware.plan._problem import AppliedMove, LandingCheck
from loadaware.plan.strategies._types import NODE_AFFINITY, MustMove, StrategyContext

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def matches_required(pod: Pod, node: Node) -> bool:
    """nodeSelector and required node affinity, as kube-scheduler's NodeAffinity filter."""
    labels = node.labels
    if any(labels.get(k) != v for k, v in pod.node_selector.items()):
        return False
    return not pod.required_node_affinity or any(
        term.matches(node) for term in pod.required_node_affinity
    )


def preferred_weight(pod: Pod, node: Node) -> int:
    return sum(t.weight for t in pod.preferred_node_affinity if t.preference.matches(node))


def find(cluster: ClusterState, context: StrategyContext) -> list[MustMove]:
    kinds = context.settings.remove_pods_violating_node_affinity.node_affinity_type
    nodes = cluster.nodes_by_name
    found: list[MustMove] = []
    for pod in context.pods_in_scope(cluster):
        node = nodes[pod.node_name or ""]
        if REQUIRED in kinds and pod.required_node_affinity and not matches_required(pod, node):
            found.append(MustMove(pod=pod, reason=NODE_AFFINITY))
            continue
        if PREFERRED in kinds and pod.preferred_node_affinity:
            here = preferred_weight(pod, node)
            best = max(
                (
                    preferred_weight(pod, other)
                    for other in context.schedulable
                    if other.name != node.name and scheduling.node_admits(pod, other)
                ),
                default=here,
            )
            if best > here:
                found.append(
                    MustMove(
                        pod=pod, reason=NODE_AFFINITY, landing_check=_better_than(pod, here, nodes)
                    )
                )
    return found


def _better_than(pod: Pod, weight: int, nodes: Mapping[str, Node]) -> LandingCheck:
    """The replacement must land on a node its preferred terms score higher."""

    def check(target: str, moves: Sequence[AppliedMove]) -> bool:
        return preferred_weight(pod, nodes[target]) > weight

    return check
