"""PodTopologySpread's Filter (whenUnsatisfiable: DoNotSchedule) in the scheduler model.

The cases of TestSingleConstraint and TestMultipleConstraints in kube-scheduler's
pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go, translated:
those tests run PreFilter and Filter alone, so they are checked against
`spread_filter_mask` over every node; Success is True, Unschedulable and
UnschedulableAndUnresolvable are False. Then the model as the planner uses it:
a replacement is predicted only where the constraint lets it go, and its
terminating predecessor does not count.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pytest

from loadaware.cluster._types import (
    LabelSelector,
    Node,
    NodeSelectorTerm,
    OwnerRef,
    Pod,
    Requirement,
    Taint,
    TopologySpreadConstraint,
)
from loadaware.scheduling import Occupancy, predict_replacement, spread_filter_mask
from loadaware.scheduling._predict import score_pod
from tests.lib.builders import make_cluster
from tests.scheduling.scheduler_cases import exists, go_node, go_pod, pods_on


def hard(max_skew: int, key: str, selector: LabelSelector | None, **fields: object):
    """st.MakePod().SpreadConstraint(maxSkew, key, DoNotSchedule, selector, ...)."""
    return TopologySpreadConstraint(
        max_skew=max_skew,
        topology_key=key,
        when_unsatisfiable="DoNotSchedule",
        label_selector=selector,
        **fields,  # type: ignore[arg-type]
    )


def four_nodes(**missing: str) -> list[Node]:
    """node-a, node-b in zone1, node-x, node-y in zone2, each labelled node=<name>;
    `missing` renames a node's zone label key (a typo, as in the Go case)."""
    zones = {"node-a": "zone1", "node-b": "zone1", "node-x": "zone2", "node-y": "zone2"}
    return [
        go_node(name, {missing.get(name, "zone"): zone, "node": name})
        for name, zone in zones.items()
    ]


FOO = {"foo": ""}


@dataclass(frozen=True, kw_only=True)
class Case:
    pod: Pod
    nodes: Sequence[Node]
    pods: Sequence[Pod] = ()
    fits: Mapping[str, bool]


def incoming(*constraints: TopologySpreadConstraint, labels=FOO, **fields: object) -> Pod:
    return go_pod("p", labels=labels, topology_spread_constraints=constraints, **fields)


SPREAD_2_1_0_3 = [
    *pods_on("node-a", 2, FOO),
    *pods_on("node-b", 1, FOO),
    *pods_on("node-y", 3, FOO),
]

