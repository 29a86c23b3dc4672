"""The kube-scheduler model against kube-scheduler's own test tables.

Each case is a case of the Go tests below, translated into loadaware's types:
the same nodes, placed pods and pod to schedule, and the same expected scores.
The Go tests run Score then NormalizeScore (BalancedAllocation and
LeastAllocated have none), so the expected numbers are the normalised 0-100
scores, which `NodeScores.plugins` holds before the profile's weights. A
plugin whose PreScore returns Skip is absent from `plugins` (expected: None).
Case ids are "<Go test function>/<Go case name>".

- pkg/scheduler/framework/plugins/podtopologyspread/scoring_test.go:
  TestPodTopologySpreadScore, and TestPreScoreStateEmptyNodes, whose expected
  preScoreState (constraints, ignored nodes, TopologyNormalizingWeight) is
  checked through Score and NormalizeScore with matching pods added.
- pkg/scheduler/framework/plugins/interpodaffinity/scoring_test.go:
  TestPreferredAffinity, TestPreferredAffinityWithHardPodAffinitySymmetricWeight.
- pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go:
  TestNodeAffinityPriority.
- pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go:
  TestTaintTolerationScore.
- pkg/scheduler/framework/plugins/noderesources/least_allocated_test.go:
  TestLeastAllocatedScoringStrategy.
- pkg/scheduler/framework/plugins/noderesources/most_allocated_test.go:
  TestMostAllocatedScoringStrategy.
- pkg/scheduler/framework/plugins/noderesources/requested_to_capacity_ratio_test.go:
  TestResourceBinPackingSingleExtended, TestResourceBinPackingMultipleExtended,
  and TestBrokenLinearFunction against the shape function itself.
- pkg/scheduler/framework/plugins/noderesources/balanced_allocation_test.go:
  TestNodeResourcesBalancedAllocation.
- pkg/scheduler/framework/plugins/imagelocality/image_locality_test.go:
  TestImageLocalityPriority (the 1.27+ table: init containers counted, 1000 MiB
  per container), and TestNormalizedImageName against normalized_image_name.

A Go case with `failedNodes` scores only its `nodes`: here those are the
candidates passed to score_pod, the failed ones are in the cluster. Left out:
cases of what the model does not model (Service selectors other than as the
owner's stand-in, matchLabelKeys with the gate off, NodeInclusionPolicy other
than nodeAffinityPolicy Honor / nodeTaintsPolicy Ignore, the alpha Gt/Lt
tolerations, AddedAffinity, IgnorePreferredTermsOfExistingPods, DRA resources,
ephemeral storage, invalid selectors, scoring arguments kube-scheduler refuses,
which the policy refuses too), cases that score a
node the Filter rejects (the model only scores feasible nodes), and pods
without containers (the model knows pod totals only: a pod requesting 0 counts
at the non-zero defaults; TestRequestedToCapacityRatioScoringStrategy's cases
all place such pods). Cases the model answers differently are kept as
strict xfails with the reason.
"""

from __future__ import annotations

import dataclasses
import datetime
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pytest

from loadaware.cluster._types import (
    ContainerImage,
    LabelSelector,
    Node,
    NodeSelectorTerm,
    OwnerRef,
    Pod,
    PodAffinityTerm,
    PreferredSchedulingTerm,
    Requirement,
    Taint,
    Toleration,
    WeightedPodAffinityTerm,
)
from loadaware.scheduling import Occupancy
from loadaware.scheduling._images import normalized_image_name
from loadaware.scheduling._predict import score_pod
from loadaware.scheduling._profiles import (
    DEFAULT_PROFILE,
    ResourceWeight,
    SchedulerProfile,
    ScoringStrategy,
)
from loadaware.scheduling._scores import broken_linear
from tests.lib.builders import make_cluster
from tests.scheduling.scheduler_cases import (
    HOSTNAME,
    ZONE,
    exists,
    go_node,
    go_pod,
    pods_on,
    soft_spread,
)


@dataclass(frozen=True, kw_only=True)
class Case:
    pod: Pod
    nodes: Sequence[Node]
    pods: Sequence[Pod] = ()
    # The Go case's `nodes` when it also has `failedNodes` (those are in `nodes` here).
    candidates: Sequence[str] | None = None
    terminating: Sequence[Pod] = ()
    namespace_labels: Mapping[str, Mapping[str, str]] | None = None
    # The profile scoring the pod: the default one unless the Go test configures it.
    profile: SchedulerProfile = DEFAULT_PROFILE
    want: Mapping[str, int] | None  # None: the plugin's PreScore returns Skip


def go_case(test: str, name: str, case: Case, *, xfail: str | None = None) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
    return pytest.param(case, id=f"{test}/{name.strip()}", marks=marks)


def table(test: str, **shared: object) -> Callable[..., object]:
    """The case builder of one Go test table: a case's name, the Case fields it does
    not share with the table (`shared`: what most of its cases have, every one of
    them giving a value) and its xfail reason, if any."""

    def case(name: str, *, xfail: str | None = None, **fields: object) -> object:
        return go_case(test, name, Case(**{**shared, **fields}), xfail=xfail)  # type: ignore[arg-type]

    return case


def plugin_scores(case: Case, plugin: str) -> dict[str, int] | None:
    """The plugin's normalised score per candidate node, None when it skipped the pod."""
    cluster = make_cluster(case.nodes, case.pods, namespace_labels=case.namespace_labels)
    occupancy = Occupancy.from_cluster(cluster)
    names = tuple(case.candidates or (n.name for n in case.nodes))
    scores = score_pod(
        case.pod,
        occupancy,
        occupancy.node_indexes(names),
        terminating=case.terminating,
        profile=case.profile,
    )
    feasible = [occupancy.node_names[i] for i in scores.indexes.tolist()]
    # The Go tests score every candidate; a node the model filters out is a bad case.
    assert feasible == list(names)
    found = scores.plugins.get(plugin)
    if found is None:
        return None
    return dict(zip(feasible, found.tolist(), strict=True))


# --- PodTopologySpread ---

PTS = "TestPodTopologySpreadScore"
PRESCORE_STATE = "TestPreScoreStateEmptyNodes"
FOO = {"foo": ""}
BAR = {"bar": ""}
FOO_BAR = {"foo": "", "bar": ""}


def spread_node(name: str, zone: str | None = None, *, hostname: bool = True) -> Node:
    """A node labelled as the spreading tables do: hostname and the "zone" key."""
    labels = {HOSTNAME: name} if hostname else {}
    if zone is not None:
        labels["zone"] = zone
    return go_node(name, labels)


