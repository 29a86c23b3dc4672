"""Scenarios laid out by hand rather than drawn: "warm-idle" (requests and usage
apart, so steering matters) and "gpu" (a GPU pool judged by GPU use).
"""

from __future__ import annotations

import datetime
import functools
import math
from typing import Any, ClassVar, Protocol

import numpy as np

from loadaware.sim.scenarios import _catalogue, _generator


class _HandLaid(_generator.Generator):
    """A scenario whose nodes and pods are laid out by hand: workloads at the sizes
    they are given, pods put where `lay_out` says (a DaemonSet pod on every node
    first), usage only nudged from the workloads' ratios."""

    def size_workloads(self) -> None:
        for x in self.workloads:
            x.main_cpu_m = x.pod_cpu_m = int(x.cpu_m)
            x.main_memory_b = x.pod_memory_b = int(x.memory_b)

    def set_budgets_and_ages(self, rng: np.random.Generator) -> None:
        """Every node's whole allocatable is its budget; ages as the generator draws them."""
        self.budget_cpu_m = self.alloc_cpu_m.astype(float)
        self.budget_memory_b = self.alloc_memory_b.astype(float)
        self.outage_age = float(rng.uniform(2 * 3600, 6 * 3600))
        self.node_age = rng.uniform(5 * 86400, 90 * 86400, size=len(self.alloc_cpu_m))

    @staticmethod
    def deployment(
        namespace: str, name: str, cpu_m: int, memory: int, **fields: Any
    ) -> _catalogue.Workload:
        """A Deployment of the team named after its namespace, its replicas counted
        once its pods are laid out."""
        return _catalogue.Workload(
            kind="Deployment",
            namespace=namespace,
            name=name,
            team=namespace,
            replicas=0,
            cpu_m=cpu_m,
            memory_b=memory,
            **fields,
        )

    def lay_out(self, put: _Put) -> None:
        raise NotImplementedError

    def place_pods(self) -> None:
        index = {x.name: wi for wi, x in enumerate(self.workloads)}
        pod_workload: list[int] = []
        pod_node: list[int] = []

        def put(name: str, node: int, count: int = 1) -> None:
            for _ in range(count):
                self.workloads[index[name]].pod_indices.append(len(pod_workload))
                pod_workload.append(index[name])
                pod_node.append(node)

        for node in range(self.n):
            for x in _catalogue.daemonset_workloads():
                put(x.name, node)
        self.lay_out(put)
        for x in self.workloads:
            if x.kind != "DaemonSet":
                x.replicas = len(x.pod_indices)
        self.pod_workload = np.array(pod_workload, dtype=np.int64)
        self.pod_node = np.array(pod_node, dtype=np.int64)
        sizes = np.array([[x.pod_cpu_m, x.pod_memory_b] for x in self.workloads], dtype=np.int64)
        self.used_cpu_m = np.bincount(
            self.pod_node, weights=sizes[self.pod_workload, 0], minlength=self.n
        ).astype(np.int64)
        self.used_memory_b = np.bincount(
            self.pod_node, weights=sizes[self.pod_workload, 1], minlength=self.n
        ).astype(np.int64)
        self.used_pods = np.bincount(self.pod_node, minlength=self.n)

    def usage_spread(self) -> tuple[float, tuple[float, float], tuple[float, float]]:
        # The workloads' ratios are set for their nodes' targets: only a nudge is needed.
        return 0.03, (0.7, 1.4), (0.7, 1.4)


class _Put(Protocol):
    """How _HandLaid.lay_out places pods: `count` pods of workload `name` on `node`."""

    def __call__(self, name: str, node: int, count: int = 1) -> None: ...


