"""The agreement rule on small clusters (fidelity.compare_binding).

Covers: below 100 nodes the sample is every feasible node, so only a best-scoring
node agrees (either of a tie); a node that fails a Filter, or that the model does
not know, disagrees with the reason named; from 100 nodes a node agrees while
at most F - k feasible nodes outscore it, and not with one more; percentage 100
asks for the best again, from the profile or the policy; the profile decides the
scores (MostAllocated agrees with the fullest node where the default does not).
"""

from __future__ import annotations

import dataclasses

from loadaware import cluster, fidelity, scheduling
from tests.lib.builders import make_cluster, make_node, make_pod

MOST_ALLOCATED = dataclasses.replace(
    scheduling.DEFAULT_PROFILE, scoring_strategy=scheduling.ScoringStrategy(type="MostAllocated")
)
INCOMING = make_pod("web-new", node=None, cpu_millicores=100, owner=None)


def _occupancy(loads: dict[str, int]) -> scheduling.Occupancy:
    """A node per name, each with one placed pod requesting that many millicores."""
    nodes = [make_node(name) for name in loads]
    pods = [
        make_pod(f"filler-{name}", node=name, cpu_millicores=cpu, owner=None)
        for name, cpu in loads.items()
        if cpu
    ]
    return scheduling.Occupancy.from_cluster(make_cluster(nodes, pods))


def _compare(occupancy: scheduling.Occupancy, node: str, **options: object) -> scheduling.Binding:
    return fidelity.compare_binding(INCOMING, node, occupancy, **options)  # type: ignore[arg-type]


def test_below_100_nodes_only_a_best_node_agrees() -> None:
    occupancy = _occupancy({"a": 0, "b": 2000, "c": 3000})
    agreed = _compare(occupancy, "a")
    assert agreed.agreed
    assert agreed.predicted == ("a",)
    assert agreed.reason == ""
    assert agreed.pod == "default/web-new"
    assert agreed.scheduler_name == "default-scheduler"
    worst = _compare(occupancy, "c")
    assert not worst.agreed
    assert worst.predicted == ("a",)
    assert worst.reason.startswith("outscored: 2 of 3 feasible nodes outscore c")


def test_either_node_of_a_tie_agrees() -> None:
    occupancy = _occupancy({"a": 1000, "b": 1000, "c": 3000})
    assert _compare(occupancy, "a").agreed
    assert _compare(occupancy, "b").agreed
    assert _compare(occupancy, "a").predicted == ("a", "b")


def test_a_node_that_fails_a_filter_disagrees_and_says_which() -> None:
    occupancy = _occupancy({"a": 0, "full": 3950})
    found = _compare(occupancy, "full")
    assert not found.agreed
    assert found.reason == "infeasible: full fails insufficient-cpu for the pod"
    tainted = scheduling.Occupancy.from_cluster(
        make_cluster(
            [
                make_node("a"),
                make_node("t", taints=[cluster.Taint(key="k", value="v", effect="NoSchedule")]),
            ]
        )
    )
    assert _compare(tainted, "t").reason == "infeasible: t fails untolerated-taint for the pod"


def test_a_node_the_model_does_not_know_disagrees() -> None:
    found = _compare(_occupancy({"a": 0}), "elsewhere")
    assert not found.agreed
    assert found.reason.startswith("unknown-node: elsewhere")


def _sampled(empty: int, full: int) -> scheduling.Occupancy:
    loads = {f"e{i:03}": 0 for i in range(empty)}
    loads.update({f"f{i:03}": 2000 for i in range(full)})
    return _occupancy(loads)


def test_from_100_nodes_the_bound_node_may_be_the_best_of_a_sample() -> None:
    # 200 nodes at 50%: kube-scheduler scores 100 feasible nodes, so a sample that
    # holds a full node can leave out 100 empty ones, not 101.
    assert _compare(_sampled(100, 100), "f000", percentage_of_nodes_to_score=50).agreed
    missed = _compare(_sampled(101, 99), "f000", percentage_of_nodes_to_score=50)
    assert not missed.agreed
    assert missed.reason.startswith("outscored: 101 of 200 feasible nodes outscore f000")
    assert missed.reason.endswith("a sample of 100 leaves out at most 100")
    # The best-scoring nodes, the first five of the 101 by name.
    assert missed.predicted == ("e000", "e001", "e002", "e003", "e004")


def test_scoring_every_node_asks_for_the_best_again() -> None:
    occupancy = _sampled(100, 100)
    assert not _compare(occupancy, "f000", percentage_of_nodes_to_score=100).agreed
    every_node = dataclasses.replace(scheduling.DEFAULT_PROFILE, percentage_of_nodes_to_score=100)
    # The profile's percentage wins over the policy's.
    found = _compare(occupancy, "f000", profile=every_node, percentage_of_nodes_to_score=50)
    assert not found.agreed
    assert _compare(occupancy, "e000", percentage_of_nodes_to_score=100).agreed


def test_the_profile_decides_the_scores() -> None:
    occupancy = _occupancy({"a": 0, "b": 2000, "c": 3000})
    assert _compare(occupancy, "c", profile=MOST_ALLOCATED).agreed
    assert not _compare(occupancy, "a", profile=MOST_ALLOCATED).agreed
    assert not _compare(occupancy, "c").agreed
