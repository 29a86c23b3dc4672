"""GPUs in the simulated cluster: the "gpu" scenario and DCGM exporter series at /metrics.

Covered: the scenario's GPU nodes carry GPU feature discovery's label, the
`nvidia.com/gpu` taint and 4 GPUs in capacity and allocatable; its GPU pods
request and limit one GPU, tolerate the taint and select GPU nodes; GPU requests
fit each node's GPUs; one GPU node is hot by GPU use alone and another has free
GPUs, little use and the fewest requests, so that replacements are predicted
there and policy/gpu.yaml plans the move there. DCGM_FI_DEV_GPU_UTIL: one series
per device of every Ready GPU node with dcgm-exporter's labels, the holding
pod's namespace, pod and container on a held device (its utilisation from the
metrics document), empty labels and 0 on a free one, none for CPU-only nodes
or NotReady ones, and per-node sums equal to the document's; the series
accepted by Prometheus' parser and promtool; a replacement holding a GPU on its
new node with the utilisation of the pod it replaces, the old device freed once
the pod is gone; the admin API setting a pod's GPU utilisation; a pod finding
too few free devices holding none; a node's GPU exporter stopped (Python and
admin API) and started again.
"""

from __future__ import annotations

import collections
import pathlib
import re
import shutil
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from loadaware import cluster, metrics, plan, policy, runtime, scheduling, sim
from loadaware.sim import scenarios
from tests.lib.objects import raw_pod
from tests.lib.sim import NOW, call, eviction, sim_server

ROOT = pathlib.Path(__file__).resolve().parents[2]
GPU = "nvidia.com/gpu"
METRIC = "DCGM_FI_DEV_GPU_UTIL"


@pytest.fixture(scope="module")
def scenario() -> scenarios.Scenario:
    return scenarios.builtin_scenario("gpu", now=NOW)


@pytest.fixture
def server() -> Iterator[sim.SimServer]:
    with sim_server("gpu") as running:
        yield running


def _of_kind(sc: scenarios.Scenario, kind: str) -> list[dict[str, Any]]:
    return [o for o in sc.objects if o["kind"] == kind]


def _key(obj: dict[str, Any]) -> str:
    return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"


def _gpu_requests(pod: dict[str, Any]) -> int:
    return sum(
        int(c.get("resources", {}).get("requests", {}).get(GPU, 0))
        for c in pod["spec"]["containers"]
    )


def _gpu_nodes(sc: scenarios.Scenario) -> dict[str, dict[str, Any]]:
    return {
        n["metadata"]["name"]: n
        for n in _of_kind(sc, "Node")
        if n["metadata"]["labels"].get("nvidia.com/gpu.present") == "true"
    }


def _roles(sc: scenarios.Scenario) -> tuple[str, str]:
    """The GPU node busiest by GPU use and the least busy one."""
    busy = {name: sc.metrics["nodes"][name]["named"]["gpu"] for name in _gpu_nodes(sc)}
    ordered = sorted(busy, key=busy.__getitem__)
    return ordered[-1], ordered[0]


def _gpu_policy() -> policy.LoadAwarePolicy:
    """policy/gpu.yaml; planning offline never dials its Prometheus."""
    document = yaml.safe_load((ROOT / "policy" / "gpu.yaml").read_text())
    document["metrics"]["prometheus"].pop("tokenFile", None)
    document["metrics"]["prometheus"].pop("caFile", None)
    return policy.parse_policy(document)


def _series(text: str) -> list[tuple[dict[str, str], float]]:
    from prometheus_client.parser import text_string_to_metric_families

    found = []
    for family in text_string_to_metric_families(text):
        if family.name == METRIC:
            assert family.type == "gauge"
            found += [(dict(s.labels), s.value) for s in family.samples]
    return found


def _by_device(text: str) -> dict[tuple[str, str], tuple[dict[str, str], float]]:
    return {(labels["Hostname"], labels["gpu"]): (labels, v) for labels, v in _series(text)}


# --- the scenario -------------------------------------------------------------------------------


def test_gpu_nodes_are_labelled_tainted_and_have_four_gpus(scenario: scenarios.Scenario) -> None:
    nodes = _gpu_nodes(scenario)
    assert len(nodes) == 3
    assert len(_of_kind(scenario, "Node")) - len(nodes) == 3
    for node in nodes.values():
        assert node["status"]["allocatable"][GPU] == "4"
        assert node["status"]["capacity"][GPU] == "4"
        assert {"key": GPU, "value": "present", "effect": "NoSchedule"} in node["spec"]["taints"]
    for node in _of_kind(scenario, "Node"):
        if node["metadata"]["name"] not in nodes:
            assert GPU not in node["status"]["allocatable"]
            assert not node["spec"].get("taints")


