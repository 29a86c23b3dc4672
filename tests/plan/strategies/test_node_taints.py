"""RemovePodsViolatingNodeTaints: a pod on a node tainted since.

Covers: an untolerated NoSchedule taint moves the pod; a tolerated one does
not; PreferNoSchedule counts only with includePreferNoSchedule, and then the
replacement may not land on another node with such a taint; excludedTaints and
includedTaints by key and by key=value.
"""

from __future__ import annotations

import pytest

from loadaware.cluster import Taint, Toleration
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

RULE = "RemovePodsViolatingNodeTaints"
DEDICATED = Taint(key="dedicated", value="gpu", effect="NoSchedule")


def _plan(settings, *, taint=DEDICATED, method="milp", tolerations=(), extra_nodes=()):
    nodes = [make_node("a", taints=[taint]), make_node("b"), *extra_nodes]
    pods = [make_pod("web-1", node="a", tolerations=tuple(tolerations))]
    policy = strategy_policy({"removePodsViolatingNodeTaints": settings}, method=method)
    return plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), policy)


@pytest.mark.parametrize("method", METHODS)
def test_untolerated_no_schedule_taint_moves_the_pod(method) -> None:
    plan = _plan({"enabled": True}, method=method)
    assert moved(plan, RULE) == [("default/web-1", "a", "b")]
    assert counts(plan, RULE) == (1, 0)


def test_tolerated_taint_leaves_the_pod() -> None:
    plan = _plan({"enabled": True}, tolerations=[Toleration(key="dedicated", operator="Exists")])
    assert plan.evictions == ()


def test_prefer_no_schedule_counts_only_when_included() -> None:
    soft = Taint(key="dedicated", value="gpu", effect="PreferNoSchedule")
    assert _plan({"enabled": True}, taint=soft).evictions == ()
    plan = _plan({"enabled": True, "includePreferNoSchedule": True}, taint=soft)
    assert moved(plan, RULE) == [("default/web-1", "a", "b")]


def test_prefer_no_schedule_replacement_may_not_land_on_another_such_node() -> None:
    soft = Taint(key="dedicated", value="gpu", effect="PreferNoSchedule")
    # Every other node carries the taint too: moving would not help. (A big
    # neighbour keeps kube-scheduler from choosing "a" again.)
    nodes = [make_node("a", taints=[soft]), make_node("b", taints=[soft])]
    pods = [make_pod("web-1", node="a"), make_pod("db-1", node="a", cpu_millicores=2000)]
    policy = strategy_policy(
        {"removePodsViolatingNodeTaints": {"enabled": True, "includePreferNoSchedule": True}}
    )
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), policy)
    assert plan.evictions == ()
    assert plan.profiles["default"][RULE].skipped_reasons == {"still-violates": 2}


@pytest.mark.parametrize(
    ("settings", "moves"),
    [
        ({"enabled": True, "excludedTaints": ["dedicated"]}, False),
        ({"enabled": True, "excludedTaints": ["dedicated=gpu"]}, False),
        ({"enabled": True, "excludedTaints": ["dedicated=cpu"]}, True),
        ({"enabled": True, "includedTaints": ["other"]}, False),
        ({"enabled": True, "includedTaints": ["dedicated=gpu"]}, True),
    ],
    ids=["excluded-key", "excluded-pair", "excluded-other-value", "included-other", "included"],
)
def test_excluded_and_included_taints(settings, moves) -> None:
    assert bool(_plan(settings).evictions) is moves
