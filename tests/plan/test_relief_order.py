"""The order of a plan's evictions: the hottest nodes' moves first.

Covers: on generated clusters, with both solvers, the evictions come hot node by
hot node, each node's together, the furthest above its targets first, and every
landing holds when the evictions are replayed in that order through the
kube-scheduler model; a solver that hands its moves over in another order (the
coolest node first) has them put in relief order with their landings predicted
again in that order, relieving the same hot nodes.
"""

from __future__ import annotations

import pytest

from loadaware.cluster import cluster_state_from_objects
from loadaware.metrics import usage_from_json
from loadaware.plan import _build, build_plan
from loadaware.plan._greedy import Solution
from loadaware.policy import parse_policy
from loadaware.sim import generate_cluster
from tests.lib.builders import NOW
from tests.lib.plan_checks import check_plan, hottest_first_problems, landing_replay_problems


@pytest.fixture(scope="module", params=[("loose", 3), ("tight", 4)], ids=["loose", "tight"])
def instance(request):
    capacity, seed = request.param
    scenario = generate_cluster(nodes=150, seed=seed, capacity=capacity, now=NOW)
    return cluster_state_from_objects(scenario.objects), usage_from_json(scenario.metrics)


def _policy(method: str):
    # Every feasible node scored: a landing is kube-scheduler's single best choice,
    # which a replay can check exactly.
    return parse_policy(
        {"optimizer": {"method": method}, "steering": {"percentageOfNodesToScore": 100}}
    )


@pytest.mark.parametrize("method", ["greedy", "milp"])
def test_evictions_come_hottest_node_first_with_landings_that_hold(instance, method) -> None:
    cluster, usage = instance
    policy = _policy(method)
    plan = build_plan(cluster, usage, policy, NOW)
    assert plan.status == "planned"
    assert len({e.node for e in plan.evictions}) > 3
    assert hottest_first_problems(plan) == []
    assert landing_replay_problems(plan, cluster) == []
    assert check_plan(plan, cluster, usage, policy, NOW) == []


def test_a_solver_order_is_put_hottest_first_and_predicted_again(instance, monkeypatch) -> None:
    cluster, usage = instance
    policy = _policy("greedy")
    as_solved = build_plan(cluster, usage, policy, NOW)
    solve = _build._solve

    def coolest_first(problem):
        solution, method, bound, placement = solve(problem)
        runs: dict[int, list] = {}
        for move in solution.moves:
            runs.setdefault(move.candidate.node_index, []).append(move)
        backwards = [m for node in reversed(list(runs)) for m in runs[node]]
        assert backwards != solution.moves
        reordered = Solution(
            moves=backwards,
            usage_after=solution.usage_after,
            notes=solution.notes,
            skipped=solution.skipped,
            unplaced=solution.unplaced,
            blocked=solution.blocked,
        )
        return reordered, method, bound, placement

    monkeypatch.setattr(_build, "_solve", coolest_first)
    plan = build_plan(cluster, usage, policy, NOW)
    assert hottest_first_problems(plan) == []
    assert landing_replay_problems(plan, cluster) == []
    assert check_plan(plan, cluster, usage, policy, NOW) == []

    def left_hot(p) -> set[str]:
        return {n.name for n in p.nodes if n.node_class == "hot" and n.note}

    assert left_hot(plan) == left_hot(as_solved)
    assert plan.evictions[0].node == as_solved.evictions[0].node
