"""build_plan with the greedy solver, on small hand-made clusters.

Covers: a hot node relieved by moving the smallest pod that covers its excess
to the target that stays furthest below its targetThresholds; nothing moves off
a node that is not hot; each of the four limits; PodDisruptionBudgets; targets
never pushed over targetThresholds; nodeFit rules respected when choosing a
target; pods without a fresh sample are not candidates; refusals for stale and
implausible metrics; noop when nothing is hot; same input -> same plan.
"""

from __future__ import annotations

import gc

import pytest

import loadaware.plan._build
from loadaware.cluster import Taint
from loadaware.plan import CarriedBudget, build_plan, plan_to_json
from loadaware.policy import LoadAwarePolicy, parse_policy
from tests.lib.builders import (
    NOW,
    GiB,
    daemonset,
    make_cluster,
    make_node,
    make_pdb,
    make_pod,
    make_usage,
    sample,
)


def _policy(**overrides) -> LoadAwarePolicy:
    return parse_policy(
        {"apiVersion": "loadaware.io/v1alpha1", "kind": "LoadAwarePolicy", **overrides}
    )


def _hot_cluster(pods_on_hot: list[tuple[str, float]], *, extra_nodes=(), **pod_fields):
    """Node "hot" at 3.6 of 4 cores (90%); "cold" at 10%; pods on hot with given cpu usage.

    A DaemonSet pod requesting half of "hot" keeps kube-scheduler (which places by
    requests) from sending replacements back there."""
    nodes = [make_node("hot"), make_node("cold"), *extra_nodes]
    agent = make_pod("agent-hot", node="hot", owner=daemonset("agent"), cpu_millicores=2000)
    pods = [agent, *(make_pod(name, node="hot", **pod_fields) for name, _ in pods_on_hot)]
    pod_usage = {f"default/{name}": sample(cpu, 0.25 * GiB) for name, cpu in pods_on_hot}
    node_usage = {"hot": sample(3.6, 4 * GiB), "cold": sample(0.4, 2 * GiB)}
    for node in extra_nodes:
        node_usage[node.name] = sample(0.4, 2 * GiB)
    return make_cluster(nodes, pods), make_usage(node_usage, pod_usage)


def test_relieves_hot_node_with_the_smallest_covering_pod() -> None:
    # excess = 3.6 - 2.8 = 0.8 cores; web-b (0.9) covers it alone with least overshoot.
    cluster, usage = _hot_cluster([("web-a", 0.3), ("web-b", 0.9), ("web-c", 1.5)])
    plan = build_plan(cluster, usage, _policy(), NOW)
    assert plan.status == "planned"
    assert [(e.pod, e.node, e.expected_node) for e in plan.evictions] == [
        ("default/web-b", "hot", "cold")
    ]
    nodes = {n.name: n for n in plan.nodes}
    assert nodes["hot"].node_class == "hot"
    assert nodes["hot"].after["cpu"] == pytest.approx(0.675)
    assert nodes["cold"].after["cpu"] == pytest.approx(0.325)


def test_partial_covers_add_up_when_no_single_pod_covers() -> None:
    cluster, usage = _hot_cluster([("web-a", 0.3), ("api-b", 0.4), ("db-c", 0.2)])
    plan = build_plan(cluster, usage, _policy(), NOW)
    moved = sorted(e.pod for e in plan.evictions)
    assert moved == ["default/api-b", "default/db-c", "default/web-a"]
    assert plan.nodes[1].name == "hot"


def test_noop_when_nothing_is_hot() -> None:
    cluster = make_cluster([make_node("a")], [make_pod("web-1", node="a")])
    usage = make_usage({"a": sample(1.0, GiB)}, {"default/web-1": sample(0.5, GiB)})
    plan = build_plan(cluster, usage, _policy(), NOW)
    assert plan.status == "noop"
    assert plan.reason == "no hot nodes"
    assert plan.evictions == ()


