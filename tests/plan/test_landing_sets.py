"""Landing sets: where a replacement may land when kube-scheduler scores a sample.

From 100 nodes kube-scheduler scores only numFeasibleNodesToFind feasible nodes.
Covers: each eviction's landingSet holds only good landings, enough of them that
a sample misses them all with a chance of at most steering.missProbability; every
bad node that could outscore the weakest of them is steered; expectedNode is in
the set; with percentageOfNodesToScore 100 the set is the expected node alone;
without steering, or with too few good nodes for the sample, nothing is planned.
"""

from __future__ import annotations

from loadaware.cluster import ClusterState
from loadaware.metrics import Usage
from loadaware.plan import build_plan
from loadaware.policy import LoadAwarePolicy, parse_policy
from loadaware.scheduling import _sampling
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


def _policy(**steering: object) -> LoadAwarePolicy:
    # Every bait node is steered here, more than the default cap on tainted nodes
    # allows (tests/plan/test_taint_cap.py): the cap is out of the way.
    steering = {"maxTaintedFraction": 1.0, **steering}
    return parse_policy(
        {
            "apiVersion": "loadaware.io/v1alpha1",
            "kind": "LoadAwarePolicy",
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


def _cluster(cool: int, bait: int) -> tuple[ClusterState, Usage]:
    """One hot node with a pod to move; `bait` nodes requesting nothing (kube-scheduler's
    favourites) but busy, so the pod would take them over their targets; `cool` nodes
    idle, requesting more the higher their number, so their scores differ."""
    nodes = [make_node("hot")]
    pods = [
        make_pod("agent-hot", node="hot", owner=daemonset("agent"), cpu_millicores=3000),
        make_pod("web-1", node="hot", cpu_millicores=100),
    ]
    node_usage = {"hot": sample(3.6, 4 * GiB)}
    pod_usage = {"default/web-1": sample(0.6, 0.25 * GiB)}
    for i in range(bait):
        name = f"bait-{i:03d}"
        nodes.append(make_node(name))
        node_usage[name] = sample(2.6, 4 * GiB)  # 65%: +0.6 cores is 80%
    for i in range(cool):
        name = f"cool-{i:03d}"
        nodes.append(make_node(name))
        pods.append(make_pod(f"filler-{i:03d}", node=name, cpu_millicores=200 + 10 * i))
        node_usage[name] = sample(1.2, 4 * GiB)  # 30%
    return make_cluster(nodes, pods), make_usage(node_usage, pod_usage)


def test_landing_set_is_good_nodes_no_sample_misses_and_bad_rivals_are_steered() -> None:
    cluster, usage = _cluster(cool=180, bait=20)
    plan = build_plan(cluster, usage, _policy(missProbability=0.001), NOW)
    (eviction,) = plan.evictions
    landing = set(eviction.landing_set)
    assert eviction.expected_node in landing
    assert all(name.startswith("cool-") for name in landing)
    # The best-scoring cool nodes (least requested): the lowest numbers.
    assert landing == {f"cool-{i:03d}" for i in range(len(landing))}
    feasible = len(cluster.nodes)
    sample_size = _sampling.num_feasible_nodes_to_find(0, feasible)
    assert sample_size < feasible
    needed = _sampling.eligible_needed(feasible, sample_size, 0.001)
    assert needed > 1
    # The fewest that suffice, and the nodes tied with the weakest of them.
    assert needed <= len(landing) <= needed + 2
    assert _sampling.miss_chance(feasible, sample_size, len(landing)) <= 0.001
    assert {f"bait-{i:03d}" for i in range(20)} <= set(eviction.steer)
    assert not landing & set(eviction.steer)


def test_a_smaller_miss_probability_takes_a_larger_landing_set() -> None:
    cluster, usage = _cluster(cool=180, bait=20)
    loose = build_plan(cluster, usage, _policy(missProbability=0.01), NOW)
    strict = build_plan(cluster, usage, _policy(missProbability=0.0001), NOW)
    assert len(loose.evictions[0].landing_set) < len(strict.evictions[0].landing_set)


def test_scoring_every_node_lands_on_the_expected_node_alone() -> None:
    cluster, usage = _cluster(cool=180, bait=20)
    plan = build_plan(cluster, usage, _policy(percentageOfNodesToScore=100), NOW)
    (eviction,) = plan.evictions
    assert eviction.landing_set == (eviction.expected_node,)
    assert eviction.expected_node == "cool-000"
    assert set(eviction.steer) == {f"bait-{i:03d}" for i in range(20)}


def test_without_steering_a_sample_may_hold_a_bad_favourite_so_nothing_moves() -> None:
    cluster, usage = _cluster(cool=180, bait=20)
    plan = build_plan(cluster, usage, _policy(softTaint=False), NOW)
    assert plan.evictions == ()
    hot = next(n for n in plan.nodes if n.name == "hot")
    assert "land badly: 1 on bait-000 (over its targets)" in hot.note


def test_too_few_good_nodes_for_the_sample_moves_nothing() -> None:
    # Five good nodes among 200: a sample of 100 misses them all too often.
    cluster, usage = _cluster(cool=5, bait=195)
    assert build_plan(cluster, usage, _policy(), NOW).evictions == ()
    every = build_plan(cluster, usage, _policy(percentageOfNodesToScore=100), NOW)
    assert [e.expected_node for e in every.evictions] == ["cool-000"]
