"""PodLifeTime, RemovePodsHavingTooManyRestarts and RemoveFailedPods.

Covers: pods older than maxPodLifeTimeSeconds move, oldest first, younger ones
stay; `states` filters by phase and container waiting reason; restarts counted
with and without init containers against podRestartThreshold; failed pods are
removed with no landing (expectedNode null), filtered by reasons, exitCodes,
excludeOwnerKinds and minPodLifetimeSeconds; a failed bare pod stays while
FailedBarePods protects it.
"""

from __future__ import annotations

import datetime

import pytest

from loadaware.cluster._types import ContainerStatus
from tests.lib.builders import NOW, make_node, make_pod
from tests.plan.strategies.scenarios import (
    METHODS,
    cluster_of,
    cool_usage,
    moved,
    plan_and_check,
    strategy_policy,
)

DAY = datetime.timedelta(days=1)


def _plan(pods, strategies, **overrides):
    nodes = [make_node("a"), make_node("b")]
    heavy = make_pod("db-1", node="a", cpu_millicores=2000)  # keeps replacements off "a"
    pods = [*pods, heavy]
    return plan_and_check(
        cluster_of(nodes, pods), cool_usage(nodes, pods), strategy_policy(strategies, **overrides)
    )


@pytest.mark.parametrize("method", METHODS)
def test_old_pods_move_oldest_first(method) -> None:
    pods = [
        make_pod("old-1", node="a", created=NOW - 3 * DAY),
        make_pod("older-1", node="a", created=NOW - 5 * DAY),
        make_pod("young-1", node="a", created=NOW - DAY / 2),
    ]
    lifetime = {"podLifeTime": {"enabled": True, "maxPodLifeTimeSeconds": 2 * 86400}}
    plan = _plan(pods, lifetime, method=method)
    assert [pod for pod, _, _ in moved(plan, "PodLifeTime")] == [
        "default/older-1",
        "default/old-1",
    ]


def test_lifetime_states_filter() -> None:
    crashing = (ContainerStatus(name="c", waiting_reason="CrashLoopBackOff"),)
    pods = [
        make_pod("crash-1", node="a", created=NOW - 3 * DAY, container_statuses=crashing),
        make_pod("fine-1", node="a", created=NOW - 3 * DAY),
    ]
    lifetime = {
        "podLifeTime": {
            "enabled": True,
            "maxPodLifeTimeSeconds": 86400,
            "states": ["CrashLoopBackOff"],
        }
    }
    assert [p for p, _, _ in moved(_plan(pods, lifetime))] == ["default/crash-1"]


@pytest.mark.parametrize(("including_init", "moves"), [(False, False), (True, True)])
def test_restarts_with_and_without_init_containers(including_init, moves) -> None:
    statuses = (
        ContainerStatus(name="init", init=True, restart_count=4),
        ContainerStatus(name="app", restart_count=2),
    )
    pods = [make_pod("flaky-1", node="a", container_statuses=statuses)]
    restarts = {
        "removePodsHavingTooManyRestarts": {
            "enabled": True,
            "podRestartThreshold": 5,
            "includingInitContainers": including_init,
        }
    }
    plan = _plan(pods, restarts)
    assert bool(moved(plan, "RemovePodsHavingTooManyRestarts")) is moves


def _failed(name="batch-1", **fields):
    fields.setdefault(
        "container_statuses", (ContainerStatus(name="c", terminated_reason="Error", exit_code=1),)
    )
    return make_pod(name, node="a", phase="Failed", ready=False, **fields)


@pytest.mark.parametrize("method", METHODS)
def test_failed_pods_are_removed_without_a_landing(method) -> None:
    plan = _plan([_failed()], {"removeFailedPods": {"enabled": True}}, method=method)
    assert moved(plan, "RemoveFailedPods") == [("default/batch-1", "a", None)]


@pytest.mark.parametrize(
    ("settings", "moves"),
    [
        ({"reasons": ["Error"]}, True),
        ({"reasons": ["OOMKilled"]}, False),
        ({"exitCodes": [1]}, True),
        ({"exitCodes": [137]}, False),
        ({"excludeOwnerKinds": ["ReplicaSet"]}, False),
        ({"minPodLifetimeSeconds": 3600}, True),
        ({"minPodLifetimeSeconds": 3 * 86400}, False),
    ],
    ids=["reason", "other-reason", "exit-code", "other-exit-code", "owner-kind", "old", "young"],
)
def test_failed_pod_filters(settings, moves) -> None:
    plan = _plan([_failed()], {"removeFailedPods": {"enabled": True, **settings}})
    assert bool(moved(plan, "RemoveFailedPods")) is moves


def test_failed_bare_pod_is_protected_by_default() -> None:
    bare = _failed("lonely", owner=None)
    plan = _plan([bare], {"removeFailedPods": {"enabled": True}})
    assert plan.evictions == ()
    assert plan.profiles["default"]["RemoveFailedPods"].skipped_reasons == {"failed-bare-pod": 1}
    plan = _plan(
        [bare],
        {"removeFailedPods": {"enabled": True}},
        evictor={"podProtections": {"defaultDisabled": ["FailedBarePods"]}},
    )
    assert moved(plan) == [("default/lonely", "a", None)]
