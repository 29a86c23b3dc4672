"""The GPU pool of the bench's usage-independent family, and the policy that judges it.

`add_gpu_pool` appends GPU nodes to a generated cluster (`loadaware.sim.generate_cluster`):
about 5 % of its node count, at least 2. They carry what NVIDIA's GPU feature
discovery and device plugin put on a node -- the label `nvidia.com/gpu.present:
"true"` (with `nvidia.com/gpu.product` and `.count`), 4 or 8 GPUs in
`status.allocatable["nvidia.com/gpu"]` -- and the taint
`nvidia.com/gpu=present:NoSchedule`, so that only pods tolerating it land there.

What runs on them:

- GPU workloads (inference Deployments in namespace `ml`): pods that request and
  limit `nvidia.com/gpu` (1, or 2 for `llm-inference-70b`), tolerate the taint and
  select GPU nodes -- by `nodeSelector`, or by a required node affinity on the
  label (`vision-inference`) or on the product (`llm-inference-70b` needs an A100).
  Each pod's usage carries `named: {"gpu": ...}`: GPUs' worth busy, between 0 and
  the GPUs it holds (DCGM's utilisation summed per pod, over 100).
- `feature-cache`, a CPU-only Deployment that tolerates the taint and selects GPU
  nodes: no GPU, so no gpu value, so never a candidate on a node judged by gpu.
- The cluster's DaemonSets (their pods tolerate every taint) and the GPU
  operator's two, which select GPU nodes: the device plugin and dcgm-exporter.

About 30 % of the GPU nodes (at least one) are hot by GPU utilisation alone:
every GPU held, each 74-99 % busy, so the node is above the 70 % gpu target
while its cpu and memory stay calm (GPU pods use little cpu: about 20 % and
65 % of allocatable at most). About 25 % (at least one) are cold: at most a
quarter of their GPUs held, the node at most 15 % busy. The rest hold half to
three quarters of their GPUs, the node at most 64 % busy. A node's gpu
value is the sum of its pods'; cpu and memory too, plus a system overhead, as
in the generator.

Every other object and metric of the cluster is left as it was (the DaemonSets'
status counts the new nodes): the GPU pool is drawn from its own random stream,
seeded by the seed, so the rest of the instance is the one the family had
without it, and the whole is deterministic for a (scenario, seed, now).

`policy_document` is the policy the harness plans this family with: a `gpu`
resource as policy/gpu.yaml defines it (capacity from the node allocatable
`nvidia.com/gpu`), under a Prometheus source whose URL is never dialled (the
bench plans offline), a first pool `gpu` for the GPU nodes and the default
pool for every other node.

`with_allocatable_gpus` copies `status.allocatable["nvidia.com/gpu"]` from the
raw nodes onto the converted ones where the cluster reader has not read it.
"""

from __future__ import annotations

import dataclasses
import datetime
import gc
import math
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from loadaware import cluster
from loadaware.sim import Scenario, _images
from loadaware.sim.scenarios import (
    cpu_quantity,
    memory_quantity,
    node_conditions,
    node_object,
    owner_reference,
    pinned_to,
)

FAMILY: Final = "usage-independent"  # the family of the bench that has the pool
POOL: Final = "gpu"
RESOURCE: Final = "gpu"  # the named resource (metrics.prometheus.resources.gpu)
GPU_RESOURCE: Final = "nvidia.com/gpu"  # the device plugin's extended resource
PRESENT_LABEL: Final = "nvidia.com/gpu.present"
PRODUCT_LABEL: Final = "nvidia.com/gpu.product"
COUNT_LABEL: Final = "nvidia.com/gpu.count"
TAINT: Final = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
THRESHOLDS: Final = {"cpu": 50, "memory": 60, "gpu": 30}
TARGET_THRESHOLDS: Final = {"cpu": 85, "memory": 90, "gpu": 70}
# Never dialled: the bench plans offline, but named resources need a Prometheus source.
PROMETHEUS_URL: Final = "http://prometheus.invalid:9090"

GPU_SHARE: Final = 0.05  # of the cluster's node count
MIN_GPU_NODES: Final = 2
HOT_SHARE: Final = 0.3  # of the GPU nodes
COLD_SHARE: Final = 0.25

GiB: Final = 1024**3
MiB: Final = 1024**2
_SEED_SALT: Final = 0x6770  # "gp": the pool's own random stream, apart from the generator's
_REGION: Final = "region-1"
_SAFE_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"


@dataclass(frozen=True, slots=True, kw_only=True)
class _GpuType:
    name: str
    cores: int
    memory_gib: int
    gpus: int
    product: str


_SMALL: Final = _GpuType(
    name="gpu-32x128-4g", cores=32, memory_gib=128, gpus=4, product="NVIDIA-A10G"
)
_LARGE: Final = _GpuType(
    name="gpu-64x512-8g", cores=64, memory_gib=512, gpus=8, product="NVIDIA-A100-SXM4-80GB"
)
_LARGE_SHARE: Final = 0.4  # of the GPU nodes, once there are 5 or more


