"""Small clusters and policies for the strategy tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from loadaware.cluster import ClusterState, Node, Pod
from loadaware.metrics import Usage
from loadaware.plan import Plan, build_plan
from loadaware.policy import LoadAwarePolicy, parse_policy
from tests.lib.builders import NOW, GiB, make_cluster, make_usage, sample
from tests.lib.plan_checks import check_plan

METHODS = ("greedy", "milp")


def strategy_policy(
    strategies: Mapping[str, Any], *, method: str = "milp", **overrides: Any
) -> LoadAwarePolicy:
    """One profile running `strategies` (loadBalancing stays on) and the given solver."""
    document: dict[str, Any] = {
        "profiles": [{"name": "default", "strategies": dict(strategies)}],
        "optimizer": {"method": method},
    }
    document.update(overrides)
    return parse_policy(document)


def cool_usage(nodes: Iterable[Node], pods: Iterable[Pod], *, node_cpu: float = 0.4) -> Usage:
    """Every node at `node_cpu` cores and 2 GiB (cool on 4-core, 16 GiB nodes), every
    running pod at 0.1 cores and 256 MiB."""
    return make_usage(
        {n.name: sample(node_cpu, 2 * GiB) for n in nodes},
        {p.key: sample(0.1, 0.25 * GiB) for p in pods if p.is_load},
    )


def plan_and_check(cluster: ClusterState, usage: Usage, policy: LoadAwarePolicy) -> Plan:
    """build_plan, asserting that the independent check finds nothing wrong."""
    plan = build_plan(cluster, usage, policy, NOW)
    assert check_plan(plan, cluster, usage, policy, NOW) == []
    return plan


def cluster_of(nodes: Iterable[Node], pods: Iterable[Pod], **fields: Any) -> ClusterState:
    return make_cluster(list(nodes), list(pods), **fields)


def moved(plan: Plan, reason: str | None = None) -> list[tuple[str, str, str | None]]:
    return [
        (e.pod, e.node, e.expected_node)
        for e in plan.evictions
        if reason is None or e.reason == reason
    ]


def counts(plan: Plan, rule: str, profile: str = "default") -> tuple[int, int]:
    found = plan.profiles[profile][rule]
    return found.planned, found.skipped
