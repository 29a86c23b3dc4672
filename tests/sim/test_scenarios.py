"""Generated clusters (loadaware.sim.scenarios) and the bench generator CLI.

Covered: determinism per seed; every pod on an existing node; requests within
allocatable; node usage at least the sum of its pods'; hot and cold nodes;
"loose" and "tight" mean usage; metrics for every node and pod, 10-40 s old;
owner chains (Pod -> ReplicaSet -> Deployment, StatefulSet, DaemonSet) with
matching uids and kube-style names; one DaemonSet pod per node; the tainted
pool; anti-affinity honoured; PDB selectors and status consistent; cordoned and
NotReady nodes in larger clusters; JSON round trip; per-object independence of
metadata and status; the loader reads every scenario; peak-hour is relieved by
a default round; `python -m bench.generate` writes files `plan` reads. The
invariants that hold for every cluster also hold for the usage-independent
family and the hand-laid "warm-idle" scenario, whose shape (4 hot, 8 idle nodes
with large requests, 4 warm nodes with tiny ones, one node size) and whose point
(requests-based placement picks the warm nodes, placement steered off them and
off the hot nodes picks the idle ones) are checked, as are its registration
with `loadaware simulate`, `loadaware sim serve` and `python -m bench.generate`.
"""

from __future__ import annotations

import collections
import datetime
import functools
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from bench import generate as bench_generate
from loadaware import cli, cluster, errors, metrics, plan, policy, runtime, scheduling, sim
from loadaware.sim import _resources, scenarios

NOW = datetime.datetime(2026, 11, 29, 8, 0, 0, tzinfo=datetime.UTC)
HOT = {"cpu": 0.70, "memory": 0.80}  # the default policy's targetThresholds
COLD = {"cpu": 0.40, "memory": 0.50}  # and thresholds


def _generated(**kwargs: Any) -> scenarios.Scenario:
    return scenarios.generate_cluster(now=NOW, **kwargs)


# Generated clusters: every feature of the generator is in each.
SCENARIOS = {
    "small": lambda: scenarios.builtin_scenario("small", now=NOW),
    "peak-hour": lambda: scenarios.builtin_scenario("peak-hour", now=NOW),
    "loose-300": lambda: _generated(nodes=300, seed=3, capacity="loose"),
    "tight-300": lambda: _generated(nodes=300, seed=4, capacity="tight", zones=4),
    "independent-300": lambda: _generated(nodes=300, seed=5, family="usage-independent"),
}
# Laid out by hand for one point: the invariants hold, the generator's variety does not.
LAYOUTS = {"warm-idle": lambda: scenarios.builtin_scenario("warm-idle", now=NOW)}


@functools.cache
def _scenario(name: str) -> scenarios.Scenario:
    return {**SCENARIOS, **LAYOUTS}[name]()


@pytest.fixture(scope="module", params=sorted(SCENARIOS))
def scenario(request: pytest.FixtureRequest) -> scenarios.Scenario:
    return _scenario(request.param)


@pytest.fixture(scope="module", params=sorted([*SCENARIOS, *LAYOUTS]))
def any_scenario(request: pytest.FixtureRequest) -> scenarios.Scenario:
    return _scenario(request.param)


def _of_kind(sc: scenarios.Scenario, kind: str) -> list[dict[str, Any]]:
    return [o for o in sc.objects if o["kind"] == kind]


def _nodes(sc: scenarios.Scenario) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in _of_kind(sc, "Node")}


def _key(obj: dict[str, Any]) -> str:
    return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"


def _pod_requests(pod: dict[str, Any]) -> tuple[int, int]:
    cpu = memory = 0
    for container in pod["spec"]["containers"]:
        requests = container.get("resources", {}).get("requests", {})
        cpu += cluster.to_millicores(requests.get("cpu", "0"))
        memory += cluster.to_bytes(requests.get("memory", "0"))
    return cpu, memory


def _allocatable(node: dict[str, Any]) -> tuple[int, int, int]:
    a = node["status"]["allocatable"]
    return cluster.to_millicores(a["cpu"]), cluster.to_bytes(a["memory"]), int(a["pods"])