def test_refused_on_stale_node() -> None:
    cluster, usage = _hot_cluster([("web-a", 1.0)])
    usage.nodes["cold"] = sample(0.4, GiB, age_seconds=900)
    plan = build_plan(cluster, usage, _policy(), NOW)
    assert plan.status == "refused"
    assert plan.reason.startswith("stale-metrics: node cold sample is 900s old (max 120s)")
    assert plan.evictions == ()


def test_stale_target_is_excluded_under_exclude_mode() -> None:
    filler = make_pod("filler-1", node="cold", cpu_millicores=1500)
    cluster, usage = _hot_cluster([("web-a", 1.0)], extra_nodes=[make_node("cool")])
    cluster = make_cluster(cluster.nodes, [*cluster.pods, filler])
    usage.pods["default/filler-1"] = sample(0.1, GiB)
    usage.nodes["cold"] = sample(0.4, GiB, age_seconds=900)
    plan = build_plan(cluster, usage, _policy(metrics={"onStaleNode": "Exclude"}), NOW)
    assert plan.status == "planned"
    assert [e.expected_node for e in plan.evictions] == ["cool"]
    assert {n.name: n.node_class for n in plan.nodes}["cold"] == "excluded"


def test_replacement_predicted_on_an_excluded_node_is_not_evicted() -> None:
    cluster, usage = _hot_cluster([("web-a", 1.0)], extra_nodes=[make_node("cool")])
    usage.nodes["cold"] = sample(0.4, GiB, age_seconds=900)
    # kube-scheduler would pick "cold" or "cool" (equal scores): "cold" has unknown load.
    policy = _policy(metrics={"onStaleNode": "Exclude"}, steering={"softTaint": False})
    plan = build_plan(cluster, usage, policy, NOW)
    assert plan.evictions == ()
    assert plan.skipped["bounce-back"] == 1
    # Steering breaks the tie: the excluded node carries the taint, "cool" wins.
    steered = build_plan(cluster, usage, _policy(metrics={"onStaleNode": "Exclude"}), NOW)
    assert [(e.expected_node, e.steer) for e in steered.evictions] == [("cool", ("cold",))]


def test_refused_on_implausible_metrics() -> None:
    cluster, usage = _hot_cluster([("web-a", 1.0)])
    usage.nodes["hot"] = sample(-1.0, GiB)
    plan = build_plan(cluster, usage, _policy(), NOW)
    assert plan.status == "refused"
    assert plan.reason.startswith("implausible-metrics:")


def test_pod_without_fresh_sample_is_not_a_candidate() -> None:
    cluster, usage = _hot_cluster([("web-a", 1.0), ("api-b", 0.9)])
    usage.pods["default/web-a"] = sample(1.0, GiB, age_seconds=600)
    plan = build_plan(cluster, usage, _policy(), NOW)
    assert [e.pod for e in plan.evictions] == ["default/api-b"]
    assert plan.skipped["no-fresh-usage"] == 1


def test_protected_pods_are_not_moved() -> None:
    nodes = [make_node("hot"), make_node("cold")]
    pods = [make_pod("agent-x", node="hot", owner=daemonset("agent"))]
    usage = make_usage(
        {"hot": sample(3.6, 4 * GiB), "cold": sample(0.4, 2 * GiB)},
        {"default/agent-x": sample(2.0, GiB)},
    )
    plan = build_plan(make_cluster(nodes, pods), usage, _policy(), NOW)
    assert plan.status == "noop"
    assert plan.evictions == ()
    assert sum(plan.skipped.values()) == 1
    # The note names what holds the pods, not a generic "nothing to move".
    assert {n.name: n.note for n in plan.nodes}["hot"] == (
        "still hot: no pod on it may leave: daemonset-pod 1"
    )


def test_a_spent_budget_is_named_in_the_note() -> None:
    cluster, usage = _hot_cluster([("web-a", 0.3), ("api-b", 0.4), ("db-c", 0.2)])
    plan = build_plan(cluster, usage, _policy(limits={"maxNoOfPodsToEvictPerNode": 1}), NOW)
    assert len(plan.evictions) == 1
    note = {n.name: n.note for n in plan.nodes}["hot"]
    assert note == "still hot: budget maxNoOfPodsToEvictPerNode reached"