@dataclass(frozen=True, slots=True, kw_only=True)
class _GpuWorkload:
    name: str
    gpus: int  # per pod
    cpu_m: int  # request per pod
    memory_gib: int
    weight: float  # share of the 1-GPU pods
    select: str = "nodeSelector"  # nodeSelector | affinity (on the label) | product
    pdb: tuple[str, int | str] | None = None


_WORKLOADS: Final = (
    _GpuWorkload(
        name="llm-inference",
        gpus=1,
        cpu_m=4000,
        memory_gib=24,
        weight=0.4,
        pdb=("maxUnavailable", "25%"),
    ),
    _GpuWorkload(name="embedding-server", gpus=1, cpu_m=3000, memory_gib=16, weight=0.25),
    _GpuWorkload(
        name="vision-inference", gpus=1, cpu_m=4000, memory_gib=16, weight=0.2, select="affinity"
    ),
    _GpuWorkload(name="reranker", gpus=1, cpu_m=3000, memory_gib=12, weight=0.15),
    _GpuWorkload(
        name="llm-inference-70b", gpus=2, cpu_m=8000, memory_gib=48, weight=0.0, select="product"
    ),
)
_70B: Final = _WORKLOADS[-1]
_ONE_GPU: Final = _WORKLOADS[:-1]


def gpu_node_count(nodes: int) -> int:
    """GPU nodes added to a cluster of `nodes` nodes."""
    return max(MIN_GPU_NODES, round(GPU_SHARE * nodes))


def policy_document() -> dict[str, Any]:
    """The policy fields the harness plans the family with (see the module docstring)."""
    return {
        "metrics": {
            "prometheus": {
                "url": PROMETHEUS_URL,
                "resources": {
                    RESOURCE: {
                        "nodeLabel": "Hostname",
                        "node": "sum by (Hostname) (DCGM_FI_DEV_GPU_UTIL) / 100",
                        "pod": 'sum by (namespace, pod) (DCGM_FI_DEV_GPU_UTIL{pod!=""}) / 100',
                        "nodeTimestamp": "min by (Hostname) (timestamp(DCGM_FI_DEV_GPU_UTIL))",
                        "podTimestamp": (
                            'min by (namespace, pod) (timestamp(DCGM_FI_DEV_GPU_UTIL{pod!=""}))'
                        ),
                        "capacity": GPU_RESOURCE,
                    }
                },
            }
        },
        "nodePools": [
            {
                "name": POOL,
                "nodeSelector": {PRESENT_LABEL: "true"},
                "thresholds": dict(THRESHOLDS),
                "targetThresholds": dict(TARGET_THRESHOLDS),
            },
            {"name": "default"},  # every other node, at the policy's default thresholds
        ],
    }


def with_allocatable_gpus(
    state: cluster.ClusterState, objects: Iterable[dict[str, Any]]
) -> cluster.ClusterState:
    """The state with each GPU node's `nvidia.com/gpu` in allocatable_extended, taken from
    the raw Node objects where the reader left it out; the state itself when nothing lacks."""
    gpus: dict[str, float] = {}
    for raw in objects:
        if raw.get("kind") != "Node":
            continue
        count = raw.get("status", {}).get("allocatable", {}).get(GPU_RESOURCE)
        if count is not None:
            gpus[raw["metadata"]["name"]] = float(count)
    if not any(n.name in gpus and GPU_RESOURCE not in n.allocatable_extended for n in state.nodes):
        return state
    nodes = tuple(
        dataclasses.replace(
            n, allocatable_extended={**n.allocatable_extended, GPU_RESOURCE: gpus[n.name]}
        )
        if n.name in gpus and GPU_RESOURCE not in n.allocatable_extended
        else n
        for n in state.nodes
    )
    return dataclasses.replace(state, nodes=nodes)


def add_gpu_pool(scenario: Scenario, *, seed: int, now: datetime.datetime) -> Scenario:
    """The scenario with a GPU pool appended (see the module docstring)."""
    # Thousands of small acyclic dicts next to the cluster's millions: the cycle
    # collector would only rescan the cluster (as the generator, it is paused).
    collecting = gc.isenabled()
    gc.disable()
    try:
        base_nodes = [o for o in scenario.objects if o.get("kind") == "Node"]
        count = gpu_node_count(len(base_nodes))
        builder = _Builder(scenario, base_nodes, count, seed=seed, now=now)
        objects, metrics = builder.build()
    finally:
        if collecting:
            gc.enable()
    return Scenario(
        name=scenario.name,
        description=f"{scenario.description}, a pool of {count} GPU nodes",
        objects=objects,
        metrics=metrics,
    )