class WarmIdle(_HandLaid):
    """The "warm-idle" scenario, laid out by hand on 16 nodes of one size.

    Four hot nodes (88 % cpu) run web services whose pods use about 1.7x their
    requests. Eight reserved nodes hold 71-80 % of their cpu in requests (batch
    workloads sized for a peak that never comes) and use 15-25 %. Four warm
    nodes request 8-10 % and run at 62 % cpu: stream processors that request
    100m and use a core each. kube-scheduler, placing by requests, scores the
    warm nodes best; a replacement there (+14 % cpu) takes them over the 70 %
    target. The reserved nodes are where replacements belong.
    """

    # (workload, pods per node) of each node, in node order; "reserved" nodes differ by
    # their cache-warmer pods, so that their request levels never tie.
    _HOT = (("checkout-api", 2), ("catalog-api", 2), ("search-frontend", 2))
    _RESERVED = (("report-builder", 2), ("fraud-scorer", 2), ("ledger-sync", 1))
    _WARM = (("stream-ingest", 2), ("video-transcode", 2))
    _LAYOUT = (
        "hot", "reserved", "reserved", "warm", "reserved", "hot", "warm", "reserved",
        "reserved", "warm", "hot", "reserved", "warm", "reserved", "reserved", "hot",
    )  # fmt: skip

    def __init__(self, *, now: datetime.datetime) -> None:
        super().__init__(
            nodes=len(self._LAYOUT),
            pods_per_node=10,
            zones=2,
            seed=16,
            capacity="loose",
            hot_fraction=0.25,
            now=now,
        )

    def make_nodes(self) -> None:
        n = self.n
        self.node_type = [_catalogue.INSTANCE_TYPES[1]] * n
        self.node_pool = ["default"] * n
        self.zone_names = [f"{_catalogue.REGION}{chr(ord('a') + z)}" for z in range(self.zones)]
        self.node_zone = [i % self.zones for i in range(n)]
        self.size_nodes()
        self.ready = np.ones(n, dtype=bool)
        self.schedulable = np.ones(n, dtype=bool)

    def classify_nodes(self) -> None:
        rng, n = self.rng, self.n
        self.node_class = np.array(self._LAYOUT, dtype=object)
        ranges = {  # cpu, memory usage
            "hot": ((0.87, 0.89), (0.45, 0.55)),
            "reserved": ((0.15, 0.25), (0.3, 0.4)),
            "warm": ((0.61, 0.63), (0.2, 0.25)),
        }
        self.target_cpu = np.zeros(n)
        self.target_memory = np.zeros(n)
        for label, (cpu, memory) in ranges.items():
            mask = self.node_class == label
            self.target_cpu[mask] = rng.uniform(*cpu, size=mask.sum())
            self.target_memory[mask] = rng.uniform(*memory, size=mask.sum())
        self.set_budgets_and_ages(rng)

    def make_workloads(self) -> None:
        app = self.deployment

        burst: dict[str, Any] = {"limits": "burst", "cpu_ratio": 1.7, "memory_ratio": 0.9}
        idle: dict[str, Any] = {"cpu_ratio": 0.22, "memory_ratio": 0.45}
        # Under-requested: no limits, usage a dozen times the requests.
        warm: dict[str, Any] = {"cpu_ratio": 11.5, "memory_ratio": 5.5}
        self.workloads = [
            *_catalogue.daemonset_workloads(),
            _catalogue.coredns_workload(0),
            app(
                "shop",
                "checkout-api",
                650,
                2560 * _catalogue.MiB,
                pdb=("maxUnavailable", "50%"),
                **burst,
            ),
            app("catalog", "catalog-api", 650, 2560 * _catalogue.MiB, **burst),
            app("search", "search-frontend", 650, 2560 * _catalogue.MiB, **burst),
            app(
                "analytics", "report-builder", 1400, 5 * _catalogue.GiB, limits="guaranteed", **idle
            ),
            app("payments", "fraud-scorer", 1000, 4 * _catalogue.GiB, **idle),
            app("payments", "ledger-sync", 600, 2560 * _catalogue.MiB, **idle),
            app("analytics", "cache-warmer", 90, 448 * _catalogue.MiB, **idle),
            app("media", "stream-ingest", 100, 256 * _catalogue.MiB, **warm),
            app("media", "video-transcode", 100, 256 * _catalogue.MiB, **warm),
        ]

    def lay_out(self, put: _Put) -> None:
        reserved = 0
        warm = 0
        for node, label in enumerate(self._LAYOUT):
            if label == "hot":
                for name, count in self._HOT:
                    put(name, node, count)
            elif label == "reserved":
                for name, count in self._RESERVED:
                    put(name, node, count)
                put("cache-warmer", node, reserved)
                reserved += 1
            else:
                for name, count in self._WARM:
                    put(name, node, count)
                if warm < 2:  # coredns, 2 replicas
                    put("coredns", node)
                warm += 1


