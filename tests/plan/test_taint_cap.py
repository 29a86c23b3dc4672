"""The cap on tainted nodes (steering.maxTaintedFraction): no planned move's steer set
is larger than the cap; a move that would need more is planned with another pod, or
not at all, counted under taint-cap in the plan's skipped and named in the hot
node's note.

Where every node scored is a move's landing, a move whose single best node needs
more taints than the cap (the good nodes tied with it among them) lands anywhere in
that tie instead, only the others steered.

The cluster: one hot node; 20 bait nodes requesting nothing (kube-scheduler's
favourites, tied) but busy, so that the large pod would take any of them over its
targets and the small ones would not; cool nodes, idle, requesting a little.
"""

from __future__ import annotations

import pytest

from loadaware.cluster import ClusterState
from loadaware.metrics import Usage
from loadaware.plan import _milp, build_plan, taint_cap
from loadaware.plan._placement import MIN_TAINT_CAP
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

BAIT = 20
METHODS = ("milp", "greedy")


def _policy(method: str, **steering: object) -> LoadAwarePolicy:
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
            "optimizer": {"method": method},
            # Every feasible node scored: the landing is one node, the steer set every
            # node outscoring it. A 2% cap, so that these clusters reach it.
            "steering": {
                "percentageOfNodesToScore": 100,
                "maxTaintedFraction": 0.02,
                **steering,
            },
        }
    )


def _cluster(*, small_pods: bool, big: bool = True, cool: int = 180) -> tuple[ClusterState, Usage]:
    nodes = [make_node("hot")]
    pods = [make_pod("agent-hot", node="hot", owner=daemonset("agent"), cpu_millicores=3000)]
    node_usage = {"hot": sample(3.2, 4 * GiB)}  # 80%: 0.4 cores over the target
    pod_usage = {}
    if big:
        pods.append(make_pod("big", node="hot", cpu_millicores=100))
        pod_usage["default/big"] = sample(0.6, 0.25 * GiB)
    if small_pods:
        for name in ("small-1", "small-2"):
            pods.append(make_pod(name, node="hot", cpu_millicores=100))
            pod_usage[f"default/{name}"] = sample(0.25, 0.1 * GiB)
    for i in range(BAIT):
        name = f"bait-{i:03d}"
        nodes.append(make_node(name))
        node_usage[name] = sample(2.3, 4 * GiB)  # 57.5%: +0.6 cores is 72.5%, +0.25 is 63.75%
    for i in range(cool):
        name = f"cool-{i:03d}"
        nodes.append(make_node(name))
        pods.append(make_pod(f"filler-{i:03d}", node=name, cpu_millicores=200 + 10 * i))
        node_usage[name] = sample(1.2, 4 * GiB)  # 30%
    return make_cluster(nodes, pods), make_usage(node_usage, pod_usage)


def test_the_cap_is_a_fraction_of_the_nodes_with_a_floor() -> None:
    assert taint_cap(0.02, 5000) == 100
    assert taint_cap(0.02, 1000) == 20
    assert taint_cap(0.02, 100) == MIN_TAINT_CAP
    assert taint_cap(0.5, 10) == MIN_TAINT_CAP
    assert taint_cap(0.0, 5000) == 0
    assert taint_cap(1.0, 300) == 300


@pytest.mark.parametrize("method", METHODS)
def test_a_move_over_the_cap_is_planned_with_other_pods(method: str) -> None:
    cluster, usage = _cluster(small_pods=True)
    unbound = build_plan(cluster, usage, _policy(method, maxTaintedFraction=1.0), NOW)
    # Without the cap: the one large pod, every bait node steered.
    assert [e.pod for e in unbound.evictions] == ["default/big"]
    assert set(unbound.evictions[0].steer) == {f"bait-{i:03d}" for i in range(BAIT)}

    capped = build_plan(cluster, usage, _policy(method), NOW)
    cap = taint_cap(0.02, len(cluster.nodes))
    assert cap < BAIT
    assert sorted(e.pod for e in capped.evictions) == ["default/small-1", "default/small-2"]
    assert all(len(e.steer) <= cap for e in capped.evictions)
    assert all(e.expected_node.startswith("bait-") for e in capped.evictions)
    assert capped.skipped.get("taint-cap", 0) >= 1
    hot = next(n for n in capped.nodes if n.name == "hot")
    assert hot.after["cpu"] <= 0.70


@pytest.mark.parametrize("method", METHODS)
def test_a_move_only_possible_over_the_cap_is_skipped_with_its_reason(method: str) -> None:
    cluster, usage = _cluster(small_pods=False)
    plan = build_plan(cluster, usage, _policy(method), NOW)
    assert plan.evictions == ()
    assert plan.skipped["taint-cap"] >= 1
    hot = next(n for n in plan.nodes if n.name == "hot")
    assert "steering.maxTaintedFraction" in hot.note
    # A cap that holds the steer set lets the move through.
    wider = build_plan(cluster, usage, _policy(method, maxTaintedFraction=0.1), NOW)
    assert [len(e.steer) for e in wider.evictions] == [BAIT]


def test_no_steer_set_exceeds_the_cap_on_a_sampled_cluster() -> None:
    # 600 nodes: kube-scheduler scores a sample; the cap is 12 nodes at 2%.
    cluster, usage = _cluster(small_pods=True, cool=579)
    policy = _policy("greedy", percentageOfNodesToScore=0, maxTaintedFraction=0.02)
    cap = taint_cap(0.02, len(cluster.nodes))
    assert cap == 12
    plan = build_plan(cluster, usage, policy, NOW)
    assert plan.evictions
    assert all(len(e.steer) <= cap for e in plan.evictions)
    assert all(e.landing_set for e in plan.evictions)


def test_over_the_cap_a_tie_of_good_nodes_is_the_landing_set() -> None:
    cluster, usage = _cluster(small_pods=True, big=False)
    baits = {f"bait-{i:03d}" for i in range(BAIT)}
    unbound = build_plan(cluster, usage, _policy("greedy", maxTaintedFraction=1.0), NOW)
    # Without the cap: the first bait node alone, the others tied with it steered.
    first = unbound.evictions[0]
    assert first.landing_set == ("bait-000",)
    assert set(first.steer) == baits - {"bait-000"}
    capped = build_plan(cluster, usage, _policy("greedy"), NOW)
    first, second = capped.evictions
    assert set(first.landing_set) == baits
    assert first.expected_node in baits
    # The model puts the first replacement's requests on its expected node: the
    # second's tie is the other bait nodes.
    assert set(second.landing_set) == baits - {first.expected_node}
    assert first.steer == second.steer == ()


def test_the_exact_planner_relieves_around_a_taint_cap_refusal_without_solving_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # HiGHS, which knows no cap, chooses the one large pod; its replay meets the cap.
    # The cap is the moment's, not the pod's: no ban and no second solve, the small
    # pods relieve the node in the same replay.
    cluster, usage = _cluster(small_pods=True)
    solves: list[int] = []
    solve = _milp._SelectionModel.solve

    def counted(self, banned, **options):
        solves.append(int(banned.sum()))
        return solve(self, banned, **options)

    monkeypatch.setattr(_milp._SelectionModel, "solve", counted)
    plan = build_plan(cluster, usage, _policy("milp"), NOW)
    assert plan.solver.method == "milp"
    assert sorted(e.pod for e in plan.evictions) == ["default/small-1", "default/small-2"]
    assert plan.skipped["taint-cap"] == 1
    assert solves == [0]
