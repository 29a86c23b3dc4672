"""The plan's basis for landing control: plan_with_basis and LandingControl.from_basis.

A round plans once and starts its landing control from what the planner built
(the node table, the candidates, the Placement the solvers replayed on), instead
of assessing, classifying and building the occupancy again (LandingControl.for_plan).

Covers, both solvers, on a generated cluster whose plan has hotspot moves, must-moves
of two strategies (duplicates with a landing rule, restarts) and consolidation (a node
emptied, another closed by a trial the budget stopped): plan_with_basis gives
build_plan's plan, and a basis for each eviction in order; its Placement, restored,
answers as a freshly built one (usage, requests, where each pod is, every landing);
a control from the basis derives each move's landing as for_plan's does, move after
move as replacements bind and predecessors go, and judges landings alike; the
basis's must-move candidates are those for_plan derives. A plan without evictions
has no basis.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest

from loadaware import cluster, metrics, plan, policy, sim
from loadaware.plan._closed_loop import LandingControl
from loadaware.plan._placement import Placement
from tests.lib.builders import NOW

RESTARTS = "RemovePodsHavingTooManyRestarts"
DUPLICATES = "RemoveDuplicates"
CONSOLIDATION = "HighNodeUtilization"


@pytest.fixture(scope="module")
def instance() -> tuple[cluster.ClusterState, metrics.Usage]:
    generated = sim.generate_cluster(nodes=60, seed=1, family="usage-independent", now=NOW)
    return (
        cluster.cluster_state_from_objects(generated.objects),
        metrics.usage_from_json(generated.metrics),
    )


def _policy(method: str) -> policy.LoadAwarePolicy:
    return policy.parse_policy(
        {
            "optimizer": {"method": method},
            "profiles": [
                {
                    "name": "default",
                    "strategies": {
                        "loadBalancing": {"enabled": True},
                        "removePodsHavingTooManyRestarts": {
                            "enabled": True,
                            "podRestartThreshold": 3,
                        },
                    },
                },
                {
                    "name": "duplicates",
                    "namespaces": {"include": ["media"]},
                    "strategies": {"removeDuplicates": {"enabled": True}},
                },
            ],
            "consolidation": {
                "enabled": True,
                "maxNodesPerRound": 3,
                "thresholds": {"cpu": 40, "memory": 40},
            },
        }
    )


def _planned(instance, method: str) -> tuple[plan.Plan, plan.LandingBasis]:
    state, usage = instance
    planned, basis = plan.plan_with_basis(state, usage, _policy(method), usage.collected_at)
    reasons = Counter(e.reason for e in planned.evictions)
    # Every kind of move; consolidation emptied a node and a trial the budget stopped
    # left another closed.
    assert set(reasons) == {"hotspot", RESTARTS, DUPLICATES, CONSOLIDATION}
    assert planned.consolidation is not None
    assert planned.consolidation.nodes
    assert "budget" in planned.consolidation.note
    assert basis is not None
    return planned, basis


@pytest.mark.parametrize("method", ["greedy", "milp"])
def test_the_plan_is_build_plans_and_the_basis_follows_its_evictions(instance, method) -> None:
    state, usage = instance
    planned, basis = _planned(instance, method)
    assert planned == plan.build_plan(state, usage, _policy(method), usage.collected_at)
    assert [c.pod.key for c in basis.candidates] == [e.pod for e in planned.evictions]
    names = basis.problem.table.names
    assert [names[c.node_index] for c in basis.candidates] == [e.node for e in planned.evictions]
    assert [c.reason for c in basis.candidates] == [e.reason for e in planned.evictions]


@pytest.mark.parametrize("method", ["greedy", "milp"])
def test_the_restored_placement_answers_as_a_fresh_one(instance, method) -> None:
    state, _usage = instance
    _plan, basis = _planned(instance, method)
    restored = basis.placement
    assert restored.applied_moves()  # the solvers' last replay is still applied
    restored.restore()
    fresh = Placement(basis.problem)
    assert restored.applied_moves() == []
    assert np.array_equal(restored.usage, fresh.usage)
    assert not restored.variance.any()
    ours, theirs = restored.occupancy.resources(), fresh.occupancy.resources()
    for field in dataclasses.fields(ours):
        assert np.array_equal(getattr(ours, field.name), getattr(theirs, field.name))
    assert all(restored.occupancy.placement(p) == fresh.occupancy.placement(p) for p in state.pods)
    # Every landing the round may ask for first. (That the nodes consolidation closed
    # are open again shows once replacements have moved: the next test.)
    tried = [*basis.candidates, *(c for cs in basis.problem.candidates.values() for c in cs)]
    assert [restored.landing(c) for c in tried] == [fresh.landing(c) for c in tried]


@pytest.mark.parametrize("method", ["greedy", "milp"])
def test_a_control_from_the_basis_derives_what_for_plan_derives(instance, method) -> None:
    state, usage = instance
    planned, basis = _planned(instance, method)
    ours = LandingControl.from_basis(basis)
    theirs = LandingControl.for_plan(state, usage, _policy(method), usage.collected_at, planned)
    others = basis.problem.table.names[:8]
    bound = 0
    for eviction in planned.evictions:
        landing = ours.landing(eviction)
        assert landing == theirs.landing(eviction), eviction.pod
        for node in others:
            assert ours.judge_landing(eviction, node) == theirs.judge_landing(eviction, node)
        if landing.skip is not None or landing.expected_node is None:
            continue
        # The replacement lands where expected, and its predecessor goes every other time.
        for control in (ours, theirs):
            control.replacement_bound(eviction, landing.expected_node, NOW)
            if bound % 2:
                control.predecessor_gone(eviction, NOW)
        bound += 1
    assert bound >= len(planned.evictions) // 2
    assert ours.still_hot() == theirs.still_hot()


@pytest.mark.parametrize("method", ["greedy", "milp"])
def test_must_move_candidates_are_those_for_plan_derives(instance, method) -> None:
    state, usage = instance
    planned, basis = _planned(instance, method)
    derived = LandingControl.for_plan(state, usage, _policy(method), usage.collected_at, planned)
    names = basis.problem.table.names
    checked = 0
    for ours in basis.candidates:
        if ours.reason not in (RESTARTS, DUPLICATES):
            continue
        theirs = derived._candidates[ours.pod.key]
        assert (ours.pod, ours.node_index, ours.reason, ours.terminal) == (
            theirs.pod,
            theirs.node_index,
            theirs.reason,
            theirs.terminal,
        )
        assert np.array_equal(ours.usage, theirs.usage)
        assert (ours.landing_check is None) == (theirs.landing_check is None)
        if ours.landing_check is not None and theirs.landing_check is not None:
            assert [ours.landing_check(n, []) for n in names] == [
                theirs.landing_check(n, []) for n in names
            ]
            checked += 1
    assert checked  # the duplicates' landing rule was compared


def test_a_plan_without_evictions_has_no_basis(instance) -> None:
    state, usage = instance
    settings = policy.parse_policy({"limits": {"maxNoOfPodsToEvictTotal": 0}})
    planned, basis = plan.plan_with_basis(state, usage, settings, usage.collected_at)
    assert planned.evictions == ()
    assert basis is None
    stale, basis = plan.plan_with_basis(state, usage, settings, NOW.replace(year=2027))
    assert stale.status == "refused"
    assert basis is None
