"""Resources named by PromQL (metrics.prometheus.resources), read from a real
Prometheus backfilled with DCGM exporter series, as the example policy
policy/gpu.yaml reads them.

Covers: node and pod values and capacity from the queries, folded into the
samples with the older sample time; a GPU node judged by its GPU utilisation
is hot and relieved by moving the pod that uses the GPU, never onto a node
whose GPU would then be over its target; a pod with no GPU series on a GPU
node is not a candidate; a stale GPU series refuses the round as a stale cpu
series does (or excludes the node), naming the resource; a node of a GPU pool
without any GPU value is stale, not idle; nodes of pools that do not judge it
need no GPU series; the capacity from a node's allocatable resource.
"""

from __future__ import annotations

import dataclasses
import datetime
import io
import pathlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from bench import prometheus as lib
from bench.prometheus import Family, GiB, NodeTruth, PodTruth
from loadaware import metrics, plan, policy
from loadaware.errors import RefusedError
from tests.lib.builders import make_cluster, make_node, make_pod

ROOT = pathlib.Path(__file__).resolve().parents[2]
STEP = 15.0
GPUS = 4  # per GPU node


@dataclass(frozen=True)
class GpuTruth:
    node: str
    index: int
    utilisation: float  # DCGM_FI_DEV_GPU_UTIL, 0-100
    pod: tuple[str, str] | None = None  # (namespace, pod) holding the GPU
    end: float | None = None


def _gpus(now: float) -> list[GpuTruth]:
    found = []
    # gpu-hot: three of four GPUs at 95% for two training pods: 0.7125 of capacity.
    found += [GpuTruth("gpu-hot", i, 95, ("ml", "train-a")) for i in (0, 1)]
    found += [GpuTruth("gpu-hot", 2, 95, ("ml", "train-b")), GpuTruth("gpu-hot", 3, 0)]
    # gpu-cool: one GPU at 20%.
    found += [GpuTruth("gpu-cool", 0, 20, ("ml", "infer-a"))] + [
        GpuTruth("gpu-cool", i, 0) for i in range(1, GPUS)
    ]
    # gpu-busy: already at 60% on average: 2 more busy GPUs would take it over 70%.
    found += [GpuTruth("gpu-busy", i, 60, ("ml", f"batch-{i}")) for i in range(GPUS)]
    # gpu-stale: its DCGM exporter stopped 10 minutes ago.
    found += [GpuTruth("gpu-stale", i, 10, end=now - 600) for i in range(GPUS)]
    return found


