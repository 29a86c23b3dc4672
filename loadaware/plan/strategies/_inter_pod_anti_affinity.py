"""RemovePodsViolatingInterPodAntiAffinity: pods whose required anti-affinity selects
another pod in the same topology domain (labels or placement changed since).

As the descheduler, node by node and lowest priority first: a pod whose own
terms select another pod in its domain must move, and once it is named it no
longer counts against the others, so only one of two conflicting pods goes.
Every placed pod counts as an "other", evictable or not; a pod the evictor
protects is named too (and reported as skipped) but keeps counting. nodeFit checks
anti-affinity in both directions, so any landing it allows resolves it.
"""

from __future__ import annotations

from collections import defaultdict

from loadaware.cluster._types import ClusterState, Node, Pod, PodAffinityTerm
from loadaware.plan.strategies._types import (
    INTER_POD_ANTI_AFFINITY,
    MustMove,
    StrategyContext,
    low_priority_first,
)


def find(cluster: ClusterState, context: StrategyContext) -> list[MustMove]:
    holders = [
        p
        for name in sorted(context.nodes)
        for p in cluster.pods_by_node.get(name, ())
        if p.required_pod_anti_affinity
    ]
    if not holders:
        return []
    nodes = cluster.nodes_by_name
    # Placed pods per (namespace, topology key, domain value), built per key on demand.
    index: dict[str, dict[tuple[str, str], list[Pod]]] = {}

    def domain_pods(namespace: str, key: str, value: str) -> list[Pod]:
        by_domain = index.get(key)
        if by_domain is None:
            by_domain = index[key] = defaultdict(list)
            for node_name, pods in cluster.pods_by_node.items():
                domain = nodes[node_name].labels.get(key)
                if domain is not None:
                    for pod in pods:
                        by_domain[(pod.namespace, domain)].append(pod)
        return by_domain.get((namespace, value), [])

    gone: set[str] = set()

    def conflicts(pod: Pod, node: Node, term: PodAffinityTerm) -> bool:
        value = node.labels.get(term.topology_key)
        if value is None or term.label_selector is None:
            return False
        if term.namespace_selector is not None:
            namespaces = [
                ns
                for ns, labels in cluster.namespace_labels.items()
                if ns in term.namespaces or term.namespace_selector.matches(labels)
            ]
        else:
            namespaces = list(term.namespaces or (pod.namespace,))
        for namespace in namespaces:
            for other in domain_pods(namespace, term.topology_key, value):
                if (
                    other.key != pod.key
                    and other.key not in gone
                    and term.label_selector.matches(other.labels)
                ):
                    return True
        return False

    found: list[MustMove] = []
    by_node: dict[str, list[Pod]] = defaultdict(list)
    for pod in holders:
        by_node[pod.node_name or ""].append(pod)
    for name in sorted(by_node):
        node = nodes[name]
        for pod in low_priority_first(by_node[name], context):
            if any(conflicts(pod, node, term) for term in pod.required_pod_anti_affinity):
                # A pod the evictor protects is still named, so that the conflict
                # is reported; it stays, and so still counts against the others.
                found.append(MustMove(pod=pod, reason=INTER_POD_ANTI_AFFINITY))
                if context.is_evictable(pod):
                    gone.add(pod.key)
    return found