def spreading(labels: Mapping[str, str], *constraints: object, **fields: object) -> Pod:
    return go_pod("p", labels=labels, topology_spread_constraints=constraints, **fields)


HOST_FOO_1 = soft_spread(1, HOSTNAME, exists("foo"))
ZONE_FOO_1 = soft_spread(1, "zone", exists("foo"))
HOST_BAR_1 = soft_spread(1, HOSTNAME, exists("bar"))
FOUR_HOSTS = [spread_node(f"node-{n}") for n in "abcd"]
# Matching pods spread as 2/1/0/3 and as 4/3/2/1 over node-a..node-d.
SPREAD_2_1_0_3 = [
    *pods_on("node-a", 2, FOO),
    *pods_on("node-b", 1, FOO),
    *pods_on("node-d", 3, FOO),
]
SPREAD_4_3_2_1 = [
    *pods_on("node-a", 4, FOO),
    *pods_on("node-b", 3, FOO),
    *pods_on("node-c", 2, FOO),
    *pods_on("node-d", 1, FOO),
]
# 4/2/1/~3~ over node-a, node-b, node-x and node-y (node-y not a candidate).
SPREAD_4_2_1_3 = [
    *pods_on("node-a", 4, FOO),
    *pods_on("node-b", 2, FOO),
    *pods_on("node-x", 1, FOO),
    *pods_on("node-y", 3, FOO),
]
REPLICASET = OwnerRef(kind="ReplicaSet", name="rs1", uid="uid-rs-rs1")
TERMINATING_P_A = go_pod(
    "p-a",
    node="node-a",
    labels=FOO,
    deletion_timestamp=datetime.datetime(2026, 11, 29, 8, 0, 0, tzinfo=datetime.UTC),
)
MARS = {ZONE: "mars"}

pts_case = table(PTS)
prescore_state_case = table(PRESCORE_STATE)