def _utilisation(sc: scenarios.Scenario) -> Iterator[tuple[str, float, float]]:
    for name, node in _nodes(sc).items():
        cpu_m, memory_b, _ = _allocatable(node)
        sample = sc.metrics["nodes"][name]
        yield name, sample["cpu"] * 1000 / cpu_m, sample["memory"] / memory_b


def _is_ready(node: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"]["conditions"])


# --- determinism and shape ---------------------------------------------------------------------


def test_same_seed_gives_the_same_cluster() -> None:
    first = _generated(nodes=60, seed=11)
    second = _generated(nodes=60, seed=11)
    assert json.dumps(first.cluster_document()) == json.dumps(second.cluster_document())
    assert json.dumps(first.metrics) == json.dumps(second.metrics)


def test_another_seed_gives_another_cluster() -> None:
    first = _generated(nodes=60, seed=11)
    other = _generated(nodes=60, seed=12)
    assert json.dumps(first.metrics) != json.dumps(other.metrics)


def test_objects_and_metrics_round_trip_through_json(any_scenario: scenarios.Scenario) -> None:
    document = any_scenario.cluster_document()
    assert document["apiVersion"] == "v1"
    assert document["kind"] == "List"
    assert json.loads(json.dumps(document))["items"] == any_scenario.objects
    assert json.loads(json.dumps(any_scenario.metrics)) == any_scenario.metrics


def test_every_object_has_kube_shape(any_scenario: scenarios.Scenario) -> None:
    api_versions = {
        "Node": "v1",
        "Pod": "v1",
        "Deployment": "apps/v1",
        "ReplicaSet": "apps/v1",
        "StatefulSet": "apps/v1",
        "DaemonSet": "apps/v1",
        "PodDisruptionBudget": "policy/v1",
    }
    uids = set()
    for obj in any_scenario.objects:
        assert obj["apiVersion"] == api_versions[obj["kind"]]
        meta = obj["metadata"]
        assert meta["name"]
        assert meta["uid"]
        assert meta["creationTimestamp"].endswith("Z")
        assert (obj["kind"] == "Node") == ("namespace" not in meta)
        uids.add(meta["uid"])
        created = datetime.datetime.fromisoformat(meta["creationTimestamp"])
        assert created < NOW
    assert len(uids) == len(any_scenario.objects)


def test_unknown_scenario_is_an_input_error() -> None:
    with pytest.raises(errors.InputError, match="unknown scenario"):
        scenarios.builtin_scenario("rush-hour", now=NOW)
    assert scenarios.DEFAULT_SCENARIO in scenarios.SCENARIO_NAMES


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"nodes": 0}, id="no-nodes"),
        pytest.param({"nodes": 10, "pods_per_node": 3}, id="fewer-pods-than-daemonsets"),
        pytest.param({"nodes": 10, "hot_fraction": 0.9}, id="hot-fraction-too-high"),
        pytest.param({"nodes": 10, "capacity": "roomy"}, id="unknown-capacity"),
    ],
)
def test_bad_parameters_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="must"):
        _generated(**kwargs)


def test_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone"):
        scenarios.generate_cluster(nodes=5, now=NOW.replace(tzinfo=None))


# --- nodes and placement ------------------------------------------------------------------------


def test_every_pod_is_running_on_an_existing_node(any_scenario: scenarios.Scenario) -> None:
    nodes = _nodes(any_scenario)
    for pod in _of_kind(any_scenario, "Pod"):
        assert pod["spec"]["nodeName"] in nodes
        assert pod["status"]["phase"] == "Running"


def test_requests_fit_allocatable_on_every_node(any_scenario: scenarios.Scenario) -> None:
    used: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    for pod in _of_kind(any_scenario, "Pod"):
        cpu, memory = _pod_requests(pod)
        totals = used[pod["spec"]["nodeName"]]
        totals[0] += cpu
        totals[1] += memory
        totals[2] += 1
    for name, node in _nodes(any_scenario).items():
        assert all(u <= a for u, a in zip(used[name], _allocatable(node), strict=True)), name


