"""The kube-scheduler model (predict_node, score_nodes).

Covered: LeastAllocated picks the emptiest node, with the scheduler's non-zero
defaults for pods requesting nothing; BalancedAllocation breaks a LeastAllocated
tie and is skipped for best-effort pods; PreferNoSchedule taints steer away
unless tolerated; extra_taints act as soft or hard node taints; infeasible nodes
are not scored and None comes back when nothing fits; equal scores go to the
first node name whatever the order asked in; exact scores of the Go formulas;
PodTopologySpread scores as a plain reading of the Go code does, with nodes
lacking a topology key, node affinity and terminating siblings; the pod
scheduled for an evicted pod's replacement and what it sees terminating
(a ReplicaSet's new pod next to its predecessor, a StatefulSet's pod itself
once it is gone).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadaware.cluster._types import (
    LabelSelector,
    Node,
    OwnerRef,
    Pod,
    PodAffinityTerm,
    Taint,
    Toleration,
    TopologySpreadConstraint,
)
from loadaware.scheduling import Occupancy, _predict, _scores, _spread
from loadaware.scheduling._predict import predict_node, score_nodes, score_replacement
from tests.lib.builders import NOW, GiB, MiB, make_cluster, make_node, make_pod

SOFT = Taint(key="loadaware.io/hotspot", effect="PreferNoSchedule")
# PodTopologySpread with the system defaults (the builders' pods have a ReplicaSet
# owner) when no sibling runs anywhere: every node normalises to 100, weight 2.
SPREAD_NO_SIBLINGS = 2 * 100


def occupancy(nodes: Iterable[Node], pods: Iterable[Pod] = ()) -> Occupancy:
    return Occupancy.from_cluster(make_cluster(nodes, pods))


def replacement(**fields: object) -> Pod:
    return make_pod("web-new", node=None, **fields)  # type: ignore[arg-type]


def test_picks_the_least_allocated_node() -> None:
    nodes = [make_node("a"), make_node("b"), make_node("c")]
    pods = [
        make_pod("x", node="a", cpu_millicores=2000, memory_bytes=8 * GiB),
        make_pod("y", node="b", cpu_millicores=500, memory_bytes=2 * GiB),
        make_pod("z", node="c", cpu_millicores=1000, memory_bytes=4 * GiB),
    ]
    assert predict_node(replacement(), occupancy(nodes, pods), ["a", "b", "c"]) == "b"


def test_balanced_allocation_breaks_a_least_allocated_tie() -> None:
    # After the pod: "a-lopsided" at 25% cpu / 75% memory, "b-even" at 50% / 50%.
    # LeastAllocated gives both 50; BalancedAllocation gives 75 and 100.
    nodes = [
        make_node("a-lopsided", cpu_millicores=4000, memory_bytes=4000 * MiB),
        make_node("b-even", cpu_millicores=4000, memory_bytes=4000 * MiB),
    ]
    pods = [
        make_pod("x", node="a-lopsided", cpu_millicores=900, memory_bytes=2900 * MiB),
        make_pod("y", node="b-even", cpu_millicores=1900, memory_bytes=1900 * MiB),
    ]
    pod = replacement(cpu_millicores=100, memory_bytes=100 * MiB)
    occ = occupancy(nodes, pods)
    assert score_nodes(pod, occ, ["a-lopsided", "b-even"]) == [
        ("b-even", 50 + 100 + 300 + SPREAD_NO_SIBLINGS),
        ("a-lopsided", 50 + 75 + 300 + SPREAD_NO_SIBLINGS),
    ]
    assert predict_node(pod, occ, ["a-lopsided", "b-even"]) == "b-even"


def test_scores_follow_the_go_integer_formulas() -> None:
    occ = occupancy([make_node("n1", cpu_millicores=4000, memory_bytes=16 * GiB)])
    pod = replacement(cpu_millicores=1000, memory_bytes=4 * GiB)
    # LeastAllocated (75 + 75) / 2, BalancedAllocation 100, TaintToleration 3 * 100.
    assert score_nodes(pod, occ, ["n1"]) == [("n1", 75 + 100 + 300 + SPREAD_NO_SIBLINGS)]


def test_best_effort_pod_counts_nonzero_defaults_and_skips_balanced_allocation() -> None:
    occ = occupancy([make_node("n1", cpu_millicores=1000, memory_bytes=1000 * MiB)])
    pod = replacement(cpu_millicores=0, memory_bytes=0)
    # 100m of 1000m leaves 90; 200MiB of 1000MiB leaves 80; (90 + 80) / 2 = 85.
    assert score_nodes(pod, occ, ["n1"]) == [("n1", 85 + 0 + 300 + SPREAD_NO_SIBLINGS)]


def test_existing_pods_without_requests_count_at_the_defaults() -> None:
    nodes = [make_node("a", cpu_millicores=1000), make_node("b", cpu_millicores=1000)]
    idle = [make_pod(f"be-{i}", node="a", cpu_millicores=0, memory_bytes=0) for i in range(5)]
    assert predict_node(replacement(cpu_millicores=100), occupancy(nodes, idle), ["a", "b"]) == "b"


def test_prefer_no_schedule_taint_steers_away() -> None:
    nodes = [make_node("a", taints=[SOFT]), make_node("b")]
    assert predict_node(replacement(), occupancy(nodes), ["a", "b"]) == "b"


def test_tolerated_prefer_no_schedule_taint_does_not_steer() -> None:
    nodes = [make_node("a", taints=[SOFT]), make_node("b")]
    pod = replacement(tolerations=(Toleration(key=SOFT.key, operator="Exists"),))
    assert predict_node(pod, occupancy(nodes), ["a", "b"]) == "a"


def test_taint_toleration_is_normalised_across_feasible_nodes() -> None:
    other = Taint(key="spot", effect="PreferNoSchedule")
    nodes = [make_node("a", taints=[SOFT, other]), make_node("b", taints=[SOFT]), make_node("c")]
    scores = dict(score_nodes(replacement(), occupancy(nodes), ["a", "b", "c"]))
    least_and_balanced = scores["c"] - 300
    assert scores == {
        "a": least_and_balanced + 0,
        "b": least_and_balanced + 3 * 50,
        "c": least_and_balanced + 3 * 100,
    }


def test_soft_extra_taint_steers_away() -> None:
    occ = occupancy([make_node("a"), make_node("b")])
    assert predict_node(replacement(), occ, ["a", "b"]) == "a"
    assert predict_node(replacement(), occ, ["a", "b"], extra_taints={"a": (SOFT,)}) == "b"


def test_hard_extra_taint_makes_the_node_infeasible() -> None:
    hard = Taint(key="loadaware.io/hotspot", effect="NoSchedule")
    occ = occupancy([make_node("a"), make_node("b", cpu_millicores=1000)])
    assert predict_node(replacement(), occ, ["a", "b"], extra_taints={"a": (hard,)}) == "b"
    assert [
        name for name, _ in score_nodes(replacement(), occ, ["a", "b"], extra_taints={"a": (hard,)})
    ] == ["b"]


def test_returns_none_when_nothing_fits() -> None:
    nodes = [make_node("a", cpu_millicores=1000), make_node("b", ready=False)]
    pod = replacement(cpu_millicores=2000)
    assert predict_node(pod, occupancy(nodes), ["a", "b"]) is None
    assert score_nodes(pod, occupancy(nodes), ["a", "b"]) == []


def test_returns_none_for_no_candidate_nodes() -> None:
    assert predict_node(replacement(), occupancy([make_node("a")]), []) is None


def test_infeasible_emptier_node_is_not_chosen() -> None:
    nodes = [make_node("a", labels={"disk": "ssd"}), make_node("b")]
    pods = [make_pod("x", node="a", cpu_millicores=3000)]
    pod = replacement(node_selector={"disk": "ssd"})
    assert predict_node(pod, occupancy(nodes, pods), ["a", "b"]) == "a"


def test_only_the_named_nodes_are_considered() -> None:
    nodes = [make_node("a"), make_node("b")]
    pods = [make_pod("x", node="a", cpu_millicores=3000)]
    assert predict_node(replacement(), occupancy(nodes, pods), ["a"]) == "a"


@pytest.mark.parametrize(
    "order",
    [
        pytest.param(["n2", "n1", "n3"], id="asked out of order"),
        pytest.param(["n3", "n2", "n1"], id="asked reversed"),
    ],
)
def test_equal_scores_go_to_the_first_node_name(order: list[str]) -> None:
    occ = occupancy([make_node("n1"), make_node("n2"), make_node("n3")])
    assert predict_node(replacement(), occ, order) == "n1"
    assert [name for name, _ in score_nodes(replacement(), occ, order)] == ["n1", "n2", "n3"]


def test_replacements_spread_as_they_are_added() -> None:
    anti = PodAffinityTerm(
        label_selector=LabelSelector(match_labels={"app": "web"}),
        topology_key="kubernetes.io/hostname",
    )
    occ = occupancy([make_node("a"), make_node("b"), make_node("c")])
    landed = []
    for i in range(4):
        pod = make_pod(
            f"web-{i}", node=None, labels={"app": "web"}, required_pod_anti_affinity=(anti,)
        )
        target = predict_node(pod, occ, ["a", "b", "c"])
        landed.append(target)
        if target is not None:
            occ.add(pod, target)
    assert landed == ["a", "b", "c", None]


# --- default spreading: whose siblings ------------------------------------------------

STATEFULSET = OwnerRef(kind="StatefulSet", name="db", uid="uid-sts-db")


def _db_pod(ordinal: int, node: str | None, **fields: object) -> Pod:
    return make_pod(
        f"db-{ordinal}",
        node=node,
        owner=STATEFULSET,
        labels={
            "app": "db",
            "statefulset.kubernetes.io/pod-name": f"db-{ordinal}",
            "apps.kubernetes.io/pod-index": str(ordinal),
            "controller-revision-hash": "db-5d8f" if ordinal else "db-7c4b",
        },
        **fields,
    )


def _spread_scores(pod: Pod, occ: Occupancy) -> dict[str, int]:
    scores = score_replacement(pod, occ, occ.node_indexes(occ.node_names))
    names = occ.node_names
    return {
        names[int(i)]: int(s)
        for i, s in zip(scores.indexes, scores.plugins["PodTopologySpread"], strict=True)
    }


def test_statefulset_siblings_count_without_their_per_pod_labels() -> None:
    # db-0 is recreated once it is gone; db-1 and db-2 share node a, db-3 is on b.
    nodes = [make_node(n) for n in ("a", "b", "c")]
    pods = [_db_pod(0, "c"), _db_pod(1, "a"), _db_pod(2, "a"), _db_pod(3, "b")]
    spread = _spread_scores(pods[0], occupancy(nodes, pods))
    assert spread["c"] > spread["b"] > spread["a"], spread


def test_siblings_are_the_pods_the_owner_selects() -> None:
    # The owner selects app=web; the pods differ in a label the owner ignores.
    selector = LabelSelector(match_labels={"app": "web"})
    nodes = [make_node(n) for n in ("a", "b", "c")]
    pods = [
        make_pod(
            f"web-{i}", node=node, labels={"app": "web", "track": track}, owner_selector=selector
        )
        for i, (node, track) in enumerate(
            (("c", "stable"), ("a", "canary"), ("a", "stable"), ("b", "canary"))
        )
    ]
    spread = _spread_scores(pods[0], occupancy(nodes, pods))
    assert spread["c"] > spread["b"] > spread["a"], spread


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 256_000),  # allocatable cpu, millicores
            st.integers(1, 2**44),  # allocatable memory, bytes
            st.floats(0, 1.5),  # requested share of cpu
            st.floats(0, 1.5),  # requested share of memory
        ),
        min_size=1,
        max_size=30,
    )
)
def test_resource_scores_of_nodes_with_cpu_and_memory_are_the_general_ones(
    nodes: list[tuple[int, int, float, float]],
) -> None:
    # A node without cpu takes the general way for every node; it is cut off again.
    alloc_cpu = np.array([n[0] for n in nodes] + [0], dtype=np.int64)
    alloc_mem = np.array([n[1] for n in nodes] + [1], dtype=np.int64)
    cpu = np.array([int(n[0] * n[2]) for n in nodes] + [1], dtype=np.int64)
    mem = np.array([int(n[1] * n[3]) for n in nodes] + [1], dtype=np.int64)
    for score in (_scores.least_allocated, _scores.balanced_allocation):
        general = score(cpu, alloc_cpu, mem, alloc_mem)[:-1]
        assert np.array_equal(score(cpu[:-1], alloc_cpu[:-1], mem[:-1], alloc_mem[:-1]), general)


def _reference_topology_spread(pod, occ, feasible, terminating):
    """PodTopologySpread's Score and NormalizeScore as the Go code reads: per
    constraint, the matching pods of every node of the pod's node affinity whose
    domain a considered node is in, then the skew weighting and normalisation."""
    constraints = _spread.spread_constraints(pod)
    if not constraints:
        return None
    domains = [occ.domain_codes(key) for key, _skew, _sel in constraints]
    ignored = np.zeros(len(feasible), dtype=bool)
    if pod.topology_spread_constraints:
        for codes, _values in domains:
            ignored |= codes[feasible] < 0
    considered = feasible[~ignored]
    include = occ.affinity_mask(pod)
    raw = np.zeros(len(feasible))
    for (key, max_skew, selector), (codes, values) in zip(constraints, domains, strict=True):
        counts = occ.spread_counts(pod.namespace, selector).copy()
        for t in terminating:
            if t.deletion_timestamp is None and selector.matches(t.labels):
                counts[occ.placed_index(t)] -= 1
        shifted = codes + 1
        if key == _spread.HOSTNAME_KEY:
            size, per_node = len(considered), counts[feasible]
        else:
            present = np.bincount(shifted[considered], minlength=len(values) + 1) > 0
            size = int(present.sum())
            member = present[shifted] & include
            totals = np.bincount(shifted[member], weights=counts[member], minlength=len(present))
            per_node = totals[shifted[feasible]]
        score = per_node * np.log(size + 2) + (max_skew - 1)
        raw += np.where(codes[feasible] >= 0, score, 0.0)
    scores = np.floor(raw + 0.5).astype(np.int64)
    valid = scores[~ignored]
    if not valid.size:
        return np.zeros(len(feasible), dtype=np.int64)
    low, high = int(valid.min()), int(valid.max())
    if high == 0:
        normalised = np.full(len(feasible), 100, dtype=np.int64)
    else:
        normalised = 100 * (high + low - scores) // high
    return np.where(ignored, 0, normalised)


SPREAD_NODES = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", None]),  # zone
        st.booleans(),  # has its hostname label
        st.booleans(),  # in the pool the pod selects
    ),
    min_size=1,
    max_size=10,
)


@settings(max_examples=300, deadline=None)
@given(
    SPREAD_NODES,
    st.lists(st.tuples(st.integers(0, 9), st.sampled_from(["web", "db"]), st.booleans())),
    st.booleans(),  # the pod selects a pool
    st.sampled_from(["defaults", "own"]),
    st.data(),
)
def test_topology_spread_scores_as_the_reference_reads_them(
    node_specs, placed, pooled, constraints, data
) -> None:
    nodes = []
    for i, (zone, has_hostname, in_pool) in enumerate(node_specs):
        node = make_node(f"n{i}", zone=zone, labels={"pool": "x" if in_pool else "y"})
        if not has_hostname:
            labels = {k: v for k, v in node.labels.items() if k != "kubernetes.io/hostname"}
            node = Node(**{**_fields(node), "labels": labels})
        nodes.append(node)
    pods = [
        make_pod(
            f"{app}-{k}",
            node=f"n{where % len(nodes)}",
            labels={"app": app},
            deletion_timestamp=None if not deleting else NOW,
        )
        for k, (where, app, deleting) in enumerate(placed)
    ]
    spread = ()
    if constraints == "own":
        spread = tuple(
            TopologySpreadConstraint(
                max_skew=skew,
                topology_key=key,
                when_unsatisfiable="ScheduleAnyway",
                label_selector=LabelSelector(match_labels={"app": "web"}),
            )
            for key, skew in data.draw(
                st.lists(
                    st.tuples(
                        st.sampled_from(
                            ["kubernetes.io/hostname", "topology.kubernetes.io/zone", "pool"]
                        ),
                        st.integers(1, 5),
                    ),
                    min_size=1,
                    max_size=2,
                )
            )
        )
    pod = replacement(
        labels={"app": "web"},
        node_selector={"pool": "x"} if pooled else {},
        topology_spread_constraints=spread,
    )
    occ = occupancy(nodes, pods)
    chosen = data.draw(st.lists(st.integers(0, len(nodes) - 1), min_size=1, unique=True))
    feasible = np.array(sorted(chosen), dtype=np.int64)
    running = [p for p in pods if p.deletion_timestamp is None]
    terminating = data.draw(st.sampled_from([(), tuple(running[:1])]))
    expected = _reference_topology_spread(pod, occ, feasible, terminating)
    got = _spread.topology_spread_score(pod, occ, feasible, terminating)
    assert (got is None) == (expected is None)
    if got is not None:
        assert got.tolist() == expected.tolist()


def _fields(node: Node) -> dict[str, object]:
    return {name: getattr(node, name) for name in Node.__dataclass_fields__}


def test_a_replicasets_replacement_is_scheduled_next_to_its_terminating_predecessor() -> None:
    web = make_pod("web-1", node="a")
    occ = occupancy([make_node("a"), make_node("b")], [web])
    with _predict.scheduling_replacement(web, occ) as (incoming, terminating):
        assert incoming.name != web.name
        assert (incoming.labels, incoming.node_name) == (web.labels, None)
        assert terminating == (web,)
        assert occ.placement(web) == "a"


def test_a_statefulsets_pod_is_scheduled_again_once_it_is_gone() -> None:
    db = _db_pod(0, "a")
    occ = occupancy([make_node("a"), make_node("b")], [db])
    with _predict.scheduling_replacement(db, occ) as (incoming, terminating):
        assert (incoming, terminating) == (db, ())
        assert occ.placement(db) is None
    assert occ.placement(db) == "a"
