"""The benchmark harness and the descheduler-order baseline.

Covered: `python -m bench` runs end to end on a 20-node instance (planners in
their own processes) and prints every column, the instance and loading tables,
and JSON results, each plan replayed under full and sampled scoring (the same
below 100 nodes but for ties; taint patches per eviction the same in both, none
for the baseline, whose plans carry no landing sets either); both instance
families run and each is compared with its own descheduler-order row;
`--scoring` picks one regime; unknown families and scorings are refused; the
baseline evicts in
LowNodeUtilization's order (priority low to high, then BestEffort, Burstable,
Guaranteed), stops once the node is no longer above targetThresholds or the
underutilized nodes' capacity is used up, visits source nodes by raw usage sum
(memory bytes dominate), counts a node at exactly its thresholds as
underutilized, skips protected pods, pods that tolerate no underutilized node's
taints and pods that fit no other node, honours the per-node and total limits
and PodDisruptionBudgets, does nothing without an underutilized node, refuses
stale metrics, and predicts where each replacement lands; the independent
checker flags protected pods, PDB overuse and bad targets; the replay counts
bounce-backs, keeps the evicted pod's requests on its source while the
replacement is scored, lands replacements under each eviction's steer taints,
counts the nodes tainted, counts a landing as planned only when no other node
ties for the best score, counts ties that include a bad node, and picks among
tied nodes at random, reproducibly per seed; it counts bad landings (on the
source, on a node out of the round even below its targets) and good landings
off the eviction's landing set, and the taint patches between steer sets; under
sampled scoring on more than 100 nodes a replacement lands on the best of the
sample, so the good node every full-scoring replay finds is sometimes missed and
the landing is bad, reproducibly per seed. (The GPU pool: test_gpu_pool.)
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any

import pytest

from bench import checks, descheduler_baseline, harness, measure
from loadaware.cluster import Pod, Taint, Toleration
from loadaware.plan import Eviction, Plan
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


def _policy(**overrides: Any) -> LoadAwarePolicy:
    return parse_policy(
        {"apiVersion": "loadaware.io/v1alpha1", "kind": "LoadAwarePolicy", **overrides}
    )


def _round(
    pods_on_hot: list[tuple[str, float, dict[str, Any]]],
    *,
    hot_cpu: float = 3.6,
    cold_node: Any = None,
    cold_cpu: float = 0.4,
    policy: LoadAwarePolicy | None = None,
    extra_pods: tuple[Any, ...] = (),
    pdbs: tuple[Any, ...] = (),
) -> Plan:
    """Node "hot" (4 cores, default targetThresholds 70% cpu: 2.8 cores) runs the pods;
    "cold" is the only other node."""
    cold = cold_node or make_node("cold")
    pods = [_pod_on_hot(name, **fields) for name, _, fields in pods_on_hot]
    pod_usage = {f"default/{name}": sample(cpu, 0.1 * GiB) for name, cpu, _ in pods_on_hot}
    for pod in extra_pods:
        pod_usage[pod.key] = sample(0.01, 0.01 * GiB)
    cluster = make_cluster([make_node("hot"), cold], [*pods, *extra_pods], pdbs=pdbs)
    usage = make_usage(
        {"hot": sample(hot_cpu, 4 * GiB), "cold": sample(cold_cpu, 2 * GiB)}, pod_usage
    )
    return descheduler_baseline.plan_descheduler_order(cluster, usage, policy or _policy(), NOW)


def _pod_on_hot(name: str, *, qos_class: str = "Burstable", **fields: Any) -> Pod:
    # make_pod always builds a Burstable pod.
    return dataclasses.replace(make_pod(name, node="hot", **fields), qos_class=qos_class)


def _evicted(plan: Plan) -> list[str]:
    return [e.pod.removeprefix("default/") for e in plan.evictions]


# --- the harness -------------------------------------------------------------------------------


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_harness_runs_end_to_end_on_a_small_instance(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    instance = ["--sizes", "20", "--capacity", "tight", "--families", "usage-independent"]
    code = harness.main([*instance, "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("| size | capacity"))
    assert _cells(header) == list(harness.COLUMNS)
    rows = [_cells(line) for line in out.splitlines() if line.startswith("| 20 ")][:6]
    solvers = [row[harness.COLUMNS.index("solver")] for row in rows]
    # Each plan replayed twice, a row per scoring.
    assert [row[harness.COLUMNS.index("scoring")] for row in rows] == ["full", "sampled"] * 3
    assert solvers[4:] == ["descheduler-order"] * 2
    assert all(s.startswith(("milp", "greedy")) for s in solvers[:4])
    assert {row[harness.COLUMNS.index("family")] for row in rows} == {"usage-independent"}
    # The family's GPU pool: one GPU-hot node of two, relieved by loadaware's plans.
    assert [row[harness.COLUMNS.index("gpu hot left")] for row in rows[:4]] == ["0 of 1"] * 4
    patches = harness.COLUMNS.index("taint patches per eviction")
    assert rows[4][patches] == rows[5][patches] == "0.00"  # the baseline steers nothing
    assert rows[0][patches] == rows[1][patches]
    off_set = harness.COLUMNS.index("off-set landings")
    assert rows[4][off_set] == "-"  # no landing sets in the baseline's plan
    assert "## Instances" in out
    assert "## Loading" in out
    assert "Total wall time" in out
    [written] = tmp_path.glob("bench-*.json")
    results = json.loads(written.read_text())
    assert len(results["rows"]) == 6
    for row in results["rows"]:
        assert "error" not in row, row.get("error")
        assert row["violations"] == 0, row["violation_examples"]
        assert row["peak_bytes"] is not None
        assert row["family"] == "usage-independent"
        assert 0 <= row["landed_as_planned"] <= row["evictions"]
        assert 0 <= row["tied_with_bad"] <= row["evictions"]
        assert row["bounce_backs"] <= row["bad_landings"] <= row["evictions"]
    for full, sampled in zip(results["rows"][::2], results["rows"][1::2], strict=True):
        assert (full["scoring"], sampled["scoring"]) == ("full", "sampled")
        assert full["taint_patches"] == sampled["taint_patches"]
        # Fewer than 100 nodes: every feasible node is scored either way.
        assert full["evictions"] == sampled["evictions"]
    baseline = results["rows"][4]
    assert baseline["method"] == "greedy"
    assert baseline["reason"].startswith("descheduler-order")
    assert baseline["nodes_tainted"] == baseline["taint_patches"] == 0
    assert baseline["off_set_landings"] is None
    assert all(isinstance(r["off_set_landings"], int) for r in results["rows"][:4])
    [loading] = results["loading"]
    assert loading["pods"] == results["instances"][0]["pods"]


def test_harness_in_process_shows_ratios_per_family_without_memory(
    capsys: pytest.CaptureFixture[str],
) -> None:
    instance = ["--sizes", "12", "--capacity", "loose", "--pods-per-node", "12"]
    solvers = ["--solvers", "greedy,descheduler-order", "--scoring", "sampled"]
    code = harness.main([*instance, *solvers, "--in-process", "--no-json"])
    out = capsys.readouterr().out
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("| size | capacity"))
    rows = [_cells(line) for line in out.splitlines() if line.startswith("| 12 ")][:4]
    assert {row[harness.COLUMNS.index("scoring")] for row in rows} == {"sampled"}
    family = harness.COLUMNS.index("family")
    assert [row[family] for row in rows] == [
        "proportional",
        "proportional",
        "usage-independent",
        "usage-independent",
    ]
    ratio = _cells(header).index("evictions vs descheduler order")
    for greedy, baseline in (rows[:2], rows[2:]):
        assert baseline[-2:] == ["1.00x", "1.00x"]
        evictions = harness.COLUMNS.index("evictions")
        expected = int(greedy[evictions]) / int(baseline[evictions])
        assert greedy[ratio] == f"{expected:.2f}x"
        assert greedy[harness.COLUMNS.index("peak MiB")] == "-"  # not measured in process


def test_harness_refuses_an_unknown_family(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        harness.main(["--sizes", "12", "--families", "proportional,lumpy", "--no-json"])
    assert exited.value.code == 2
    assert "unknown families ['lumpy']" in capsys.readouterr().err


def test_harness_refuses_an_unknown_scoring(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        harness.main(["--sizes", "12", "--scoring", "full,partial", "--no-json"])
    assert exited.value.code == 2
    assert "unknown scoring ['partial']" in capsys.readouterr().err


# --- the baseline: eviction order and stop conditions ------------------------------------------


def test_evicts_lowest_priority_first_then_besteffort_burstable_guaranteed() -> None:
    pods = [
        ("a-100-guaranteed", 0.1, {"priority": 100, "qos_class": "Guaranteed"}),
        ("b-0-guaranteed", 0.1, {"priority": 0, "qos_class": "Guaranteed"}),
        ("c-0-besteffort", 0.1, {"priority": 0, "qos_class": "BestEffort"}),
        ("d-0-burstable", 0.1, {"priority": 0, "qos_class": "Burstable"}),
        ("e-1000-besteffort", 0.1, {"priority": 1000, "qos_class": "BestEffort"}),
        ("f-100-besteffort", 0.1, {"priority": 100, "qos_class": "BestEffort"}),
    ]
    # Excess 3.6 - 2.8 = 0.8 cores: all six (0.6) go, in the descheduler's order.
    plan = _round(pods)
    assert _evicted(plan) == [
        "c-0-besteffort",
        "d-0-burstable",
        "b-0-guaranteed",
        "f-100-besteffort",
        "a-100-guaranteed",
        "e-1000-besteffort",
    ]
    assert all(e.reason == "descheduler-order" for e in plan.evictions)
    assert plan.reason.startswith("descheduler-order:")
    assert plan.solver.method == "greedy"
    assert plan.solver.lower_bound is None


def test_stops_once_the_node_is_no_longer_above_target() -> None:
    pods = [
        ("low", 0.5, {"priority": 0}),
        ("mid", 0.5, {"priority": 10}),
        ("high", 0.5, {"priority": 20}),
    ]
    # 3.6 -> 3.1 (still above 2.8) -> 2.6: stop; the largest-usage-first greedy would
    # also need two, but the descheduler never looks at usage to choose.
    plan = _round(pods)
    assert _evicted(plan) == ["low", "mid"]
    hot = {n.name: n for n in plan.nodes}["hot"]
    assert hot.after["cpu"] == pytest.approx(2.6 / 4)
    assert hot.note == ""


def test_takes_many_small_low_priority_pods_before_one_that_would_do() -> None:
    pods = [(f"small-{k}", 0.1, {"priority": 0}) for k in range(8)]
    pods.append(("big", 1.0, {"priority": 100}))
    plan = _round(pods)
    assert _evicted(plan) == [f"small-{k}" for k in range(8)]


def test_stops_when_the_underutilized_capacity_is_used_up() -> None:
    # "cold": 2 cores at 40% (exactly its thresholds: still underutilized, the
    # comparison is inclusive); it can take 0.7 * 2 - 0.8 = 0.6 cores.
    cold = make_node("cold", cpu_millicores=2000)
    pods = [(f"web-{k}", 0.25, {}) for k in range(6)]
    plan = _round(pods, hot_cpu=3.99, cold_node=cold, cold_cpu=0.8)
    # 0.6 -> 0.35 -> 0.1 -> -0.15: the third eviction uses it up, hot stays at 3.24.
    assert _evicted(plan) == ["web-0", "web-1", "web-2"]
    hot = {n.name: n for n in plan.nodes}["hot"]
    assert hot.note == "still hot: underutilized nodes' capacity used up"


def test_source_nodes_are_visited_by_raw_usage_sum() -> None:
    # hot-a is hotter in percent (cpu 97%) but hot-b uses more memory bytes, which
    # dominate the descheduler's sum of raw values: hot-b goes first.
    nodes = [make_node("hot-a"), make_node("hot-b"), make_node("cold")]
    pods = [make_pod("on-a", node="hot-a"), make_pod("on-b", node="hot-b")]
    usage = make_usage(
        {
            "hot-a": sample(3.9, 4 * GiB),
            "hot-b": sample(3.0, 10 * GiB),
            "cold": sample(0.2, 1 * GiB),
        },
        {"default/on-a": sample(0.2, 0.1 * GiB), "default/on-b": sample(0.2, 0.1 * GiB)},
    )
    plan = descheduler_baseline.plan_descheduler_order(
        make_cluster(nodes, pods), usage, _policy(limits={"maxNoOfPodsToEvictTotal": 1}), NOW
    )
    assert _evicted(plan) == ["on-b"]
    notes = {n.name: n.note for n in plan.nodes}
    assert notes["hot-a"] == "still hot: maxNoOfPodsToEvictTotal reached"
    assert plan.skipped["maxNoOfPodsToEvictTotal"] == 1


def test_protected_pods_are_skipped_in_order() -> None:
    pods = [
        ("agent-x", 0.5, {"owner": daemonset("agent"), "priority": -5}),
        ("web-1", 0.5, {"priority": 10}),
        ("web-2", 0.5, {"priority": 20}),
    ]
    plan = _round(pods)
    assert _evicted(plan) == ["web-1", "web-2"]
    assert plan.skipped["daemonset-pod"] == 1


def test_pod_must_tolerate_some_underutilized_nodes_taints() -> None:
    taint = Taint(key="dedicated", value="batch", effect="NoSchedule")
    cold = make_node("cold", taints=[taint])
    tolerating = {"tolerations": (Toleration(key="dedicated", operator="Exists"),)}
    pods = [("plain", 0.5, {"priority": 0}), ("tolerant", 0.9, {"priority": 5, **tolerating})]
    plan = _round(pods, cold_node=cold)
    assert _evicted(plan) == ["tolerant"]
    assert plan.skipped["untolerated-destination-taints"] == 1


def test_node_fit_needs_another_node_with_room() -> None:
    # "cold" has 4 cores allocatable: a pod requesting 4.5 fits no other node.
    pods = [("huge", 0.5, {"cpu_millicores": 4500}), ("web", 0.9, {"priority": 5})]
    plan = _round(pods)
    assert _evicted(plan) == ["web"]
    assert plan.skipped["no-other-node-fits"] == 1
    unchecked = _round(pods, policy=_policy(evictor={"nodeFit": False}))
    assert _evicted(unchecked) == ["huge", "web"]


def test_per_node_limit_and_pdb() -> None:
    pods = [(f"web-{k}", 0.3, {"labels": {"app": "web"}}) for k in range(3)]
    limited = _round(pods, policy=_policy(limits={"maxNoOfPodsToEvictPerNode": 1}))
    assert _evicted(limited) == ["web-0"]
    assert {n.name: n.note for n in limited.nodes}["hot"].endswith("PerNode reached")
    budget = make_pdb("web", {"app": "web"}, disruptions_allowed=2)
    guarded = _round(pods, pdbs=(budget,))
    assert _evicted(guarded) == ["web-0", "web-1"]
    assert guarded.skipped["podDisruptionBudget"] == 1


def test_noop_without_an_underutilized_node() -> None:
    plan = _round([("web", 0.5, {})], cold_cpu=2.0)  # "cold" at 50%: normal, not low
    assert plan.status == "noop"
    assert plan.reason.endswith("no node is underutilized")
    assert plan.evictions == ()


def test_refuses_stale_metrics_like_build_plan() -> None:
    nodes = [make_node("hot"), make_node("cold")]
    usage = make_usage({"hot": sample(3.6, GiB), "cold": sample(0.4, GiB, age_seconds=900)})
    plan = descheduler_baseline.plan_descheduler_order(make_cluster(nodes), usage, _policy(), NOW)
    assert plan.status == "refused"
    assert plan.reason.startswith("stale-metrics:")


def test_expected_node_is_the_scheduler_models_prediction() -> None:
    plan = _round([("web", 0.9, {})])
    assert [e.expected_node for e in plan.evictions] == ["cold"]
    cold = {n.name: n for n in plan.nodes}["cold"]
    assert cold.after["cpu"] == pytest.approx((0.4 + 0.9) / 4)


# --- the checker and the replay ----------------------------------------------------------------


def _checked(evictions: list[Eviction], *, check_targets: bool = True) -> list[str]:
    nodes = [make_node("hot"), make_node("cold")]
    pods = [
        make_pod("web-1", node="hot", labels={"app": "web"}),
        make_pod("web-2", node="hot", labels={"app": "web"}),
        make_pod("agent-x", node="hot", owner=daemonset("agent")),
    ]
    usage = make_usage(
        {"hot": sample(3.6, GiB), "cold": sample(0.4, GiB)},
        {p.key: sample(0.4, 0.1 * GiB) for p in pods},
    )
    cluster = make_cluster(nodes, pods, pdbs=[make_pdb("web", {"app": "web"})])
    plan = Plan(status="planned", reason="test", evictions=tuple(evictions))
    return checks.check_plan(plan, cluster, usage, _policy(), NOW, check_targets=check_targets)


def _eviction(
    pod: str,
    target: str | None = "cold",
    *,
    steer: tuple[str, ...] = (),
    node: str = "hot",
    landing_set: tuple[str, ...] = (),
) -> Eviction:
    return Eviction(
        pod=f"default/{pod}",
        node=node,
        expected_node=target,
        cpu_cores=0.4,
        memory_bytes=0,
        steer=steer,
        landing_set=landing_set,
    )


def test_checker_accepts_a_sound_plan_and_flags_broken_rules() -> None:
    assert _checked([_eviction("web-1")]) == []
    problems = _checked([_eviction("web-1"), _eviction("web-2"), _eviction("agent-x", "hot")])
    assert any("protected (DaemonSet pod)" in p for p in problems)
    assert any("PDB default/web: 2 evictions, 1 disruptions allowed" in p for p in problems)
    assert any("expected back on its source" in p for p in problems)
    assert _checked([_eviction("web-1", None)], check_targets=False) == []


def test_replay_counts_a_replacement_landing_back_on_its_source() -> None:
    # Only "hot" has room by requests: the replacement goes straight back.
    nodes = [make_node("hot"), make_node("full", cpu_millicores=500)]
    pods = [make_pod("web-1", node="hot", cpu_millicores=1000)]
    usage = make_usage(
        {"hot": sample(3.6, GiB), "full": sample(0.1, GiB)}, {"default/web-1": sample(1.0, GiB)}
    )
    cluster = make_cluster(nodes, pods)
    view = checks.ClusterView.build(cluster, usage, _policy(), NOW)
    outcome = measure.replay_plan((_eviction("web-1", "full"),), cluster, usage, view)
    assert outcome.bounce_backs == 1
    assert outcome.bad_landings == 1
    assert outcome.landed_as_planned == 0
    assert outcome.hot_before == outcome.hot_left == 1
    assert outcome.residual_overload == pytest.approx(0.9 - 0.7)


def _replayed(
    nodes: list[Any],
    pods: list[Pod],
    node_cpu: dict[str, float],
    evictions: tuple[Eviction, ...],
    *,
    seed: int = 0,
    scoring: str = measure.FULL,
) -> measure.Outcome:
    """Replay on a cluster whose pods use 0.01 cores, except web-1 (1 core); a node
    missing from `node_cpu` has no usage sample, so it is out of the round."""
    usage = make_usage(
        {name: sample(cpu, GiB) for name, cpu in node_cpu.items()},
        {p.key: sample(1.0 if p.name == "web-1" else 0.01, 0.1 * GiB) for p in pods},
    )
    cluster = make_cluster(nodes, pods)
    view = checks.ClusterView.build(cluster, usage, _policy(), NOW)
    return measure.replay_plan(evictions, cluster, usage, view, seed=seed, scoring=scoring)


def _warm_and_idle() -> tuple[list[Any], list[Pod], dict[str, float]]:
    """ "warm" requests least but runs at 65% cpu; "idle" requests 75% and uses 12%."""
    nodes = [make_node("hot"), make_node("warm"), make_node("idle")]
    pods = [
        make_pod("web-1", node="hot", cpu_millicores=500),
        make_pod("stream-1", node="warm", cpu_millicores=200),
        make_pod("report-1", node="idle", cpu_millicores=3000),
    ]
    return nodes, pods, {"hot": 3.6, "warm": 2.6, "idle": 0.5}


def test_replay_without_steering_follows_requests_onto_the_warm_node() -> None:
    outcome = _replayed(*_warm_and_idle(), (_eviction("web-1", "warm"),))
    assert outcome.landed_as_planned == 1  # predicted, and it turns "warm" hot
    assert outcome.hot_left == 1
    assert outcome.bounce_backs == 1
    assert outcome.nodes_tainted == 0


def test_replay_lands_under_the_evictions_steer_taints() -> None:
    steered = (_eviction("web-1", "idle", steer=("hot", "warm")),)
    outcome = _replayed(*_warm_and_idle(), steered)
    assert outcome.landed_as_planned == 1
    assert outcome.hot_left == 0
    assert outcome.bounce_backs == 0
    assert outcome.nodes_tainted == 2
    assert outcome.tied_with_bad == 0


def test_replay_keeps_the_predecessors_requests_on_its_node() -> None:
    # Scored without web-1, "src" would win (800m of 1800m free against 500m of
    # 4000m); with web-1 still terminating there the replacement does not fit it.
    nodes = [make_node("src", cpu_millicores=1800), make_node("other")]
    pods = [
        make_pod("web-1", node="src", cpu_millicores=1000),
        make_pod("filler-1", node="other", cpu_millicores=2500),
    ]
    evictions = (_eviction("web-1", "other", node="src"),)
    outcome = _replayed(nodes, pods, {"src": 1.5, "other": 0.5}, evictions)
    assert outcome.landed_as_planned == 1
    assert outcome.bounce_backs == 0


def _tied_pair() -> tuple[list[Any], list[Pod], dict[str, float]]:
    """ "a" and "b" look the same to the scheduler; "b" would go above its targets."""
    nodes = [make_node("hot"), make_node("a"), make_node("b")]
    pods = [make_pod("web-1", node="hot", cpu_millicores=500)]
    return nodes, pods, {"hot": 3.6, "a": 0.4, "b": 2.6}


def test_replay_counts_a_tie_with_a_bad_node_and_not_as_planned() -> None:
    outcome = _replayed(*_tied_pair(), (_eviction("web-1", "a"),))
    assert outcome.tied_with_bad == 1
    assert outcome.landed_as_planned == 0  # right node, but the scheduler might not pick it
    assert outcome.hot_left == 0  # the expected node is in the tie: it is where it lands


def test_replay_picks_at_random_among_tied_nodes_reproducibly() -> None:
    evictions = (_eviction("web-1", None),)
    left = {_replayed(*_tied_pair(), evictions, seed=seed).hot_left for seed in range(24)}
    assert left == {0, 1}  # sometimes "a", sometimes "b"
    assert _replayed(*_tied_pair(), evictions, seed=5) == _replayed(
        *_tied_pair(), evictions, seed=5
    )


def test_replay_counts_a_landing_out_of_the_round_as_bad_not_as_a_bounce_back() -> None:
    # "unmeasured" has room and no usage sample: out of the round, however cool.
    nodes = [make_node("hot"), make_node("unmeasured")]
    pods = [make_pod("web-1", node="hot", cpu_millicores=500)]
    outcome = _replayed(nodes, pods, {"hot": 3.6}, (_eviction("web-1", "unmeasured"),))
    assert outcome.bad_landings == 1
    assert outcome.bounce_backs == 0


def _two_good() -> tuple[list[Any], list[Pod], dict[str, float]]:
    """ "a" and "b" tie for the replacement and are both good landings."""
    nodes = [make_node("hot"), make_node("a"), make_node("b")]
    pods = [make_pod("web-1", node="hot", cpu_millicores=500)]
    return nodes, pods, {"hot": 3.6, "a": 0.4, "b": 0.4}


@pytest.mark.parametrize(
    ("landing_set", "off_set"),
    [
        pytest.param(("a",), 1, id="landed on b, outside the set"),
        pytest.param(("a", "b"), 0, id="landed in the set"),
        pytest.param((), None, id="no landing set"),
    ],
)
def test_replay_counts_good_landings_off_the_landing_set(
    landing_set: tuple[str, ...], off_set: int | None
) -> None:
    # Full scoring lands on the expected node "b" of the tie.
    outcome = _replayed(*_two_good(), (_eviction("web-1", "b", landing_set=landing_set),))
    assert outcome.bad_landings == 0
    assert outcome.off_set_landings == off_set


def test_taint_patches_count_each_node_tainted_or_untainted() -> None:
    evictions = [
        _eviction("web-1", steer=("a", "b")),  # a, b tainted: 2
        _eviction("web-2", steer=("b", "c")),  # a removed, c added: 2
        _eviction("web-3", steer=("b", "c")),  # nothing changes
        _eviction("web-4"),  # b, c removed: 2
        _eviction("web-5", steer=("d",)),  # d added, then removed at the end: 2
    ]
    assert measure.taint_patches(evictions) == 8
    assert measure.taint_patches([]) == 0


def _one_good_among_200() -> tuple[list[Any], list[Pod], dict[str, float]]:
    """200 nodes: "hot" with web-1; "good", which requests least and uses little; 198
    "busy-*", which score below "good" and would go above their targets with web-1.
    Every feasible node scored, the replacement lands on "good"; kube-scheduler's
    default sample is 100 feasible nodes, which miss "good" about half the time."""
    nodes = [make_node("hot"), make_node("good")]
    pods = [make_pod("web-1", node="hot", cpu_millicores=500)]
    cpu = {"hot": 3.6, "good": 0.4}
    for k in range(198):
        name = f"busy-{k:03d}"
        nodes.append(make_node(name))
        pods.append(make_pod(f"filler-{k:03d}", node=name, cpu_millicores=1000))
        cpu[name] = 2.6
    return nodes, pods, cpu


def test_sampled_replay_lands_on_the_best_of_the_sample() -> None:
    nodes, pods, cpu = _one_good_among_200()
    evictions = (_eviction("web-1", "good"),)
    full = {_replayed(nodes, pods, cpu, evictions, seed=s).bad_landings for s in range(12)}
    assert full == {0}
    sampled = [
        _replayed(nodes, pods, cpu, evictions, seed=s, scoring=measure.SAMPLED) for s in range(12)
    ]
    assert {o.bad_landings for o in sampled} == {0, 1}
    for outcome in sampled:
        # The sample's best: "good" when the sample holds it, else the source (its
        # predecessor's requests still counted, it outscores the busy nodes) or a
        # busy node: a bounce-back either way.
        assert outcome.bounce_backs == outcome.bad_landings
        assert outcome.landed_as_planned == 1 - outcome.bad_landings
    again = _replayed(nodes, pods, cpu, evictions, seed=3, scoring=measure.SAMPLED)
    assert again == sampled[3]


def test_sampled_replay_below_100_nodes_scores_every_feasible_node() -> None:
    steered = (_eviction("web-1", "idle", steer=("hot", "warm")),)
    full = _replayed(*_warm_and_idle(), steered)
    sampled = _replayed(*_warm_and_idle(), steered, scoring=measure.SAMPLED)
    assert sampled == full


def test_forecast_fetch_bench_runs_small(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import forecast_fetch

    assert forecast_fetch.main(["--nodes", "5", "--pods", "40", "--repeat", "1"]) == 0
    table = capsys.readouterr().out
    assert "| fetch_forecast" in table
    target = next(line for line in table.splitlines() if "target <= 10 s" in line)
    assert target.rstrip(" |").endswith("met")