class GpuPool(_HandLaid):
    """The "gpu" scenario, laid out by hand: 3 CPU nodes and 3 GPU nodes of 4 GPUs.

    The GPU nodes carry what NVIDIA's GPU feature discovery and device plugin put
    on a node (the label `nvidia.com/gpu.present: "true"`, the product and count,
    `nvidia.com/gpu: 4` in capacity and allocatable) and the taint GPU node pools
    are commonly given, `nvidia.com/gpu=present:NoSchedule`. Inference
    Deployments in namespace `ml` request one GPU per pod, tolerate the taint and
    select GPU nodes by nodeSelector; each pod's usage carries `named: {"gpu":
    ...}` (GPUs' worth busy), and a GPU node's is the sum of its pods'.

    One GPU node is hot by GPU alone: all 4 GPUs held, each 88-94 % busy, while
    its cpu (about 38 %) and memory (about 52 %) stay under any target. One
    holds 3 GPUs at about half use; one holds a single GPU at 10 % and requests
    the least cpu and memory of the three. A replacement of a GPU pod fits only
    where a GPU is free, and kube-scheduler's least-allocated scoring (cpu and
    memory only) prefers the idle node of the two that have one. The CPU nodes
    run web services at a moderate level.
    """

    _LAYOUT = ("cpu", "gpu-hot", "cpu", "gpu-busy", "cpu", "gpu-idle")
    # (workload, pods) of each kind of node
    _PODS: ClassVar[dict[str, tuple[tuple[str, int], ...]]] = {
        "cpu": (("storefront", 2), ("cart-api", 2), ("query-api", 1)),
        "gpu-hot": (("llm-inference", 2), ("embedding-server", 2)),
        "gpu-busy": (("llm-inference", 2), ("embedding-server", 1)),
        "gpu-idle": (("embedding-server", 1),),
    }
    # cpu and memory usage (fractions of allocatable) and each GPU pod's GPUs' worth busy
    _USAGE: ClassVar[dict[str, tuple[tuple[float, float], ...]]] = {
        "cpu": ((0.44, 0.5), (0.48, 0.55)),
        "gpu-hot": ((0.36, 0.4), (0.5, 0.54), (0.88, 0.94)),
        "gpu-busy": ((0.28, 0.32), (0.43, 0.47), (0.45, 0.55)),
        "gpu-idle": ((0.08, 0.1), (0.12, 0.14), (0.1, 0.1)),
    }

    def __init__(self, *, now: datetime.datetime) -> None:
        super().__init__(
            nodes=len(self._LAYOUT),
            pods_per_node=10,
            zones=2,
            seed=4,
            capacity="loose",
            hot_fraction=1 / len(self._LAYOUT),
            now=now,
        )

    def make_nodes(self) -> None:
        gpu = [kind.startswith("gpu") for kind in self._LAYOUT]
        self.node_type = [
            _catalogue.GPU_INSTANCE_TYPE if g else _catalogue.INSTANCE_TYPES[1] for g in gpu
        ]
        self.node_pool = [_catalogue.GPU_POOL if g else "default" for g in gpu]
        self.zone_names = [f"{_catalogue.REGION}{chr(ord('a') + z)}" for z in range(self.zones)]
        # Each pool spread over the zones.
        self.node_zone = [i // 2 % self.zones for i in range(self.n)]
        self.size_nodes()
        self.ready = np.ones(self.n, dtype=bool)
        self.schedulable = np.ones(self.n, dtype=bool)

    def classify_nodes(self) -> None:
        rng, n = self.rng, self.n
        self.node_class = np.array(
            [{"gpu-hot": "hot", "gpu-idle": "cold"}.get(k, "normal") for k in self._LAYOUT],
            dtype=object,
        )
        self.target_cpu = np.zeros(n)
        self.target_memory = np.zeros(n)
        for i, kind in enumerate(self._LAYOUT):
            cpu, memory = self._USAGE[kind][:2]
            self.target_cpu[i] = rng.uniform(*cpu)
            self.target_memory[i] = rng.uniform(*memory)
        self.set_budgets_and_ages(rng)

    def make_workloads(self) -> None:
        app = functools.partial(self.deployment, limits="burst")

        web: dict[str, Any] = {"cpu_ratio": 1.4, "memory_ratio": 1.1}
        # Inference keeps its model in GPU memory: modest cpu, memory near requests.
        inference: dict[str, Any] = {
            "pool": _catalogue.GPU_POOL,
            "tolerations": _catalogue.GPU_POOL,
            "gpus": 1,
            "cpu_ratio": 1.0,
            "memory_ratio": 0.85,
        }
        self.workloads = [
            *_catalogue.daemonset_workloads(),
            _catalogue.coredns_workload(0),
            app("shop", "storefront", 500, 2 * _catalogue.GiB, **web),
            app("shop", "cart-api", 400, 1536 * _catalogue.MiB, **web),
            app("search", "query-api", 600, 4 * _catalogue.GiB, pdb=("maxUnavailable", 1), **web),
            app("ml", "llm-inference", 4000, 24 * _catalogue.GiB, **inference),
            app("ml", "embedding-server", 2000, 12 * _catalogue.GiB, **inference),
        ]

    def lay_out(self, put: _Put) -> None:
        cpu_nodes = [i for i, kind in enumerate(self._LAYOUT) if kind == "cpu"]
        for node, kind in enumerate(self._LAYOUT):
            for name, count in self._PODS[kind]:
                put(name, node, count)
        for node in cpu_nodes[:2]:  # coredns, 2 replicas
            put("coredns", node)

    def compute_usage(self) -> None:
        super().compute_usage()
        busy = np.full(len(self.pod_workload), np.nan)
        for p, (wi, node) in enumerate(zip(self.pod_workload, self.pod_node, strict=True)):
            gpus = self.workloads[wi].gpus
            ranges = self._USAGE[self._LAYOUT[node]]
            if gpus and len(ranges) > 2:
                # Whole percents, as DCGM reports utilisation.
                busy[p] = round(gpus * float(self.rng.uniform(*ranges[2])), 2)
        self.pod_gpu = busy

    def node_objects(self) -> list[dict[str, Any]]:
        objects = super().node_objects()
        for i, node in enumerate(objects):
            if self.node_pool[i] != _catalogue.GPU_POOL:
                continue
            count = str(_catalogue.GPU_INSTANCE_GPUS)
            node["metadata"]["labels"].update(
                {
                    _catalogue.GPU_PRESENT_LABEL: "true",
                    "nvidia.com/gpu.product": _catalogue.GPU_PRODUCT,
                    "nvidia.com/gpu.count": count,
                }
            )
            node["spec"].setdefault("taints", []).append(dict(_catalogue.GPU_TAINT))
            node["status"]["capacity"][_catalogue.GPU_RESOURCE] = count
            node["status"]["allocatable"][_catalogue.GPU_RESOURCE] = count
        return objects

    def _tolerations(self, kind: str) -> list[dict[str, Any]]:
        if kind != _catalogue.GPU_POOL:
            return super()._tolerations(kind)
        gpu = {
            "key": _catalogue.GPU_TAINT["key"],
            "operator": "Exists",
            "effect": _catalogue.GPU_TAINT["effect"],
        }
        return [gpu, *super()._tolerations("default")]

    def _containers(self, x: _catalogue.Workload) -> list[dict[str, Any]]:
        containers = super()._containers(x)
        if x.gpus:
            # Extended resources: the request equals the limit, or the API server refuses it.
            resources = containers[0]["resources"]
            resources["requests"][_catalogue.GPU_RESOURCE] = str(x.gpus)
            resources.setdefault("limits", {})[_catalogue.GPU_RESOURCE] = str(x.gpus)
        return containers

    def _pod_spec_parts(self, x: _catalogue.Workload) -> dict[str, Any]:
        parts = super()._pod_spec_parts(x)
        if x.pool == _catalogue.GPU_POOL:
            parts["nodeSelector"] = {_catalogue.GPU_PRESENT_LABEL: "true"}
        return parts

    def metrics_document(self) -> dict[str, Any]:
        document = super().metrics_document()
        node_busy = np.bincount(
            self.pod_node, weights=np.nan_to_num(self.pod_gpu), minlength=self.n
        )
        for i, name in enumerate(self.node_names):
            if self.node_pool[i] == _catalogue.GPU_POOL:
                document["nodes"][name]["named"] = {"gpu": round(float(node_busy[i]), 2)}
        for p, key in enumerate(self.pod_keys):
            if not math.isnan(self.pod_gpu[p]):
                document["pods"][key]["named"] = {"gpu": float(self.pod_gpu[p])}
        return document