TAINTED_Y = [
    *four_nodes()[:3],
    go_node(
        "node-y",
        {"zone": "zone2", "node": "node-y"},
        taints=[Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")],
    ),
]

CASES: dict[str, Case] = {
    "TestSingleConstraint/no existing pods": Case(
        pod=incoming(hard(1, "zone", exists("foo"))),
        nodes=four_nodes(),
        fits={"node-a": True, "node-b": True, "node-x": True, "node-y": True},
    ),
    "TestSingleConstraint/no existing pods, incoming pod doesn't match itself": Case(
        pod=incoming(hard(1, "zone", exists("bar"))),
        nodes=four_nodes(),
        fits={"node-a": True, "node-b": True, "node-x": True, "node-y": True},
    ),
    "TestSingleConstraint/existing pods in a different namespace do not count": Case(
        pod=incoming(hard(1, "zone", exists("foo"))),
        nodes=four_nodes(),
        pods=[
            go_pod("p-a1", node="node-a", namespace="ns1", labels=FOO),
            go_pod("p-b1", node="node-a", namespace="ns2", labels=FOO),
            go_pod("p-x1", node="node-x", labels=FOO),
            go_pod("p-y1", node="node-y", labels=FOO),
        ],
        fits={"node-a": True, "node-b": True, "node-x": False, "node-y": False},
    ),
    "TestSingleConstraint/pods spread across zones as 3/3, all nodes fit": Case(
        pod=incoming(hard(1, "zone", exists("foo"))),
        nodes=four_nodes(),
        pods=SPREAD_2_1_0_3,
        fits={"node-a": True, "node-b": True, "node-x": True, "node-y": True},
    ),
    (
        "TestSingleConstraint/pods spread across zones as 1/2 due to absence"
        " of label 'zone' on node-b"
    ): Case(
        pod=incoming(hard(1, "zone", exists("foo"))),
        nodes=four_nodes(**{"node-b": "zon"}),
        pods=[
            go_pod("p-a1", node="node-a", labels=FOO),
            go_pod("p-b1", node="node-b", labels=FOO),
            go_pod("p-x1", node="node-x", labels=FOO),
            go_pod("p-y1", node="node-y", labels=FOO),
        ],
        fits={"node-a": True, "node-b": False, "node-x": False, "node-y": False},
    ),
    "TestSingleConstraint/pod cannot be scheduled as all nodes don't have label 'rack'": Case(
        pod=incoming(hard(1, "rack", exists("foo"))),
        nodes=[
            go_node("node-a", {"zone": "zone1", "node": "node-a"}),
            go_node("node-x", {"zone": "zone2", "node": "node-x"}),
        ],
        fits={"node-a": False, "node-x": False},
    ),
    "TestSingleConstraint/pods spread across nodes as 2/1/0/3, only node-x fits": Case(
        pod=incoming(hard(1, "node", exists("foo"))),
        nodes=four_nodes(),
        pods=SPREAD_2_1_0_3,
        fits={"node-a": False, "node-b": False, "node-x": True, "node-y": False},
    ),
    (
        "TestSingleConstraint/pods spread across nodes as 2/1/0/3, maxSkew is"
        " 2, node-b and node-x fit"
    ): Case(
        pod=incoming(hard(2, "node", exists("foo"))),
        nodes=four_nodes(),
        pods=SPREAD_2_1_0_3,
        fits={"node-a": False, "node-b": True, "node-x": True, "node-y": False},
    ),
    "TestSingleConstraint/pods spread across nodes as 2/1/0/3, but pod doesn't match itself": Case(
        pod=incoming(hard(1, "node", exists("foo")), labels={"bar": ""}),
        nodes=four_nodes(),
        pods=SPREAD_2_1_0_3,
        fits={"node-a": False, "node-b": True, "node-x": True, "node-y": False},
    ),
    (
        "TestSingleConstraint/incoming pod has nodeAffinity, pods spread as"
        " 2/~1~/~0~/3, hence node-a fits"
    ): Case(
        pod=incoming(
            hard(1, "node", exists("foo")),
            required_node_affinity=(
                NodeSelectorTerm(
                    match_expressions=(
                        Requirement(key="node", operator="In", values=("node-a", "node-y")),
                    )
                ),
            ),
        ),
        nodes=four_nodes(),
        pods=SPREAD_2_1_0_3,
        # The Go test runs no NodeAffinity Filter, so node-b and node-x pass this one.
        fits={"node-a": True, "node-b": True, "node-x": True, "node-y": False},
    ),
    "TestSingleConstraint/terminating Pods should be excluded": Case(
        pod=incoming(hard(1, "node", exists("foo"))),
        nodes=[go_node("node-a", {"node": "node-a"}), go_node("node-b", {"node": "node-b"})],
        pods=[
            go_pod(
                "p-a",
                node="node-a",
                labels=FOO,
                deletion_timestamp=datetime.datetime(2026, 11, 28, 9, 0, tzinfo=datetime.UTC),
            ),
            go_pod("p-b", node="node-b", labels=FOO),
        ],
        fits={"node-a": True, "node-b": False},
    ),
    "TestMultipleConstraints/two Constraints on zone and node, spreads = [3/3, 2/1/0/3]": Case(
        pod=incoming(hard(1, "zone", exists("foo")), hard(1, "node", exists("foo"))),
        nodes=four_nodes(),
        pods=SPREAD_2_1_0_3,
        fits={"node-a": False, "node-b": False, "node-x": True, "node-y": False},
    ),
    # Not of the Go tables: minDomains above the domains present makes the global
    # minimum 0 (TestPreFilterState's minDomains cases set the same state).
    "minDomains 3 with two zones: the global minimum is 0": Case(
        pod=incoming(hard(2, "zone", exists("foo"), min_domains=3)),
        nodes=four_nodes(),
        pods=[*pods_on("node-a", 2, FOO), *pods_on("node-x", 1, FOO)],
        fits={"node-a": False, "node-b": False, "node-x": True, "node-y": True},
    ),
    # Not of the Go tables: node-y carries a NoSchedule taint the pod does not tolerate.
    # Honored, its 3 pods do not count and zone2 is the emptiest; ignored, they do.
    "nodeTaintsPolicy Honor: a tainted node's pods do not count": Case(
        pod=incoming(hard(1, "zone", exists("foo"), node_taints_policy="Honor")),
        nodes=TAINTED_Y,
        pods=[*pods_on("node-a", 1, FOO), *pods_on("node-y", 3, FOO)],
        fits={"node-a": False, "node-b": False, "node-x": True, "node-y": True},
    ),
    "nodeTaintsPolicy Ignore: a tainted node's pods count": Case(
        pod=incoming(hard(1, "zone", exists("foo"))),
        nodes=TAINTED_Y,
        pods=[*pods_on("node-a", 1, FOO), *pods_on("node-y", 3, FOO)],
        fits={"node-a": True, "node-b": True, "node-x": False, "node-y": False},
    ),
    # A ScheduleAnyway constraint never filters.
    "ScheduleAnyway only: every node fits": Case(
        pod=incoming(
            TopologySpreadConstraint(
                max_skew=1,
                topology_key="node",
                when_unsatisfiable="ScheduleAnyway",
                label_selector=exists("foo"),
            )
        ),
        nodes=four_nodes(),
        pods=SPREAD_2_1_0_3,
        fits={"node-a": True, "node-b": True, "node-x": True, "node-y": True},
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
def test_filter_as_kube_scheduler(case: Case) -> None:
    occupancy = Occupancy.from_cluster(make_cluster(list(case.nodes), list(case.pods)))
    indexes = occupancy.node_indexes([n.name for n in case.nodes])
    mask = spread_filter_mask(case.pod, occupancy, indexes)
    got = {n.name: bool(m) for n, m in zip(case.nodes, mask.tolist(), strict=True)}
    assert got == dict(case.fits)


def test_scoring_sees_only_nodes_the_filter_lets_through() -> None:
    case = CASES["TestSingleConstraint/pods spread across nodes as 2/1/0/3, only node-x fits"]
    occupancy = Occupancy.from_cluster(make_cluster(list(case.nodes), list(case.pods)))
    scores = score_pod(case.pod, occupancy, occupancy.node_indexes([n.name for n in case.nodes]))
    assert [occupancy.node_names[i] for i in scores.indexes.tolist()] == ["node-x"]


def _zone_cluster() -> tuple[Occupancy, Pod]:
    """Three zones of two nodes; a ReplicaSet's pods spread 2/1/1 by zone with maxSkew 1
    (DoNotSchedule). zone-c's nodes request least, so they win on resources."""
    owner = OwnerRef(kind="ReplicaSet", name="web-abc", uid="uid-rs-web")
    constraint = hard(1, "topology.kubernetes.io/zone", LabelSelector(match_labels={"app": "web"}))

    def web(name: str, node: str) -> Pod:
        return go_pod(
            name,
            node=node,
            namespace="shop",
            labels={"app": "web"},
            owner=owner,
            cpu_millicores=500,
            memory_bytes=512 * 1024**2,
            topology_spread_constraints=(constraint,),
        )

    nodes = [
        go_node(name, {"topology.kubernetes.io/zone": zone, "kubernetes.io/hostname": name})
        for name, zone in (
            ("a-1", "zone-a"),
            ("a-2", "zone-a"),
            ("b-1", "zone-b"),
            ("b-2", "zone-b"),
            ("c-1", "zone-c"),
            ("c-2", "zone-c"),
        )
    ]
    filler = [
        dataclasses.replace(
            go_pod(f"filler-{n.name}", node=n.name, namespace="batch", cpu_millicores=30_000),
        )
        for n in nodes
        if not n.name.startswith("c-")
    ]
    pods = [web("web-1", "a-1"), web("web-2", "a-2"), web("web-3", "b-1"), web("web-4", "c-1")]
    occupancy = Occupancy.from_cluster(make_cluster(nodes, [*pods, *filler]))
    return occupancy, pods[2]


def test_replacement_goes_only_where_the_constraint_allows() -> None:
    # web-3 leaves zone-b (terminating: not counted), so zone-b has 0, zone-a 2,
    # zone-c 1: skew allows zone-b (0 + 1 - 0) and zone-c (1 + 1 - 0 = 2 > 1: no).
    occupancy, leaving = _zone_cluster()
    names = occupancy.node_names
    landed = predict_replacement(leaving, occupancy, names)
    assert landed
    assert all(name.startswith("b-") for name in landed)


def test_without_the_constraint_resources_would_pick_zone_c() -> None:
    # The same pod with no constraint and no owner (no default spreading either):
    # zone-c's idle node wins on requests, so the filter is what sent it to zone-b.
    occupancy, leaving = _zone_cluster()
    free = dataclasses.replace(leaving, topology_spread_constraints=(), owner=None)
    landed = predict_replacement(free, occupancy, occupancy.node_names)
    assert landed == ("c-2",)


def test_mask_is_per_indexed_node() -> None:
    case = CASES["TestSingleConstraint/pods spread across nodes as 2/1/0/3, only node-x fits"]
    occupancy = Occupancy.from_cluster(make_cluster(list(case.nodes), list(case.pods)))
    indexes = occupancy.node_indexes(["node-y", "node-x"])
    assert spread_filter_mask(case.pod, occupancy, indexes).tolist() == [False, True]
    assert spread_filter_mask(case.pod, occupancy, np.zeros(0, dtype=np.int64)).size == 0
