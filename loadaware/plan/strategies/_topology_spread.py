"""RemovePodsViolatingTopologySpreadConstraint: spread drift, corrected.

For each distinct constraint of a namespace's pods (whenUnsatisfiable
DoNotSchedule, and ScheduleAnyway when `constraints` lists it), the pods its
selector matches are counted per domain of its topologyKey over the nodes the
constraint considers (nodeAffinityPolicy Honor: nodes the pod's nodeSelector
and required node affinity allow; nodeTaintsPolicy Honor: nodes whose taints it
tolerates). While the largest domain exceeds the smallest by more than
maxSkew (the smallest counting 0 when there are fewer domains than
minDomains), a pod of the largest domain must move, evictable and lower
priority first, as if it went to the smallest; the descheduler balances the
same way, from both ends. A replacement must land where kube-scheduler's
PodTopologySpread filter allows it: its domain, with it, at most maxSkew above
the smallest.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence

from loadaware import scheduling
from loadaware.cluster._types import ClusterState, Node, Pod, TopologySpreadConstraint
from loadaware.plan._problem import AppliedMove, LandingCheck
from loadaware.plan.strategies._node_affinity import matches_required
from loadaware.plan.strategies._types import (
    TOPOLOGY_SPREAD,
    MustMove,
    StrategyContext,
    low_priority_first,
)


def _counted_nodes(
    pod: Pod, constraint: TopologySpreadConstraint, nodes: Sequence[Node]
) -> Iterator[Node]:
    for node in nodes:
        if constraint.topology_key not in node.labels:
            continue
        if constraint.node_affinity_policy == "Honor" and not matches_required(pod, node):
            continue
        if constraint.node_taints_policy == "Honor" and any(
            t.effect in scheduling.HARD_TAINT_EFFECTS
            and not scheduling.tolerates(pod.tolerations, t)
            for t in node.taints
        ):
            continue
        yield node


def find(cluster: ClusterState, context: StrategyContext) -> list[MustMove]:
    kinds = set(context.settings.remove_pods_violating_topology_spread_constraint.constraints)
    groups: dict[tuple[str, TopologySpreadConstraint], Pod] = {}
    for pod in cluster.pods:
        if not pod.is_load:
            continue
        for constraint in pod.topology_spread_constraints:
            if constraint.when_unsatisfiable in kinds and constraint.label_selector is not None:
                groups.setdefault((pod.namespace, constraint), pod)
    if not groups:
        return []
    ready = [n for n in cluster.nodes if n.ready]
    found: list[MustMove] = []
    chosen: set[str] = set()
    for (namespace, constraint), holder in sorted(
        groups.items(), key=lambda item: (item[0][0], item[1].key, item[0][1].topology_key)
    ):
        key = constraint.topology_key
        domain_of = {n.name: n.labels[key] for n in _counted_nodes(holder, constraint, ready)}
        if not domain_of:
            continue
        selector = constraint.label_selector
        assert selector is not None
        members: dict[str, list[Pod]] = defaultdict(list)
        counts: Counter[str] = Counter({d: 0 for d in domain_of.values()})
        for node_name, domain in domain_of.items():
            for pod in cluster.pods_by_node.get(node_name, ()):
                if pod.namespace == namespace and selector.matches(pod.labels):
                    counts[domain] += 1
                    members[domain].append(pod)
        floor_zero = constraint.min_domains is not None and len(counts) < constraint.min_domains
        check = _spread_check(namespace, constraint, domain_of, Counter(counts), floor_zero)
        queues = {
            d: [
                p
                for p in low_priority_first(members[d], context)
                if p.node_name in context.nodes
                and p.key not in chosen
                and any(c == constraint for c in p.topology_spread_constraints)
            ]
            for d in counts
        }
        while True:
            high = max(counts, key=lambda d: (counts[d], d))
            low = 0 if floor_zero else min(counts.values())
            if counts[high] - low <= constraint.max_skew or not queues[high]:
                break
            pod = queues[high].pop(0)
            chosen.add(pod.key)
            found.append(MustMove(pod=pod, reason=TOPOLOGY_SPREAD, landing_check=check(pod)))
            counts[high] -= 1
            if not floor_zero:
                counts[min(counts, key=lambda d: (counts[d], d))] += 1
    return found


def _spread_check(
    namespace: str,
    constraint: TopologySpreadConstraint,
    domain_of: Mapping[str, str],
    counts: Counter[str],
    floor_zero: bool,
) -> Callable[[Pod], LandingCheck]:
    selector = constraint.label_selector
    assert selector is not None

    def for_pod(moving: Pod) -> LandingCheck:
        def check(target: str, moves: Sequence[AppliedMove]) -> bool:
            domain = domain_of.get(target)
            if domain is None:
                return False
            now = Counter(counts)
            # The pod itself has left its domain; earlier moves shift their pods.
            for pod, source, landed in ((moving, moving.node_name or "", None), *moves):
                if pod.namespace != namespace or not selector.matches(pod.labels):
                    continue
                if source in domain_of:
                    now[domain_of[source]] -= 1
                if landed is not None and landed in domain_of:
                    now[domain_of[landed]] += 1
            low = 0 if floor_zero else min(now.values())
            return now[domain] + 1 - low <= constraint.max_skew

        return check

    return for_pod