def test_allocatable_is_slightly_under_capacity(any_scenario: scenarios.Scenario) -> None:
    for node in _nodes(any_scenario).values():
        cap = node["status"]["capacity"]
        cpu_m, memory_b, _ = _allocatable(node)
        assert 0.95 * cluster.to_millicores(cap["cpu"]) < cpu_m < cluster.to_millicores(cap["cpu"])
        assert 0.9 * cluster.to_bytes(cap["memory"]) < memory_b < cluster.to_bytes(cap["memory"])


def test_nodes_spread_over_zones_and_instance_types() -> None:
    sc = _scenario("tight-300")
    labels = [n["metadata"]["labels"] for n in _nodes(sc).values()]
    zones = collections.Counter(lbl["topology.kubernetes.io/zone"] for lbl in labels)
    assert len(zones) == 4
    assert max(zones.values()) - min(zones.values()) <= 2
    assert len({lbl["node.kubernetes.io/instance-type"] for lbl in labels}) >= 2
    for name, lbl in zip(_nodes(sc), labels, strict=True):
        assert lbl["kubernetes.io/hostname"] == name
        assert lbl["pool"] in ("default", "batch")


def test_a_small_tainted_pool_runs_only_pods_that_tolerate_it(
    scenario: scenarios.Scenario,
) -> None:
    nodes = _nodes(scenario)
    tainted = {
        name
        for name, node in nodes.items()
        if {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}
        in node["spec"].get("taints", [])
    }
    if len(nodes) < 10:
        assert not tainted
        return
    assert 0 < len(tainted) <= 0.1 * len(nodes)
    on_pool = [p for p in _of_kind(scenario, "Pod") if p["spec"]["nodeName"] in tainted]
    assert any(p["metadata"]["namespace"] == "batch" for p in on_pool)
    for pod in on_pool:
        tolerations = pod["spec"]["tolerations"]
        assert (
            any(t.get("key") == "dedicated" and t.get("value") == "batch" for t in tolerations)
            or {"operator": "Exists"} in tolerations
        ), _key(pod)


