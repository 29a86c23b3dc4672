"""RemovePodsViolatingNodeAffinity, both solvers.

Covers the descheduler safety guide's three experiments: a node label change
leaves a pod violating required node affinity -> it is planned to move to the
node that now matches; no node qualifies -> blocked by nodeFit and reported;
a PodDisruptionBudget at disruptionsAllowed 0 -> blocked and reported. Also:
the preferred type (opt-in) moves a pod to a better-scoring node only; a pod
that still matches is left alone; the strategy off changes nothing; the source
need not be hot.
"""

from __future__ import annotations

import pytest

from loadaware.cluster import NodeSelectorTerm, Requirement
from loadaware.cluster._types import PreferredSchedulingTerm
from tests.lib.builders import make_node, make_pdb, make_pod
from tests.plan.strategies.scenarios import (
    METHODS,
    cluster_of,
    cool_usage,
    counts,
    moved,
    plan_and_check,
    strategy_policy,
)

RULE = "RemovePodsViolatingNodeAffinity"
SSD = NodeSelectorTerm(match_expressions=(Requirement(key="disk", operator="In", values=("ssd",)),))
ON = {"removePodsViolatingNodeAffinity": {"enabled": True}}


def _scenario(labels_b: dict[str, str], **pod_fields):
    # "a" lost its disk=ssd label; web-1 requires it.
    nodes = [
        make_node("a", labels={"disk": "hdd"}),
        make_node("b", labels=labels_b),
    ]
    pod = make_pod("web-1", node="a", required_node_affinity=(SSD,), **pod_fields)
    other = make_pod("api-1", node="a")
    return nodes, [pod, other]


@pytest.mark.parametrize("method", METHODS)
def test_pod_violating_required_affinity_moves_to_the_node_that_now_matches(method) -> None:
    nodes, pods = _scenario({"disk": "ssd"})
    cluster = cluster_of(nodes, pods)
    plan = plan_and_check(cluster, cool_usage(nodes, pods), strategy_policy(ON, method=method))
    assert plan.status == "planned"
    assert moved(plan) == [("default/web-1", "a", "b")]
    assert plan.evictions[0].reason == RULE
    assert counts(plan, RULE) == (1, 0)
    # Neither node is hot: the source need not be.
    assert {n.node_class for n in plan.nodes} == {"cold"}


@pytest.mark.parametrize("method", METHODS)
def test_blocked_by_node_fit_when_no_node_qualifies(method) -> None:
    nodes, pods = _scenario({"disk": "hdd"})
    cluster = cluster_of(nodes, pods)
    plan = plan_and_check(cluster, cool_usage(nodes, pods), strategy_policy(ON, method=method))
    assert plan.evictions == ()
    assert plan.status == "noop"
    assert plan.skipped["no-fit"] == 1
    assert counts(plan, RULE) == (0, 1)
    assert plan.profiles["default"][RULE].skipped_reasons == {"no-fit": 1}


@pytest.mark.parametrize("method", METHODS)
def test_blocked_by_nodefit_off_too(method) -> None:
    # nodeFit off lets hotspot replacements stay Pending; a must-move never does.
    nodes, pods = _scenario({"disk": "hdd"})
    policy = strategy_policy(ON, method=method, evictor={"nodeFit": False})
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), policy)
    assert plan.evictions == ()


@pytest.mark.parametrize("method", METHODS)
def test_blocked_by_a_pdb_at_zero(method) -> None:
    nodes, pods = _scenario({"disk": "ssd"})
    cluster = cluster_of(nodes, pods, pdbs=[make_pdb("web", {"app": "web"}, disruptions_allowed=0)])
    plan = plan_and_check(cluster, cool_usage(nodes, pods), strategy_policy(ON, method=method))
    assert plan.evictions == ()
    assert plan.skipped["pdb-blocks"] == 1
    assert counts(plan, RULE) == (0, 1)


def test_pod_that_still_matches_stays() -> None:
    nodes = [make_node("a", labels={"disk": "ssd"}), make_node("b", labels={"disk": "ssd"})]
    pods = [make_pod("web-1", node="a", required_node_affinity=(SSD,))]
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), strategy_policy(ON))
    assert plan.evictions == ()
    assert plan.reason == "no hot nodes"
    assert counts(plan, RULE) == (0, 0)


def test_strategy_off_changes_nothing() -> None:
    nodes, pods = _scenario({"disk": "ssd"})
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), strategy_policy({}))
    assert plan.evictions == ()
    assert RULE not in plan.profiles["default"]


@pytest.mark.parametrize("method", METHODS)
def test_preferred_moves_only_to_a_better_scoring_node(method) -> None:
    prefers_ssd = (PreferredSchedulingTerm(weight=10, preference=SSD),)
    nodes = [
        make_node("a", labels={"disk": "hdd"}),
        make_node("b", labels={"disk": "ssd"}),
    ]
    # A big neighbour keeps kube-scheduler (by requests) from choosing "a" again.
    pods = [
        make_pod("web-1", node="a", preferred_node_affinity=prefers_ssd),
        make_pod("db-1", node="a", cpu_millicores=2000),
    ]
    both = {
        "removePodsViolatingNodeAffinity": {
            "enabled": True,
            "nodeAffinityType": [
                "requiredDuringSchedulingIgnoredDuringExecution",
                "preferredDuringSchedulingIgnoredDuringExecution",
            ],
        }
    }
    plan = plan_and_check(
        cluster_of(nodes, pods), cool_usage(nodes, pods), strategy_policy(both, method=method)
    )
    assert moved(plan, RULE) == [("default/web-1", "a", "b")]
    # Required only (the default): the preferred terms are not read.
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), strategy_policy(ON))
    assert plan.evictions == ()


def test_preferred_landing_on_a_worse_node_is_refused() -> None:
    prefers_ssd = (PreferredSchedulingTerm(weight=10, preference=SSD),)
    nodes = [
        make_node("a", labels={"disk": "hdd"}),
        make_node("b", labels={"disk": "hdd"}),
        # The only better node is full: the replacement would land on "b", no better.
        make_node("c", labels={"disk": "ssd"}, pods=0),
    ]
    pods = [make_pod("web-1", node="a", preferred_node_affinity=prefers_ssd)]
    both = {
        "removePodsViolatingNodeAffinity": {
            "enabled": True,
            "nodeAffinityType": ["preferredDuringSchedulingIgnoredDuringExecution"],
        }
    }
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), strategy_policy(both))
    assert plan.evictions == ()