def test_gpu_pods_request_one_gpu_tolerate_the_taint_and_select_gpu_nodes(
    scenario: scenarios.Scenario,
) -> None:
    nodes = _gpu_nodes(scenario)
    held: collections.Counter[str] = collections.Counter()
    gpu_pods = [p for p in _of_kind(scenario, "Pod") if _gpu_requests(p)]
    assert len(gpu_pods) == 8
    for pod in gpu_pods:
        [container] = pod["spec"]["containers"]
        assert container["resources"]["requests"][GPU] == "1"
        assert container["resources"]["limits"][GPU] == "1"
        assert pod["spec"]["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
        assert any(t.get("key") == GPU for t in pod["spec"]["tolerations"])
        assert pod["spec"]["nodeName"] in nodes
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
        assert scenario.metrics["pods"][_key(pod)]["named"]["gpu"] > 0
        held[pod["spec"]["nodeName"]] += _gpu_requests(pod)
    assert all(count <= 4 for count in held.values()), held
    for pod in _of_kind(scenario, "Pod"):
        if not _gpu_requests(pod):
            assert "named" not in scenario.metrics["pods"][_key(pod)]
            if pod["spec"]["nodeName"] in nodes:  # only node agents, which tolerate all
                assert pod["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"


def test_one_gpu_node_is_hot_by_gpu_alone_and_another_has_free_gpus(
    scenario: scenarios.Scenario,
) -> None:
    state = cluster.cluster_state_from_objects(scenario.objects)
    hot, idle = _roles(scenario)
    documented = scenario.metrics["nodes"]
    usage = {}
    for node in state.nodes:
        sample = documented[node.name]
        usage[node.name] = (
            sample["cpu"] * 1000 / node.allocatable_cpu_millicores,
            sample["memory"] / node.allocatable_memory_bytes,
            sample.get("named", {}).get("gpu", 0.0) / 4,
        )
        pods = scenario.metrics["pods"]
        gpu_sum = sum(
            pods[p.key].get("named", {}).get("gpu", 0.0) for p in state.pods_by_node[node.name]
        )
        assert gpu_sum == pytest.approx(sample.get("named", {}).get("gpu", 0.0))
    assert usage[hot][2] > 0.85
    # Calm but for its GPUs: under the GPU pool's cold thresholds on cpu and memory.
    assert usage[hot][0] < 0.5
    assert usage[hot][1] < 0.6
    assert usage[idle][2] < 0.05
    held: collections.Counter[str] = collections.Counter()
    for pod in _of_kind(scenario, "Pod"):
        held[pod["spec"]["nodeName"]] += _gpu_requests(pod)
    assert held[hot] == 4
    assert held[idle] == 1
    assert all(cpu < 0.7 and memory < 0.8 for cpu, memory, _ in usage.values())
    requested = {
        name: sum(p.cpu_request_millicores for p in state.pods_by_node[name])
        for name in _gpu_nodes(scenario)
    }
    assert min(requested, key=requested.__getitem__) == idle


def test_replacements_are_predicted_on_the_gpu_node_with_free_gpus(
    scenario: scenarios.Scenario,
) -> None:
    state = cluster.cluster_state_from_objects(scenario.objects)
    hot, idle = _roles(scenario)
    occupancy = scheduling.Occupancy.from_cluster(state)
    moved = [p for p in state.pods_by_node[hot] if not p.is_daemonset_pod]
    assert len(moved) == 4
    for pod in moved:
        assert scheduling.predict_replacement(pod, occupancy, occupancy.node_names) == (idle,), (
            pod.key
        )


def test_the_gpu_policy_moves_gpu_pods_off_the_hot_node_onto_the_idle_one(
    scenario: scenarios.Scenario,
) -> None:
    state = cluster.cluster_state_from_objects(scenario.objects)
    usage = metrics.usage_from_json(scenario.metrics)
    hot, idle = _roles(scenario)
    planned = plan.build_plan(state, usage, _gpu_policy(), NOW)
    assert planned.status == "planned", planned.reason
    classes = {n.name: n.node_class for n in planned.nodes}
    assert [name for name, c in classes.items() if c == "hot"] == [hot]
    assert planned.evictions
    for e in planned.evictions:
        assert e.node == hot
        assert e.expected_node == idle
        assert e.named["gpu"] > 0.85
    after = {n.name: n.after for n in planned.nodes}
    assert after[hot]["gpu"] <= 0.7
    assert after[idle]["gpu"] <= 0.7


def test_simulate_moves_the_gpu_use_with_the_replacements(
    scenario: scenarios.Scenario,
) -> None:
    state = cluster.cluster_state_from_objects(scenario.objects)
    usage = metrics.usage_from_json(scenario.metrics)
    hot, idle = _roles(scenario)
    result = runtime.simulate_round(state, usage, _gpu_policy(), NOW)
    before = {n.name: n.before["gpu"] for n in result.plan.nodes if "gpu" in n.before}
    moved = sum(e.named["gpu"] for e in result.plan.evictions)
    capacity = 4.0
    assert result.hot_before == 1
    assert result.hot_after == 0
    assert result.observed[hot]["gpu"] == pytest.approx(before[hot] - moved / capacity, abs=1e-3)
    assert result.observed[idle]["gpu"] == pytest.approx(before[idle] + moved / capacity, abs=1e-3)
    # A GPU node the plan does not touch keeps its GPU use.
    for name, value in before.items():
        if name not in (hot, idle):
            assert result.observed[name]["gpu"] == pytest.approx(value, abs=1e-3)


# --- DCGM_FI_DEV_GPU_UTIL -------------------------------------------------------------------------


def test_one_series_per_gpu_with_the_holding_pod(
    server: sim.SimServer, scenario: scenarios.Scenario
) -> None:
    code, text = call(server, "GET", "/metrics")
    assert code == 200
    assert f"# TYPE {METRIC} gauge" in text
    devices = _by_device(text)
    nodes = _gpu_nodes(scenario)
    assert set(devices) == {(name, str(i)) for name in nodes for i in range(4)}
    uuids = {labels["UUID"] for labels, _ in devices.values()}
    assert len(uuids) == 12
    assert all(u.startswith("GPU-") for u in uuids)
    pods = {_key(p): p for p in _of_kind(scenario, "Pod")}
    held: collections.Counter[str] = collections.Counter()
    for (node, index), (labels, value) in devices.items():
        assert labels["device"] == f"nvidia{index}"
        assert labels["modelName"] == "NVIDIA A10G"
        if labels.get("pod"):
            key = f"{labels['namespace']}/{labels['pod']}"
            pod = pods[key]
            assert pod["spec"]["nodeName"] == node
            assert labels["container"] == pod["spec"]["containers"][0]["name"]
            assert value == pytest.approx(100 * scenario.metrics["pods"][key]["named"]["gpu"])
            held[key] += 1
        else:
            assert not labels.get("namespace")
            assert not labels.get("container")
            assert value == 0.0
    assert held == {key: 1 for key, pod in pods.items() if _gpu_requests(pod)}
    # The policy's node query, done by hand: the document's node values.
    per_node: collections.Counter[str] = collections.Counter()
    for labels, value in _series(text):
        per_node[labels["Hostname"]] += value / 100
    for name in nodes:
        assert per_node[name] == pytest.approx(scenario.metrics["nodes"][name]["named"]["gpu"])


def test_clusters_without_gpus_expose_no_gpu_series() -> None:
    with sim_server("small") as server:
        assert METRIC not in server.exposition()


def test_a_not_ready_gpu_node_has_no_gpu_series(
    server: sim.SimServer, scenario: scenarios.Scenario
) -> None:
    hot, _ = _roles(scenario)
    server.set_node_ready(hot, False)
    assert {node for node, _ in _by_device(server.exposition())} == set(_gpu_nodes(scenario)) - {
        hot
    }


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_promtool_accepts_the_gpu_exposition(server: sim.SimServer) -> None:
    result = subprocess.run(
        ["promtool", "check", "metrics"],
        input=server.exposition(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # promtool exits 3 for lint warnings only (names, help texts), 1 for parse errors.
    assert result.returncode in (0, 3), result.stderr
    assert "error" not in result.stderr.lower()


def test_the_gpu_utilisation_moves_with_the_replacement(
    server: sim.SimServer, scenario: scenarios.Scenario
) -> None:
    hot, idle = _roles(scenario)
    devices = _by_device(server.exposition())
    [(victim_labels, percent)] = [
        (labels, value)
        for (node, index), (labels, value) in devices.items()
        if node == hot and index == "0"
    ]
    name = victim_labels["pod"]
    assert percent > 85
    known = {p["metadata"]["uid"] for p in server.sim.list("pods", "ml")}
    path = f"/api/v1/namespaces/ml/pods/{name}/eviction"
    assert call(server, "POST", path, eviction("ml", name))[0] == 201
    replacement = server.wait_for(
        lambda: [
            p
            for p in server.sim.list("pods", "ml")
            if p["metadata"]["uid"] not in known and p["status"].get("phase") == "Running"
        ]
    )[0]
    assert replacement["spec"]["nodeName"] == idle
    new_name = replacement["metadata"]["name"]
    landed = [
        (labels, value)
        for (node, _), (labels, value) in _by_device(server.exposition()).items()
        if labels.get("pod") == new_name
    ]
    assert [(labels["Hostname"], value) for labels, value in landed] == [(idle, percent)]
    # Terminating, the evicted pod still holds its GPU.
    assert _by_device(server.exposition())[(hot, "0")][0].get("pod") == name
    server.advance(31)
    server.wait_for(lambda: server.sim.find("pods", "ml", name) is None)
    labels, value = _by_device(server.exposition())[(hot, "0")]
    assert not labels.get("pod")
    assert value == 0.0


def test_the_admin_api_sets_a_pods_gpu_utilisation(
    server: sim.SimServer, scenario: scenarios.Scenario
) -> None:
    _, idle = _roles(scenario)
    [(labels, value)] = [
        (labels, value)
        for (node, _), (labels, value) in _by_device(server.exposition()).items()
        if node == idle and labels.get("pod")
    ]
    assert value == pytest.approx(10.0)
    body = {"cpu": 1.0, "memory": 2**30, "gpu": 64}
    code, _ = call(server, "PUT", f"/_sim/usage/{labels['namespace']}/{labels['pod']}", body)
    assert code == 200
    after = {
        labels["pod"]: value for labels, value in _series(server.exposition()) if labels.get("pod")
    }
    assert after[labels["pod"]] == 64.0


def test_a_pod_finding_too_few_free_gpus_holds_none(
    server: sim.SimServer, scenario: scenarios.Scenario
) -> None:
    _, idle = _roles(scenario)
    pod = raw_pod(
        "trainer",
        namespace="ml",
        node=idle,
        tolerations=[{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}],
        container="trainer",
        image="registry.example.com/ml/trainer:1.0.0",
        limits={GPU: "4"},
    )
    assert call(server, "POST", "/api/v1/namespaces/ml/pods", pod)[0] == 201
    server.wait_for(
        lambda: server.sim.get("pods", "ml", "trainer")["status"].get("phase") == "Running"
    )
    holders = server.sim.usage.gpu_holders()[idle]
    assert "ml/trainer" not in {key for key, _ in holders.values()}
    assert len(holders) == 1


def test_a_stopped_gpu_exporter_takes_that_nodes_series_away(
    server: sim.SimServer, scenario: scenarios.Scenario
) -> None:
    hot, idle = _roles(scenario)
    before = _by_device(server.exposition())
    server.set_gpu_exporter(hot, False)
    after = _by_device(server.exposition())
    assert {node for node, _ in after} == set(_gpu_nodes(scenario)) - {hot}
    assert after == {device: seen for device, seen in before.items() if device[0] != hot}
    # cpu and memory series of the node stay: only its GPU exporter stopped.
    assert re.search(
        rf'node_memory_MemAvailable_bytes{{[^}}]*instance="{hot}"', server.exposition()
    )
    code, body = call(server, "POST", f"/_sim/nodes/{idle}/gpu-exporter", {"running": False})
    assert (code, body) == (200, {"node": idle, "running": False})
    assert {node for node, _ in _by_device(server.exposition())} == set(_gpu_nodes(scenario)) - {
        hot,
        idle,
    }
    server.set_gpu_exporter(hot, True)
    call(server, "POST", f"/_sim/nodes/{idle}/gpu-exporter", {"running": True})
    assert _by_device(server.exposition()) == before


def test_the_gpu_scenario_is_registered() -> None:
    assert "gpu" in sim.SCENARIO_NAMES
    served = sim.build_cluster(scenario="gpu", now=NOW)
    assert len(served.list("nodes")) == 6