# --- the builder -------------------------------------------------------------------------------


def _stamp(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _default_tolerations() -> list[dict[str, Any]]:
    return [
        {
            "key": f"node.kubernetes.io/{key}",
            "operator": "Exists",
            "effect": "NoExecute",
            "tolerationSeconds": 300,
        }
        for key in ("not-ready", "unreachable")
    ]


def _gpu_toleration() -> dict[str, Any]:
    return {"key": TAINT["key"], "operator": "Exists", "effect": TAINT["effect"]}


def _required_label(key: str, values: Sequence[str]) -> dict[str, Any]:
    expression = {"key": key, "operator": "In", "values": list(values)}
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [expression]}]
            }
        }
    }


@dataclass(slots=True, kw_only=True)
class _PodPlan:
    """One pod to write: where it runs, what it holds and what it uses."""

    node: int  # index among the GPU nodes
    gpus: int = 0
    cpu: float = 0.0  # cores used
    memory: float = 0.0  # bytes used
    gpu: float | None = None  # GPUs' worth busy; None: no gpu series (holds no GPU)


class _Builder:
    def __init__(
        self,
        scenario: Scenario,
        base_nodes: list[dict[str, Any]],
        count: int,
        *,
        seed: int,
        now: datetime.datetime,
    ) -> None:
        self.scenario = scenario
        self.base_count = len(base_nodes)
        self.count = count
        self.now = now.astimezone(datetime.UTC).replace(microsecond=0)
        self.rng = np.random.default_rng([seed, _SEED_SALT])
        versions = [int(o["metadata"].get("resourceVersion") or 0) for o in scenario.objects]
        self.version = max(versions, default=0)
        zones = sorted(
            {
                o["metadata"]["labels"]["topology.kubernetes.io/zone"]
                for o in base_nodes
                if "topology.kubernetes.io/zone" in o["metadata"].get("labels", {})
            }
        ) or [f"{_REGION}a"]
        self.zones = zones
        self.width = max(3, len(str(self.base_count)))
        self.used_names = {
            o["metadata"]["name"] for o in scenario.objects if o.get("kind") == "Pod"
        }

    # -- small draws --

    def uid(self) -> str:
        return str(uuid.UUID(bytes=self.rng.bytes(16), version=4))

    def next_rv(self) -> str:
        self.version += 1
        return str(self.version)

    def suffix(self, length: int) -> str:
        picks = self.rng.integers(0, len(_SAFE_ALPHABET), size=length).tolist()
        return "".join(_SAFE_ALPHABET[k] for k in picks)

    def pod_name(self, generate_name: str) -> str:
        while True:
            name = generate_name + self.suffix(5)
            if name not in self.used_names:
                self.used_names.add(name)
                return name

    def ago(self, low_seconds: float, high_seconds: float) -> datetime.datetime:
        return self.now - datetime.timedelta(
            seconds=int(self.rng.uniform(low_seconds, high_seconds))
        )

    # -- the whole --

    def build(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        self.draw_nodes()
        self.draw_pods()
        node_objects = [self.node_object(i) for i in range(self.count)]
        stamps = [
            _stamp(self.now - datetime.timedelta(seconds=float(age)))
            for age in self.rng.uniform(10, 40, size=self.count)
        ]
        self.pod_metrics: dict[str, dict[str, Any]] = {}
        self.load = np.zeros((self.count, 3))  # what each node's pods use: cpu, memory, gpu
        self.ip_next = [2] * self.count
        controllers: list[dict[str, Any]] = []
        pdbs: list[dict[str, Any]] = []
        pods: list[dict[str, Any]] = []

        # The cluster's DaemonSets run on the new nodes too; their status counts them.
        replaced: dict[int, dict[str, Any]] = {}
        templates = self.daemon_pod_templates()
        for position, raw in enumerate(self.scenario.objects):
            if raw.get("kind") == "DaemonSet" and raw["metadata"]["name"] in templates:
                replaced[position] = self.counted_daemon_set(raw, self.count)
                template, usage = templates[raw["metadata"]["name"]]
                for i in range(self.count):
                    pods.append(self.cloned_daemon_pod(template, usage, i, stamps[i]))

        for spec in self.gpu_daemon_sets():
            controllers.append(self.daemon_set_object(spec))
            for i in range(self.count):
                pods.append(self.daemon_pod(spec, i, stamps[i]))

        for workload, plans in self.workload_pods():
            made, budget = self.deployment_objects(workload, plans, stamps)
            controllers.extend(made[:2])
            pods.extend(made[2:])
            if budget is not None:
                pdbs.append(budget)

        # Each node reports the images of the pods placed on it, as the generator's do.
        pulled = {name: {_images.PAUSE_IMAGE} for name in self.names}
        for pod in pods:
            pulled[pod["spec"]["nodeName"]].update(c["image"] for c in pod["spec"]["containers"])
        for node in node_objects:
            node["status"]["images"] = _images.status_images(pulled[node["metadata"]["name"]])

        base = [replaced.get(k, raw) for k, raw in enumerate(self.scenario.objects)]
        last_node = max((k for k, raw in enumerate(base) if raw.get("kind") == "Node"), default=-1)
        objects = [
            *base[: last_node + 1],
            *node_objects,
            *base[last_node + 1 :],
            *controllers,
            *pdbs,
            *pods,
        ]
        metrics = dict(self.scenario.metrics)
        metrics["nodes"] = {**self.scenario.metrics["nodes"], **self.node_metrics(stamps)}
        metrics["pods"] = {**self.scenario.metrics["pods"], **self.pod_metrics}
        return objects, metrics

    # -- nodes --

    def draw_nodes(self) -> None:
        rng, n = self.rng, self.count
        large = round(_LARGE_SHARE * n) if n >= 5 else 0
        kinds = np.zeros(n, dtype=bool)
        kinds[rng.permutation(n)[:large]] = True
        self.types = [_LARGE if k else _SMALL for k in kinds.tolist()]
        hot = max(1, round(HOT_SHARE * n))
        cold = max(1, min(round(COLD_SHARE * n), n - hot))
        order = rng.permutation(n)
        self.classes = ["normal"] * n
        for i in order[:hot].tolist():
            self.classes[i] = "hot"
        for i in order[hot : hot + cold].tolist():
            self.classes[i] = "cold"
        counters: dict[int, int] = {}
        self.names: list[str] = []
        self.zone_of: list[int] = []
        for i in range(n):
            z = i % len(self.zones)
            counters[z] = counters.get(z, 0) + 1
            letter = self.zones[z][-1]
            self.names.append(f"{POOL}-{letter}-{counters[z]:0{self.width}d}")
            self.zone_of.append(z)
        cores = np.array([t.cores for t in self.types])
        reserved = 80 + 2.5 * (cores - 4)  # as the generator's kube-reserved, past 4 cores
        self.alloc_cpu_m = (cores * 1000 - np.rint(reserved)).astype(np.int64)
        nominal_ki = np.array([t.memory_gib for t in self.types]) * 1024 * 1024
        self.capacity_memory_ki = (nominal_ki * 0.985).astype(np.int64) - rng.integers(
            0, 4096, size=n
        )
        self.alloc_memory_ki = (
            self.capacity_memory_ki - (self.capacity_memory_ki * 0.04).astype(np.int64) - 100 * 1024
        )
        self.node_age = rng.uniform(10 * 86400, 120 * 86400, size=n)
        self.overhead_cpu = rng.uniform(0.1, 0.3, size=n)
        self.overhead_memory = rng.uniform(0.8, 1.6, size=n) * GiB

    def node_ip(self, i: int) -> str:
        j = self.base_count + i + 10
        return f"172.{16 + (j >> 16)}.{(j >> 8) & 255}.{j & 255}"

    def node_object(self, i: int) -> dict[str, Any]:
        t = self.types[i]
        name = self.names[i]
        zone = self.zones[self.zone_of[i]]
        index = self.base_count + i
        created = _stamp(self.now - datetime.timedelta(seconds=float(self.node_age[i])))
        heartbeat = _stamp(self.ago(2, 30))
        cidr = f"10.{index >> 8}.{index & 255}.0/24"
        return node_object(
            name=name,
            uid=self.uid(),
            resource_version=self.next_rv(),
            created=created,
            instance_type=t.name,
            zone=zone,
            pool=POOL,
            labels={PRESENT_LABEL: "true", PRODUCT_LABEL: t.product, COUNT_LABEL: str(t.gpus)},
            spec={
                "podCIDR": cidr,
                "podCIDRs": [cidr],
                "providerID": f"sim://{zone}/{name}",
                "taints": [dict(TAINT)],
            },
            capacity={
                "cpu": str(t.cores),
                "ephemeral-storage": "203070420Ki",
                "memory": f"{int(self.capacity_memory_ki[i])}Ki",
                GPU_RESOURCE: str(t.gpus),
                "pods": "110",
            },
            allocatable={
                "cpu": cpu_quantity(int(self.alloc_cpu_m[i])),
                "ephemeral-storage": "187149940897",
                "memory": f"{int(self.alloc_memory_ki[i])}Ki",
                GPU_RESOURCE: str(t.gpus),
                "pods": "110",
            },
            conditions=node_conditions(heartbeat, created, ready=True),
            ip=self.node_ip(i),
        )

    def node_metrics(self, stamps: list[str]) -> dict[str, dict[str, Any]]:
        cpu = self.load[:, 0] + self.overhead_cpu
        memory = self.load[:, 1] + self.overhead_memory
        gpu = self.load[:, 2]
        return {
            self.names[i]: {
                "cpu": round(float(cpu[i]), 3),
                "memory": int(round(memory[i] / 4096) * 4096),
                "timestamp": stamps[i],
                "named": {RESOURCE: round(float(gpu[i]), 4)},
            }
            for i in range(self.count)
        }

    # -- what runs where --

    def draw_pods(self) -> None:
        """The GPU pods of each node: how many GPUs they hold and how busy those are."""
        rng = self.rng
        self.gpu_pods: dict[str, list[_PodPlan]] = {w.name: [] for w in _WORKLOADS}
        self.cache_nodes: list[int] = []
        weights = np.array([w.weight for w in _ONE_GPU])
        weights = weights / weights.sum()
        for i, (t, label) in enumerate(zip(self.types, self.classes, strict=True)):
            g = t.gpus
            if label == "hot":
                held = g
                busy = (0.74, 0.99)
            elif label == "normal":
                held = int(rng.integers(math.ceil(g / 2), math.ceil(3 * g / 4) + 1))
                busy = (0.3, 0.85)
            else:
                held = int(rng.integers(0, g // 4 + 1))
                busy = (0.1, 0.6)
            left = held
            if t is _LARGE:
                while left >= 2 and rng.random() < (0.5 if left == held else 0.3):
                    self.gpu_pods[_70B.name].append(self.gpu_pod(i, _70B, busy, label))
                    left -= 2
            picks = rng.choice(len(_ONE_GPU), size=left, p=weights).tolist()
            for k in picks:
                self.gpu_pods[_ONE_GPU[k].name].append(self.gpu_pod(i, _ONE_GPU[k], busy, label))
            # A CPU-only cache next to the GPU pods of hot nodes and of every third other node.
            if label == "hot" or i % 3 == 0:
                self.cache_nodes.append(i)

    def gpu_pod(self, i: int, w: _GpuWorkload, busy: tuple[float, float], label: str) -> _PodPlan:
        rng = self.rng
        per_gpu = rng.uniform(*busy, size=w.gpus)
        if label == "normal" and rng.random() < 0.1:
            per_gpu = rng.uniform(0.0, 0.05, size=w.gpus)  # a warm standby replica
        cpu = min(w.gpus * float(rng.uniform(0.3, 1.5)), 2 * w.cpu_m / 1000)
        memory = w.memory_gib * GiB * float(rng.uniform(0.45, 0.8))
        return _PodPlan(
            node=i,
            gpus=w.gpus,
            cpu=round(cpu, 3),
            memory=float(round(memory / 4096) * 4096),
            gpu=round(float(per_gpu.sum()), 4),
        )

    def workload_pods(self) -> list[tuple[_GpuWorkload | None, list[_PodPlan]]]:
        """(workload, its pods) for the GPU workloads and (None, ...) for feature-cache."""
        out: list[tuple[_GpuWorkload | None, list[_PodPlan]]] = [
            (w, self.gpu_pods[w.name]) for w in _WORKLOADS if self.gpu_pods[w.name]
        ]
        rng = self.rng
        cache = [
            _PodPlan(
                node=i,
                cpu=round(float(rng.uniform(0.1, 0.3)), 3),
                memory=float(round(float(rng.uniform(1.0, 1.8)) * GiB / 4096) * 4096),
            )
            for i in self.cache_nodes
        ]
        out.append((None, cache))
        return out

    # -- DaemonSets --

    def daemon_pod_templates(self) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
        """Per DaemonSet of the cluster whose pods tolerate every taint: one of its pods and
        that pod's metrics."""
        out: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
        metrics = self.scenario.metrics["pods"]
        for raw in self.scenario.objects:
            if raw.get("kind") != "Pod":
                continue
            owners = raw["metadata"].get("ownerReferences") or ()
            if not owners or owners[0]["kind"] != "DaemonSet" or owners[0]["name"] in out:
                continue
            tolerations = raw["spec"].get("tolerations") or ()
            if not any(t.get("operator") == "Exists" and not t.get("key") for t in tolerations):
                continue
            key = f"{raw['metadata']['namespace']}/{raw['metadata']['name']}"
            if key in metrics:
                out[owners[0]["name"]] = (raw, metrics[key])
        return out

    def counted_daemon_set(self, raw: dict[str, Any], more: int) -> dict[str, Any]:
        status = dict(raw["status"])
        for field in (
            "currentNumberScheduled",
            "desiredNumberScheduled",
            "numberReady",
            "numberAvailable",
            "updatedNumberScheduled",
        ):
            if field in status:
                status[field] += more
        return {**raw, "status": status}

    def cloned_daemon_pod(
        self, template: dict[str, Any], usage: dict[str, Any], i: int, stamp: str
    ) -> dict[str, Any]:
        meta = template["metadata"]
        spec = {
            **template["spec"],
            "nodeName": self.names[i],
            "affinity": pinned_to(self.names[i]),
        }
        created = self.ago(3600, min(20 * 86400, float(self.node_age[i]) - 60))
        pod = self.pod_object(
            namespace=meta["namespace"],
            name=self.pod_name(meta["generateName"]),
            labels=dict(meta["labels"]),
            owner=meta["ownerReferences"][0],
            generate_name=meta["generateName"],
            spec=spec,
            node=i,
            created=created,
            qos=template["status"].get("qosClass", "Burstable"),
        )
        noise = self.rng.lognormal(0.0, 0.2, size=2)
        sample = {
            "cpu": round(max(0.001, usage["cpu"] * float(noise[0])), 3),
            "memory": int(max(256, round(usage["memory"] * float(noise[1]) / 4096)) * 4096),
            "timestamp": stamp,
        }
        self.record(pod, i, sample)
        return pod

    def record(self, pod: dict[str, Any], i: int, sample: dict[str, Any]) -> None:
        """The pod's sample in the metrics, and its usage on its node's."""
        meta = pod["metadata"]
        self.pod_metrics[f"{meta['namespace']}/{meta['name']}"] = sample
        self.load[i] += (
            sample["cpu"],
            sample["memory"],
            sample.get("named", {}).get(RESOURCE, 0.0),
        )

    def gpu_daemon_sets(self) -> list[dict[str, Any]]:
        """The GPU operator's device plugin and DCGM exporter, on GPU nodes only."""
        return [
            {
                "name": "nvidia-device-plugin-daemonset",
                "image": "nvcr.io/nvidia/k8s-device-plugin:v0.16.2",
                "cpu_m": 50,
                "memory": 64 * MiB,
                "use": ((0.002, 0.01), (20 * MiB, 40 * MiB)),
                "paths": (("device-plugin", "/var/lib/kubelet/device-plugins"),),
            },
            {
                "name": "nvidia-dcgm-exporter",
                "image": "nvcr.io/nvidia/k8s/dcgm-exporter:3.3.7-3.5.0-ubuntu22.04",
                "cpu_m": 100,
                "memory": 512 * MiB,
                "use": ((0.02, 0.08), (200 * MiB, 400 * MiB)),
                "paths": (("pod-resources", "/var/lib/kubelet/pod-resources"),),
            },
        ]

    def daemon_template_spec(self, spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "containers": [
                {
                    "name": spec["name"].removeprefix("nvidia-"),
                    "image": spec["image"],
                    "imagePullPolicy": "IfNotPresent",
                    "resources": {
                        "requests": {
                            "cpu": cpu_quantity(spec["cpu_m"]),
                            "memory": memory_quantity(spec["memory"]),
                        },
                        "limits": {"memory": memory_quantity(2 * spec["memory"])},
                    },
                    "volumeMounts": [
                        {"name": v, "mountPath": p, "readOnly": True} for v, p in spec["paths"]
                    ],
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }
            ],
            "volumes": [{"name": v, "hostPath": {"path": p, "type": ""}} for v, p in spec["paths"]],
            "nodeSelector": {PRESENT_LABEL: "true"},
            "tolerations": [_gpu_toleration()],
            "priorityClassName": "system-node-critical",
            "dnsPolicy": "ClusterFirst",
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccountName": spec["name"],
            "terminationGracePeriodSeconds": 30,
        }

    def daemon_set_object(self, spec: dict[str, Any]) -> dict[str, Any]:
        created = _stamp(self.ago(20 * 86400, 30 * 86400))
        labels = {"app.kubernetes.io/name": spec["name"], "team": "platform"}
        spec["uid"] = self.uid()
        spec["hash"] = self.suffix(9)
        return {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {
                "name": spec["name"],
                "namespace": "gpu-operator",
                "uid": spec["uid"],
                "resourceVersion": self.next_rv(),
                "generation": 1,
                "creationTimestamp": created,
                "labels": dict(labels),
            },
            "spec": {
                "selector": {"matchLabels": {"app.kubernetes.io/name": spec["name"]}},
                "template": {
                    "metadata": {"labels": dict(labels)},
                    "spec": self.daemon_template_spec(spec),
                },
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
                },
                "revisionHistoryLimit": 10,
            },
            "status": {
                "observedGeneration": 1,
                "currentNumberScheduled": self.count,
                "desiredNumberScheduled": self.count,
                "numberMisscheduled": 0,
                "numberReady": self.count,
                "numberAvailable": self.count,
                "updatedNumberScheduled": self.count,
            },
        }

    def daemon_pod(self, spec: dict[str, Any], i: int, stamp: str) -> dict[str, Any]:
        template = self.daemon_template_spec(spec)
        template["tolerations"] = [
            _gpu_toleration(),
            *_default_tolerations(),
            *(
                {"key": f"node.kubernetes.io/{key}", "operator": "Exists", "effect": "NoSchedule"}
                for key in ("disk-pressure", "memory-pressure", "pid-pressure", "unschedulable")
            ),
        ]
        pod_spec = {
            **template,
            "nodeName": self.names[i],
            "priority": 2000001000,
            "preemptionPolicy": "PreemptLowerPriority",
            "enableServiceLinks": True,
            "affinity": pinned_to(self.names[i]),
        }
        generate_name = f"{spec['name']}-"
        created = self.ago(3600, min(20 * 86400, float(self.node_age[i]) - 60))
        pod = self.pod_object(
            namespace="gpu-operator",
            name=self.pod_name(generate_name),
            labels={
                "app.kubernetes.io/name": spec["name"],
                "team": "platform",
                "controller-revision-hash": spec["hash"],
                "pod-template-generation": "1",
            },
            owner=owner_reference("DaemonSet", spec["name"], spec["uid"]),
            generate_name=generate_name,
            spec=pod_spec,
            node=i,
            created=created,
            qos="Burstable",
        )
        (cpu_low, cpu_high), (memory_low, memory_high) = spec["use"]
        sample = {
            "cpu": round(float(self.rng.uniform(cpu_low, cpu_high)), 3),
            "memory": int(round(float(self.rng.uniform(memory_low, memory_high)) / 4096) * 4096),
            "timestamp": stamp,
        }
        self.record(pod, i, sample)
        return pod

    # -- Deployments --

    def gpu_template_spec(self, w: _GpuWorkload | None) -> dict[str, Any]:
        if w is None:  # feature-cache: no GPU
            name, image = "feature-cache", "registry.example.com/ml/feature-cache:2.4.1"
            requests = {"cpu": "500m", "memory": "2Gi"}
            limits = {"cpu": "1", "memory": "3Gi"}
        else:
            name, image = w.name, f"registry.example.com/ml/{w.name}:1.{w.gpus}.{len(w.name) % 7}"
            requests = {
                "cpu": cpu_quantity(w.cpu_m),
                "memory": memory_quantity(w.memory_gib * GiB),
                GPU_RESOURCE: str(w.gpus),
            }
            limits = {
                "cpu": cpu_quantity(2 * w.cpu_m),
                "memory": memory_quantity(w.memory_gib * GiB * 3 // 2),
                GPU_RESOURCE: str(w.gpus),
            }
        spec: dict[str, Any] = {
            "containers": [
                {
                    "name": name,
                    "image": image,
                    "imagePullPolicy": "IfNotPresent",
                    "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                    "resources": {"requests": requests, "limits": limits},
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }
            ],
            "tolerations": [_gpu_toleration()],
            "dnsPolicy": "ClusterFirst",
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30,
        }
        select = "nodeSelector" if w is None else w.select
        if select == "nodeSelector":
            spec["nodeSelector"] = {PRESENT_LABEL: "true"}
        elif select == "affinity":
            spec["affinity"] = _required_label(PRESENT_LABEL, ["true"])
        else:
            spec["affinity"] = _required_label(PRODUCT_LABEL, [_LARGE.product])
        return spec

    def deployment_objects(
        self, w: _GpuWorkload | None, plans: list[_PodPlan], stamps: list[str]
    ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """[Deployment, ReplicaSet, pods...] and the PodDisruptionBudget, if any."""
        name = "feature-cache" if w is None else w.name
        replicas = len(plans)
        template_hash = self.suffix(10)
        labels = {"app.kubernetes.io/name": name, "team": "ml"}
        template = self.gpu_template_spec(w)
        created_at = self.ago(30 * 86400, 40 * 86400)
        created = _stamp(created_at)
        deployment_uid, rs_uid = self.uid(), self.uid()
        rs_name = f"{name}-{template_hash}"
        rs_labels = {**labels, "pod-template-hash": template_hash}
        available = {
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
        }
        deployment = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": name,
                "namespace": "ml",
                "uid": deployment_uid,
                "resourceVersion": self.next_rv(),
                "generation": 1,
                "creationTimestamp": created,
                "labels": dict(labels),
                "annotations": {"deployment.kubernetes.io/revision": "1"},
            },
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
                "template": {"metadata": {"labels": dict(labels)}, "spec": template},
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                },
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
            },
            "status": {"observedGeneration": 1, **available},
        }
        replica_set = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": rs_name,
                "namespace": "ml",
                "uid": rs_uid,
                "resourceVersion": self.next_rv(),
                "generation": 1,
                "creationTimestamp": created,
                "labels": dict(rs_labels),
                "annotations": {
                    "deployment.kubernetes.io/desired-replicas": str(replicas),
                    "deployment.kubernetes.io/max-replicas": str(
                        replicas + math.ceil(replicas / 4)
                    ),
                    "deployment.kubernetes.io/revision": "1",
                },
                "ownerReferences": [owner_reference("Deployment", name, deployment_uid)],
            },
            "spec": {
                "replicas": replicas,
                "selector": {
                    "matchLabels": {
                        "app.kubernetes.io/name": name,
                        "pod-template-hash": template_hash,
                    }
                },
                "template": {"metadata": {"labels": dict(rs_labels)}, "spec": template},
            },
            "status": {
                "replicas": replicas,
                "fullyLabeledReplicas": replicas,
                "readyReplicas": replicas,
                "availableReplicas": replicas,
                "observedGeneration": 1,
            },
        }
        owner = owner_reference("ReplicaSet", rs_name, rs_uid)
        pods = []
        for p in plans:
            oldest = min((self.now - created_at).total_seconds(), float(self.node_age[p.node]))
            pod = self.pod_object(
                namespace="ml",
                name=self.pod_name(f"{rs_name}-"),
                labels=dict(rs_labels),
                owner=owner,
                generate_name=f"{rs_name}-",
                spec={
                    **template,
                    "nodeName": self.names[p.node],
                    "priority": 0,
                    "preemptionPolicy": "PreemptLowerPriority",
                    "enableServiceLinks": True,
                    "tolerations": [_gpu_toleration(), *_default_tolerations()],
                },
                node=p.node,
                created=self.ago(2 * 3600, max(2 * 3600 + 1, oldest - 60)),
                qos="Burstable",
            )
            sample: dict[str, Any] = {"cpu": p.cpu, "memory": int(p.memory)}
            sample["timestamp"] = stamps[p.node]
            if p.gpu is not None:
                sample["named"] = {RESOURCE: p.gpu}
            self.record(pod, p.node, sample)
            pods.append(pod)
        budget = None
        if w is not None and w.pdb is not None:
            budget = self.pdb_object(name, w.pdb, replicas, created)
        return [deployment, replica_set, *pods], budget

    def pdb_object(
        self, name: str, rule: tuple[str, int | str], replicas: int, created: str
    ) -> dict[str, Any]:
        field, value = rule
        scaled = (
            math.ceil(int(value.rstrip("%")) * replicas / 100) if isinstance(value, str) else value
        )
        desired = scaled if field == "minAvailable" else max(0, replicas - scaled)
        allowed = max(0, replicas - desired)
        return {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {
                "name": name,
                "namespace": "ml",
                "uid": self.uid(),
                "resourceVersion": self.next_rv(),
                "generation": 1,
                "creationTimestamp": created,
                "labels": {"team": "ml"},
            },
            "spec": {field: value, "selector": {"matchLabels": {"app.kubernetes.io/name": name}}},
            "status": {
                "observedGeneration": 1,
                "currentHealthy": replicas,
                "desiredHealthy": desired,
                "expectedPods": replicas,
                "disruptionsAllowed": allowed,
                "conditions": [
                    {
                        "type": "DisruptionAllowed",
                        "status": "True" if allowed else "False",
                        "reason": "SufficientPods" if allowed else "InsufficientPods",
                        "message": "",
                        "observedGeneration": 1,
                        "lastTransitionTime": created,
                    }
                ],
            },
        }

    # -- pods --

    def pod_object(
        self,
        *,
        namespace: str,
        name: str,
        labels: dict[str, str],
        owner: dict[str, Any],
        generate_name: str,
        spec: dict[str, Any],
        node: int,
        created: datetime.datetime,
        qos: str,
    ) -> dict[str, Any]:
        started = _stamp(created)
        ready_at = _stamp(created + datetime.timedelta(seconds=int(self.rng.uniform(3, 40))))
        index = self.base_count + node
        ip = f"10.{index >> 8}.{index & 255}.{self.ip_next[node]}"
        self.ip_next[node] += 1
        statuses = [
            {
                "name": c["name"],
                "image": c["image"],
                "imageID": f"{c['image']}@sha256:{_images.digest(c['image'])}",
                "containerID": f"containerd://{self.rng.bytes(32).hex()}",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": ready_at}},
            }
            for c in spec["containers"]
        ]
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": self.uid(),
                "resourceVersion": self.next_rv(),
                "creationTimestamp": started,
                "labels": labels,
                "generateName": generate_name,
                "ownerReferences": [dict(owner)],
            },
            "spec": spec,
            "status": {
                "phase": "Running",
                "conditions": [
                    {"type": "Initialized", "status": "True", "lastTransitionTime": started},
                    {"type": "Ready", "status": "True", "lastTransitionTime": ready_at},
                    {"type": "ContainersReady", "status": "True", "lastTransitionTime": ready_at},
                    {"type": "PodScheduled", "status": "True", "lastTransitionTime": started},
                ],
                "hostIP": self.node_ip(node),
                "podIP": ip,
                "podIPs": [{"ip": ip}],
                "startTime": started,
                "qosClass": qos,
                "containerStatuses": statuses,
            },
        }
