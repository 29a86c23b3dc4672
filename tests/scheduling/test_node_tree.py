"""The simulated kube-scheduler's nodeTree, checked against kube-scheduler's own
table (pkg/scheduler/internal/cache/node_tree_test.go, now backend/cache): the
same nodes, the same operations, the same zones and list order.

Covered: adding nodes (one, the same twice, with and without region and zone
labels, with the deprecated failure-domain labels), removing them (an empty
zone goes; a node that is not there is reported), relabelling (a node whose
zone changes moves to the end of its new zone), list() taking zones
round-robin, mixed sequences of adds and removes (a zone that empties and
comes back is last), and the zone key preferring the deprecated labels as
utilnode.GetZoneKey does; and the tree the simulated cluster keeps as nodes
are created, relabelled and deleted through its API.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from loadaware.scheduling import _node_tree
from tests.lib.sim import call, sim_server

REGION = _node_tree.REGION_LABEL
ZONE = _node_tree.ZONE_LABEL
BETA_REGION = _node_tree.BETA_REGION_LABEL
BETA_ZONE = _node_tree.BETA_ZONE_LABEL

# allNodes of node_tree_test.go, as (name, labels).
ALL_NODES: list[tuple[str, Mapping[str, str]]] = [
    ("node-0", {}),
    ("node-1", {REGION: "region-1"}),
    ("node-2", {ZONE: "zone-2"}),
    ("node-3", {REGION: "region-1", ZONE: "zone-2"}),
    ("node-4", {REGION: "region-1", ZONE: "zone-2"}),
    ("node-5", {REGION: "region-1", ZONE: "zone-3"}),
    ("node-6", {REGION: "region-2", ZONE: "zone-2"}),
    ("node-7", {REGION: "region-2", ZONE: "zone-2"}),
    ("node-8", {REGION: "region-2", ZONE: "zone-2"}),
    (
        "node-9",
        {REGION: "region-2", ZONE: "zone-2", BETA_REGION: "region-2", BETA_ZONE: "zone-2"},
    ),
    ("node-10", {BETA_REGION: "region-2", BETA_ZONE: "zone-3"}),
]


def _tree(nodes: list[tuple[str, Mapping[str, str]]]) -> _node_tree.NodeTree:
    return _node_tree.NodeTree(nodes)


def _verify(tree: _node_tree.NodeTree, expected: dict[str, list[str]]) -> None:
    """verifyNodeTree: the node count, each zone's nodes, and no other zone."""
    assert len(tree) == sum(len(names) for names in expected.values())
    assert tree.zones() == {zone: tuple(names) for zone, names in expected.items()}


@pytest.mark.parametrize(
    ("to_add", "expected"),
    [
        pytest.param(ALL_NODES[:1], {"": ["node-0"]}, id="single node no labels"),
        pytest.param(
            [ALL_NODES[0], ALL_NODES[0]], {"": ["node-0"]}, id="same node specified twice"
        ),
        pytest.param(
            ALL_NODES[:4],
            {
                "": ["node-0"],
                "region-1:\x00:": ["node-1"],
                ":\x00:zone-2": ["node-2"],
                "region-1:\x00:zone-2": ["node-3"],
            },
            id="mix of nodes with and without proper labels",
        ),
        pytest.param(
            ALL_NODES[:7],
            {
                "": ["node-0"],
                "region-1:\x00:": ["node-1"],
                ":\x00:zone-2": ["node-2"],
                "region-1:\x00:zone-2": ["node-3", "node-4"],
                "region-1:\x00:zone-3": ["node-5"],
                "region-2:\x00:zone-2": ["node-6"],
            },
            id="some zones with multiple nodes",
        ),
        pytest.param(
            ALL_NODES[9:],
            {"region-2:\x00:zone-2": ["node-9"], "region-2:\x00:zone-3": ["node-10"]},
            id="nodes also using deprecated zone/region label",
        ),
    ],
)
def test_add_node(
    to_add: list[tuple[str, Mapping[str, str]]], expected: dict[str, list[str]]
) -> None:
    tree = _node_tree.NodeTree()
    for name, labels in to_add:
        tree.add(name, labels)
    _verify(tree, expected)


