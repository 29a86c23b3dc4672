"""The usage-independent family's GPU pool (bench.gpu_pool) and how the bench judges it.

Covered: the family as the harness builds it has about 5 % GPU nodes (at least
2) labelled, tainted and with 4 or 8 GPUs allocatable, running GPU pods that
tolerate the taint and select GPU nodes, with gpu usage between 0 and the GPUs
they hold, summing to their node's; some GPU nodes are hot by gpu alone (cpu
and memory calm); the rest of the instance is the family's without the pool,
and the pool is deterministic by seed; its policy judges gpu on the GPU pool
only. A plan on a small instance relieves a GPU-hot node without taking a GPU
node over its gpu target, moves GPU pods only between GPU nodes, never moves a
pod without a gpu value off a GPU node, and passes the checker; the replay
counts gpu-hot nodes before and after. The checker flags an eviction without
a gpu value off a node judged by gpu. The descheduler-order baseline judges
gpu too, moving GPU pods onto an underutilized GPU node, while nodes of other
pools do not wait for GPU capacity. `python -m bench.generate --gpu-pool`
writes the pool's nodes' allocatable GPUs, the gpu values and the policy.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import pathlib
from typing import Any

import pytest

from bench import checks, descheduler_baseline, gpu_pool, harness, measure
from bench import generate as bench_generate
from loadaware import cluster, metrics, plan, policy
from loadaware.cluster import Taint, Toleration
from loadaware.metrics import Usage
from loadaware.sim import Scenario
from tests.lib.builders import NOW, GiB, make_cluster, make_node, make_pod, make_usage, sample

SIZE = 40
OPTIONS = harness.Options(seed=3, pods_per_node=20)


@functools.cache
def _instance(size: int = SIZE, seed: int = OPTIONS.seed) -> Scenario:
    options = dataclasses.replace(OPTIONS, seed=seed)
    scenario, _ = harness._build_instance(size, "tight", gpu_pool.FAMILY, options)
    return scenario


@functools.cache
def _loaded() -> tuple[cluster.ClusterState, Usage, policy.LoadAwarePolicy]:
    scenario = _instance()
    state = cluster.cluster_state_from_objects(scenario.objects)
    state = gpu_pool.with_allocatable_gpus(state, scenario.objects)
    usage = metrics.usage_from_json(scenario.metrics)
    return state, usage, harness.family_policy(gpu_pool.FAMILY, OPTIONS)


def _gpu_nodes(scenario: Scenario) -> list[dict[str, Any]]:
    return [
        o
        for o in scenario.objects
        if o["kind"] == "Node" and o["metadata"]["labels"].get(gpu_pool.PRESENT_LABEL) == "true"
    ]


def _gpus_held(pod: dict[str, Any]) -> int:
    return sum(
        int(c["resources"].get("limits", {}).get(gpu_pool.GPU_RESOURCE, 0))
        for c in pod["spec"]["containers"]
    )


def _selects_gpu_nodes(pod: dict[str, Any]) -> bool:
    spec = pod["spec"]
    if spec.get("nodeSelector", {}).get(gpu_pool.PRESENT_LABEL) == "true":
        return True
    terms = (
        spec.get("affinity", {})
        .get("nodeAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution", {})
        .get("nodeSelectorTerms", [])
    )
    keys = {e["key"] for t in terms for e in t.get("matchExpressions", [])}
    return bool(keys & {gpu_pool.PRESENT_LABEL, gpu_pool.PRODUCT_LABEL})


# --- the instance ------------------------------------------------------------------------------


def test_the_family_has_a_gpu_pool_of_tainted_labelled_nodes() -> None:
    scenario = _instance()
    nodes = _gpu_nodes(scenario)
    assert len(nodes) == gpu_pool.gpu_node_count(SIZE) == 2  # 5 % of 40, at least 2
    assert gpu_pool.gpu_node_count(1000) == 50
    for node in nodes:
        assert node["spec"]["taints"] == [
            {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
        ]
        assert node["status"]["allocatable"][gpu_pool.GPU_RESOURCE] in ("4", "8")
        assert node["metadata"]["labels"]["pool"] == gpu_pool.POOL
    names = {n["metadata"]["name"] for n in nodes}
    pods = [o for o in scenario.objects if o["kind"] == "Pod" and o["spec"]["nodeName"] in names]
    taint = Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")
    state, usage, _ = _loaded()
    converted = {p.key: p for p in state.pods}
    holding = 0
    for raw in pods:
        key = f"{raw['metadata']['namespace']}/{raw['metadata']['name']}"
        pod = converted[key]
        assert any(t.tolerates(taint) for t in pod.tolerations), key
        if pod.is_daemonset_pod:
            continue
        assert _selects_gpu_nodes(raw), key
        held = _gpus_held(raw)
        value = usage.pods[key].named.get(gpu_pool.RESOURCE)
        if held:
            holding += 1
            assert value is not None
            assert 0 <= value <= held
        else:
            assert value is None  # feature-cache: no GPU, no gpu series
    assert holding
    # No pod off the GPU nodes tolerates their taint unless it tolerates everything.
    for pod in state.pods:
        if pod.node_name not in names and any(t.tolerates(taint) for t in pod.tolerations):
            assert pod.is_daemonset_pod, pod.key


def test_gpu_usage_adds_up_and_some_gpu_nodes_are_hot_by_gpu_alone() -> None:
    state, usage, _ = _loaded()
    hot = 0
    for node in state.nodes:
        if node.labels.get(gpu_pool.PRESENT_LABEL) != "true":
            assert not usage.nodes[node.name].named
            continue
        gpus = node.allocatable_extended[gpu_pool.GPU_RESOURCE]
        node_gpu = usage.nodes[node.name].named[gpu_pool.RESOURCE]
        pods = state.pods_by_node[node.name]
        summed = sum(usage.pods[p.key].named.get(gpu_pool.RESOURCE, 0.0) for p in pods)
        assert node_gpu == pytest.approx(summed, abs=1e-3)
        assert node_gpu <= gpus
        cpu = usage.nodes[node.name].cpu_cores * 1000 / node.allocatable_cpu_millicores
        memory = usage.nodes[node.name].memory_bytes / node.allocatable_memory_bytes
        if node_gpu / gpus > 0.7:
            hot += 1
            assert cpu < 0.5
            assert memory < 0.7
    assert hot >= 1


def test_the_rest_of_the_instance_is_the_family_without_the_pool() -> None:
    scenario = _instance()
    plain, _ = harness._build_instance(
        SIZE, "tight", gpu_pool.FAMILY, dataclasses.replace(OPTIONS, gpu_pool=False)
    )
    gpu_names = {n["metadata"]["name"] for n in _gpu_nodes(scenario)}
    assert len(scenario.objects) > len(plain.objects)
    assert all(not name.startswith(gpu_pool.POOL) for name in plain.metrics["nodes"])
    for name, entry in plain.metrics["nodes"].items():
        assert scenario.metrics["nodes"][name] == entry
    for key, entry in plain.metrics["pods"].items():
        assert scenario.metrics["pods"][key] == entry
    kept = {
        (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]): o for o in plain.objects
    }
    for raw in scenario.objects:
        ident = (raw["kind"], raw["metadata"].get("namespace"), raw["metadata"]["name"])
        if ident not in kept:
            continue
        if raw["kind"] == "DaemonSet":  # the cluster's agents run on the GPU nodes too
            status = raw["status"]
            before = kept[ident]["status"]
            assert status["desiredNumberScheduled"] == before["desiredNumberScheduled"] + 2
            assert {**raw, "status": before} == kept[ident]
        else:
            assert raw == kept[ident]
    assert gpu_names.isdisjoint(plain.metrics["nodes"])


def test_the_pool_is_deterministic_by_seed() -> None:
    again, _ = harness._build_instance(SIZE, "tight", gpu_pool.FAMILY, OPTIONS)
    assert json.dumps(again.objects) == json.dumps(_instance().objects)
    assert again.metrics == _instance().metrics
    other = _instance(seed=OPTIONS.seed + 1)
    gpu_metrics = {k: v for k, v in _instance().metrics["nodes"].items() if "named" in v}
    other_metrics = {k: v for k, v in other.metrics["nodes"].items() if "named" in v}
    assert gpu_metrics != other_metrics


def test_the_familys_policy_judges_gpu_on_the_gpu_pool_only() -> None:
    settings = harness.family_policy(gpu_pool.FAMILY, OPTIONS)
    assert [p.name for p in settings.node_pools] == ["gpu", "default"]
    gpu, default = settings.node_pools
    assert gpu.node_selector == {"nvidia.com/gpu.present": "true"}
    assert gpu.thresholds.as_dict() == {"cpu": 50, "memory": 60, "gpu": 30}
    assert gpu.target_thresholds.as_dict() == {"cpu": 85, "memory": 90, "gpu": 70}
    assert default.target_thresholds.as_dict() == {"cpu": 70, "memory": 80}
    assert settings.metrics.prometheus is not None
    assert settings.metrics.prometheus.resources["gpu"].capacity == "nvidia.com/gpu"
    assert plan.allocatable_names(settings) == {"gpu": "nvidia.com/gpu"}
    assert harness.family_policy("proportional", OPTIONS) == policy.LoadAwarePolicy()
    plain = dataclasses.replace(OPTIONS, gpu_pool=False)
    assert harness.family_policy(gpu_pool.FAMILY, plain) == policy.LoadAwarePolicy()


def test_allocatable_gpus_are_taken_from_the_raw_nodes_only_where_missing() -> None:
    scenario = _instance()
    state = cluster.cluster_state_from_objects(scenario.objects)
    filled = gpu_pool.with_allocatable_gpus(state, scenario.objects)
    gpus = {
        n.name: n.allocatable_extended[gpu_pool.GPU_RESOURCE]
        for n in filled.nodes
        if gpu_pool.GPU_RESOURCE in n.allocatable_extended
    }
    assert set(gpus) == {n["metadata"]["name"] for n in _gpu_nodes(scenario)}
    assert set(gpus.values()) <= {4.0, 8.0}
    assert gpu_pool.with_allocatable_gpus(filled, scenario.objects) is filled
    assert len(filled.pods) == len(state.pods)


# --- planning it -------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["milp", "greedy"])
def test_a_plan_relieves_gpu_hot_nodes_without_pushing_a_gpu_node_over_target(
    method: str,
) -> None:
    state, usage, settings = _loaded()
    report = plan.build_plan(state, usage, harness.with_method(settings, method), NOW)
    assert report.status == "planned", report.reason
    gpu_nodes = [n for n in report.nodes if n.pool == gpu_pool.POOL]
    assert len(gpu_nodes) == 2
    relieved = [
        n for n in gpu_nodes if n.before["gpu"] > n.high["gpu"] and n.after["gpu"] <= n.high["gpu"]
    ]
    assert relieved
    for node in gpu_nodes:
        assert node.high["gpu"] == pytest.approx(0.7)
        assert node.after["gpu"] <= node.high["gpu"] + 1e-9, node.name
        assert node.after["cpu"] <= node.high["cpu"]
        assert node.after["memory"] <= node.high["memory"]
    names = {n.name for n in gpu_nodes}
    off_gpu = [e for e in report.evictions if e.node in names]
    assert off_gpu
    for e in off_gpu:
        assert e.expected_node in names
        assert e.named["gpu"] > 0
        assert "gpu" in usage.pods[e.pod].named
    assert all(e.expected_node not in names for e in report.evictions if e.node not in names)
    assert checks.check_plan(report, state, usage, settings, NOW) == []
    view = checks.ClusterView.build(state, usage, settings, NOW)
    outcome = measure.replay_plan(report.evictions, state, usage, view)
    assert outcome.named_hot_before["gpu"] >= 1
    assert outcome.named_hot_left["gpu"] < outcome.named_hot_before["gpu"]
    assert outcome.hot_before_by_pool["gpu"] == outcome.named_hot_before["gpu"]
    assert outcome.evictions_by_pool["gpu"] == len(off_gpu)


def test_the_checker_flags_an_eviction_without_a_gpu_value_off_a_gpu_node() -> None:
    state, usage, settings = _loaded()
    view = checks.ClusterView.build(state, usage, settings, NOW)
    assert view.resources == ("cpu", "memory", "gpu")
    hot = next(
        name for k, name in enumerate(view.names) if view.hot_by("gpu")[k] and view.in_round[k]
    )
    cache = next(p for p in state.pods_by_node[hot] if p.name.startswith("feature-cache"))
    assert "gpu" not in usage.pods[cache.key].named
    evicted = plan.Eviction(
        pod=cache.key, node=hot, expected_node=None, cpu_cores=0.1, memory_bytes=GiB
    )
    report = plan.Plan(status="planned", reason="test", evictions=(evicted,))
    problems = checks.check_plan(report, state, usage, settings, NOW, check_targets=False)
    assert problems == [f"{cache.key}: no gpu value, and {hot} is judged by gpu"]


def test_the_harness_shows_gpu_hot_nodes_per_row(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--sizes", "20", "--capacity", "tight", "--pods-per-node", "12", "--seed", "3"]
    solver = ["--solvers", "greedy", "--scoring", "full"]
    code = harness.main([*argv, *solver, "--in-process", "--no-json"])
    out = capsys.readouterr().out
    assert code == 0
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in out.splitlines()
        if line.startswith("| 20 ")
    ][:2]
    column = harness.COLUMNS.index("gpu hot left")
    family = harness.COLUMNS.index("family")
    by_family = {row[family]: row[column] for row in rows}
    assert by_family["proportional"] == "-"
    left, of, before = by_family[gpu_pool.FAMILY].split()
    assert of == "of"
    assert int(left) < int(before)
    instances = out[out.index("## Instances") :]
    assert "| gpu nodes |" in instances.splitlines()[2]


# --- the baseline ------------------------------------------------------------------------------


def _gpu_node(name: str) -> Any:
    node = make_node(
        name,
        cpu_millicores=32000,
        memory_bytes=128 * GiB,
        labels={"nvidia.com/gpu.present": "true"},
        taints=[Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")],
    )
    return dataclasses.replace(node, allocatable_extended={"nvidia.com/gpu": 4.0})


def _gpu_pod(name: str, node: str) -> Any:
    pod = make_pod(name, node=node, cpu_millicores=2000)
    return dataclasses.replace(
        pod,
        tolerations=(Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule"),),
        node_selector={"nvidia.com/gpu.present": "true"},
    )


def _with_gpu(value: float, cpu: float, memory: float) -> Any:
    return dataclasses.replace(sample(cpu, memory), named={"gpu": value})


def test_the_baseline_judges_gpu_and_moves_gpu_pods_onto_an_idle_gpu_node() -> None:
    settings = harness.family_policy(gpu_pool.FAMILY, OPTIONS)
    nodes = [_gpu_node("gpu-hot"), _gpu_node("gpu-idle"), make_node("cpu-hot"), make_node("cpu")]
    pods = [
        _gpu_pod("cache-1", "gpu-hot"),  # holds no GPU: no gpu value
        _gpu_pod("infer-1", "gpu-hot"),
        _gpu_pod("infer-2", "gpu-hot"),
        _gpu_pod("infer-3", "gpu-hot"),
        make_pod("web-1", node="cpu-hot"),
    ]
    usage = make_usage(
        {
            "gpu-hot": _with_gpu(2.9, 4.0, 30 * GiB),  # 72.5 % of 4 GPUs
            "gpu-idle": _with_gpu(0.2, 1.0, 10 * GiB),
            "cpu-hot": sample(3.6, 4 * GiB),
            "cpu": sample(0.4, 2 * GiB),
        },
        {
            "default/infer-1": _with_gpu(0.95, 1.0, 8 * GiB),
            "default/infer-2": _with_gpu(0.95, 1.0, 8 * GiB),
            "default/infer-3": _with_gpu(1.0, 1.0, 8 * GiB),
            "default/cache-1": sample(0.2, GiB),
            "default/web-1": sample(1.0, GiB),
        },
    )
    state = make_cluster(nodes, pods)
    report = descheduler_baseline.plan_descheduler_order(state, usage, settings, NOW)
    moved = {e.pod.removeprefix("default/"): e for e in report.evictions}
    assert set(moved) == {"infer-1", "web-1"}
    assert moved["infer-1"].expected_node == "gpu-idle"
    assert moved["infer-1"].named == {"gpu": 0.95}
    assert moved["web-1"].expected_node == "cpu"
    assert report.skipped["no-fresh-usage"] == 1  # cache-1, first in order, has no gpu value
    after = {n.name: n.after for n in report.nodes}
    assert after["gpu-hot"]["gpu"] == pytest.approx(1.95 / 4)
    assert after["gpu-idle"]["gpu"] == pytest.approx(1.15 / 4)
    # Without an underutilized GPU node, GPU capacity is used up from the start, yet the
    # cpu pool's hot node is still relieved.
    busy = {**usage.nodes, "gpu-idle": _with_gpu(2.0, 1.0, 10 * GiB)}
    report = descheduler_baseline.plan_descheduler_order(
        state, dataclasses.replace(usage, nodes=busy), settings, NOW
    )
    assert [e.pod for e in report.evictions] == ["default/web-1"]
    notes = {n.name: n.note for n in report.nodes}
    assert notes["gpu-hot"] == "still hot: underutilized nodes' capacity used up"


# --- bench.generate ----------------------------------------------------------------------------


def test_generate_writes_the_gpu_pool_and_its_policy(tmp_path: pathlib.Path) -> None:
    argv = ["--nodes", "30", "--seed", "2", "--now", "2026-11-29T08:00:00Z", "--gpu-pool"]
    assert bench_generate.main([*argv, "--family", gpu_pool.FAMILY, "--out", str(tmp_path)]) == 0
    items = json.loads((tmp_path / "cluster.json").read_text())["items"]
    gpus = {
        o["metadata"]["name"]: o["status"]["allocatable"][gpu_pool.GPU_RESOURCE]
        for o in items
        if o["kind"] == "Node" and gpu_pool.GPU_RESOURCE in o["status"]["allocatable"]
    }
    assert len(gpus) == 2
    usage = metrics.load_metrics_file(tmp_path / "metrics.json")
    assert {n for n, s in usage.nodes.items() if "gpu" in s.named} == set(gpus)
    assert any("gpu" in s.named for s in usage.pods.values())
    settings = policy.load_policy(tmp_path / "policy.yaml")
    assert settings == harness.family_policy(gpu_pool.FAMILY, OPTIONS)
    state = cluster.load_cluster_file(tmp_path / "cluster.json")
    assert {n.name for n in state.nodes} >= set(gpus)
