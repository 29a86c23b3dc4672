"""The exact planner (MILP) against known optima and the greedy.

Covers: the MILP finds the optimum found by enumeration on tiny instances;
it beats the greedy when a shared budget must be spent across hot nodes; the
reported lower bound never exceeds the objective; solver.method says which
solver's plan was kept; the final replay leaves the placement holding the plan's
moves; a hot node the selection leaves hot is relieved greedily right after its
own moves, in relief order, with no budget a later chosen move needs.
"""

from __future__ import annotations

import datetime
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadaware.plan import _build, _milp, _order, build_plan
from loadaware.plan._placement import Placement
from loadaware.plan._problem import OVERLOAD_WEIGHT, Problem
from loadaware.policy import parse_policy
from tests.lib.builders import (
    NOW,
    GiB,
    daemonset,
    make_cluster,
    make_node,
    make_pod,
    make_usage,
    sample,
)
from tests.lib.plan_checks import check_plan


def _policy(limits=None, method="milp"):
    return parse_policy({"limits": limits or {}, "optimizer": {"method": method, "mipRelGap": 0}})


def _instance(hot_pods: dict[str, list[float]], cold: int = 2):
    """Hot nodes of 4 cores at 90% cpu, each with a DaemonSet pod requesting half the
    node (so replacements never bounce back) and pods using the given cores; empty
    8-core cold nodes."""
    nodes, pods, node_usage, pod_usage = [], [], {}, {}
    for name, usages in hot_pods.items():
        nodes.append(make_node(name))
        pods.append(
            make_pod(f"agent-{name}", node=name, owner=daemonset("agent"), cpu_millicores=2000)
        )
        node_usage[name] = sample(3.6, 4 * GiB)
        for j, cores in enumerate(usages):
            pod = make_pod(f"app{name}{j}-x", node=name, labels={"app": f"app{name}{j}"})
            pods.append(pod)
            pod_usage[pod.key] = sample(cores, 0.1 * GiB)
    for i in range(cold):
        nodes.append(make_node(f"cold{i}", cpu_millicores=8000, memory_bytes=64 * GiB))
        node_usage[f"cold{i}"] = sample(0.5, 2 * GiB)
    return make_cluster(nodes, pods), make_usage(node_usage, pod_usage)


def test_milp_beats_greedy_when_a_shared_budget_spans_hot_nodes() -> None:
    # "a" is hotter and needs two pods; "b" needs one. With two evictions in all the
    # greedy spends both on "a"; relieving "b" and half of "a" leaves less overload.
    cluster, usage = _instance({"a": [0.5, 0.5], "b": [0.5]})
    usage.nodes["b"] = sample(3.2, 4 * GiB)
    usage.nodes["a"] = sample(3.6, 4 * GiB)
    limits = {"maxNoOfPodsToEvictTotal": 2}
    greedy = build_plan(cluster, usage, _policy(limits, "greedy"), NOW)
    exact = build_plan(cluster, usage, _policy(limits), NOW)
    assert sorted(e.node for e in greedy.evictions) == ["a", "a"]
    assert sorted(e.node for e in exact.evictions) == ["a", "b"]
    assert exact.solver.method == "milp"
    assert exact.solver.objective < greedy.solver.objective


