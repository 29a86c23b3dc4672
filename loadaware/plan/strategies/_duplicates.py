"""RemoveDuplicates: pods of one owner crowded on a node beyond their fair share.

As the descheduler: pods are grouped by their controlling owner (kind, name,
namespace; loadaware does not read container images, which pods of one owner
share anyway). For each owner, the nodes its pods could run on are those that
admit them (ready, not cordoned, taints, nodeSelector, node affinity); with
fewer than two such nodes nothing moves. A node holding more than
ceil(pods / feasible nodes) of them gives up the surplus, evictable and lower
priority pods first. The replacement must land on a node that stays within
that share; excludeOwnerKinds leaves owners of those kinds alone.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

from loadaware import scheduling
from loadaware.cluster._types import ClusterState, Pod
from loadaware.plan._problem import AppliedMove, LandingCheck
from loadaware.plan.strategies._types import (
    DUPLICATES,
    MustMove,
    StrategyContext,
    low_priority_first,
    owner_key,
)

Owner = tuple[str, str, str]


def find(cluster: ClusterState, context: StrategyContext) -> list[MustMove]:
    excluded = set(context.settings.remove_duplicates.exclude_owner_kinds)
    placed: dict[Owner, dict[str, list[Pod]]] = defaultdict(lambda: defaultdict(list))
    for node_name, pods in cluster.pods_by_node.items():
        for pod in pods:
            key = owner_key(pod)
            if key is None or key[1] in excluded or pod.is_daemonset_pod:
                continue
            placed[key][node_name].append(pod)
    found: list[MustMove] = []
    for key in sorted(placed):
        per_node = placed[key]
        crowded = [n for n in sorted(per_node) if n in context.nodes and len(per_node[n]) > 1]
        if not crowded:
            continue
        sample = per_node[crowded[0]][0]
        feasible = sum(1 for node in context.schedulable if scheduling.node_admits(sample, node))
        if feasible < 2:
            continue
        total = sum(len(p) for p in per_node.values())
        share = math.ceil(total / feasible)
        counts = Counter({n: len(p) for n, p in per_node.items()})
        check = _within_share(key, share, counts)
        for node_name in crowded:
            surplus = len(per_node[node_name]) - share
            if surplus <= 0:
                continue
            # The pods that stay are the last ones: protected and higher priority.
            for pod in low_priority_first(per_node[node_name], context)[:surplus]:
                found.append(MustMove(pod=pod, reason=DUPLICATES, landing_check=check))
    return found


def _within_share(key: Owner, share: int, counts: Counter[str]) -> LandingCheck:
    def check(target: str, moves: Sequence[AppliedMove]) -> bool:
        here = counts[target]
        for pod, source, landed in moves:
            if owner_key(pod) == key:
                here += (landed == target) - (source == target)
        return here + 1 <= share

    return check