@pytest.mark.parametrize(
    ("existing", "to_remove", "expected", "found"),
    [
        pytest.param(
            ALL_NODES[:7],
            ALL_NODES[:1],
            {
                "region-1:\x00:": ["node-1"],
                ":\x00:zone-2": ["node-2"],
                "region-1:\x00:zone-2": ["node-3", "node-4"],
                "region-1:\x00:zone-3": ["node-5"],
                "region-2:\x00:zone-2": ["node-6"],
            },
            True,
            id="remove a single node with no labels",
        ),
        pytest.param(
            ALL_NODES[:7],
            ALL_NODES[1:4],
            {
                "": ["node-0"],
                "region-1:\x00:zone-2": ["node-4"],
                "region-1:\x00:zone-3": ["node-5"],
                "region-2:\x00:zone-2": ["node-6"],
            },
            True,
            id="remove a few nodes including one from a zone with multiple nodes",
        ),
        pytest.param(ALL_NODES[:7], ALL_NODES[:7], {}, True, id="remove all nodes"),
        pytest.param([], ALL_NODES[:5], {}, False, id="remove non-existing node"),
    ],
)
def test_remove_node(
    existing: list[tuple[str, Mapping[str, str]]],
    to_remove: list[tuple[str, Mapping[str, str]]],
    expected: dict[str, list[str]],
    found: bool,
) -> None:
    tree = _tree(existing)
    for name, labels in to_remove:
        assert tree.remove(name, labels) is found
    _verify(tree, expected)


RELABELLED = {REGION: "region-1", ZONE: "zone-2"}


@pytest.mark.parametrize(
    ("existing", "name", "old_labels", "expected"),
    [
        pytest.param(
            ALL_NODES[:7],
            "node-0",
            {},
            {
                "region-1:\x00:": ["node-1"],
                ":\x00:zone-2": ["node-2"],
                "region-1:\x00:zone-2": ["node-3", "node-4", "node-0"],
                "region-1:\x00:zone-3": ["node-5"],
                "region-2:\x00:zone-2": ["node-6"],
            },
            id="update a node without label",
        ),
        pytest.param(
            ALL_NODES[:1],
            "node-0",
            {},
            {"region-1:\x00:zone-2": ["node-0"]},
            id="update the only existing node",
        ),
        pytest.param(
            ALL_NODES[:1],
            "node-new",
            {},
            {"": ["node-0"], "region-1:\x00:zone-2": ["node-new"]},
            id="update non-existing node",
        ),
    ],
)
def test_update_node(
    existing: list[tuple[str, Mapping[str, str]]],
    name: str,
    old_labels: Mapping[str, str],
    expected: dict[str, list[str]],
) -> None:
    tree = _tree(existing)
    tree.update(name, old_labels, RELABELLED)
    _verify(tree, expected)


def test_update_within_the_zone_keeps_the_place() -> None:
    tree = _tree(ALL_NODES[:7])
    before = tree.list()
    tree.update("node-3", dict(ALL_NODES[3][1]), {**ALL_NODES[3][1], "disk": "ssd"})
    assert tree.list() == before


@pytest.mark.parametrize(
    ("to_add", "expected"),
    [
        pytest.param([], (), id="empty tree"),
        pytest.param(ALL_NODES[:1], ("node-0",), id="one node"),
        pytest.param(ALL_NODES[:4], ("node-0", "node-1", "node-2", "node-3"), id="four nodes"),
        pytest.param(
            ALL_NODES[:9],
            tuple(f"node-{i}" for i in (0, 1, 2, 3, 5, 6, 4, 7, 8)),
            id="all nodes",
        ),
    ],
)
def test_list(to_add: list[tuple[str, Mapping[str, str]]], expected: tuple[str, ...]) -> None:
    assert _tree(to_add).list() == expected