def _brute_force(cluster, usage, limits: dict) -> float:
    """The least objective over every subset of movable pods (no bounce-back in these instances)."""
    hot = {
        n.name
        for n in cluster.nodes
        if usage.nodes[n.name].cpu_cores / (n.allocatable_cpu_millicores / 1000) > 0.7
    }
    movable = [
        p for p in cluster.pods if p.node_name in hot and p.owner and p.owner.kind != "DaemonSet"
    ]
    best = float("inf")
    for size in range(len(movable) + 1):
        for subset in itertools.combinations(movable, size):
            if (
                limits.get("maxNoOfPodsToEvictTotal") is not None
                and size > limits["maxNoOfPodsToEvictTotal"]
            ):
                continue
            per_node = {}
            for p in subset:
                per_node[p.node_name] = per_node.get(p.node_name, 0) + 1
            limit = limits.get("maxNoOfPodsToEvictPerNode")
            if limit is not None and any(v > limit for v in per_node.values()):
                continue
            residual = 0.0
            for name in hot:
                left = usage.nodes[name].cpu_cores - sum(
                    usage.pods[p.key].cpu_cores for p in subset if p.node_name == name
                )
                residual += max(0.0, left / 4 - 0.7)
            # Each eviction costs 1 plus a tie-break under 0.01.
            best = min(best, OVERLOAD_WEIGHT * residual + size)
    return best


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.lists(st.sampled_from([0.1, 0.2, 0.3, 0.45, 0.6, 0.9]), min_size=1, max_size=4),
        min_size=1,
        max_size=3,
    ),
    st.one_of(st.none(), st.integers(0, 4)),
    st.one_of(st.none(), st.integers(1, 2)),
)
def test_milp_finds_the_optimum_found_by_enumeration(pod_usages, total, per_node) -> None:
    hot_pods = {f"h{i}": usages for i, usages in enumerate(pod_usages)}
    cluster, usage = _instance(hot_pods)
    limits = {}
    if total is not None:
        limits["maxNoOfPodsToEvictTotal"] = total
    if per_node is not None:
        limits["maxNoOfPodsToEvictPerNode"] = per_node
    policy = _policy(limits)
    plan = build_plan(cluster, usage, policy, NOW)
    assert check_plan(plan, cluster, usage, policy, NOW) == []
    optimum = _brute_force(cluster, usage, limits)
    objective = (
        plan.solver.objective if plan.evictions or plan.solver.objective is not None else optimum
    )
    # Within the tie-break span per eviction of the enumerated optimum.
    assert objective == pytest.approx(optimum, abs=0.01 * max(len(plan.evictions), 1) + 1e-6)
    assert plan.solver.lower_bound is not None
    assert plan.solver.lower_bound <= objective + 1e-6


@pytest.mark.parametrize(
    ("cheaper", "costlier"),
    [
        pytest.param({"priority": 0}, {"priority": 1000}, id="lower priority is cheaper"),
        pytest.param(
            {"annotations": {"controller.kubernetes.io/pod-deletion-cost": "-5"}},
            {"annotations": {"controller.kubernetes.io/pod-deletion-cost": "100"}},
            id="lower pod-deletion-cost is cheaper",
        ),
        pytest.param({"restart_count": 40}, {"restart_count": 0}, id="a restarting pod is cheaper"),
        pytest.param(
            {"created": NOW - datetime.timedelta(hours=1)},
            {"created": NOW - datetime.timedelta(days=30)},
            id="a younger pod is cheaper",
        ),
    ],
)
@pytest.mark.parametrize("cheaper_name", ["aaa", "zzz"], ids=["named first", "named last"])
def test_between_equal_pods_the_cheaper_one_is_evicted(
    cheaper: dict, costlier: dict, cheaper_name: str
) -> None:
    costlier_name = "zzz" if cheaper_name == "aaa" else "aaa"
    nodes = [make_node("hot"), make_node("cold0", cpu_millicores=8000, memory_bytes=64 * GiB)]
    agent = make_pod("agent-hot", node="hot", owner=daemonset("agent"), cpu_millicores=2000)
    pods = [
        agent,
        make_pod(f"{costlier_name}-x", node="hot", labels={"app": costlier_name}, **costlier),
        make_pod(f"{cheaper_name}-x", node="hot", labels={"app": cheaper_name}, **cheaper),
    ]
    usage = make_usage(
        {"hot": sample(3.2, 4 * GiB), "cold0": sample(0.5, 2 * GiB)},
        {"default/aaa-x": sample(0.5, 0.1 * GiB), "default/zzz-x": sample(0.5, 0.1 * GiB)},
    )
    plan = build_plan(make_cluster(nodes, pods), usage, _policy(), NOW)
    assert [e.pod for e in plan.evictions] == [f"default/{cheaper_name}-x"]


