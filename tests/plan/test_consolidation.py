"""Consolidation (HighNodeUtilization): empty the least-used nodes, both solvers.

Covers: off by default; a node under the consolidation thresholds whose pods
all have a landing below targetThresholds is emptied whole (DaemonSet pods
stay), evictions carry reason HighNodeUtilization and the plan reports nodes,
evictions and node-hours saved; a pod the evictor protects keeps its node; no
landing under the targets keeps it; at most maxNodesPerRound nodes, least used
first; a node another eviction lands on is not emptied; budgets are shared
with the rest of the plan.
"""

from __future__ import annotations

import pytest

from loadaware.cluster import NodeSelectorTerm, Requirement
from loadaware.plan import plan_to_json
from loadaware.policy import parse_policy
from tests.lib.builders import GiB, daemonset, make_node, make_pod, make_usage, sample
from tests.plan.strategies.scenarios import METHODS, cluster_of, moved, plan_and_check

RULE = "HighNodeUtilization"


def _cluster(*, idle=("a",), busy_cpu=1.6, extra_pods=(), more_nodes=()):
    names = [*idle, "b", "c", *more_nodes]
    nodes = [make_node(n, labels={"disk": "ssd" if n == "c" else "hdd"}) for n in names]
    pods = [make_pod(f"agent-{n}", node=n, owner=daemonset("agent")) for n in names]
    for n in idle:
        pods += [make_pod(f"web{n}-1", node=n), make_pod(f"api{n}-1", node=n)]
    pods += list(extra_pods)
    node_usage = {n: sample(busy_cpu, 6 * GiB) for n in ("b", "c", *more_nodes)}
    for k, n in enumerate(idle):
        node_usage[n] = sample(0.2 + 0.1 * k, 2 * GiB)
    pod_usage = {p.key: sample(0.1, 0.25 * GiB) for p in pods}
    return cluster_of(nodes, pods), make_usage(node_usage, pod_usage)


def _policy(method="milp", **consolidation):
    return parse_policy(
        {
            "optimizer": {"method": method},
            "consolidation": {"enabled": True, **consolidation},
        }
    )


@pytest.mark.parametrize("method", METHODS)
def test_an_idle_node_is_emptied(method) -> None:
    cluster, usage = _cluster()
    plan = plan_and_check(cluster, usage, _policy(method))
    assert sorted(p for p, _, _ in moved(plan, RULE)) == ["default/apia-1", "default/weba-1"]
    assert {e.expected_node for e in plan.evictions} <= {"b", "c"}
    assert plan.consolidation is not None
    assert plan.consolidation.nodes == ("a",)
    body = plan_to_json(plan)["consolidation"]
    assert body["nodes"] == ["a"]
    assert body["evictions"] == 2
    assert body["nodeHoursSavedPerDay"] == 24
    assert plan.profiles["default"][RULE].planned == 2


def test_off_by_default() -> None:
    cluster, usage = _cluster()
    plan = plan_and_check(cluster, usage, parse_policy({}))
    assert plan.evictions == ()
    assert plan.consolidation is None
    assert "consolidation" not in plan_to_json(plan)


def test_a_protected_pod_keeps_its_node() -> None:
    pinned = make_pod("cache-1", node="a", has_local_storage=True)
    cluster, usage = _cluster(extra_pods=[pinned])
    plan = plan_and_check(cluster, usage, _policy())
    assert plan.evictions == ()
    assert plan.consolidation.nodes == ()
    assert "default/cache-1 may not be evicted (local-storage)" in plan.consolidation.note


def test_no_landing_under_the_targets_keeps_the_node() -> None:
    # b and c sit just under 70% cpu: 0.1 more core would push either over.
    cluster, usage = _cluster(busy_cpu=2.75)
    plan = plan_and_check(cluster, usage, _policy())
    assert plan.evictions == ()
    assert "no landing" in plan.consolidation.note


@pytest.mark.parametrize("method", METHODS)
def test_at_most_max_nodes_least_used_first(method) -> None:
    cluster, usage = _cluster(idle=("a", "d"))
    plan = plan_and_check(cluster, usage, _policy(method))
    assert plan.consolidation.nodes == ("a",)
    assert plan.consolidation.candidates == 2
    plan = plan_and_check(cluster, usage, _policy(method, maxNodesPerRound=2))
    assert plan.consolidation.nodes == ("a", "d")
    assert plan.consolidation.node_hours_saved_per_day == 48


def test_a_landing_target_is_not_emptied() -> None:
    # A pod violating node affinity on "b" is planned to land on "a" (the emptiest
    # hdd node): "a" must then stay, and nothing else is under the thresholds.
    hdd = NodeSelectorTerm(
        match_expressions=(Requirement(key="disk", operator="In", values=("hdd",)),)
    )
    mover = make_pod("mover-1", node="c", required_node_affinity=(hdd,))
    filler = make_pod("filler-1", node="b", cpu_millicores=2000)  # kube-scheduler avoids b
    cluster, usage = _cluster(extra_pods=[mover, filler])
    policy = parse_policy(
        {
            "profiles": [
                {
                    "name": "default",
                    "strategies": {"removePodsViolatingNodeAffinity": {"enabled": True}},
                }
            ],
            "consolidation": {"enabled": True},
        }
    )
    plan = plan_and_check(cluster, usage, policy)
    assert moved(plan, "RemovePodsViolatingNodeAffinity") == [("default/mover-1", "c", "a")]
    assert plan.consolidation.nodes == ()
    assert "a: a planned replacement lands there" in plan.consolidation.note


def test_budgets_are_shared() -> None:
    cluster, usage = _cluster()
    plan = plan_and_check(
        cluster,
        usage,
        parse_policy(
            {"consolidation": {"enabled": True}, "limits": {"maxNoOfPodsToEvictPerNode": 1}}
        ),
    )
    assert plan.evictions == ()
    assert "budget maxNoOfPodsToEvictPerNode reached" in plan.consolidation.note