def _agent(node: str, cpu_millicores: int = 2000):
    """A DaemonSet pod with large requests: kube-scheduler sees its node as busy."""
    return make_pod(
        f"agent-{node}", node=node, owner=daemonset("agent"), cpu_millicores=cpu_millicores
    )


@pytest.mark.parametrize("method", ["greedy", "milp"])
def test_target_is_never_pushed_over_its_target_thresholds(method: str) -> None:
    nodes = [make_node("hot"), make_node("warm")]
    pods = [_agent("hot"), make_pod("web-a", node="hot")]
    # warm at 60% cpu; moving 0.9 cores would make it 82.5% > 70%.
    usage = make_usage(
        {"hot": sample(3.6, 4 * GiB), "warm": sample(2.4, 4 * GiB)},
        {"default/web-a": sample(0.9, 0.25 * GiB)},
    )
    plan = build_plan(make_cluster(nodes, pods), usage, _policy(optimizer={"method": method}), NOW)
    assert plan.evictions == ()
    if method == "greedy":
        assert plan.skipped == {"daemonset-pod": 1, "target-over-threshold": 1}


@pytest.mark.parametrize("method", ["greedy", "milp"])
def test_expected_node_is_where_kube_scheduler_places_the_replacement(method: str) -> None:
    nodes = [make_node("hot"), make_node("a"), make_node("b")]
    pods = [
        _agent("hot"),
        make_pod("web-a", node="hot"),
        make_pod("db-1", node="a", cpu_millicores=1000),
    ]
    usage = make_usage(
        {"hot": sample(3.6, 4 * GiB), "a": sample(0.8, 4 * GiB), "b": sample(1.2, 6 * GiB)},
        {"default/web-a": sample(0.9, 0.25 * GiB), "default/db-1": sample(0.1, GiB)},
    )
    # b has fewer requests (LeastAllocated), although a has less usage.
    plan = build_plan(make_cluster(nodes, pods), usage, _policy(optimizer={"method": method}), NOW)
    assert [e.expected_node for e in plan.evictions] == ["b"]


def test_bounce_back_to_the_source_is_not_planned() -> None:
    # The hot node has the fewest requests once its pod leaves: the replacement returns.
    nodes = [make_node("hot"), make_node("cold")]
    pods = [make_pod("web-a", node="hot"), make_pod("db-1", node="cold", cpu_millicores=2000)]
    usage = make_usage(
        {"hot": sample(3.6, 4 * GiB), "cold": sample(0.4, 4 * GiB)},
        {"default/web-a": sample(0.9, 0.25 * GiB), "default/db-1": sample(0.1, GiB)},
    )
    unsteered = _policy(steering={"softTaint": False})
    plan = build_plan(make_cluster(nodes, pods), usage, unsteered, NOW)
    assert plan.evictions == ()
    assert plan.skipped["bounce-back"] == 1


def test_soft_taint_steering_prevents_the_bounce_back() -> None:
    nodes = [make_node("hot"), make_node("cold")]
    pods = [make_pod("web-a", node="hot"), make_pod("db-1", node="cold", cpu_millicores=2000)]
    usage = make_usage(
        {"hot": sample(3.6, 4 * GiB), "cold": sample(0.4, 4 * GiB)},
        {"default/web-a": sample(0.9, 0.25 * GiB), "default/db-1": sample(0.1, GiB)},
    )
    plan = build_plan(make_cluster(nodes, pods), usage, _policy(steering={"softTaint": True}), NOW)
    # Only the source outscores the landing: it alone carries the taint.
    assert [(e.pod, e.expected_node, e.steer) for e in plan.evictions] == [
        ("default/web-a", "cold", ("hot",))
    ]