class _CapturedError(Exception):
    pass


def _problem_of(monkeypatch: pytest.MonkeyPatch, cluster, usage, policy) -> Problem:
    """The Problem build_plan hands its solvers."""
    captured: list[Problem] = []

    def capture(problem: Problem):
        captured.append(problem)
        raise _CapturedError

    monkeypatch.setattr(_build, "_solve", capture)
    with pytest.raises(_CapturedError):
        build_plan(cluster, usage, policy, NOW)
    return captured[0]


def test_the_final_replay_leaves_the_placement_holding_the_plan(monkeypatch) -> None:
    # The replay is the plan: the placement must then hold the plan's moves, in
    # order, and no other (landing control and the relief order build on it).
    cluster, usage = _instance({"a": [0.5, 0.5], "b": [0.5], "c": [0.9, 0.2]}, cold=3)
    problem = _problem_of(monkeypatch, cluster, usage, _policy())
    placement = Placement(problem)
    outcome = _milp.solve_milp(problem, placement)
    assert outcome.solution is not None
    assert outcome.rounds == 1
    moves = [(m.candidate, m.target_index) for m in outcome.solution.moves]
    assert len(moves) >= 3

    fresh = Placement(problem)
    for move in outcome.solution.moves:
        fresh.apply(move.candidate, move.landing)
    assert placement.applied_moves() == fresh.applied_moves()
    assert np.array_equal(placement.usage, fresh.usage)
    assert np.array_equal(outcome.solution.usage_after, fresh.usage)

    placement.reset()
    assert placement.applied_moves() == []
    assert np.array_equal(placement.usage, problem.table.usage)


def _replayed(monkeypatch, cluster, usage, policy, chosen_on: set[str]):
    """_replay of a selection of every candidate on the `chosen_on` hot nodes."""
    problem = _problem_of(monkeypatch, cluster, usage, policy)
    ordered, _model = _milp.selection_model(problem)
    names = problem.table.names
    chosen = np.array([names[c.node_index] in chosen_on for c in ordered])
    banned = np.zeros(len(ordered), dtype=bool)
    solution, failed = _milp._replay(problem, Placement(problem), ordered, chosen, banned, {})
    return problem, solution, failed


def test_a_hot_node_the_selection_leaves_hot_is_relieved_in_its_place(monkeypatch) -> None:
    # "a" is the hottest, "c" the least hot; the selection holds only "c"'s pods. The
    # moves relieving "a" and "b" come first, as the evictor carries them out, and
    # need no second prediction in relief order.
    cluster, usage = _instance({"a": [0.5, 0.5], "b": [0.5, 0.5], "c": [0.5]}, cold=3)
    usage.nodes["a"] = sample(3.7, 4 * GiB)
    usage.nodes["c"] = sample(3.3, 4 * GiB)
    problem, solution, failed = _replayed(monkeypatch, cluster, usage, _policy(), {"c"})
    assert failed == []
    names = problem.table.names
    assert [names[m.candidate.node_index] for m in solution.moves] == ["a", "a", "b", "b", "c"]
    assert _order.relief_order(problem, solution.moves) == solution.moves
    assert not any(problem.is_hot(solution.usage_after, h) for h in problem.hot_indexes)


def test_the_completion_spends_no_budget_a_later_chosen_move_needs(monkeypatch) -> None:
    # Two evictions in all. The selection chose "b"'s pod; "a", hotter and left hot,
    # is relieved first but gets one eviction only, so "b"'s move stays in budget.
    cluster, usage = _instance({"a": [0.5, 0.5], "b": [0.5]}, cold=3)
    usage.nodes["a"] = sample(3.8, 4 * GiB)
    policy = _policy({"maxNoOfPodsToEvictTotal": 2})
    problem, solution, failed = _replayed(monkeypatch, cluster, usage, policy, {"b"})
    assert failed == []
    names = problem.table.names
    assert [names[m.candidate.node_index] for m in solution.moves] == ["a", "b"]
    assert solution.skipped == {"maxNoOfPodsToEvictTotal": 1}
