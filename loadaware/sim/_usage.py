"""What the simulated cluster uses, following the pods: metrics.k8s.io and Prometheus.

Each pod has a usage (cpu cores, memory bytes): from the metrics document the
cluster was loaded with, or inherited — a replacement the ReplicaSet
controller creates takes over the usage of the pod it replaces, since it runs
the same code under the same load — or, for a pod nobody measured, half its
cpu request and 80 % of its memory request. A node uses what its running pods
use plus a fixed system overhead (the node's measured usage minus its pods'
at load). So when a pod moves, its usage moves with it.

Served as metrics-server serves it (NodeMetrics and PodMetrics, sampled a
few seconds before the request; NotReady nodes and pods that are not running
have no metrics, as with a real kubelet) and as Prometheus exposition text
with the cAdvisor and node-exporter names and labels of kube-prometheus-stack:
container_cpu_usage_seconds_total (a counter growing at the pod's usage rate,
split over containers by request) and container_memory_working_set_bytes per
container and per pod cgroup (container=""), node_cpu_seconds_total per cpu
and mode, node_memory_MemTotal_bytes and node_memory_MemAvailable_bytes. A
Prometheus scraping it needs `honor_labels: true` to keep `instance` and `job`.

GPUs, as NVIDIA's device plugin and DCGM exporter show them. A node has as many
GPU devices as its capacity (else allocatable) says `nvidia.com/gpu`. A pod that
requests (or limits) `nvidia.com/gpu` holds that many devices of its node from
the moment it runs there until it stops running (gone, or finished), each
device given to one container, lowest free index first; a pod that finds too
few free devices holds none (the kubelet would refuse it; this one lets it
run). Each pod has a GPU utilisation, the same on every device it holds, 0-100:
from the metrics document (`named.gpu` is GPUs' worth busy, so 1.5 on two GPUs
is 75 each), inherited by a replacement as cpu is, or 50 for a pod nobody
measured. A node's GPU use is its pods': a free device reads 0, and the
document's node values are not used. Exposed as DCGM_FI_DEV_GPU_UTIL gauges
with dcgm-exporter's labels and its Kubernetes pod mapping: one series per
device of every Ready GPU node (`gpu`, `UUID`, `device`, `modelName`,
`Hostname`; `namespace`, `pod` and `container` of the holder, empty on a free
device). `set_gpu_exporter(node, False)` stops one node's exporter: its GPU
series vanish, as when the exporter pod dies, and the node's other series stay.
"""

from __future__ import annotations

import collections
import functools
import math
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from loadaware import cluster
from loadaware.sim import _clock, _dcgm, _exposition, _resources, _store

# metrics-server scrapes every 15 s; a sample is at most this old when served.
SCRAPE_INTERVAL = 15.0
_WINDOW = "15s"
_DEFAULT_CPU_RATIO = 0.5
_DEFAULT_MEMORY_RATIO = 0.8
# node-exporter's split of busy time between modes; the rest is idle.
_BUSY_MODES = (("user", 0.7), ("system", 0.25), ("iowait", 0.05))

GPU_RESOURCE = "nvidia.com/gpu"  # the device plugin's extended resource
DEFAULT_GPU_PERCENT = 50.0


@dataclass(slots=True)
class _Running:
    node: str
    since: float
    cpu: float


