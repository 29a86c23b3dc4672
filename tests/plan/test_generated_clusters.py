"""build_plan on generated clusters (zones, tainted pools, DaemonSets, PDBs,
anti-affinity, PVC and local-storage pods, heavy-tailed usage), both solvers.

Covers: every eviction passes the independent plan check; the MILP's plan is
never worse than the greedy's; the lower bound never exceeds the objective;
hot nodes are relieved where the instance allows it.
"""

from __future__ import annotations

import pytest

from loadaware.cluster import cluster_state_from_objects
from loadaware.metrics import usage_from_json
from loadaware.plan import build_plan
from loadaware.policy import parse_policy
from loadaware.sim import generate_cluster
from tests.lib.builders import NOW
from tests.lib.plan_checks import check_plan


@pytest.fixture(scope="module", params=[("loose", 3), ("tight", 4)], ids=["loose", "tight"])
def instance(request):
    capacity, seed = request.param
    scenario = generate_cluster(nodes=150, seed=seed, capacity=capacity, now=NOW)
    return cluster_state_from_objects(scenario.objects), usage_from_json(scenario.metrics)


@pytest.mark.parametrize(
    "limits", [{}, {"maxNoOfPodsToEvictPerNode": 2, "maxNoOfPodsToEvictTotal": 25}]
)
def test_plans_on_generated_clusters_are_sound(instance, limits) -> None:
    cluster, usage = instance
    plans = {}
    for method in ("greedy", "milp"):
        policy = parse_policy({"limits": limits, "optimizer": {"method": method}})
        plan = build_plan(cluster, usage, policy, NOW)
        assert plan.status == "planned"
        assert check_plan(plan, cluster, usage, policy, NOW) == []
        assert plan.solver.lower_bound <= plan.solver.objective + 1e-6
        plans[method] = plan
    assert plans["milp"].solver.objective <= plans["greedy"].solver.objective + 1e-6
    if not limits:
        hot_after = [n for n in plans["milp"].nodes if n.node_class == "hot" and n.note]
        assert hot_after == []
