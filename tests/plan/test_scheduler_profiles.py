"""The planner under the cluster's scheduler configuration (steering.schedulerConfig,
steering.schedulerNames).

Covers: a MostAllocated profile moves the pod to the fullest good node where the
default profile picks the emptiest; a pod whose spec.schedulerName no modelled
profile has is not moved and the plan counts it as unmodelled-scheduler; listing
its scheduler in schedulerNames (without a configuration: the default profile)
moves it again; a profile's own percentageOfNodesToScore sizes its landing sets.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from loadaware.cluster import ClusterState
from loadaware.metrics import Usage
from loadaware.plan import build_plan
from loadaware.policy import LoadAwarePolicy, parse_policy
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

MOST_ALLOCATED: dict[str, Any] = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
            ],
        }
    ]
}


def _policy(**steering: object) -> LoadAwarePolicy:
    return parse_policy(
        {
            "nodePools": [
                {
                    "name": "default",
                    "thresholds": {"cpu": 20, "memory": 20},
                    "targetThresholds": {"cpu": 70, "memory": 80},
                }
            ],
            "steering": steering,
        }
    )


def _cluster(scheduler_name: str = "default-scheduler") -> tuple[ClusterState, Usage]:
    """One hot node with a pod to move, and two cool nodes: `light` requests little,
    `full` much (both stay under their targets with the pod)."""
    nodes = [make_node("hot"), make_node("light"), make_node("full")]
    pod = dataclasses.replace(
        make_pod("web-1", node="hot", cpu_millicores=100), scheduler_name=scheduler_name
    )
    pods = [
        make_pod("agent-hot", node="hot", owner=daemonset("agent"), cpu_millicores=3000),
        pod,
        make_pod("filler-light", node="light", cpu_millicores=100),
        make_pod("filler-full", node="full", cpu_millicores=2500, memory_bytes=6 * GiB),
    ]
    node_usage = {
        "hot": sample(3.6, 4 * GiB),
        "light": sample(1.0, 2 * GiB),
        "full": sample(1.0, 2 * GiB),
    }
    return make_cluster(nodes, pods), make_usage(node_usage, {"default/web-1": sample(0.6, GiB)})


def test_most_allocated_lands_on_the_fullest_good_node() -> None:
    cluster, usage = _cluster()
    (default,) = build_plan(cluster, usage, _policy(), NOW).evictions
    assert default.expected_node == "light"
    (packed,) = build_plan(cluster, usage, _policy(schedulerConfig=MOST_ALLOCATED), NOW).evictions
    assert packed.expected_node == "full"


def test_a_pod_of_an_unmodelled_scheduler_is_not_moved() -> None:
    cluster, usage = _cluster(scheduler_name="batch-scheduler")
    plan = build_plan(cluster, usage, _policy(), NOW)
    assert plan.evictions == ()
    assert plan.skipped.get("unmodelled-scheduler") == 1
    listed = build_plan(
        cluster, usage, _policy(schedulerNames=["default-scheduler", "batch-scheduler"]), NOW
    )
    assert [e.pod for e in listed.evictions] == ["default/web-1"]


def test_scheduler_names_leave_out_the_default_scheduler() -> None:
    cluster, usage = _cluster()
    plan = build_plan(cluster, usage, _policy(schedulerNames=["batch-scheduler"]), NOW)
    assert plan.evictions == ()
    assert plan.skipped.get("unmodelled-scheduler") == 1
