"""ImageLocality in the kube-scheduler model, beyond kube-scheduler's own table.

Covered: a replacement's landing moves to the node that holds its image where two
nodes otherwise tie, in score_pod and in a plan's expectedNode (without a soft
taint); the plugin is absent when no feasible node reports any of the pod's
images, and the other plugins' totals are then untouched; an image's spread
counts every node of the cluster, infeasible ones too; a name's size is the one
the first node by name reports, as the scheduler's cache keeps it; an image two
containers use counts twice; names are compared as written, ":latest" added to
the pod's only.
"""

from __future__ import annotations

import dataclasses

from loadaware.cluster import ClusterState, ContainerImage, Node, Pod
from loadaware.plan import build_plan
from loadaware.policy import LoadAwarePolicy, parse_policy
from loadaware.scheduling import Occupancy, predict_replacement
from loadaware.scheduling._predict import score_pod
from tests.lib.builders import (
    NOW,
    GiB,
    MiB,
    daemonset,
    make_cluster,
    make_node,
    make_pod,
    make_usage,
    sample,
)

WEB_IMAGE = "registry.example.com/shop/web:1.4.2"


def holding(node: Node, *images: tuple[str, int]) -> Node:
    """The node reporting these (name, size in MiB) images in status.images."""
    entries = tuple(ContainerImage(names=(name,), size_bytes=mib * MiB) for name, mib in images)
    return dataclasses.replace(node, images=entries)


def web(name: str, node: str | None = "hot", *images: str) -> Pod:
    return make_pod(name, node=node, labels={"app": "web"}, container_images=images or (WEB_IMAGE,))


def scores(pod: Pod, nodes: list[Node]) -> dict[str, dict[str, int]]:
    """Per plugin, and in all ("total"), the score of each feasible node."""
    occupancy = Occupancy.from_cluster(make_cluster(nodes))
    result = score_pod(pod, occupancy, occupancy.node_indexes(n.name for n in nodes))
    names = [occupancy.node_names[i] for i in result.indexes.tolist()]
    plugins = {
        name: dict(zip(names, s.tolist(), strict=True)) for name, s in result.plugins.items()
    }
    plugins["total"] = dict(zip(names, result.totals.tolist(), strict=True))
    return plugins


def test_the_node_holding_the_image_breaks_a_tie() -> None:
    nodes = [make_node("a"), holding(make_node("b"), (WEB_IMAGE, 600)), make_node("c")]
    found = scores(web("web-new", None), nodes)
    # 600 MiB held by 1 node of 3: 200 MiB, (200 - 23) * 100 / (1000 - 23) = 18.
    assert found["ImageLocality"] == {"a": 0, "b": 18, "c": 0}
    assert found["total"]["b"] == found["total"]["a"] + 18 == found["total"]["c"] + 18


def test_no_feasible_node_holding_an_image_leaves_the_scores_alone() -> None:
    cordoned = holding(make_node("c", unschedulable=True), (WEB_IMAGE, 600))
    nodes = [make_node("a"), make_node("b"), cordoned]
    found = scores(web("web-new", None), nodes)
    assert "ImageLocality" not in found
    assert found["total"] == scores(web("web-new", None, "other:1"), nodes)["total"]
    assert "ImageLocality" not in scores(web("web-new", None, "other:1"), nodes)


def test_the_spread_counts_nodes_the_pod_cannot_go_to() -> None:
    cordoned = holding(make_node("c", unschedulable=True), (WEB_IMAGE, 400))
    nodes = [holding(make_node("a"), (WEB_IMAGE, 400)), make_node("b"), cordoned, make_node("d")]
    # 400 MiB on 2 of the 4 nodes: 200 MiB, as for a node with the image alone of 2.
    assert scores(web("web-new", None), nodes)["ImageLocality"] == {"a": 18, "b": 0, "d": 0}


def test_a_name_has_the_size_the_first_node_by_name_reports() -> None:
    # Nodes listed out of order: "a" is the first the scheduler's cache adds.
    nodes = [
        holding(make_node("b"), (WEB_IMAGE, 100)),
        holding(make_node("a"), (WEB_IMAGE, 900)),
    ]
    # 900 MiB on 2 of 2 nodes, on both: (900 - 23) * 100 / 977 = 89.
    assert scores(web("web-new", None), nodes)["ImageLocality"] == {"b": 89, "a": 89}


def test_an_image_two_containers_use_counts_twice() -> None:
    nodes = [holding(make_node("a"), (WEB_IMAGE, 600)), make_node("b"), make_node("c")]
    twice = web("web-new", None, WEB_IMAGE, WEB_IMAGE)
    # 2 * 200 MiB of at most 2 * 1000: (400 - 23) * 100 / (2000 - 23) = 19.
    assert scores(twice, nodes)["ImageLocality"] == {"a": 19, "b": 0, "c": 0}


def test_names_are_compared_as_written_with_latest_added_to_the_pod_only() -> None:
    nodes = [
        holding(make_node("a"), ("registry.example.com/shop/web", 600)),
        holding(make_node("b"), ("registry.example.com/shop/web:latest", 600)),
        holding(make_node("c"), ("docker.io/shop/web:latest", 600)),
    ]
    found = scores(web("web-new", None, "registry.example.com/shop/web"), nodes)
    assert found["ImageLocality"] == {"a": 0, "b": 18, "c": 0}


def policy() -> LoadAwarePolicy:
    return parse_policy({"apiVersion": "loadaware.io/v1alpha1", "kind": "LoadAwarePolicy"})


def test_the_replacement_is_expected_on_the_node_holding_its_image() -> None:
    """Two cold nodes that tie for the replacement of web-1; "cold-b" (last by name)
    has pulled its image, as "hot" has, which runs it."""
    agent = make_pod("agent-hot", node="hot", owner=daemonset("agent"), cpu_millicores=2000)

    def cluster(*image_holders: str) -> ClusterState:
        nodes = [
            holding(make_node(name), (WEB_IMAGE, 600)) if name in image_holders else make_node(name)
            for name in ("hot", "cold-a", "cold-b")
        ]
        return make_cluster(nodes, [agent, web("web-1")])

    usage = make_usage(
        {
            "hot": sample(3.6, 4 * GiB),
            "cold-a": sample(0.4, 2 * GiB),
            "cold-b": sample(0.4, 2 * GiB),
        },
        {"default/web-1": sample(0.9, 0.25 * GiB)},
    )
    (pod,) = [p for p in cluster().pods if p.name == "web-1"]
    # Without the image on either cold node they tie for kube-scheduler.
    occupancy = Occupancy.from_cluster(cluster("hot"))
    assert predict_replacement(pod, occupancy, occupancy.node_names) == ("cold-a", "cold-b")
    occupancy = Occupancy.from_cluster(cluster("hot", "cold-b"))
    assert predict_replacement(pod, occupancy, occupancy.node_names) == ("cold-b",)

    plan = build_plan(cluster("hot", "cold-b"), usage, policy(), NOW)
    assert [(e.pod, e.expected_node, e.steer) for e in plan.evictions] == [
        ("default/web-1", "cold-b", ())
    ]