def _families(now: float, start: float, end: float) -> list[Family]:
    gpu_nodes = ["gpu-hot", "gpu-cool", "gpu-busy", "gpu-stale", "gpu-dark"]
    nodes = [NodeTruth(name, cpu_cores=2.0, memory_used_bytes=8 * GiB) for name in gpu_nodes]
    nodes.append(NodeTruth("cpu-1", cpu_cores=1.0, memory_used_bytes=4 * GiB))
    pods = [
        PodTruth("ml", "train-a", "gpu-hot", {"trainer": (0.5, 2 * GiB)}),
        PodTruth("ml", "train-b", "gpu-hot", {"trainer": (0.5, 2 * GiB)}),
        PodTruth("ml", "sidecar-1", "gpu-hot", {"log": (0.05, 64 * 1024**2)}),
        PodTruth("ml", "infer-a", "gpu-cool", {"server": (0.3, GiB)}),
        PodTruth("web", "api-1", "cpu-1", {"app": (0.2, GiB)}),
        *(PodTruth("ml", f"batch-{i}", "gpu-busy", {"job": (0.2, GiB)}) for i in range(GPUS)),
    ]
    families = lib.kube_prometheus_history(nodes, pods, start=start, end=end, step=STEP)
    utilisation = Family("DCGM_FI_DEV_GPU_UTIL", "gauge")
    for gpu in _gpus(now):
        labels = {
            "Hostname": gpu.node,
            "gpu": str(gpu.index),
            "UUID": f"GPU-{gpu.node}-{gpu.index}",
            "modelName": "NVIDIA A100-SXM4-40GB",
            "job": "dcgm-exporter",
        }
        if gpu.pod is not None:
            labels |= {"namespace": gpu.pod[0], "pod": gpu.pod[1], "container": "main"}
        last = end if gpu.end is None else gpu.end
        moments = [start + k * STEP for k in range(int((last - start) // STEP) + 1)]
        utilisation.add(labels, ((t, gpu.utilisation) for t in moments))
    return [*families, utilisation]


@dataclass(frozen=True)
class GpuPrometheus:
    url: str
    now: datetime.datetime


@pytest.fixture(scope="module")
def gpu_prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GpuPrometheus]:
    if not lib.tools_available():
        pytest.fail("prometheus and promtool are needed: run `make system-deps`")
    workdir = tmp_path_factory.mktemp("gpu-prometheus")
    now = float(int(time.time()))
    text = io.StringIO()
    lib.write_openmetrics(_families(now, now - 3600, now + 600), text)
    (workdir / "history.om").write_text(text.getvalue())
    lib.backfill(workdir / "history.om", workdir / "tsdb")
    with lib.PrometheusServer(workdir / "tsdb", workdir) as server:
        yield GpuPrometheus(server.url, datetime.datetime.fromtimestamp(now, datetime.UTC))


# The example policy's alternative: the GPUs DCGM reports per node.
CAPACITY_QUERY = "count by (Hostname) (DCGM_FI_DEV_GPU_UTIL)"


def _policy(
    url: str, *, capacity: str = CAPACITY_QUERY, **metrics_settings: Any
) -> policy.LoadAwarePolicy:
    """policy/gpu.yaml, pointed at this Prometheus."""
    document = yaml.safe_load((ROOT / "policy" / "gpu.yaml").read_text())
    document["metrics"]["prometheus"]["url"] = url
    document["metrics"]["prometheus"]["resources"]["gpu"]["capacity"] = capacity
    document["metrics"]["prometheus"].pop("tokenFile", None)
    document["metrics"]["prometheus"].pop("caFile", None)
    document["metrics"].update(metrics_settings)
    document["metrics"]["hotspotConfirmation"] = {"consecutive": 1}
    return policy.parse_policy(document)


def _cluster(nodes: list[str]):
    gpu = {"nvidia.com/gpu.present": "true"}
    built = [
        make_node(name, cpu_millicores=16000, memory_bytes=64 * GiB, labels=gpu)
        for name in nodes
        if name.startswith("gpu-")
    ]
    built += [make_node(name) for name in nodes if not name.startswith("gpu-")]
    placement = {
        "train-a": "gpu-hot",
        "train-b": "gpu-hot",
        "sidecar-1": "gpu-hot",
        "infer-a": "gpu-cool",
        **{f"batch-{i}": "gpu-busy" for i in range(GPUS)},
    }
    pods = [
        make_pod(name, node=node, namespace="ml", labels={"app": name})
        for name, node in placement.items()
        if node in nodes
    ]
    if "cpu-1" in nodes:
        pods.append(make_pod("api-1", node="cpu-1", namespace="web"))
    return make_cluster(built, pods)


def _read(prom: GpuPrometheus, settings: policy.LoadAwarePolicy, cluster) -> metrics.Usage:
    provider = metrics.PrometheusProvider(settings.metrics)
    scopes = plan.node_scopes(cluster, settings.node_pools)
    keys = [key for scope in scopes.values() for key in scope.pod_keys]
    return provider.fetch_usage(list(scopes), keys, now=prom.now)


def test_values_and_capacity_from_the_queries(gpu_prometheus: GpuPrometheus) -> None:
    settings = _policy(gpu_prometheus.url)
    cluster = _cluster(["gpu-hot", "gpu-cool", "cpu-1"])
    usage = _read(gpu_prometheus, settings, cluster)
    assert usage.nodes["gpu-hot"].named == {"gpu": pytest.approx(2.85)}
    assert usage.nodes["gpu-cool"].named == {"gpu": pytest.approx(0.2)}
    assert "gpu" not in usage.nodes["cpu-1"].named
    assert usage.pods["ml/train-a"].named == {"gpu": pytest.approx(1.9)}
    assert usage.pods["ml/train-b"].named == {"gpu": pytest.approx(0.95)}
    assert "gpu" not in usage.pods["ml/sidecar-1"].named
    # The capacity query counts the GPUs DCGM reports.
    assert usage.capacity["gpu-hot"] == {"gpu": GPUS}
    # Sample times are the raw samples', not the query's evaluation time.
    assert usage.nodes["gpu-hot"].timestamp <= gpu_prometheus.now


@pytest.mark.parametrize("method", ["greedy", "milp"])
def test_a_gpu_hot_node_is_relieved_by_moving_the_gpu_pod(
    gpu_prometheus: GpuPrometheus, method: str
) -> None:
    document = {"optimizer": {"method": method}}
    settings = _policy(gpu_prometheus.url).model_copy(
        update={"optimizer": policy.parse_policy(document).optimizer}
    )
    # No cpu-only node: the scheduler model does not know extended requests, so
    # it could not tell that a GPU pod cannot land there.
    cluster = _cluster(["gpu-hot", "gpu-cool", "gpu-busy"])
    usage = _read(gpu_prometheus, settings, cluster)
    planned = plan.build_plan(cluster, usage, settings, gpu_prometheus.now)
    assert planned.status == "planned", planned.reason
    nodes = {n.name: n for n in planned.nodes}
    assert nodes["gpu-hot"].node_class == "hot"
    assert nodes["gpu-hot"].before["gpu"] == pytest.approx(0.7125)
    assert nodes["gpu-hot"].after["gpu"] <= 0.7
    # The GPU pods leave; the sidecar (no GPU series) is not a candidate.
    moved = {e.pod for e in planned.evictions}
    assert moved <= {"ml/train-a", "ml/train-b"}
    assert moved
    for eviction in planned.evictions:
        # gpu-busy would go over its GPU target.
        assert eviction.expected_node == "gpu-cool"
    for name, node in nodes.items():
        if "gpu" in node.high:
            assert node.after["gpu"] <= node.high["gpu"], name
    assert plan.plan_to_json(planned)["nodes"][0]["targetThresholds"]["gpu"] == 0.7


def test_a_stale_gpu_series_refuses_the_round(gpu_prometheus: GpuPrometheus) -> None:
    settings = _policy(gpu_prometheus.url)
    cluster = _cluster(["gpu-hot", "gpu-stale", "cpu-1"])
    usage = _read(gpu_prometheus, settings, cluster)
    planned = plan.build_plan(cluster, usage, settings, gpu_prometheus.now)
    assert planned.status == "refused"
    assert planned.reason.startswith("stale-metrics: node gpu-stale no gpu value"), planned.reason


def test_a_stale_gpu_series_excludes_the_node_under_exclude(gpu_prometheus: GpuPrometheus) -> None:
    settings = _policy(gpu_prometheus.url, onStaleNode="Exclude", maxExcludedFraction=0.5)
    cluster = _cluster(["gpu-hot", "gpu-cool", "gpu-stale", "cpu-1"])
    usage = _read(gpu_prometheus, settings, cluster)
    planned = plan.build_plan(cluster, usage, settings, gpu_prometheus.now)
    nodes = {n.name: n for n in planned.nodes}
    assert nodes["gpu-stale"].node_class == "excluded"
    assert "gpu" in nodes["gpu-stale"].note
    assert all(e.expected_node != "gpu-stale" for e in planned.evictions)


def test_a_gpu_node_without_any_gpu_value_is_stale_not_idle(gpu_prometheus: GpuPrometheus) -> None:
    settings = _policy(gpu_prometheus.url)
    cluster = _cluster(["gpu-hot", "gpu-dark"])
    usage = _read(gpu_prometheus, settings, cluster)
    with pytest.raises(RefusedError) as caught:
        metrics.assess_usage(
            usage,
            plan.node_scopes(cluster, settings.node_pools),
            settings.metrics,
            gpu_prometheus.now,
        )
    assert caught.value.reference == "stale-metrics"
    assert "gpu-dark" in str(caught.value)
    assert "metrics.prometheus.resources.gpu" in str(caught.value)


def test_capacity_from_a_node_allocatable_resource(gpu_prometheus: GpuPrometheus) -> None:
    settings = _policy(gpu_prometheus.url, capacity="nvidia.com/gpu")  # as policy/gpu.yaml
    cluster = _cluster(["gpu-hot", "gpu-cool"])
    cluster = make_cluster(
        [
            dataclasses.replace(n, allocatable_extended={"nvidia.com/gpu": 8.0})
            for n in cluster.nodes
        ],
        cluster.pods,
    )
    usage = _read(gpu_prometheus, settings, cluster)
    assert usage.capacity == {}
    table = plan.classify_nodes(
        cluster, usage, settings.node_pools, {}, allocatable_names=plan.allocatable_names(settings)
    )
    column = table.resources.index("gpu")
    assert table.allocatable[table.index["gpu-hot"], column] == 8.0
    assert table.utilisation()[table.index["gpu-hot"], column] == pytest.approx(2.85 / 8)
    # Without the allocatable resource, a node of the GPU pool has no capacity to
    # judge it by: excluded, with the reason.
    bare = make_cluster(_cluster(["gpu-hot"]).nodes, ())
    table = plan.classify_nodes(
        bare, usage, settings.node_pools, {}, allocatable_names=plan.allocatable_names(settings)
    )
    assert table.classes == ("excluded",)
    assert table.notes[0].startswith("no capacity for gpu")