SPREAD_CASES = [
    pts_case(
        "one constraint on node, all 4 nodes are candidates",
        pod=spreading(FOO, HOST_FOO_1),
        nodes=FOUR_HOSTS,
        pods=SPREAD_2_1_0_3,
        want={"node-a": 20, "node-b": 60, "node-c": 100, "node-d": 0},
    ),
    pts_case(
        "one constraint on node, null selector",
        pod=spreading(FOO, soft_spread(1, HOSTNAME, None)),
        nodes=FOUR_HOSTS,
        pods=SPREAD_2_1_0_3,
        want={"node-a": 100, "node-b": 100, "node-c": 100, "node-d": 100},
    ),
    pts_case(
        "one constraint on node, all 4 nodes are candidates, maxSkew=2",
        pod=spreading(FOO, soft_spread(2, HOSTNAME, exists("foo"))),
        nodes=FOUR_HOSTS,
        pods=SPREAD_2_1_0_3,
        want={"node-a": 33, "node-b": 66, "node-c": 100, "node-d": 16},
    ),
    pts_case(
        "one constraint on node, all 4 nodes are candidates, maxSkew=3",
        pod=spreading(FOO, soft_spread(3, HOSTNAME, exists("foo"))),
        nodes=FOUR_HOSTS,
        pods=SPREAD_4_3_2_1,
        want={"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    # The Go pod is selected by a Service; the model's system defaults stand the
    # owning ReplicaSet (selecting by the pod's labels) in for it.
    pts_case(
        "system defaulting, nodes don't have zone, pods match service",
        pod=go_pod("p", labels=FOO, owner=REPLICASET),
        nodes=FOUR_HOSTS,
        pods=SPREAD_4_3_2_1,
        want={"node-a": 44, "node-b": 66, "node-c": 77, "node-d": 100},
    ),
    pts_case(
        "one constraint on node, 3 out of 4 nodes are candidates",
        pod=spreading(FOO, HOST_FOO_1),
        nodes=[spread_node(n) for n in ("node-a", "node-b", "node-x", "node-y")],
        pods=SPREAD_4_2_1_3,
        candidates=("node-a", "node-b", "node-x"),
        want={"node-a": 33, "node-b": 83, "node-x": 100},
    ),
    pts_case(
        "one constraint on node, 3 out of 4 nodes are candidates, "
        "one node doesn't match topology key",
        pod=spreading(FOO, HOST_FOO_1),
        nodes=[
            spread_node("node-a"),
            go_node("node-b", {"n": "node-b"}),
            spread_node("node-x"),
            spread_node("node-y"),
        ],
        pods=SPREAD_4_2_1_3,
        candidates=("node-a", "node-b", "node-x"),
        want={"node-a": 16, "node-b": 0, "node-x": 100},
    ),
    pts_case(
        "one constraint on zone, 3 out of 4 nodes are candidates",
        pod=spreading(FOO, ZONE_FOO_1),
        nodes=[
            spread_node("node-a", "zone1"),
            spread_node("node-b", "zone1"),
            spread_node("node-x", "zone2"),
            spread_node("node-y", "zone2"),
        ],
        pods=SPREAD_4_2_1_3,
        candidates=("node-a", "node-b", "node-x"),
        want={"node-a": 75, "node-b": 75, "node-x": 100},
    ),
    pts_case(
        "two Constraints on zone and node, 2 out of 4 nodes are candidates",
        pod=spreading(FOO, ZONE_FOO_1, HOST_FOO_1),
        nodes=[
            spread_node("node-a", "zone1"),
            spread_node("node-x", "zone2"),
            spread_node("node-b", "zone1"),
            spread_node("node-y", "zone2"),
        ],
        pods=[
            *pods_on("node-a", 2, FOO),
            *pods_on("node-b", 1, FOO),
            *pods_on("node-x", 2, FOO),
            *pods_on("node-y", 4, FOO),
        ],
        candidates=("node-a", "node-x"),
        want={"node-a": 100, "node-x": 63},
    ),
    pts_case(
        "two Constraints on zone and node, with different labelSelectors, "
        "3 out of 4 nodes are candidates",
        pod=spreading(FOO_BAR, ZONE_FOO_1, HOST_BAR_1),
        nodes=[
            spread_node("node-a", "zone1"),
            spread_node("node-b", "zone1"),
            spread_node("node-x", "zone2"),
            spread_node("node-y", "zone2"),
        ],
        pods=[
            go_pod("p-a1", node="node-a", labels=FOO),
            go_pod("p-b1", node="node-b", labels=FOO_BAR),
            go_pod("p-y1", node="node-y", labels=FOO),
            go_pod("p-y2", node="node-y", labels=BAR),
        ],
        candidates=("node-a", "node-b", "node-x"),
        want={"node-a": 50, "node-b": 25, "node-x": 100},
    ),
    pts_case(
        "terminating Pods should be excluded",
        pod=spreading(FOO, HOST_FOO_1),
        nodes=[spread_node("node-a"), spread_node("node-b")],
        pods=[TERMINATING_P_A, go_pod("p-b", node="node-b", labels=FOO)],
        terminating=(TERMINATING_P_A,),
        want={"node-a": 100, "node-b": 0},
    ),
    pts_case(
        "minDomains has no effect when ScheduleAnyway",
        pod=spreading(FOO, soft_spread(2, "node", exists("foo"), min_domains=10)),
        nodes=[go_node(f"node-{n}", {"node": f"node-{n}"}) for n in "abc"],
        pods=[
            *pods_on("node-a", 2, FOO),
            *pods_on("node-b", 2, FOO),
            *pods_on("node-c", 1, FOO),
        ],
        want={"node-a": 75, "node-b": 75, "node-c": 100},
    ),
    # matchLabelKeys ["baz"] merged into the selector, as the cluster reader does.
    pts_case(
        "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
        pod=spreading(
            {"foo": "", "bar": "", "baz": ""},
            ZONE_FOO_1,
            soft_spread(
                1,
                HOSTNAME,
                dataclasses.replace(exists("bar"), match_labels={"baz": ""}),
            ),
        ),
        nodes=[
            spread_node("node-a", "zone1"),
            spread_node("node-b", "zone1"),
            spread_node("node-c", "zone2"),
            spread_node("node-d", "zone2"),
        ],
        pods=[
            go_pod("p-a1", node="node-a", labels=FOO),
            go_pod("p-b1", node="node-b", labels={"foo": "", "bar": "", "baz": ""}),
            go_pod("p-c1", node="node-c", labels=FOO),
            go_pod("p-c2", node="node-c", labels=BAR),
            go_pod("p-d3", node="node-c", labels={"bar": "", "baz": ""}),
        ],
        want={"node-a": 60, "node-b": 20, "node-c": 60, "node-d": 100},
    ),
    # The table's state: hostname maxSkew 3 over 4 nodes (weight log 6), zone maxSkew
    # 5 over the domains "mars" and "" (node-c and node-d lack the zone: weight log 4),
    # no node ignored. With 3 siblings on node-b and 1 on node-c, Score gives
    # 10 / 16 / 4 / 2 and NormalizeScore 50 / 12 / 87 / 100.
    prescore_state_case(
        "system default constraints and a replicaset",
        pod=go_pod("p", namespace="default", labels={"foo": "tar", "baz": "sup"}, owner=REPLICASET),
        nodes=[
            go_node("node-a", {HOSTNAME: "node-a", **MARS}),
            go_node("node-b", {HOSTNAME: "node-b", **MARS}),
            go_node("node-c", {HOSTNAME: "node-c"}),
            go_node("node-d", {HOSTNAME: "node-d"}),
        ],
        pods=[
            go_pod(f"rs1-{i}", node=node, namespace="default", labels={"foo": "tar", "baz": "sup"})
            for i, node in enumerate(("node-b", "node-b", "node-b", "node-c"))
        ],
        want={"node-a": 50, "node-b": 12, "node-c": 87, "node-d": 100},
    ),
    # The table's state: node-x ignored (no zone); zone weight log 3 (zone1 only),
    # hostname weight log 4 (two nodes). Score gives node-a 2, node-b 4.
    prescore_state_case(
        "node-x doesn't have label zone",
        pod=spreading(FOO, ZONE_FOO_1, HOST_BAR_1),
        nodes=[
            spread_node("node-a", "zone1"),
            spread_node("node-b", "zone1"),
            spread_node("node-x"),
        ],
        pods=[
            go_pod("p-a1", node="node-a", labels=FOO),
            go_pod("p-b1", node="node-b", labels=FOO_BAR),
            go_pod("p-x1", node="node-x", labels=FOO),
            *pods_on("node-x", 2, BAR, first=2),
        ],
        want={"node-a": 100, "node-b": 50, "node-x": 0},
    ),
]


@pytest.mark.parametrize("case", SPREAD_CASES)
def test_pod_topology_spread(case: Case) -> None:
    assert plugin_scores(case, "PodTopologySpread") == case.want


# --- InterPodAffinity ---

IPA = "TestPreferredAffinity"
HARD_WEIGHT = "TestPreferredAffinityWithHardPodAffinitySymmetricWeight"
CHINA = {"region": "China"}
INDIA = {"region": "India"}
AZ1 = {"az": "az1"}
AZ2 = {"az": "az2"}
CHINA_AZ1 = {**CHINA, **AZ1}
S1 = {"security": "S1"}
S2 = {"security": "S2"}
NAMESPACE_LABELS = {
    "subteam1.team1": {"team": "team1"},
    "subteam2.team1": {"team": "team1"},
    "subteam1.team2": {"team": "team2"},
    "subteam2.team2": {"team": "team2"},
}
TEAM1 = LabelSelector(
    match_expressions=(Requirement(key="team", operator="In", values=("team1",)),)
)


def selector(*requirements: tuple[str, str, tuple[str, ...]]) -> LabelSelector:
    return LabelSelector(
        match_expressions=tuple(
            Requirement(key=key, operator=op, values=values) for key, op, values in requirements
        )
    )


def weighted(
    weight: int, labels: LabelSelector, key: str, **fields: object
) -> WeightedPodAffinityTerm:
    term = PodAffinityTerm(label_selector=labels, topology_key=key, **fields)  # type: ignore[arg-type]
    return WeightedPodAffinityTerm(weight=weight, term=term)


SECURITY_S1 = selector(("security", "In", ("S1",)))
SECURITY_S2 = selector(("security", "In", ("S2",)))
ANY_SECURITY = selector(("security", "Exists", ()), ("wrongkey", "DoesNotExist", ()))
STAY_WITH_S1_IN_REGION = {"preferred_pod_affinity": (weighted(5, SECURITY_S1, "region"),)}
STAY_WITH_S2_IN_REGION = {"preferred_pod_affinity": (weighted(6, SECURITY_S2, "region"),)}
AFFINITY3 = {
    "preferred_pod_affinity": (
        weighted(
            8, selector(("security", "NotIn", ("S1",)), ("security", "In", ("S2",))), "region"
        ),
        weighted(2, ANY_SECURITY, "region"),
    )
}
HARD_AFFINITY = {
    "required_pod_affinity": (
        PodAffinityTerm(
            label_selector=selector(("security", "In", ("S1", "value2"))), topology_key="region"
        ),
        PodAffinityTerm(label_selector=ANY_SECURITY, topology_key="region"),
    )
}
AWAY_FROM_S1_IN_AZ = {"preferred_pod_anti_affinity": (weighted(5, SECURITY_S1, "az"),)}
AWAY_FROM_S2_IN_AZ = {"preferred_pod_anti_affinity": (weighted(5, SECURITY_S2, "az"),)}
STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ = {
    "preferred_pod_affinity": (weighted(8, SECURITY_S1, "region"),),
    "preferred_pod_anti_affinity": (weighted(5, SECURITY_S2, "az"),),
}
AFFINITY_NAMESPACE_SELECTOR = {
    "preferred_pod_affinity": (
        weighted(
            5, SECURITY_S1, "region", namespaces=("subteam2.team2",), namespace_selector=TEAM1
        ),
    )
}
ANTI_AFFINITY_NAMESPACE_SELECTOR = {
    "preferred_pod_anti_affinity": AFFINITY_NAMESPACE_SELECTOR["preferred_pod_affinity"]
}
HARD_POD_AFFINITY = {
    "required_pod_affinity": (
        PodAffinityTerm(
            label_selector=selector(("service", "In", ("S1",))),
            topology_key="region",
            namespaces=("", "subteam2.team2"),
            namespace_selector=TEAM1,
        ),
    )
}
REGION_NODES = [go_node("node1", CHINA), go_node("node2", INDIA), go_node("node3", AZ1)]


def placed(name: str, node: str, labels: Mapping[str, str] | None = None, **fields: object) -> Pod:
    return go_pod(name, node=node, labels=labels, **fields)


hard_weight_case = table(
    HARD_WEIGHT,
    nodes=REGION_NODES,
    pods=[
        placed("p1", "node1", **HARD_POD_AFFINITY),
        placed("p2", "node2", **HARD_POD_AFFINITY),
    ],
    namespace_labels=NAMESPACE_LABELS,
)

ipa_case = table(IPA, nodes=REGION_NODES)

AFFINITY_CASES = [
    ipa_case(
        "all nodes are same priority as Affinity is nil", pod=go_pod("p", labels=S1), want=None
    ),
    ipa_case(
        "Affinity: pod that matches topology key & pods in nodes will get high score comparing "
        "to otherswhich doesn't match either pods in nodes or in topology key",
        pod=go_pod("p", labels=S1, **STAY_WITH_S1_IN_REGION),
        pods=[placed("p1", "node1", S1), placed("p2", "node2", S2), placed("p3", "node3", S1)],
        want={"node1": 100, "node2": 0, "node3": 0},
    ),
    ipa_case(
        "Affinity: different Label operators and values for pod affinity scheduling preference, "
        "including some match failures ",
        pod=go_pod("p", labels=S1, **AFFINITY3),
        pods=[placed("p1", "node1", S1), placed("p2", "node2", S2), placed("p3", "node3", S1)],
        want={"node1": 20, "node2": 100, "node3": 0},
    ),
    ipa_case(
        "Affinity symmetry: considered only the preferredDuringSchedulingIgnoredDuringExecution "
        "in pod affinity symmetry",
        pod=go_pod("p", labels=S2),
        pods=[
            placed("p1", "node1", S1, **STAY_WITH_S1_IN_REGION),
            placed("p2", "node2", S2, **STAY_WITH_S2_IN_REGION),
        ],
        want={"node1": 0, "node2": 100, "node3": 0},
    ),
    ipa_case(
        "Affinity symmetry with namespace selector",
        pod=go_pod("p", namespace="subteam1.team1", labels=S1),
        pods=[
            placed("p1", "node1", S1, **AFFINITY_NAMESPACE_SELECTOR),
            placed("p2", "node2", S2, **STAY_WITH_S2_IN_REGION),
        ],
        namespace_labels=NAMESPACE_LABELS,
        want={"node1": 100, "node2": 0, "node3": 0},
    ),
    ipa_case(
        "Affinity symmetry: considered RequiredDuringSchedulingIgnoredDuringExecution "
        "in pod affinity symmetry",
        pod=go_pod("p", labels=S1),
        pods=[
            placed("p1", "node1", S1, **HARD_AFFINITY),
            placed("p2", "node2", S2, **HARD_AFFINITY),
        ],
        want={"node1": 100, "node2": 100, "node3": 0},
    ),
    ipa_case(
        "Anti Affinity: one node has more matching pods comparing to other node, "
        "so the node which has more unmatches will get high score",
        pod=go_pod("p", labels=S1, **AWAY_FROM_S1_IN_AZ),
        nodes=[go_node("node1", AZ1), go_node("node2", INDIA)],
        pods=[placed("p1", "node1", S1), placed("p2", "node1", S1), placed("p3", "node2", S2)],
        want={"node1": 0, "node2": 100},
    ),
    ipa_case(
        "Anti Affinity symmetry: the existing pods in node which has anti affinity match "
        "will get high score",
        pod=go_pod("p", labels=S2),
        nodes=[go_node("node1", AZ1), go_node("node2", AZ2)],
        pods=[
            placed("p1", "node1", S1, **AWAY_FROM_S2_IN_AZ),
            placed("p2", "node2", S2, **AWAY_FROM_S1_IN_AZ),
        ],
        want={"node1": 0, "node2": 100},
    ),
    ipa_case(
        "Affinity and Anti Affinity and symmetry: considered only "
        "preferredDuringSchedulingIgnoredDuringExecution in both pod affinity & anti affinity "
        "& symmetry",
        pod=go_pod("p", labels=S1, **STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        nodes=[
            go_node("node1", CHINA),
            go_node("node2", AZ1),
            go_node("node3", INDIA),
            go_node("node4", AZ2),
        ],
        pods=[
            placed("p1", "node1", S1),
            placed("p2", "node2", S2),
            placed("p3", "node3", **STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
            placed("p4", "node4", **AWAY_FROM_S1_IN_AZ),
        ],
        want={"node1": 100, "node2": 0, "node3": 100, "node4": 0},
    ),
    ipa_case(
        "Avoid panic when partial nodes in a topology don't have pods with affinity",
        pod=go_pod("p", labels=S1),
        nodes=[go_node("node1", CHINA), go_node("node2", CHINA)],
        pods=[
            placed("p1", "node1", S1),
            placed("p2", "node2", **STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
        ],
        want={"node1": 0, "node2": 0},
    ),
    # The second Go case of this name (with antiAffinityNamespaceSelector); Go's
    # t.Run suffixes a repeated subtest name with #01.
    ipa_case(
        "Affinity with pods matching both NamespaceSelector and Namespaces fields#01",
        pod=go_pod("p", namespace="subteam1.team1", labels=S1, **ANTI_AFFINITY_NAMESPACE_SELECTOR),
        nodes=[go_node("node1", CHINA), go_node("node2", INDIA)],
        pods=[
            placed("p1", "node1", S1, namespace="subteam1.team1"),
            placed("p2", "node1", S1, namespace="subteam1.team1"),
            placed("p3", "node1", S1, namespace="subteam2.team2"),
            placed("p4", "node2", S1, namespace="subteam2.team1"),
        ],
        namespace_labels=NAMESPACE_LABELS,
        want={"node1": 0, "node2": 100},
    ),
    ipa_case(
        "Do not ignore preferred terms of existing pods",
        pod=go_pod("p", labels=S2),
        nodes=[go_node("node1", CHINA), go_node("node2", INDIA)],
        pods=[
            placed("p1", "node1", S1, **STAY_WITH_S1_IN_REGION_AWAY_FROM_S2_IN_AZ),
            placed("p2", "node2", S2, **STAY_WITH_S2_IN_REGION),
        ],
        want={"node1": 0, "node2": 100},
    ),
    hard_weight_case(
        "with no matching namespace",
        pod=go_pod("p", namespace="subteam1.team2", labels={"service": "S1"}),
        want=None,
    ),
    hard_weight_case(
        "with matching NamespaceSelector",
        pod=go_pod("p", namespace="subteam1.team1", labels={"service": "S1"}),
        want={"node1": 100, "node2": 100, "node3": 0},
    ),
]


@pytest.mark.parametrize("case", AFFINITY_CASES)
def test_inter_pod_affinity(case: Case) -> None:
    assert plugin_scores(case, "InterPodAffinity") == case.want


# --- NodeAffinity ---

NA = "TestNodeAffinityPriority"
LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}


def preferred(weight: int, *labels: tuple[str, str]) -> PreferredSchedulingTerm:
    return PreferredSchedulingTerm(
        weight=weight,
        preference=NodeSelectorTerm(
            match_expressions=tuple(
                Requirement(key=key, operator="In", values=(value,)) for key, value in labels
            )
        ),
    )


AFFINITY1 = (preferred(2, ("foo", "bar")),)
AFFINITY2 = (
    preferred(2, ("foo", "bar")),
    preferred(4, ("key", "value")),
    preferred(5, ("foo", "bar"), ("key", "value"), ("az", "az1")),
)

na_case = table(NA, pod=go_pod("p", preferred_node_affinity=AFFINITY1))

NODE_AFFINITY_CASES = [
    na_case(
        "Skip is returned in PreScore when NodeAffinity is nil",
        pod=go_pod("p"),
        nodes=[go_node("node1", LABEL1)],
        want=None,
    ),
    na_case(
        "no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' "
        "priority is zero",
        nodes=[go_node("node1", LABEL4), go_node("node2", LABEL2), go_node("node3", LABEL3)],
        want={"node1": 0, "node2": 0, "node3": 0},
    ),
    na_case(
        "only node1 matches the preferred scheduling requirements of pod",
        nodes=[go_node("node1", LABEL1), go_node("node2", LABEL2), go_node("node3", LABEL3)],
        want={"node1": 100, "node2": 0, "node3": 0},
    ),
    na_case(
        "all nodes matches the preferred scheduling requirements of pod but with different "
        "priorities ",
        pod=go_pod("p", preferred_node_affinity=AFFINITY2),
        nodes=[go_node("node1", LABEL1), go_node("node5", LABEL5), go_node("node2", LABEL2)],
        want={"node1": 18, "node5": 100, "node2": 36},
    ),
]


@pytest.mark.parametrize("case", NODE_AFFINITY_CASES)
def test_node_affinity(case: Case) -> None:
    assert plugin_scores(case, "NodeAffinity") == case.want


# --- TaintToleration ---

TT = "TestTaintTolerationScore"


def tainted(name: str, *taints: tuple[str, str, str]) -> Node:
    return go_node(name, taints=[Taint(key=k, value=v, effect=e) for k, v, e in taints])


def tolerating(*tolerations: tuple[str, str, str]) -> Pod:
    return go_pod(
        "pod1",
        tolerations=tuple(
            Toleration(key=k, operator="Equal", value=v, effect=e) for k, v, e in tolerations
        ),
    )


PREFER = "PreferNoSchedule"
ARM64 = ("cpu-type", "arm64")
SSD = ("disk-type", "ssd")

tt_case = table(TT)

TAINT_CASES = [
    tt_case(
        "node with taints tolerated by the pod, gets a higher score than those node with "
        "intolerable taints",
        pod=tolerating(("foo", "bar", PREFER)),
        nodes=[
            tainted("nodeA", ("foo", "bar", PREFER)),
            tainted("nodeB", ("foo", "blah", PREFER)),
        ],
        want={"nodeA": 100, "nodeB": 0},
    ),
    tt_case(
        "the nodes that all of their taints are tolerated by the pod, get the same score, "
        "no matter how many tolerable taints a node has",
        pod=tolerating((*ARM64, PREFER), (*SSD, PREFER)),
        nodes=[
            tainted("nodeA"),
            tainted("nodeB", (*ARM64, PREFER)),
            tainted("nodeC", (*ARM64, PREFER), (*SSD, PREFER)),
        ],
        want={"nodeA": 100, "nodeB": 100, "nodeC": 100},
    ),
    tt_case(
        "the more intolerable taints a node has, the lower score it gets.",
        pod=tolerating(("foo", "bar", PREFER)),
        nodes=[
            tainted("nodeA"),
            tainted("nodeB", (*ARM64, PREFER)),
            tainted("nodeC", (*ARM64, PREFER), (*SSD, PREFER)),
        ],
        want={"nodeA": 100, "nodeB": 50, "nodeC": 0},
    ),
    tt_case(
        "only taints and tolerations that have effect PreferNoSchedule are checked by "
        "taints-tolerations priority function",
        pod=tolerating((*ARM64, "NoSchedule"), (*SSD, "NoSchedule")),
        nodes=[
            tainted("nodeA"),
            tainted("nodeB", (*ARM64, "NoSchedule")),
            tainted("nodeC", (*ARM64, PREFER), (*SSD, PREFER)),
        ],
        want={"nodeA": 100, "nodeB": 100, "nodeC": 0},
    ),
    tt_case(
        "Default behaviour No taints and tolerations, lands on node with no taints",
        pod=tolerating(),
        nodes=[tainted("nodeA"), tainted("nodeB", (*ARM64, PREFER))],
        want={"nodeA": 100, "nodeB": 0},
    ),
]


@pytest.mark.parametrize("case", TAINT_CASES)
def test_taint_toleration(case: Case) -> None:
    assert plugin_scores(case, "TaintToleration") == case.want


# --- NodeResourcesFit (LeastAllocated) and NodeResourcesBalancedAllocation ---

LEAST = "TestLeastAllocatedScoringStrategy"
BALANCED = "TestNodeResourcesBalancedAllocation"


def cores(count: int) -> int:
    """st.MakeNode().Capacity / st.MakePod().Req write cpu "4000": 4000 cores."""
    return count * 1000


def sized(name: str, cpu_millicores: int, memory_bytes: int) -> Node:
    return go_node(name, cpu_millicores=cpu_millicores, memory_bytes=memory_bytes)


def requesting(name: str, cpu_millicores: int, memory_bytes: int, node: str | None = None) -> Pod:
    return go_pod(name, node=node, cpu_millicores=cpu_millicores, memory_bytes=memory_bytes)


least_case = table(LEAST, pod=requesting("p", cores(1000 + 2000), 2000 + 3000))

LEAST_CASES = [
    least_case(
        "nothing scheduled, resources requested, differently sized nodes",
        nodes=[sized("node1", cores(4000), 10000), sized("node2", cores(6000), 10000)],
        want={"node1": 37, "node2": 50},
    ),
    least_case(
        "resources requested, pods scheduled with resources",
        nodes=[sized("node1", cores(10000), 20000), sized("node2", cores(10000), 20000)],
        pods=[
            requesting("p1", cores(3000), 0, node="node1"),
            requesting("p2", cores(3000), 5000, node="node2"),
        ],
        want={"node1": 57, "node2": 45},
        xfail='the placed pod on node1 requests memory "0" explicitly; Go adds the non-zero '
        "default (200MiB) only for a container that omits the request, the model (pod "
        "totals only) adds it for any pod requesting 0, so node1 scores (40 + 0) / 2 = 20",
    ),
    least_case(
        "zero node resources, pods scheduled with resources",
        pod=go_pod("p"),
        nodes=[sized("node1", 0, 0), sized("node2", 0, 0)],
        pods=[
            requesting("p1", cores(3000), 0, node="node1"),
            requesting("p2", cores(3000), 5000, node="node2"),
        ],
        want={"node1": 0, "node2": 0},
    ),
]


@pytest.mark.parametrize("case", LEAST_CASES)
def test_least_allocated(case: Case) -> None:
    assert plugin_scores(case, "NodeResourcesFit") == case.want


MOST = "TestMostAllocatedScoringStrategy"
EXTENDED = "abc.com/xyz"  # the Go tests' extendedRes
DEFAULT_RESOURCES = (ResourceWeight(name="cpu"), ResourceWeight(name="memory"))
EXTENDED_RESOURCE_SET = (*DEFAULT_RESOURCES, ResourceWeight(name=EXTENDED))


def fit_profile(
    kind: str,
    resources: Sequence[ResourceWeight] = DEFAULT_RESOURCES,
    shape: Sequence[tuple[int, int]] = (),
) -> SchedulerProfile:
    """The default profile with NodeResourcesFit's scoringStrategy as the Go test
    configures it; `shape` scores are the configuration's 0-10."""
    return SchedulerProfile(
        scoring_strategy=ScoringStrategy(
            type=kind,  # type: ignore[arg-type]
            resources=tuple(resources),
            shape=tuple((utilization, score * 10) for utilization, score in shape),
        )
    )


def with_extended(node: Node, **counts: int) -> Node:
    """The node with extended resources; keyword names use "__" for "/" and "_" for "."."""
    extended = {name.replace("__", "/").replace("_", "."): n for name, n in counts.items()}
    return dataclasses.replace(node, allocatable_extended=extended)


def extended_pod(name: str, node: str | None = None, **counts: int) -> Pod:
    extended = {name.replace("__", "/").replace("_", "."): n for name, n in counts.items()}
    return go_pod(name, node=node, extended_requests=extended)


MOST_ALLOCATED = fit_profile("MostAllocated")

most_case = table(
    MOST, pod=requesting("p", cores(1000 + 2000), 2000 + 3000), profile=MOST_ALLOCATED
)

MOST_CASES = [
    most_case(
        "nothing scheduled, resources requested, differently sized nodes",
        nodes=[sized("node1", cores(4000), 10000), sized("node2", cores(6000), 10000)],
        want={"node1": 62, "node2": 50},
    ),
    most_case(
        "resources requested, pods scheduled with resources",
        nodes=[sized("node1", cores(10000), 20000), sized("node2", cores(10000), 20000)],
        pods=[
            requesting("p1", cores(3000), 0, node="node1"),
            requesting("p2", cores(3000), 5000, node="node2"),
        ],
        want={"node1": 42, "node2": 55},
        xfail='the placed pod on node1 requests memory "0" explicitly; Go adds the non-zero '
        "default (200MiB) only for a container that omits the request, the model (pod "
        "totals only) adds it for any pod requesting 0, so node1's memory counts full",
    ),
    most_case(
        "resources requested equal node capacity",
        pod=requesting("p", cores(2000 + 3000), 4000 + 5000),
        nodes=[sized("node1", cores(5000), 10000), sized("node2", cores(10000), 9000)],
        want={"node1": 95, "node2": 75},
    ),
    most_case(
        "nothing scheduled, resources requested, differently sized nodes (weighted)",
        nodes=[sized("node1", cores(4000), 10000), sized("node2", cores(6000), 10000)],
        profile=fit_profile(
            "MostAllocated",
            (ResourceWeight(name="memory", weight=2), ResourceWeight(name="cpu", weight=1)),
        ),
        want={"node1": 58, "node2": 50},
    ),
    most_case(
        "no resources requested, pods scheduled, nonzero request for resource",
        pod=go_pod("p"),
        nodes=[
            sized("node1", 250, 1000 * 1024 * 1024),
            sized("node2", 250, 1000 * 1024 * 1024),
        ],
        pods=[go_pod("p1", node="node1"), go_pod("p2", node="node1")],
        want={"node1": 80, "node2": 30},
    ),
    most_case(
        "bypass extended resource if the pod does not request",
        nodes=[
            sized("node1", cores(6000), 10000),
            with_extended(sized("node2", cores(6000), 10000), abc_com__xyz=4),
        ],
        profile=fit_profile("MostAllocated", EXTENDED_RESOURCE_SET),
        want={"node1": 50, "node2": 50},
    ),
    most_case(
        "honor extended resource if the pod request",
        pod=dataclasses.replace(
            requesting("p", cores(3000), 5000), extended_requests={EXTENDED: 2}
        ),
        nodes=[
            with_extended(sized("node1", cores(6000), 10000), abc_com__xyz=4),
            with_extended(sized("node2", cores(6000), 10000), abc_com__xyz=10),
        ],
        profile=fit_profile("MostAllocated", EXTENDED_RESOURCE_SET),
        want={"node1": 50, "node2": 40},
    ),
    most_case(
        "if the node doesn't have a resource",
        pod=requesting("p", cores(3000), 4000),
        nodes=[
            sized("node1", cores(6000), 10000),
            with_extended(sized("node2", cores(6000), 10000), abc_com__xyz=4),
        ],
        profile=fit_profile(
            "MostAllocated",
            (
                ResourceWeight(name=EXTENDED, weight=2),
                ResourceWeight(name="cpu"),
                ResourceWeight(name="memory"),
            ),
        ),
        want={"node1": 45, "node2": 45},
    ),
]


@pytest.mark.parametrize("case", MOST_CASES)
def test_most_allocated(case: Case) -> None:
    assert plugin_scores(case, "NodeResourcesFit") == case.want


SINGLE = "TestResourceBinPackingSingleExtended"
MULTIPLE = "TestResourceBinPackingMultipleExtended"
BIN_PACKING_SHAPE = ((0, 0), (100, 1))
FOO_ONLY = fit_profile(
    "RequestedToCapacityRatio", (ResourceWeight(name="intel.com/foo"),), BIN_PACKING_SHAPE
)
FOO_AND_BAR = fit_profile(
    "RequestedToCapacityRatio",
    (
        ResourceWeight(name="intel.com/foo", weight=3),
        ResourceWeight(name="intel.com/bar", weight=5),
    ),
    BIN_PACKING_SHAPE,
)
MIB = 1024 * 1024


def bin_node(name: str, **counts: int) -> Node:
    """The Go tests' makeNode(name, 4000 millicores, 10000 MiB, extended resources)."""
    return with_extended(sized(name, 4000, 10000 * MIB), **counts)


FOO_8 = {"intel_com__foo": 8}
FOO_4 = {"intel_com__foo": 4}
# extendedResources1 and extendedResources2 of the multiple-resource table.
FOO_4_BAR_8 = {"intel_com__foo": 4, "intel_com__bar": 8}
FOO_8_BAR_4 = {"intel_com__foo": 8, "intel_com__bar": 4}

single_case = table(
    SINGLE,
    nodes=[bin_node("node1", **FOO_8), bin_node("node2", **FOO_4)],
    profile=FOO_ONLY,
    pod=extended_pod("p", intel_com__foo=2),
)

multiple_case = table(
    MULTIPLE,
    nodes=[bin_node("node1", **FOO_8_BAR_4), bin_node("node2", **FOO_4_BAR_8)],
    profile=FOO_AND_BAR,
)

RTCR_CASES = [
    single_case(
        "nothing scheduled, nothing requested", pod=go_pod("p"), want={"node1": 0, "node2": 0}
    ),
    single_case(
        "resources requested, pods scheduled with less resources", want={"node1": 2, "node2": 5}
    ),
    single_case(
        "resources requested, pods scheduled with resources, on node with existing pod running",
        pods=[extended_pod("p1", "node2", intel_com__foo=2)],
        want={"node1": 2, "node2": 10},
    ),
    single_case(
        "resources requested, pods scheduled with more resources",
        pod=extended_pod("p", intel_com__foo=4),
        want={"node1": 5, "node2": 10},
    ),
    multiple_case(
        "nothing scheduled, nothing requested", pod=go_pod("p"), want={"node1": 0, "node2": 0}
    ),
    multiple_case(
        "resources requested, pods scheduled with less resources",
        pod=extended_pod("p", intel_com__foo=2, intel_com__bar=2),
        want={"node1": 4, "node2": 3},
    ),
    multiple_case(
        "resources requested, pods scheduled with more resources",
        pod=extended_pod("p", intel_com__foo=4, intel_com__bar=2),
        want={"node1": 5, "node2": 5},
    ),
]


@pytest.mark.parametrize("case", RTCR_CASES)
def test_requested_to_capacity_ratio(case: Case) -> None:
    assert plugin_scores(case, "NodeResourcesFit") == case.want


BROKEN_LINEAR_CASES = [
    (
        [(10, 1), (90, 9)],
        {-10: 1, 0: 1, 9: 1, 10: 1, 15: 1, 19: 1, 20: 2, 89: 8, 90: 9, 99: 9, 100: 9, 110: 9},
    ),
    ([(0, 2), (40, 10), (100, 0)], {-10: 2, 0: 2, 20: 6, 30: 8, 40: 10, 70: 5, 100: 0, 110: 0}),
    ([(0, 2), (40, 2), (100, 2)], {-10: 2, 0: 2, 20: 2, 30: 2, 40: 2, 70: 2, 100: 2, 110: 2}),
]


@pytest.mark.parametrize(
    ("shape", "expected"),
    BROKEN_LINEAR_CASES,
    ids=[f"TestBrokenLinearFunction/case_{i}" for i in range(len(BROKEN_LINEAR_CASES))],
)
def test_broken_linear_function(shape: list[tuple[int, int]], expected: dict[int, int]) -> None:
    points = np.array(list(expected), dtype=np.int64)
    assert dict(zip(expected, broken_linear(shape, points).tolist(), strict=True)) == expected


# The Go table's pod specs: cpu in millicores, memory in bytes, summed over containers.
CPU_AND_MEMORY = (1000 + 2000, 2000 + 3000)
CPU_ONLY = (1000 + 2000, 0)

balanced_case = table(BALANCED, pod=requesting("p", *CPU_AND_MEMORY))

BALANCED_CASES = [
    balanced_case(
        "nothing scheduled, nothing requested, skip in PreScore",
        pod=go_pod("p"),
        nodes=[sized("node1", 4000, 10000), sized("node2", 4000, 10000)],
        want=None,
    ),
    balanced_case(
        "nothing scheduled, resources requested, differently sized nodes",
        nodes=[sized("node1", 4000, 10000), sized("node2", 6000, 10000)],
        want={"node1": 87, "node2": 100},
    ),
    balanced_case(
        "resources requested, pods scheduled with resources",
        nodes=[sized("node1", 10000, 20000), sized("node2", 10000, 20000)],
        pods=[
            requesting("p1", *CPU_ONLY, node="node1"),
            requesting("p2", *CPU_AND_MEMORY, node="node2"),
        ],
        want={"node1": 82, "node2": 95},
    ),
    balanced_case(
        "requested resources at node capacity",
        pod=requesting("p", *CPU_ONLY),
        nodes=[sized("node1", 6000, 10000), sized("node2", 6000, 10000)],
        pods=[
            requesting("p1", *CPU_ONLY, node="node1"),
            requesting("p2", *CPU_AND_MEMORY, node="node2"),
        ],
        want={"node1": 50, "node2": 75},
    ),
    # node1's nvidia.com/gpu is skipped in Go as the pod does not request it.
    balanced_case(
        "node without the scalar resource should skip the scalar resource",
        nodes=[sized("node1", 3500, 40000), sized("node2", 3500, 40000)],
        want={"node1": 63, "node2": 63},
    ),
]


@pytest.mark.parametrize("case", BALANCED_CASES)
def test_balanced_allocation(case: Case) -> None:
    assert plugin_scores(case, "NodeResourcesBalancedAllocation") == case.want


# --- ImageLocality ---

IMAGES = "TestImageLocalityPriority"
MB = 1024 * 1024  # the Go test's mb


def image(size_mb: int, *names: str) -> ContainerImage:
    return ContainerImage(names=names, size_bytes=size_mb * MB)


def imaged(name: str, *images: ContainerImage) -> Node:
    return go_node(name, images=images)


def running(*images: str, init: Sequence[str] = ()) -> Pod:
    """A pod of containers with these images, after its init containers'."""
    return go_pod("p", container_images=(*init, *images))


# The Go table's node statuses, by the images they hold.
NODE_40_300_2000 = (
    image(40, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"),
    image(300, "gcr.io/300:latest", "gcr.io/300:v1"),
    image(2000, "gcr.io/2000:latest"),
)
NODE_250_10 = (image(250, "gcr.io/250:latest"), image(10, "gcr.io/10:latest", "gcr.io/10:v1"))
NODE_600_40_900 = (
    image(600, "gcr.io/600:latest"),
    image(40, "gcr.io/40:latest"),
    image(900, "gcr.io/900:latest"),
)
NODE_300_600_900 = (
    image(300, "gcr.io/300:latest"),
    image(600, "gcr.io/600:latest"),
    image(900, "gcr.io/900:latest"),
)
NODE_4000_30 = (image(4000, "gcr.io/4000:latest"), image(30, "gcr.io/30:latest"))
NODE_20_30_40 = (
    image(20, "gcr.io/20:latest"),
    image(30, "gcr.io/30:latest"),
    image(40, "gcr.io/40:latest"),
)

images_case = table(IMAGES)

IMAGE_CASES = [
    images_case(
        "two images spread on two nodes, prefer the larger image one",
        pod=running("gcr.io/40", "gcr.io/250"),
        nodes=[imaged("node1", *NODE_40_300_2000), imaged("node2", *NODE_250_10)],
        want={"node1": 0, "node2": 5},
    ),
    images_case(
        "two images on one node, prefer this node",
        pod=running("gcr.io/40", "gcr.io/300"),
        nodes=[imaged("node1", *NODE_40_300_2000), imaged("node2", *NODE_250_10)],
        want={"node1": 7, "node2": 0},
    ),
    images_case(
        "if exceed limit, use limit",
        pod=running("gcr.io/10", "gcr.io/4000"),
        nodes=[imaged("node1", *NODE_4000_30), imaged("node2", *NODE_250_10)],
        want={"node1": 100, "node2": 0},
    ),
    images_case(
        "if exceed limit, use limit (with node which has no images present)",
        pod=running("gcr.io/10", "gcr.io/4000"),
        nodes=[
            imaged("node1", *NODE_4000_30),
            imaged("node2", *NODE_250_10),
            imaged("node3"),
        ],
        want={"node1": 66, "node2": 0, "node3": 0},
    ),
    images_case(
        "pod with multiple large images, node2 is preferred",
        pod=running("gcr.io/300", "gcr.io/600", "gcr.io/900"),
        nodes=[
            imaged("node1", *NODE_600_40_900),
            imaged("node2", *NODE_300_600_900),
            imaged("node3"),
        ],
        want={"node1": 32, "node2": 36, "node3": 0},
    ),
    images_case(
        "pod with multiple small images",
        pod=running("gcr.io/30", "gcr.io/40"),
        nodes=[imaged("node1", *NODE_20_30_40), imaged("node2", *NODE_4000_30)],
        want={"node1": 1, "node2": 0},
    ),
    images_case(
        "include InitContainers: two images spread on two nodes, prefer the larger image one",
        pod=running("gcr.io/30", init=["gcr.io/300"]),
        nodes=[imaged("node1", *NODE_40_300_2000), imaged("node2", *NODE_20_30_40)],
        want={"node1": 6, "node2": 0},
    ),
]


@pytest.mark.parametrize("case", IMAGE_CASES)
def test_image_locality(case: Case) -> None:
    assert plugin_scores(case, "ImageLocality") == case.want


# TestNormalizedImageName's getImageFakeDigest("root"): "sha256:" and the hex of sha256("root").
ROOT_DIGEST = "sha256:" + hashlib.sha256(b"root").hexdigest()


@pytest.mark.parametrize(
    ("name", "normalized"),
    [
        ("root", "root:latest"),
        ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("root:tag", "root:tag"),
        (f"root@{ROOT_DIGEST}", f"root@{ROOT_DIGEST}"),
    ],
    ids=[
        f"TestNormalizedImageName/{name}"
        for name in (
            "add :latest postfix 1",
            "add :latest postfix 2",
            "keep it as is 1",
            "keep it as is 2",
        )
    ],
)
def test_normalized_image_name(name: str, normalized: str) -> None:
    assert normalized_image_name(name) == normalized
