"""RemoveDuplicates and RemovePodsViolatingTopologySpreadConstraint, and budgets shared
with hotspot relief.

Covers: replicas crowded on one node spread to ceil(replicas / feasible nodes)
per node; excludeOwnerKinds; an owner with fewer than two feasible nodes stays;
spread drift across zones corrected down to maxSkew, each replacement landing
in a domain the PodTopologySpread filter allows; ScheduleAnyway only when
listed; must-moves take a shared total limit before hotspot relief, in both
solvers, and the rest of the limit still relieves the hot node.
"""

from __future__ import annotations

import pytest

from loadaware.cluster import LabelSelector
from loadaware.cluster._types import TopologySpreadConstraint
from tests.lib.builders import GiB, daemonset, make_node, make_pod, make_usage, sample
from tests.plan.strategies.scenarios import (
    METHODS,
    cluster_of,
    cool_usage,
    counts,
    moved,
    plan_and_check,
    strategy_policy,
)

DUPLICATES = "RemoveDuplicates"
SPREAD = "RemovePodsViolatingTopologySpreadConstraint"


def _crowded(nodes=("a", "b", "c"), replicas=3):
    return [make_node(n) for n in nodes], [make_pod(f"web-{i}", node="a") for i in range(replicas)]


@pytest.mark.parametrize("method", METHODS)
def test_duplicates_spread_to_their_fair_share(method) -> None:
    nodes, pods = _crowded()
    policy = strategy_policy({"removeDuplicates": {"enabled": True}}, method=method)
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), policy)
    assert sorted(target for _, _, target in moved(plan, DUPLICATES)) == ["b", "c"]
    assert counts(plan, DUPLICATES) == (2, 0)


def test_excluded_owner_kind_stays() -> None:
    nodes, pods = _crowded()
    policy = strategy_policy(
        {"removeDuplicates": {"enabled": True, "excludeOwnerKinds": ["ReplicaSet"]}}
    )
    assert plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), policy).evictions == ()


def test_one_feasible_node_moves_nothing() -> None:
    nodes, pods = _crowded(nodes=("a",))
    policy = strategy_policy({"removeDuplicates": {"enabled": True}})
    assert plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), policy).evictions == ()


def _zones():
    return [make_node(n, zone=z) for n, z in (("a", "z1"), ("b", "z2"), ("c", "z3"))]


def _spread_pods(when="DoNotSchedule", count=3):
    constraint = TopologySpreadConstraint(
        max_skew=1,
        topology_key="topology.kubernetes.io/zone",
        when_unsatisfiable=when,
        label_selector=LabelSelector(match_labels={"app": "web"}),
    )
    return [
        make_pod(f"web-{i}", node="a", topology_spread_constraints=(constraint,))
        for i in range(count)
    ]


@pytest.mark.parametrize("method", METHODS)
def test_spread_drift_is_corrected_to_max_skew(method) -> None:
    nodes, pods = _zones(), _spread_pods()
    policy = strategy_policy(
        {"removePodsViolatingTopologySpreadConstraint": {"enabled": True}}, method=method
    )
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), policy)
    assert sorted(target for _, _, target in moved(plan, SPREAD)) == ["b", "c"]


def test_schedule_anyway_only_when_listed() -> None:
    nodes, pods = _zones(), _spread_pods("ScheduleAnyway")
    policy = strategy_policy({"removePodsViolatingTopologySpreadConstraint": {"enabled": True}})
    assert plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), policy).evictions == ()
    policy = strategy_policy(
        {
            "removePodsViolatingTopologySpreadConstraint": {
                "enabled": True,
                "constraints": ["DoNotSchedule", "ScheduleAnyway"],
            }
        }
    )
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), policy)
    assert len(moved(plan, SPREAD)) == 2


def _hot_and_crowded():
    """Node "hot" at 90% cpu with movable pods, plus web replicas crowded on cool "a"."""
    nodes = [make_node("hot"), make_node("a"), make_node("b"), make_node("c")]
    agent = make_pod("agent-hot", node="hot", owner=daemonset("agent"), cpu_millicores=2000)
    busy = [make_pod(f"job{i}-1", node="hot") for i in range(3)]
    crowded = [make_pod(f"web-{i}", node="a") for i in range(3)]
    pods = [agent, *busy, *crowded]
    usage = make_usage(
        {
            "hot": sample(3.6, 4 * GiB),
            "a": sample(0.4, 2 * GiB),
            "b": sample(0.4, 2 * GiB),
            "c": sample(0.4, 2 * GiB),
        },
        {
            **{p.key: sample(0.35, 0.25 * GiB) for p in busy},
            **{p.key: sample(0.1, 0.25 * GiB) for p in crowded},
        },
    )
    return cluster_of(nodes, pods), usage


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("total", [2, 3, None])
def test_must_moves_take_a_shared_total_limit_first(method, total) -> None:
    cluster, usage = _hot_and_crowded()
    policy = strategy_policy(
        {"removeDuplicates": {"enabled": True}},
        method=method,
        limits={"maxNoOfPodsToEvictTotal": total},
    )
    plan = plan_and_check(cluster, usage, policy)
    reasons = [e.reason for e in plan.evictions]
    # Violations come first in the plan, as they are executed.
    assert reasons == sorted(reasons, key=lambda r: r == "hotspot")
    assert reasons.count(DUPLICATES) == 2
    hotspot = reasons.count("hotspot")
    if total is None:
        assert hotspot >= 1
        assert not [n for n in plan.nodes if n.name == "hot" and n.note]
    else:
        assert len(reasons) == total
        assert hotspot == total - 2
    assert plan.profiles["default"]["hotspot"].planned == hotspot


@pytest.mark.parametrize("method", METHODS)
def test_per_node_limit_is_shared_too(method) -> None:
    nodes, pods = _crowded()
    policy = strategy_policy(
        {"removeDuplicates": {"enabled": True}},
        method=method,
        limits={"maxNoOfPodsToEvictPerNode": 1},
    )
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), policy)
    assert len(plan.evictions) == 1
    assert plan.profiles["default"][DUPLICATES].skipped_reasons == {"maxNoOfPodsToEvictPerNode": 1}
