"""Every strategy, profiles and consolidation on a generated cluster, both solvers.

Covers: every eviction passes the independent plan check (which recomputes that
each must-move pod really breaks its rule); must-moves come before hotspot
relief; the MILP's plan is never worse than the greedy's and its lower bound
never above its objective; the same input gives the same plan.
"""

from __future__ import annotations

import pytest

from loadaware.cluster import cluster_state_from_objects
from loadaware.metrics import usage_from_json
from loadaware.plan import build_plan, plan_to_json
from loadaware.policy import parse_policy
from loadaware.sim import generate_cluster
from tests.lib.builders import NOW
from tests.lib.plan_checks import check_plan

EVERYTHING = {
    "removePodsViolatingNodeAffinity": {"enabled": True},
    "removePodsViolatingNodeTaints": {"enabled": True},
    "removePodsViolatingInterPodAntiAffinity": {"enabled": True},
    "removeDuplicates": {"enabled": True},
    "removePodsViolatingTopologySpreadConstraint": {"enabled": True},
    "podLifeTime": {"enabled": True, "maxPodLifeTimeSeconds": 30 * 86400},
    "removePodsHavingTooManyRestarts": {"enabled": True, "podRestartThreshold": 5},
    "removeFailedPods": {"enabled": True},
}


@pytest.fixture(scope="module")
def instance():
    scenario = generate_cluster(nodes=150, seed=4, capacity="tight", now=NOW)
    return cluster_state_from_objects(scenario.objects), usage_from_json(scenario.metrics)


@pytest.mark.parametrize(
    "limits", [{}, {"maxNoOfPodsToEvictPerNode": 2, "maxNoOfPodsToEvictTotal": 40}]
)
def test_all_strategies_on_a_generated_cluster_are_sound(instance, limits) -> None:
    cluster, usage = instance
    plans = {}
    for method in ("greedy", "milp"):
        policy = parse_policy(
            {
                "limits": limits,
                "optimizer": {"method": method},
                "profiles": [{"name": "all", "strategies": EVERYTHING}],
                "consolidation": {"enabled": True, "maxNodesPerRound": 2},
            }
        )
        plan = build_plan(cluster, usage, policy, NOW)
        assert plan.status == "planned"
        assert check_plan(plan, cluster, usage, policy, NOW) == []
        assert plan.solver.lower_bound <= plan.solver.objective + 1e-6
        reasons = [e.reason for e in plan.evictions if e.reason != "HighNodeUtilization"]
        assert reasons == sorted(reasons, key=lambda r: r == "hotspot")
        assert any(r != "hotspot" for r in reasons)
        assert plan_to_json(plan) == plan_to_json(build_plan(cluster, usage, policy, NOW))
        plans[method] = plan
    assert plans["milp"].solver.objective <= plans["greedy"].solver.objective + 1e-6
