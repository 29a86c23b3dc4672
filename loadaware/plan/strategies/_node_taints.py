"""RemovePodsViolatingNodeTaints: pods on a node tainted since with a taint they do not tolerate.

As the descheduler: NoSchedule taints count (NoExecute ones the kubelet acts on
itself), PreferNoSchedule ones too with includePreferNoSchedule. excludedTaints
and includedTaints name taints as `key` (any value) or `key=value`; an
excluded taint never counts, and when includedTaints is set only those count.
The replacement must land on a node with no counted taint it does not tolerate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from loadaware import scheduling
from loadaware.cluster._types import ClusterState, Node, Pod, Taint
from loadaware.plan._problem import AppliedMove, LandingCheck
from loadaware.plan.strategies._types import NODE_TAINTS, MustMove, StrategyContext
from loadaware.policy import NodeTaintsStrategy


def _named(taint: Taint, names: Sequence[str]) -> bool:
    for name in names:
        key, has_value, value = name.partition("=")
        if key == taint.key and (not has_value or value == taint.value):
            return True
    return False


def counted_taints(node: Node, settings: NodeTaintsStrategy) -> tuple[Taint, ...]:
    effects = (
        {"NoSchedule", "PreferNoSchedule"}
        if settings.include_prefer_no_schedule
        else {"NoSchedule"}
    )
    return tuple(
        t
        for t in node.taints
        if t.effect in effects
        and not _named(t, settings.excluded_taints)
        and (not settings.included_taints or _named(t, settings.included_taints))
    )


def violates(pod: Pod, node: Node, settings: NodeTaintsStrategy) -> bool:
    return any(not scheduling.tolerates(pod.tolerations, t) for t in counted_taints(node, settings))


def find(cluster: ClusterState, context: StrategyContext) -> list[MustMove]:
    settings = context.settings.remove_pods_violating_node_taints
    nodes = cluster.nodes_by_name
    check = _untainted_landing(settings, nodes)
    found: list[MustMove] = []
    for name in sorted(context.nodes):
        node = nodes[name]
        if not counted_taints(node, settings):
            continue
        for pod in cluster.pods_by_node.get(name, ()):
            if violates(pod, node, settings):
                found.append(MustMove(pod=pod, reason=NODE_TAINTS, landing_check=check(pod)))
    return found


def _untainted_landing(
    settings: NodeTaintsStrategy, nodes: Mapping[str, Node]
) -> Callable[[Pod], LandingCheck | None]:
    def for_pod(pod: Pod) -> LandingCheck | None:
        if not settings.include_prefer_no_schedule:
            return None  # nodeFit already keeps replacements off untolerated NoSchedule taints

        def check(target: str, moves: Sequence[AppliedMove]) -> bool:
            return not violates(pod, nodes[target], settings)

        return check

    return for_pod
