"""Deschedule strategies: pods that should leave their node whatever its load.

Each strategy is a pure function `(cluster, context) -> list[MustMove]` with
the arguments and meaning of the kubernetes-sigs/descheduler plugin it is named
after. It names pods; it does not evict them. The planner judges each named pod
with the profile's evictor, then plans it in the same solve as hotspot relief:
must-moves first, under the same limits, PodDisruptionBudgets and nodeFit, and
only when kube-scheduler is predicted to place the replacement on a node where
the rule holds and that stays under its targetThresholds.

Pure: no I/O, no clock (the time comes in the context).
"""

from __future__ import annotations

from loadaware.cluster._types import ClusterState
from loadaware.plan.strategies import (
    _duplicates,
    _failed_pods,
    _inter_pod_anti_affinity,
    _node_affinity,
    _node_taints,
    _pod_lifetime,
    _too_many_restarts,
    _topology_spread,
)
from loadaware.plan.strategies._types import (
    DUPLICATES,
    FAILED_PODS,
    INTER_POD_ANTI_AFFINITY,
    NODE_AFFINITY,
    NODE_TAINTS,
    POD_LIFE_TIME,
    TOO_MANY_RESTARTS,
    TOPOLOGY_SPREAD,
    MustMove,
    Strategy,
    StrategyContext,
)
from loadaware.policy import Strategies

# In the order they run within a profile: the constraint violations first, as
# the issue and the descheduler's examples list them, then the hygiene ones.
STRATEGIES: tuple[tuple[str, str, Strategy], ...] = (
    (NODE_AFFINITY, "remove_pods_violating_node_affinity", _node_affinity.find),
    (NODE_TAINTS, "remove_pods_violating_node_taints", _node_taints.find),
    (
        INTER_POD_ANTI_AFFINITY,
        "remove_pods_violating_inter_pod_anti_affinity",
        _inter_pod_anti_affinity.find,
    ),
    (DUPLICATES, "remove_duplicates", _duplicates.find),
    (
        TOPOLOGY_SPREAD,
        "remove_pods_violating_topology_spread_constraint",
        _topology_spread.find,
    ),
    (POD_LIFE_TIME, "pod_life_time", _pod_lifetime.find),
    (TOO_MANY_RESTARTS, "remove_pods_having_too_many_restarts", _too_many_restarts.find),
    (FAILED_PODS, "remove_failed_pods", _failed_pods.find),
)
STRATEGY_NAMES: tuple[str, ...] = tuple(name for name, _, _ in STRATEGIES)


def enabled_strategies(settings: Strategies) -> list[str]:
    """The deschedule strategies a profile turns on, in running order."""
    return [name for name, field, _ in STRATEGIES if getattr(settings, field).enabled]


def find_must_moves(cluster: ClusterState, context: StrategyContext) -> list[MustMove]:
    """Every enabled strategy's pods, in running order; a pod named twice keeps the
    first strategy."""
    found: list[MustMove] = []
    seen: set[str] = set()
    for _name, field, strategy in STRATEGIES:
        if not getattr(context.settings, field).enabled:
            continue
        for must in strategy(cluster, context):
            if must.pod.key not in seen:
                seen.add(must.pod.key)
                found.append(must)
    return found


__all__ = [
    "DUPLICATES",
    "FAILED_PODS",
    "INTER_POD_ANTI_AFFINITY",
    "NODE_AFFINITY",
    "NODE_TAINTS",
    "POD_LIFE_TIME",
    "STRATEGIES",
    "STRATEGY_NAMES",
    "TOO_MANY_RESTARTS",
    "TOPOLOGY_SPREAD",
    "MustMove",
    "Strategy",
    "StrategyContext",
    "enabled_strategies",
    "find_must_moves",
]