def test_node_fit_rules_steer_the_target() -> None:
    tainted = make_node("cold", taints=[Taint(key="dedicated", value="batch", effect="NoSchedule")])
    nodes = [make_node("hot"), tainted, make_node("normal")]
    pods = [_agent("hot"), make_pod("web-a", node="hot")]
    usage = make_usage(
        {"hot": sample(3.6, 4 * GiB), "cold": sample(0.1, GiB), "normal": sample(1.8, 9 * GiB)},
        {"default/web-a": sample(0.9, 0.25 * GiB)},
    )
    plan = build_plan(make_cluster(nodes, pods), usage, _policy(), NOW)
    assert [e.expected_node for e in plan.evictions] == ["normal"]


def test_requests_must_fit_the_target() -> None:
    nodes = [make_node("hot"), make_node("cold")]
    hog = make_pod("hog-1", node="cold", cpu_millicores=3900)  # requests nearly all of cold
    pods = [make_pod("web-a", node="hot", cpu_millicores=500), hog]
    usage = make_usage(
        {"hot": sample(3.6, 4 * GiB), "cold": sample(0.4, GiB)},
        {"default/web-a": sample(0.9, 0.25 * GiB), "default/hog-1": sample(0.1, GiB)},
    )
    plan = build_plan(make_cluster(nodes, pods), usage, _policy(), NOW)
    assert plan.evictions == ()


def _many_pods(n: int, **kw) -> list[tuple[str, float]]:
    return [(f"app{i}-x", 0.2) for i in range(n)]


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        pytest.param({}, 4, id="no limits: four 0.2-core pods to cover 0.8 cores"),
        pytest.param({"maxNoOfPodsToEvictPerNode": 2}, 2, id="per node limit"),
        pytest.param({"maxNoOfPodsToEvictTotal": 1}, 1, id="total limit"),
        pytest.param({"maxNoOfPodsToEvictPerNamespace": 3}, 3, id="per namespace limit"),
    ],
)
def test_limits(limits: dict, expected: int) -> None:
    cluster, usage = _hot_cluster(_many_pods(8))
    plan = build_plan(cluster, usage, _policy(limits=limits), NOW)
    assert len(plan.evictions) == expected


def test_per_workload_limit() -> None:
    # Every pod belongs to one Deployment "web".
    nodes = [make_node("hot"), make_node("cold")]
    pods = [_agent("hot"), *(make_pod(f"web-{i}", node="hot") for i in range(6))]
    usage = make_usage(
        {"hot": sample(3.6, 4 * GiB), "cold": sample(0.4, GiB)},
        {f"default/web-{i}": sample(0.2, 0.1 * GiB) for i in range(6)},
    )
    for method in ("greedy", "milp"):
        limits = {"maxNoOfPodsToEvictPerWorkload": 2}
        policy = _policy(limits=limits, optimizer={"method": method})
        plan = build_plan(make_cluster(nodes, pods), usage, policy, NOW)
        assert len(plan.evictions) == 2, method
        if method == "greedy":
            assert plan.skipped["maxNoOfPodsToEvictPerWorkload"] >= 1


def test_pdb_disruptions_allowed_is_a_budget() -> None:
    nodes = [make_node("hot"), make_node("cold")]
    pods = [_agent("hot"), *(make_pod(f"web-{i}", node="hot") for i in range(6))]
    usage = make_usage(
        {"hot": sample(3.6, 4 * GiB), "cold": sample(0.4, GiB)},
        {f"default/web-{i}": sample(0.2, 0.1 * GiB) for i in range(6)},
    )
    pdb = make_pdb("web", {"app": "web"}, disruptions_allowed=1)
    cluster = make_cluster(nodes, pods, pdbs=[pdb])
    plan = build_plan(cluster, usage, _policy(), NOW)
    assert len(plan.evictions) == 1


def test_same_input_same_plan() -> None:
    cluster, usage = _hot_cluster(_many_pods(8))
    first = plan_to_json(build_plan(cluster, usage, _policy(), NOW))
    second = plan_to_json(build_plan(cluster, usage, _policy(), NOW))
    assert first == second


