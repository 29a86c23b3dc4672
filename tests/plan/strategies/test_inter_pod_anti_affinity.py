"""RemovePodsViolatingInterPodAntiAffinity: two pods that exclude each other share a node.

Covers: only one of the two moves (the lower priority one), to a node where
the rule holds; with no such node it is reported as no-fit; pods without a
conflict stay.
"""

from __future__ import annotations

import pytest

from loadaware.cluster import LabelSelector, PodAffinityTerm
from tests.lib.builders import make_node, make_pod
from tests.plan.strategies.scenarios import (
    METHODS,
    cluster_of,
    cool_usage,
    counts,
    moved,
    plan_and_check,
    strategy_policy,
)

RULE = "RemovePodsViolatingInterPodAntiAffinity"
ON = {"removePodsViolatingInterPodAntiAffinity": {"enabled": True}}
AWAY_FROM_CACHE = PodAffinityTerm(
    label_selector=LabelSelector(match_labels={"app": "cache"}),
    topology_key="kubernetes.io/hostname",
)


def _pods():
    # Both ended up on "a" (the term was added after they were placed).
    return [
        make_pod(
            "cache-1",
            node="a",
            labels={"app": "cache"},
            required_pod_anti_affinity=(AWAY_FROM_CACHE,),
            priority=10,
        ),
        make_pod(
            "cache-2",
            node="a",
            labels={"app": "cache"},
            required_pod_anti_affinity=(AWAY_FROM_CACHE,),
            priority=5,
        ),
    ]


@pytest.mark.parametrize("method", METHODS)
def test_one_of_two_conflicting_pods_moves(method) -> None:
    nodes = [make_node("a"), make_node("b")]
    pods = _pods()
    plan = plan_and_check(
        cluster_of(nodes, pods), cool_usage(nodes, pods), strategy_policy(ON, method=method)
    )
    assert moved(plan, RULE) == [("default/cache-2", "a", "b")]
    assert counts(plan, RULE) == (1, 0)


def test_no_node_without_a_conflict_is_reported() -> None:
    nodes = [make_node("a"), make_node("b")]
    pods = [*_pods(), make_pod("cache-3", node="b", labels={"app": "cache"})]
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), strategy_policy(ON))
    assert plan.evictions == ()
    assert plan.profiles["default"][RULE].skipped_reasons == {"no-fit": 1}


def test_pods_without_conflict_stay() -> None:
    nodes = [make_node("a"), make_node("b")]
    pods = [_pods()[0], make_pod("web-1", node="a")]
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), strategy_policy(ON))
    assert plan.evictions == ()
