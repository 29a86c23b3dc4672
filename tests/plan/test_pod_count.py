"""`pods` in thresholds and targetThresholds: a node's pod count against its
allocatable pods, as the descheduler has it.

Covers: a node is hot by pod count alone, with cpu and memory calm; each
eviction moves one pod's worth; both planners bring the node to its target and
never push a landing node over its own pod target; the plan's nodes carry
`pods` in before/after and thresholds only when a pool judges it; a pool
judging pods alone needs nothing of the metrics for pods' count.
"""

from __future__ import annotations

import pytest

from loadaware.plan import build_plan, classify_nodes, plan_to_json
from loadaware.policy import LoadAwarePolicy, parse_policy
from tests.lib.builders import NOW, GiB, make_cluster, make_node, make_pod, make_usage, sample

POOL = {
    "name": "default",
    "thresholds": {"cpu": 40, "memory": 50, "pods": 20},
    "targetThresholds": {"cpu": 70, "memory": 80, "pods": 50},
}


def _policy(method: str = "milp", pool: dict | None = None) -> LoadAwarePolicy:
    return parse_policy({"nodePools": [pool or POOL], "optimizer": {"method": method}})


def _crowded(on_crowded: int = 14, on_other: tuple[int, ...] = (2, 4)):
    """Node "crowded" holds `on_crowded` of its 20 pod slots (70%) at low cpu and
    memory; the others hold few. Pods are small and use little."""
    names = ["crowded", *(f"other-{i}" for i in range(len(on_other)))]
    nodes = [make_node(name, pods=20) for name in names]
    pods = []
    for name, count in zip(names, (on_crowded, *on_other), strict=True):
        pods += [
            make_pod(f"{name}-web-{k}", node=name, labels={"app": f"{name}-web-{k}"})
            for k in range(count)
        ]
    usage = make_usage(
        {name: sample(0.8, 3 * GiB) for name in names},
        {f"default/{p.name}": sample(0.02, 0.05 * GiB) for p in pods},
    )
    return make_cluster(nodes, pods), usage


def test_a_node_is_hot_by_its_pod_count_alone() -> None:
    cluster, usage = _crowded()
    table = classify_nodes(cluster, usage, _policy().node_pools, {})
    assert table.resources == ("cpu", "memory", "pods")
    classes = dict(zip(table.names, table.classes, strict=True))
    assert classes["crowded"] == "hot"  # 14 of 20 pods: 70% > 50%
    assert classes["other-0"] == "cold"  # cpu 20%, memory 19%, pods 10%: under all thresholds
    assert table.utilisation()[table.index["crowded"], 2] == pytest.approx(0.7)


@pytest.mark.parametrize("method", ["greedy", "milp"])
def test_evictions_bring_the_count_to_its_target_without_crowding_a_landing(
    method: str,
) -> None:
    cluster, usage = _crowded()
    plan = build_plan(cluster, usage, _policy(method), NOW)
    assert plan.status == "planned", plan.reason
    # 14 pods, target 50% of 20 = 10: at least 4 must leave, one pod's worth each.
    assert len(plan.evictions) >= 4
    assert {e.node for e in plan.evictions} == {"crowded"}
    nodes = {n.name: n for n in plan.nodes}
    assert nodes["crowded"].after["pods"] <= 0.5
    assert nodes["crowded"].before["pods"] == pytest.approx(0.7)
    for name, node in nodes.items():
        assert node.after["pods"] <= 0.5, name
        landed = sum(1 for e in plan.evictions if e.expected_node == name)
        if name != "crowded":
            assert node.after["pods"] == pytest.approx(node.before["pods"] + landed / 20)
    document = plan_to_json(plan)
    crowded = next(n for n in document["nodes"] if n["name"] == "crowded")
    assert crowded["targetThresholds"] == {"cpu": 0.7, "memory": 0.8, "pods": 0.5}
    assert set(crowded["before"]) == {"cpu", "memory", "pods"}


def test_no_landing_has_room_for_another_pod() -> None:
    """Both other nodes are at their pod target already: nothing may move."""
    cluster, usage = _crowded(on_other=(10, 10))
    plan = build_plan(cluster, usage, _policy(), NOW)
    assert plan.evictions == ()


def test_pods_are_left_out_where_no_pool_judges_them() -> None:
    cluster, usage = _crowded()
    pool = {**POOL, "thresholds": {"cpu": 40, "memory": 50}}
    pool["targetThresholds"] = {"cpu": 70, "memory": 80}
    plan = build_plan(cluster, usage, _policy(pool=pool), NOW)
    assert plan.status == "noop"
    assert all(set(n.before) == {"cpu", "memory"} for n in plan.nodes)


def test_a_pool_judging_pods_alone() -> None:
    cluster, usage = _crowded()
    pool = {"name": "default", "thresholds": {"pods": 20}, "targetThresholds": {"pods": 50}}
    plan = build_plan(cluster, usage, _policy(pool=pool), NOW)
    assert plan.status == "planned", plan.reason
    nodes = {n.name: n for n in plan.nodes}
    assert nodes["crowded"].after["pods"] <= 0.5
    assert plan_to_json(plan)["nodes"][0]["targetThresholds"] == {"pods": 0.5}