class UsageModel:
    def __init__(self, clock: _clock.SimClock) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self.pods: dict[str, tuple[float, float]] = {}  # "ns/name" -> (cores, bytes)
        self.overhead: dict[str, tuple[float, float]] = {}
        self._running: dict[str, _Running] = {}
        # cpu-seconds used on a node by pods that have stopped running there
        self._retired: collections.Counter[str] = collections.Counter()
        # usage (and GPU utilisation) of pods being replaced, waiting for their owner's next pod
        self._released: dict[str, list[tuple[tuple[float, float], float | None]]] = {}
        # "ns/name" -> utilisation of each GPU it holds, 0-100 (pods requesting GPUs)
        self.gpu_percent: dict[str, float] = {}
        self._gpu_devices: dict[str, int] = {}  # node -> GPU devices
        # node -> device index -> (pod key, container) holding it
        self._gpu_holders: dict[str, dict[int, tuple[str, str]]] = {}
        self._gpu_exporters_stopped: set[str] = set()

    # --- set up ---

    def seed(self, store: _store.Store, document: Mapping[str, Any] | None) -> None:
        """Usage from a `--metrics` document for the objects in `store`."""
        document = document or {}
        samples = document.get("pods") or {}
        for key, sample in samples.items():
            self.pods[key] = (float(sample["cpu"]), float(sample["memory"]))
        for node in store.objects(_resources.NODES):
            self._gpu_devices[node["metadata"]["name"]] = gpu_count(node)
        node_pods: dict[str, list[float]] = {}
        pods = store.objects(_resources.PODS)
        for pod in pods:
            key = _pod_key(pod)
            if key not in self.pods:
                self.pods[key] = default_usage(pod)
            held = sum(n for _, n in gpu_requests(pod))
            if held:
                busy = ((samples.get(key) or {}).get("named") or {}).get("gpu")
                self.gpu_percent[key] = (
                    DEFAULT_GPU_PERCENT if busy is None else _percent(100 * float(busy) / held)
                )
            if _is_running(pod):
                node = pod["spec"]["nodeName"]
                since = _clock.parse_time((pod.get("status") or {}).get("startTime"))
                cpu = self.pods[key][0]
                self._running[key] = _Running(node=node, since=since or self.clock.time(), cpu=cpu)
                total = node_pods.setdefault(node, [0.0, 0.0])
                total[0] += cpu
                total[1] += self.pods[key][1]
        measured = document.get("nodes") or {}
        for node in store.objects(_resources.NODES):
            name = node["metadata"]["name"]
            pods_cpu, pods_memory = node_pods.get(name, (0.0, 0.0))
            if name in measured:
                cpu = float(measured[name]["cpu"]) - pods_cpu
                memory = float(measured[name]["memory"]) - pods_memory
            else:
                cpu, memory = 0.1, 512 * 1024**2  # a kubelet and a container runtime
            self.overhead[name] = (max(cpu, 0.0), max(memory, 0.0))
        # Devices go to the pods that started first, as the kubelet admitted them.
        by_start = sorted(
            (p for p in pods if _is_running(p)),
            key=lambda p: (self._running[_pod_key(p)].since, _pod_key(p)),
        )
        for pod in by_start:
            self._hold_gpus(pod)

    def set_pod_usage(
        self,
        key: str,
        cpu_cores: float,
        memory_bytes: float,
        *,
        gpu_percent: float | None = None,
    ) -> None:
        """A pod's usage from now on; `gpu_percent` (0-100) for each GPU it holds, if given."""
        with self._lock:
            self._settle(key)
            self.pods[key] = (cpu_cores, memory_bytes)
            running = self._running.get(key)
            if running is not None:
                running.cpu = cpu_cores
            if gpu_percent is not None:
                self.gpu_percent[key] = _percent(gpu_percent)

    def set_gpu_exporter(self, node: str, running: bool) -> None:
        """Start or stop the DCGM exporter of a node: stopped, its GPU series are not exposed."""
        with self._lock:
            if running:
                self._gpu_exporters_stopped.discard(node)
            else:
                self._gpu_exporters_stopped.add(node)

    def _settle(self, key: str) -> None:
        """Book a running pod's cpu-seconds so far, so a rate change keeps counters monotonic."""
        running = self._running.get(key)
        if running is not None:
            now = self.clock.time()
            self._retired[running.node] += running.cpu * max(0.0, now - running.since)
            self._retired[f"{key}\x00"] += running.cpu * max(0.0, now - running.since)
            running.since = now

    # --- following the pods (a Store listener) ---

    def on_change(self, kind: str, resource: _resources.Resource, old: Any, new: Any) -> None:
        if resource is _resources.NODES:
            with self._lock:
                self._on_node_change(kind, new)
            return
        if resource is not _resources.PODS:
            return
        with self._lock:
            key = _pod_key(new)
            owner = _owner_uid(new)
            if kind == "ADDED" and key not in self.pods:
                queue = self._released.get(owner or "")
                usage, gpu = queue.pop(0) if queue else (default_usage(new), None)
                self.pods[key] = usage
                if gpu_requests(new):
                    self.gpu_percent[key] = DEFAULT_GPU_PERCENT if gpu is None else gpu
            was_deleting = bool(old and old["metadata"].get("deletionTimestamp"))
            deleting = kind == "DELETED" or bool(new["metadata"].get("deletionTimestamp"))
            # StatefulSet pods come back under the same name and keep their entry.
            if (
                owner
                and deleting
                and not was_deleting
                and key in self.pods
                and _owner_kind(new) != "StatefulSet"
            ):
                released = (self.pods[key], self.gpu_percent.get(key))
                self._released.setdefault(owner, []).append(released)
            running = kind != "DELETED" and _is_running(new)
            if running and key not in self._running:
                cpu = self.pods.get(key, (0.0, 0.0))[0]
                self._running[key] = _Running(
                    node=new["spec"]["nodeName"], since=self.clock.time(), cpu=cpu
                )
                self._hold_gpus(new)
            elif not running and key in self._running:
                stopped = self._running.pop(key)
                self._retired[stopped.node] += stopped.cpu * max(
                    0.0, self.clock.time() - stopped.since
                )
                self._retired.pop(f"{key}\x00", None)
                self._release_gpus(key, stopped.node)

    def _on_node_change(self, kind: str, node: Mapping[str, Any]) -> None:
        name = node["metadata"]["name"]
        count = 0 if kind == "DELETED" else gpu_count(node)
        self._gpu_devices[name] = count
        holders = self._gpu_holders.get(name, {})
        for index in [i for i in holders if i >= count]:
            del holders[index]

    def _hold_gpus(self, pod: Mapping[str, Any]) -> None:
        """Give a pod that starts running the free devices it requests, all or none."""
        wanted = gpu_requests(pod)
        if not wanted:
            return
        node = pod["spec"]["nodeName"]
        holders = self._gpu_holders.setdefault(node, {})
        free = [i for i in range(self._gpu_devices.get(node, 0)) if i not in holders]
        if sum(n for _, n in wanted) > len(free):
            return
        key = _pod_key(pod)
        devices = iter(free)
        for container, count in wanted:
            for _ in range(count):
                holders[next(devices)] = (key, container)

    def _release_gpus(self, key: str, node: str) -> None:
        holders = self._gpu_holders.get(node, {})
        for index in [i for i, (holder, _) in holders.items() if holder == key]:
            del holders[index]

    # --- reading ---

    def node_usage(self) -> dict[str, tuple[float, float]]:
        """Node -> (cores, bytes): overhead plus the running pods."""
        with self._lock:
            totals = {name: list(value) for name, value in self.overhead.items()}
            for key, running in self._running.items():
                total = totals.setdefault(running.node, [0.0, 0.0])
                total[0] += running.cpu
                total[1] += self.pods.get(key, (0.0, 0.0))[1]
        return {name: (cpu, memory) for name, (cpu, memory) in totals.items()}

    def running_pods(self) -> dict[str, str]:
        with self._lock:
            return {key: r.node for key, r in self._running.items()}

    def gpu_holders(self) -> dict[str, dict[int, tuple[str, str]]]:
        """Node -> device index -> (pod key, container) of the GPUs held now."""
        with self._lock:
            return {node: dict(held) for node, held in self._gpu_holders.items() if held}

    def sample_time(self) -> float:
        """The time of the newest scrape: the last 15 s boundary."""
        now = self.clock.time()
        return math.floor(now / SCRAPE_INTERVAL) * SCRAPE_INTERVAL

    def node_metrics(self, nodes: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        usage = self.node_usage()
        stamp = _clock.rfc3339(self.sample_time())
        items = []
        for node in nodes:
            name = node["metadata"]["name"]
            if name not in usage or not is_node_ready(node):
                continue
            cpu, memory = usage[name]
            items.append(
                {
                    "metadata": {
                        "name": name,
                        "creationTimestamp": _clock.rfc3339(self.clock.time()),
                        "labels": node["metadata"].get("labels") or {},
                    },
                    "timestamp": stamp,
                    "window": _WINDOW,
                    "usage": {"cpu": _nanocores(cpu), "memory": _kibibytes(memory)},
                }
            )
        return items

    def pod_metrics(
        self, pods: Iterable[Mapping[str, Any]], ready_nodes: set[str]
    ) -> list[dict[str, Any]]:
        stamp = _clock.rfc3339(self.sample_time())
        created = _clock.rfc3339(self.clock.time())
        running = self.running_pods()
        items = []
        for pod in pods:
            key = _pod_key(pod)
            if running.get(key) not in ready_nodes:
                continue
            cpu, memory = self.pods.get(key, (0.0, 0.0))
            containers = [
                {"name": name, "usage": {"cpu": _nanocores(c), "memory": _kibibytes(m)}}
                for name, c, m in split_by_container(pod, cpu, memory)
            ]
            items.append(
                {
                    "metadata": {
                        "name": pod["metadata"]["name"],
                        "namespace": pod["metadata"]["namespace"],
                        "creationTimestamp": created,
                        "labels": pod["metadata"].get("labels") or {},
                    },
                    "timestamp": stamp,
                    "window": _WINDOW,
                    "containers": containers,
                }
            )
        return items

    def exposition(
        self, nodes: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]]
    ) -> str:
        """Prometheus text format 0.0.4 with cAdvisor and node-exporter series."""
        now = self.clock.time()
        nodes = list(nodes)
        node_ip = {n["metadata"]["name"]: _internal_ip(n) for n in nodes}
        ready = {n["metadata"]["name"] for n in nodes if is_node_ready(n)}
        with self._lock:
            running = {k: (r.node, r.since, r.cpu) for k, r in self._running.items()}
            retired = dict(self._retired)
            gpu_lines = _dcgm.gpu_lines(
                nodes,
                ready,
                node_ip,
                devices=self._gpu_devices,
                holders=self._gpu_holders,
                percent=self.gpu_percent,
                default_percent=DEFAULT_GPU_PERCENT,
                stopped=self._gpu_exporters_stopped,
            )
        cpu_lines: list[str] = []
        memory_lines: list[str] = []
        busy_by_node: collections.Counter[str] = collections.Counter()
        for pod in pods:
            key = _pod_key(pod)
            if key not in running:
                continue
            node, since, cpu = running[key]
            if node not in ready:
                continue
            _, memory = self.pods.get(key, (0.0, 0.0))
            seconds = cpu * max(0.0, now - since) + retired.get(f"{key}\x00", 0.0)
            busy_by_node[node] += cpu * max(0.0, now - since)
            meta = pod["metadata"]
            uid = meta.get("uid", "")
            qos = str((pod.get("status") or {}).get("qosClass") or "burstable").lower()
            base = {
                "endpoint": "https-metrics",
                "instance": f"{node_ip.get(node, node)}:10250",
                "job": "kubelet",
                "metrics_path": "/metrics/cadvisor",
                "namespace": meta["namespace"],
                "node": node,
                "pod": meta["name"],
                "service": "kube-prometheus-stack-kubelet",
            }
            pod_cgroup = f"/kubepods.slice/kubepods-{qos}.slice/pod{uid}"
            cpu_lines.append(_exposition.line({**base, "container": "", "id": pod_cgroup}, seconds))
            memory_lines.append(
                _exposition.line({**base, "container": "", "id": pod_cgroup}, memory)
            )
            images = {c.get("name"): c.get("image", "") for c in pod["spec"].get("containers", [])}
            total_cpu = cpu or 1.0
            for name, c_cpu, c_memory in split_by_container(pod, cpu, memory):
                labels = {
                    **base,
                    "container": name,
                    "id": f"{pod_cgroup}/{name}",
                    "image": images.get(name, ""),
                    "name": f"{meta['name']}_{name}",
                }
                cpu_lines.append(
                    _exposition.line({**labels, "cpu": "total"}, seconds * c_cpu / total_cpu)
                )
                memory_lines.append(_exposition.line(labels, c_memory))
        usage = self.node_usage()
        node_cpu_lines: list[str] = []
        total_lines: list[str] = []
        available_lines: list[str] = []
        for node in nodes:
            name = node["metadata"]["name"]
            if name not in ready:
                continue
            cores = max(1, int(cluster.to_millicores(_capacity(node, "cpu", "1")) // 1000))
            booted = _clock.parse_time(node["metadata"].get("creationTimestamp")) or now
            overhead_cpu, _ = self.overhead.get(name, (0.0, 0.0))
            busy = overhead_cpu * max(0.0, now - booted) + retired.get(name, 0.0)
            busy += busy_by_node.get(name, 0.0)
            up = max(0.0, now - booted)
            base = {
                "container": "node-exporter",
                "endpoint": "http-metrics",
                "instance": name,
                "job": "node-exporter",
                "namespace": "monitoring",
                "node": name,
                "service": "kube-prometheus-stack-prometheus-node-exporter",
            }
            for cpu_index in range(cores):
                share = busy / cores
                for mode, fraction in _BUSY_MODES:
                    node_cpu_lines.append(
                        _exposition.line(
                            {**base, "cpu": str(cpu_index), "mode": mode}, share * fraction
                        )
                    )
                idle = max(0.0, up - share)
                node_cpu_lines.append(
                    _exposition.line({**base, "cpu": str(cpu_index), "mode": "idle"}, idle)
                )
            memory_total = float(cluster.to_bytes(_capacity(node, "memory", "0")))
            used = usage.get(name, (0.0, 0.0))[1]
            total_lines.append(_exposition.line(base, memory_total))
            available_lines.append(_exposition.line(base, max(0.0, memory_total - used)))
        out = _families(cpu_lines, memory_lines, node_cpu_lines, total_lines, available_lines)
        if gpu_lines:
            # Only where a DCGM exporter runs: a cluster without GPUs has no such family.
            metric = "DCGM_FI_DEV_GPU_UTIL"
            out.append(f"# HELP {metric} GPU utilization (in %).\n# TYPE {metric} gauge\n")
            out.extend(f"{metric}{line}\n" for line in gpu_lines)
        return "".join(out)


def _families(
    cpu_lines: list[str],
    memory_lines: list[str],
    node_cpu_lines: list[str],
    total_lines: list[str],
    available_lines: list[str],
) -> list[str]:
    """The cAdvisor and node-exporter families: HELP, TYPE and the series of each."""
    out = []
    for metric, kind, help_text, lines in (
        (
            "container_cpu_usage_seconds_total",
            "counter",
            "Cumulative cpu time consumed in seconds.",
            cpu_lines,
        ),
        (
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set in bytes.",
            memory_lines,
        ),
        (
            "node_cpu_seconds_total",
            "counter",
            "Seconds the CPUs spent in each mode.",
            node_cpu_lines,
        ),
        (
            "node_memory_MemTotal_bytes",
            "gauge",
            "Memory information field MemTotal_bytes.",
            total_lines,
        ),
        (
            "node_memory_MemAvailable_bytes",
            "gauge",
            "Memory information field MemAvailable_bytes.",
            available_lines,
        ),
    ):
        out.append(f"# HELP {metric} {help_text}\n# TYPE {metric} {kind}\n")
        out.extend(f"{metric}{line}\n" for line in lines)
    return out


def default_usage(pod: Mapping[str, Any]) -> tuple[float, float]:
    cpu_m = memory = 0
    for container in (pod.get("spec") or {}).get("containers") or []:
        requests = (container.get("resources") or {}).get("requests") or {}
        cpu_m += cluster.to_millicores(requests.get("cpu", 0))
        memory += cluster.to_bytes(requests.get("memory", 0))
    return cpu_m / 1000 * _DEFAULT_CPU_RATIO, memory * _DEFAULT_MEMORY_RATIO


def gpu_requests(pod: Mapping[str, Any]) -> list[tuple[str, int]]:
    """(container, GPUs) of the pod's containers that request `nvidia.com/gpu`; a limit
    alone is the request, as the API server defaults it for extended resources."""
    found = []
    for container in (pod.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        amount = (resources.get("requests") or {}).get(GPU_RESOURCE)
        if amount is None:
            amount = (resources.get("limits") or {}).get(GPU_RESOURCE)
        count = _count(amount)
        if count > 0:
            found.append((str(container.get("name", "")), count))
    return found


def gpu_count(node: Mapping[str, Any]) -> int:
    """The node's GPU devices: its capacity of `nvidia.com/gpu`, else its allocatable."""
    status = node.get("status") or {}
    for part in ("capacity", "allocatable"):
        amount = (status.get(part) or {}).get(GPU_RESOURCE)
        if amount is not None:
            return _count(amount)
    return 0


def split_by_container(
    pod: Mapping[str, Any], cpu: float, memory: float
) -> list[tuple[str, float, float]]:
    """A pod's usage shared over its containers in proportion to their requests."""
    containers = (pod.get("spec") or {}).get("containers") or []
    if not containers:
        return []
    if len(containers) == 1:
        # The whole of it, without parsing requests: a PodMetrics list of 150,000
        # pods spent most of its time there.
        return [(str(containers[0].get("name", "")), cpu, memory)]
    cpu_requests, memory_requests = [], []
    for container in containers:
        requests = (container.get("resources") or {}).get("requests") or {}
        cpu_requests.append(_millicores(requests.get("cpu", 0)))
        memory_requests.append(_bytes(requests.get("memory", 0)))
    cpu_total, memory_total = sum(cpu_requests), sum(memory_requests)
    count = len(containers)
    return [
        (
            str(container.get("name", "")),
            cpu * (cpu_requests[i] / cpu_total if cpu_total else 1 / count),
            memory * (memory_requests[i] / memory_total if memory_total else 1 / count),
        )
        for i, container in enumerate(containers)
    ]


@functools.lru_cache(maxsize=4096)
def _millicores(amount: str | int | float) -> int:
    # Requests repeat across a cluster's pods: each text is parsed once.
    return cluster.to_millicores(amount)


@functools.lru_cache(maxsize=4096)
def _bytes(amount: str | int | float) -> int:
    return cluster.to_bytes(amount)


def is_node_ready(node: Mapping[str, Any]) -> bool:
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def _is_running(pod: Mapping[str, Any]) -> bool:
    return bool(
        (pod.get("spec") or {}).get("nodeName")
        and (pod.get("status") or {}).get("phase") == "Running"
    )


def _pod_key(pod: Mapping[str, Any]) -> str:
    meta = pod["metadata"]
    return f"{meta.get('namespace')}/{meta['name']}"


def _controller_ref(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    refs = pod["metadata"].get("ownerReferences") or []
    return next((r for r in refs if r.get("controller")), refs[0] if refs else None)


def _owner_uid(pod: Mapping[str, Any]) -> str | None:
    ref = _controller_ref(pod)
    return None if ref is None else ref.get("uid")


def _owner_kind(pod: Mapping[str, Any]) -> str | None:
    ref = _controller_ref(pod)
    return None if ref is None else ref.get("kind")


def _internal_ip(node: Mapping[str, Any]) -> str:
    for address in (node.get("status") or {}).get("addresses") or []:
        if address.get("type") == "InternalIP":
            return str(address.get("address"))
    return str(node["metadata"]["name"])


def _capacity(node: Mapping[str, Any], name: str, default: str) -> Any:
    status = node.get("status") or {}
    return (status.get("capacity") or status.get("allocatable") or {}).get(name, default)


def _count(amount: Any) -> int:
    if amount is None:
        return 0
    try:
        return max(0, int(cluster.parse_quantity(amount)))
    except ValueError:
        return 0


def _percent(value: float) -> float:
    return min(100.0, max(0.0, value))


def _nanocores(cores: float) -> str:
    return f"{max(0, round(cores * 1e9))}n"


def _kibibytes(size: float) -> str:
    return f"{max(0, round(size / 1024))}Ki"