@pytest.mark.parametrize(
    ("to_add", "to_remove", "operations", "expected"),
    [
        pytest.param(
            ALL_NODES[2:9],
            ALL_NODES[2:9],
            ["add", "add", "add", "remove", "remove", "remove"],
            (),
            id="add and remove all nodes",
        ),
        pytest.param(
            ALL_NODES[2:9],
            ALL_NODES[2:9],
            ["add", "add", "add", "remove"],
            ("node-3", "node-4"),
            id="add and remove some nodes",
        ),
        pytest.param(
            ALL_NODES[2:9],
            ALL_NODES[2:9],
            ["add", "add", "add", "remove", "remove", "remove", "add"],
            ("node-5",),
            id="remove three nodes",
        ),
        pytest.param(
            [*ALL_NODES[4:9], ALL_NODES[3]],
            [],
            ["add"] * 6,
            ("node-4", "node-5", "node-6", "node-3", "node-7", "node-8"),
            id="add more nodes to an exhausted zone",
        ),
        pytest.param(
            [*ALL_NODES[3:5], *ALL_NODES[6:8]],
            ALL_NODES[3:5],
            ["add", "add", "remove", "add", "add", "remove"],
            ("node-6", "node-7"),
            id="remove zone and add new",
        ),
    ],
)
def test_multi_operations(
    to_add: list[tuple[str, Mapping[str, str]]],
    to_remove: list[tuple[str, Mapping[str, str]]],
    operations: list[str],
    expected: tuple[str, ...],
) -> None:
    tree = _node_tree.NodeTree()
    adds, removes = iter(to_add), iter(to_remove)
    for operation in operations:
        if operation == "add":
            tree.add(*next(adds))
        else:
            tree.remove(*next(removes))
    assert tree.list() == expected


def test_a_zone_that_empties_and_comes_back_is_last() -> None:
    tree = _tree([("a1", {ZONE: "a"}), ("b1", {ZONE: "b"}), ("c1", {ZONE: "c"})])
    tree.remove("a1", {ZONE: "a"})
    tree.add("a2", {ZONE: "a"})
    assert tree.list() == ("b1", "c1", "a2")


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        pytest.param({}, "", id="no labels"),
        pytest.param({REGION: "eu", ZONE: "eu-a"}, "eu:\x00:eu-a", id="topology labels"),
        pytest.param(
            {REGION: "eu", ZONE: "eu-a", BETA_REGION: "old", BETA_ZONE: "old-b"},
            "old:\x00:old-b",
            id="the deprecated labels win",
        ),
        pytest.param(
            {ZONE: "eu-a", BETA_ZONE: ""}, "", id="a deprecated label present but empty wins"
        ),
        pytest.param({BETA_ZONE: "b", REGION: "eu"}, "eu:\x00:b", id="each key on its own"),
    ],
)
def test_zone_key_is_get_zone_keys(labels: Mapping[str, str], expected: str) -> None:
    assert _node_tree.zone_key(labels) == expected


# --- the tree the simulated cluster keeps ---


def _raw_node(name: str, zone: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE: zone}},
        "status": {
            "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def test_the_simulated_cluster_keeps_its_tree_as_nodes_come_and_go() -> None:
    loaded = [_raw_node("b-1", "b"), _raw_node("a-1", "a"), _raw_node("a-2", "a")]
    with sim_server(None, objects=loaded, ready_delay=2.0) as server:
        tree = server.sim.controllers.node_sampler.tree
        # The loaded nodes in the store's (name) order: a-1, a-2, b-1.
        assert tree.list() == ("a-1", "b-1", "a-2")
        code, _ = call(server, "POST", "/api/v1/nodes", _raw_node("c-1", "c"))
        assert code == 201
        assert tree.list() == ("a-1", "b-1", "c-1", "a-2")
        patch = {"metadata": {"labels": {ZONE: "c"}}}
        code, _ = call(
            server,
            "PATCH",
            "/api/v1/nodes/a-1",
            patch,
            content_type="application/strategic-merge-patch+json",
        )
        assert code == 200
        assert tree.list() == ("a-2", "b-1", "c-1", "a-1")
        code, _ = call(server, "DELETE", "/api/v1/nodes/b-1")
        assert code == 200
        assert tree.list() == ("a-2", "c-1", "a-1")