def test_plan_json_shape() -> None:
    cluster, usage = _hot_cluster([("web-b", 0.9)])
    body = plan_to_json(build_plan(cluster, usage, _policy(), NOW))
    assert body["status"] == "planned"
    assert body["evictions"][0] == {
        "pod": "default/web-b",
        "node": "hot",
        "expectedNode": "cold",
        "cpu": 0.9,
        "memory": 268435456,
        "reason": "hotspot",
        "workload": "Deployment/default/web",
        "steer": [],
        "landingSet": ["cold"],
    }
    assert {n["name"]: n["class"] for n in body["nodes"]} == {"cold": "cold", "hot": "hot"}
    assert set(body["solver"]) == {"method", "seconds", "objective", "lowerBound"}


def _eight_pods_two_namespaces():
    nodes = [make_node("hot"), make_node("cold")]
    pods = [_agent("hot")]
    for i in range(8):
        pods.append(make_pod(f"app{i}-x", node="hot", namespace="a" if i % 2 else "b"))
    usage = make_usage(
        {"hot": sample(3.6, 4 * GiB), "cold": sample(0.4, GiB)},
        {f"{p.namespace}/{p.name}": sample(0.2, 0.1 * GiB) for p in pods[1:]},
    )
    return make_cluster(nodes, pods), usage


@pytest.mark.parametrize("method", ["greedy", "milp"])
@pytest.mark.parametrize(
    ("carried", "expected"),
    [
        pytest.param(CarriedBudget(), 4, id="nothing carried: four pods"),
        pytest.param(CarriedBudget(window_total_left=1), 1, id="window has one eviction left"),
        pytest.param(
            CarriedBudget(window_namespace_limit=1, window_namespace_left={"a": 0}),
            1,
            id="window: namespace a used up, b has one",
        ),
        pytest.param(
            CarriedBudget(
                cooling_workloads=frozenset(f"Deployment/a/app{i}" for i in (1, 3, 5, 7))
            ),
            4,
            id="cooling workloads of namespace a are skipped",
        ),
    ],
)
def test_carried_budgets(method: str, carried: CarriedBudget, expected: int) -> None:
    cluster, usage = _eight_pods_two_namespaces()
    plan = build_plan(cluster, usage, _policy(optimizer={"method": method}), NOW, carried=carried)
    assert len(plan.evictions) == expected
    if carried.cooling_workloads:
        assert all(e.pod.startswith("b/") for e in plan.evictions)
        assert plan.skipped["cooldown"] == 4


@pytest.mark.parametrize("method", ["greedy", "milp"])
def test_max_unavailable_per_workload_counts_pods_already_unavailable(method: str) -> None:
    nodes = [make_node("hot"), make_node("cold")]
    pods = [_agent("hot"), *(make_pod(f"web-{i}", node="hot") for i in range(6))]
    usage = make_usage(
        {"hot": sample(3.6, 4 * GiB), "cold": sample(0.4, GiB)},
        {f"default/web-{i}": sample(0.2, 0.1 * GiB) for i in range(6)},
    )
    policy = _policy(limits={"maxUnavailablePerWorkload": 3}, optimizer={"method": method})
    carried = CarriedBudget(unavailable_per_workload={"Deployment/default/web": 2})
    plan = build_plan(make_cluster(nodes, pods), usage, policy, NOW, carried=carried)
    assert len(plan.evictions) == 1


def test_the_collector_is_held_off_while_planning_and_left_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster, usage = _hot_cluster([("web-a", 0.3), ("web-b", 0.9)])
    running_while_solving: list[bool] = []
    solve = loadaware.plan._build._solve

    def watched_solve(problem):  # type: ignore[no-untyped-def]
        running_while_solving.append(gc.isenabled())
        return solve(problem)

    monkeypatch.setattr(loadaware.plan._build, "_solve", watched_solve)
    assert build_plan(cluster, usage, _policy(), NOW).status == "planned"
    assert running_while_solving == [False]
    assert gc.isenabled()
    gc.disable()
    try:
        build_plan(cluster, usage, _policy(), NOW)
        assert not gc.isenabled()
    finally:
        gc.enable()