def test_larger_clusters_have_cordoned_and_not_ready_nodes() -> None:
    sc = _scenario("loose-300")
    nodes = list(_nodes(sc).values())
    cordoned = [n for n in nodes if n["spec"].get("unschedulable")]
    not_ready = [n for n in nodes if not _is_ready(n)]
    assert cordoned
    assert not_ready
    assert all(
        {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}.items()
        <= n["spec"]["taints"][-1].items()
        for n in cordoned
    )
    # Pods were moved off NotReady nodes; only their DaemonSet pods remain.
    names = {n["metadata"]["name"] for n in not_ready}
    for pod in _of_kind(sc, "Pod"):
        if pod["spec"]["nodeName"] in names:
            assert pod["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"


# --- usage --------------------------------------------------------------------------------------


def test_every_node_and_pod_has_fresh_metrics(any_scenario: scenarios.Scenario) -> None:
    m = any_scenario.metrics
    assert m["collectedAt"] == "2026-11-29T08:00:00Z"
    assert set(m["nodes"]) == set(_nodes(any_scenario))
    assert set(m["pods"]) == {_key(p) for p in _of_kind(any_scenario, "Pod")}
    for sample in [*m["nodes"].values(), *m["pods"].values()]:
        age = NOW - datetime.datetime.fromisoformat(sample["timestamp"])
        assert datetime.timedelta(seconds=9) <= age <= datetime.timedelta(seconds=41)
        assert sample["cpu"] > 0
        assert sample["memory"] > 0
        assert isinstance(sample["memory"], int)


def test_node_usage_covers_its_pods(any_scenario: scenarios.Scenario) -> None:
    pods_cpu: dict[str, float] = collections.defaultdict(float)
    pods_memory: dict[str, int] = collections.defaultdict(int)
    for pod in _of_kind(any_scenario, "Pod"):
        sample = any_scenario.metrics["pods"][_key(pod)]
        pods_cpu[pod["spec"]["nodeName"]] += sample["cpu"]
        pods_memory[pod["spec"]["nodeName"]] += sample["memory"]
    for name, sample in any_scenario.metrics["nodes"].items():
        assert sample["cpu"] >= pods_cpu[name] + 0.01, name  # plus the system's own use
        assert sample["memory"] >= pods_memory[name] + 100 * 2**20, name


def test_pod_usage_respects_limits(any_scenario: scenarios.Scenario) -> None:
    for pod in _of_kind(any_scenario, "Pod"):
        containers = pod["spec"]["containers"]
        limits = [c["resources"].get("limits") for c in containers]
        if not all(limits):
            continue
        sample = any_scenario.metrics["pods"][_key(pod)]
        cpu_limit = sum(cluster.to_millicores(lim["cpu"]) for lim in limits if lim)
        memory_limit = sum(cluster.to_bytes(lim["memory"]) for lim in limits if lim)
        assert sample["cpu"] * 1000 <= cpu_limit + 1, _key(pod)
        assert sample["memory"] <= memory_limit, _key(pod)


def test_cpu_usage_is_heavy_tailed_against_requests() -> None:
    sc = _scenario("loose-300")
    ratios = []
    for pod in _of_kind(sc, "Pod"):
        cpu_m, _ = _pod_requests(pod)
        ratios.append(sc.metrics["pods"][_key(pod)]["cpu"] * 1000 / cpu_m)
    ratios.sort()
    median = ratios[len(ratios) // 2]
    assert 0.3 < median < 1.2
    assert sum(r >= 2.0 for r in ratios) >= 0.005 * len(ratios)  # a few burst far past requests


def test_hot_and_cold_nodes_both_exist(any_scenario: scenarios.Scenario) -> None:
    usage = list(_utilisation(any_scenario))
    hot = [n for n, cpu, mem in usage if cpu > HOT["cpu"] or mem > HOT["memory"]]
    cold = [n for n, cpu, mem in usage if cpu < COLD["cpu"] and mem < COLD["memory"]]
    assert hot
    assert cold
    assert all(cpu < 1.0 and mem < 1.0 for _, cpu, mem in usage)


def test_hot_fraction_sets_how_many_nodes_run_hot() -> None:
    sc = _scenario("loose-300")
    hot = [n for n, cpu, mem in _utilisation(sc) if cpu > 0.75 or mem > 0.82]
    assert 0.07 * 300 <= len(hot) <= 0.13 * 300


@pytest.mark.parametrize(
    ("name", "low", "high"), [("loose-300", 0.33, 0.47), ("tight-300", 0.56, 0.70)]
)
def test_capacity_sets_the_mean_usage(name: str, low: float, high: float) -> None:
    usage = list(_utilisation(SCENARIOS[name]()))
    mean_cpu = sum(cpu for _, cpu, _ in usage) / len(usage)
    mean_memory = sum(mem for _, _, mem in usage) / len(usage)
    assert low < mean_cpu < high
    assert low < mean_memory < high


def test_hot_nodes_hold_replicas_recreated_in_the_outage() -> None:
    sc = _scenario("peak-hour")
    hot = {n for n, cpu, mem in _utilisation(sc) if cpu > HOT["cpu"] or mem > HOT["memory"]}
    recent = [
        p
        for p in _of_kind(sc, "Pod")
        if p["spec"]["nodeName"] in hot
        and NOW - datetime.datetime.fromisoformat(p["metadata"]["creationTimestamp"])
        < datetime.timedelta(hours=7)
    ]
    assert len(recent) >= len(hot)


# --- workloads ----------------------------------------------------------------------------------


def test_owner_chains_resolve_with_matching_uids(scenario: scenarios.Scenario) -> None:
    by_kind: dict[tuple[str, str, str], dict[str, Any]] = {
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
        for o in scenario.objects
    }
    kinds = collections.Counter()
    for pod in _of_kind(scenario, "Pod"):
        refs = pod["metadata"].get("ownerReferences")
        if not refs:
            kinds["bare"] += 1
            continue
        (ref,) = refs
        assert ref["controller"] is True
        owner = by_kind[ref["kind"], pod["metadata"]["namespace"], ref["name"]]
        assert owner["metadata"]["uid"] == ref["uid"]
        kinds[ref["kind"]] += 1
        name = pod["metadata"]["name"]
        if ref["kind"] in ("ReplicaSet", "DaemonSet"):
            assert re.fullmatch(re.escape(ref["name"]) + r"-[bcdfghjklmnpqrstvwxz2456789]{5}", name)
        else:
            assert re.fullmatch(re.escape(ref["name"]) + r"-\d+", name)
        if ref["kind"] == "ReplicaSet":
            (dref,) = owner["metadata"]["ownerReferences"]
            deployment = by_kind["Deployment", pod["metadata"]["namespace"], dref["name"]]
            assert deployment["metadata"]["uid"] == dref["uid"]
            assert ref["name"].startswith(dref["name"] + "-")
            hash_ = pod["metadata"]["labels"]["pod-template-hash"]
            assert ref["name"] == f"{dref['name']}-{hash_}"
    assert kinds["ReplicaSet"]
    assert kinds["StatefulSet"]
    assert kinds["DaemonSet"]


def test_controller_replicas_match_their_pods(any_scenario: scenarios.Scenario) -> None:
    pods_of = collections.Counter(
        (p["metadata"]["namespace"], p["metadata"]["ownerReferences"][0]["name"])
        for p in _of_kind(any_scenario, "Pod")
        if p["metadata"].get("ownerReferences")
    )
    for rs in _of_kind(any_scenario, "ReplicaSet"):
        key = (rs["metadata"]["namespace"], rs["metadata"]["name"])
        assert rs["spec"]["replicas"] == rs["status"]["replicas"] == pods_of[key]
    for sts in _of_kind(any_scenario, "StatefulSet"):
        key = (sts["metadata"]["namespace"], sts["metadata"]["name"])
        assert sts["spec"]["replicas"] == pods_of[key]
        assert sts["spec"]["volumeClaimTemplates"]


def test_one_daemonset_pod_per_node(any_scenario: scenarios.Scenario) -> None:
    nodes = set(_nodes(any_scenario))
    daemonsets = _of_kind(any_scenario, "DaemonSet")
    assert len(daemonsets) >= 2
    per_ds: dict[str, list[str]] = collections.defaultdict(list)
    for pod in _of_kind(any_scenario, "Pod"):
        refs = pod["metadata"].get("ownerReferences") or [{}]
        if refs[0].get("kind") == "DaemonSet":
            per_ds[refs[0]["name"]].append(pod["spec"]["nodeName"])
            assert any("hostPath" in v for v in pod["spec"]["volumes"])
    for ds in daemonsets:
        placed = per_ds[ds["metadata"]["name"]]
        assert sorted(placed) == sorted(nodes)
        assert ds["status"]["desiredNumberScheduled"] == len(nodes)


def test_system_critical_and_local_storage_pods_are_present(
    scenario: scenarios.Scenario,
) -> None:
    pods = _of_kind(scenario, "Pod")
    critical = [p for p in pods if p["spec"].get("priorityClassName") == "system-cluster-critical"]
    assert critical
    assert all(p["spec"]["priority"] == 2000000000 for p in critical)
    assert all(p["metadata"]["namespace"] == "kube-system" for p in critical)
    assert any(
        "emptyDir" in v and p["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
        for p in pods
        for v in p["spec"].get("volumes", [])
    )
    assert any("persistentVolumeClaim" in v for p in pods for v in p["spec"].get("volumes", []))
    assert {p["status"]["qosClass"] for p in pods} >= {"Guaranteed", "Burstable"}
    assert len({p["metadata"]["namespace"] for p in pods}) >= 5


def test_pods_carry_ready_status_and_restart_counts(any_scenario: scenarios.Scenario) -> None:
    pods = _of_kind(any_scenario, "Pod")
    for pod in pods:
        status = pod["status"]
        assert {c["type"] for c in status["conditions"]} >= {"Ready", "PodScheduled"}
        assert len(status["containerStatuses"]) == len(pod["spec"]["containers"])
        for container in pod["spec"]["containers"]:
            assert container["resources"]["requests"]
    restarts = [s["restartCount"] for p in pods for s in p["status"]["containerStatuses"]]
    assert 0 in restarts
    assert max(restarts) > 0


def test_anti_affinity_is_honoured(scenario: scenarios.Scenario) -> None:
    nodes = _nodes(scenario)
    topology_keys = set()
    groups: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
    for pod in _of_kind(scenario, "Pod"):
        terms = (
            pod["spec"]
            .get("affinity", {})
            .get("podAntiAffinity", {})
            .get("requiredDuringSchedulingIgnoredDuringExecution", [])
        )
        for term in terms:
            key = term["topologyKey"]
            topology_keys.add(key)
            node_labels = nodes[pod["spec"]["nodeName"]]["metadata"]["labels"]
            selector = json.dumps(term["labelSelector"], sort_keys=True)
            groups[key, selector].append(node_labels[key])
    assert topology_keys == {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}
    for domains in groups.values():
        assert len(domains) == len(set(domains))


def test_pdbs_select_pods_and_report_consistent_status(scenario: scenarios.Scenario) -> None:
    pods = _of_kind(scenario, "Pod")
    pdbs = _of_kind(scenario, "PodDisruptionBudget")
    assert pdbs
    for pdb in pdbs:
        selector = pdb["spec"]["selector"]["matchLabels"]
        selected = [
            p
            for p in pods
            if p["metadata"]["namespace"] == pdb["metadata"]["namespace"]
            and selector.items() <= p["metadata"]["labels"].items()
        ]
        status = pdb["status"]
        assert selected, _key(pdb)
        assert status["expectedPods"] == status["currentHealthy"] == len(selected)
        allowed = max(0, status["currentHealthy"] - status["desiredHealthy"])
        assert status["disruptionsAllowed"] == allowed
    assert any(p["status"]["disruptionsAllowed"] == 0 for p in pdbs)
    assert any(p["status"]["disruptionsAllowed"] > 0 for p in pdbs)


# --- sharing contract ---------------------------------------------------------------------------


def test_metadata_and_status_are_per_object() -> None:
    sc = _generated(nodes=12, seed=5)
    first, second = [
        p
        for p in _of_kind(sc, "Pod")
        if p["metadata"].get("ownerReferences", [{}])[0].get("name", "").startswith("frontend-")
    ][:2]
    first["metadata"]["labels"]["touched"] = "yes"
    first["metadata"]["ownerReferences"][0]["name"] = "other"
    first["status"]["conditions"][1]["status"] = "False"
    first["spec"]["nodeName"] = "elsewhere"
    assert "touched" not in second["metadata"]["labels"]
    assert second["metadata"]["ownerReferences"][0]["name"] != "other"
    assert second["status"]["conditions"][1]["status"] == "True"
    assert second["spec"]["nodeName"] != "elsewhere"
    # Pod templates are not shared with the pods.
    deployment = next(d for d in _of_kind(sc, "Deployment") if d["metadata"]["name"] == "frontend")
    assert deployment["spec"]["template"]["spec"]["containers"] is not first["spec"]["containers"]


# --- consumers ----------------------------------------------------------------------------------


def test_the_loader_reads_every_scenario(scenario: scenarios.Scenario) -> None:
    state = cluster.cluster_state_from_objects(scenario.objects)
    usage = metrics.usage_from_json(scenario.metrics)
    assert len(state.nodes) == len(scenario.metrics["nodes"])
    assert len(state.pods) == len(scenario.metrics["pods"])
    assert len(state.pdbs) == len(_of_kind(scenario, "PodDisruptionBudget"))
    assert usage.collected_at == NOW
    for pod in state.pods:
        assert pod.node_name in state.nodes_by_name
        assert pod.cpu_request_millicores > 0
        if pod.owner is not None and pod.owner.kind == "ReplicaSet":
            assert pod.workload is not None
            assert pod.workload.kind == "Deployment"
    assert any(p.has_local_storage and not p.is_daemonset_pod for p in state.pods)
    assert any(p.has_pvc for p in state.pods)
    assert any(p.priority >= 2000000000 for p in state.pods)
    assert any(p.required_pod_anti_affinity for p in state.pods)
    assert any(n.taints for n in state.nodes) == (len(state.nodes) >= 10)


# warm-idle is relieved only where replacements are steered: runtime.simulate_round
# places them without the plan's soft taints (see the warm-idle tests below). The
# gpu scenario is hot by GPU use alone, which the default policy does not judge
# (tests/sim/test_gpu_usage.py plans it with policy/gpu.yaml).
@pytest.mark.parametrize(
    "name", [n for n in scenarios.SCENARIO_NAMES if n not in ("warm-idle", "gpu")]
)
def test_a_default_round_relieves_every_hot_node(name: str) -> None:
    sc = _scenario(name)
    state = cluster.cluster_state_from_objects(sc.objects)
    usage = metrics.usage_from_json(sc.metrics)
    result = runtime.simulate_round(state, usage, policy.LoadAwarePolicy(), NOW)
    assert result.plan.status == "planned", result.plan.reason
    assert result.hot_before >= (5 if name == "peak-hour" else 1)
    assert result.hot_after == 0
    assert result.pending == 0


def test_bench_generate_writes_files_that_plan_reads(tmp_path: Any) -> None:
    code = bench_generate.main(
        [
            "--nodes",
            "30",
            "--seed",
            "1",
            "--capacity",
            "tight",
            "--now",
            "2026-11-29T08:00:00Z",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0
    state = cluster.load_cluster_file(tmp_path / "cluster.json")
    usage = metrics.load_metrics_file(tmp_path / "metrics.json")
    assert len(state.nodes) == 30
    assert len(usage.pods) == len(state.pods)
    expected = _generated(nodes=30, seed=1, capacity="tight")
    assert json.loads((tmp_path / "metrics.json").read_text()) == expected.metrics


def test_bench_generate_writes_a_builtin_scenario(tmp_path: Any) -> None:
    assert bench_generate.main(["--scenario", "small", "--out", str(tmp_path)]) == 0
    document = json.loads((tmp_path / "cluster.json").read_text())
    assert document["kind"] == "List"
    assert len([o for o in document["items"] if o["kind"] == "Node"]) == 6


# --- warm-idle ----------------------------------------------------------------------------------


def _warm_idle_nodes() -> dict[str, list[str]]:
    """Node names by role, read off requests and usage (cpu fractions of allocatable)."""
    sc = _scenario("warm-idle")
    requested: dict[str, int] = collections.defaultdict(int)
    for pod in _of_kind(sc, "Pod"):
        requested[pod["spec"]["nodeName"]] += _pod_requests(pod)[0]
    roles: dict[str, list[str]] = {"hot": [], "idle": [], "warm": [], "other": []}
    for name, node in _nodes(sc).items():
        cpu_m = _allocatable(node)[0]
        used = sc.metrics["nodes"][name]["cpu"] * 1000 / cpu_m
        asked = requested[name] / cpu_m
        if 0.85 <= used <= 0.91:
            roles["hot"].append(name)
        elif 0.15 <= used <= 0.25 and 0.7 <= asked <= 0.8:
            roles["idle"].append(name)
        elif 0.6 <= used <= 0.65 and asked <= 0.12:
            roles["warm"].append(name)
        else:
            roles["other"].append(name)
    return roles


def test_warm_idle_has_4_hot_8_idle_with_large_requests_and_4_warm_with_tiny_ones() -> None:
    sc = _scenario("warm-idle")
    roles = _warm_idle_nodes()
    assert {role: len(names) for role, names in roles.items()} == {
        "hot": 4,
        "idle": 8,
        "warm": 4,
        "other": 0,
    }
    nodes = _nodes(sc).values()
    assert len({n["metadata"]["labels"]["node.kubernetes.io/instance-type"] for n in nodes}) == 1
    assert len({_allocatable(n)[0] for n in nodes}) == 1
    usage = {n: (cpu, mem) for n, cpu, mem in _utilisation(sc)}
    assert all(usage[n][0] < COLD["cpu"] and usage[n][1] < COLD["memory"] for n in roles["idle"])
    assert all(HOT["cpu"] - 0.1 < usage[n][0] < HOT["cpu"] for n in roles["warm"])


def test_warm_idle_hot_nodes_run_several_evictable_deployment_pods() -> None:
    sc = _scenario("warm-idle")
    state = cluster.cluster_state_from_objects(sc.objects)
    rules = plan.EvictionRules.from_policy(policy.LoadAwarePolicy().evictor, state)
    for name in _warm_idle_nodes()["hot"]:
        evictable = [
            p
            for p in state.pods_by_node[name]
            if plan.pod_eligibility(p, rules, NOW).evictable and p.workload is not None
        ]
        assert len(evictable) >= 4, name
        assert all(p.workload.kind == "Deployment" for p in evictable if p.workload)
        node = state.nodes_by_name[name]
        assert all(
            p.cpu_request_millicores <= 0.1 * node.allocatable_cpu_millicores for p in evictable
        )


def test_warm_idle_requests_send_replacements_to_warm_nodes_and_steering_to_idle_ones() -> None:
    sc = _scenario("warm-idle")
    state = cluster.cluster_state_from_objects(sc.objects)
    roles = _warm_idle_nodes()
    occupancy = scheduling.Occupancy.from_cluster(state)
    names = occupancy.node_names
    steer = {name: (plan.HOTSPOT_TAINT,) for name in roles["warm"] + roles["hot"]}
    for source in roles["hot"]:
        for pod in state.pods_by_node[source]:
            if pod.is_daemonset_pod:
                continue
            plain = scheduling.predict_replacement(pod, occupancy, names)
            steered = scheduling.predict_replacement(pod, occupancy, names, extra_taints=steer)
            assert plain, pod.key
            assert set(plain) <= set(roles["warm"]), pod.key
            assert steered, pod.key
            assert set(steered) <= set(roles["idle"]), pod.key


def test_warm_idle_is_relieved_only_when_replacements_are_steered() -> None:
    from bench import checks, descheduler_baseline, measure

    sc = _scenario("warm-idle")
    state = cluster.cluster_state_from_objects(sc.objects)
    usage = metrics.usage_from_json(sc.metrics)
    settings = policy.LoadAwarePolicy()
    view = checks.ClusterView.build(state, usage, settings, NOW)
    steered = plan.build_plan(state, usage, settings, NOW)
    assert steered.status == "planned", steered.reason
    outcome = measure.replay_plan(steered.evictions, state, usage, view)
    assert outcome.hot_before == 4
    assert outcome.hot_left == 0
    idle = set(_warm_idle_nodes()["idle"])
    assert {e.expected_node for e in steered.evictions} <= idle
    unsteered = descheduler_baseline.plan_descheduler_order(state, usage, settings, NOW)
    assert unsteered.evictions
    assert measure.replay_plan(unsteered.evictions, state, usage, view).hot_left >= 4


def test_warm_idle_is_served_simulated_and_written(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "warm-idle" in scenarios.SCENARIO_NAMES
    served = sim.build_cluster(scenario="warm-idle", now=NOW)
    assert len(served.store.objects(_resources.NODES)) == 16
    assert cli.main(["simulate", "--scenario", "warm-idle", "--now", "2026-11-29T08:00:00Z"]) == 0
    assert "scenario warm-idle" in capsys.readouterr().out
    assert bench_generate.main(["--scenario", "warm-idle", "--out", str(tmp_path)]) == 0
    state = cluster.load_cluster_file(tmp_path / "cluster.json")
    assert len(state.nodes) == 16


def test_bench_generate_writes_the_usage_independent_family(tmp_path: Any) -> None:
    argv = ["--nodes", "30", "--seed", "2", "--now", "2026-11-29T08:00:00Z"]
    code = bench_generate.main([*argv, "--family", "usage-independent", "--out", str(tmp_path)])
    assert code == 0
    expected = _generated(nodes=30, seed=2, family="usage-independent")
    assert json.loads((tmp_path / "metrics.json").read_text()) == expected.metrics
    assert expected.metrics != _generated(nodes=30, seed=2).metrics
