"""What generated clusters are made of: instance types, sizes and shares, the
names teams and workloads are drawn from, the system workloads every cluster runs
(coredns, the node agents), the GPU pool's labels and taint, and `Workload`, a
controller and its pod template before placement.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

KiB = 1024


MiB = 1024**2


GiB = 1024**3


Capacity = Literal["loose", "tight"]


Family = Literal["proportional", "usage-independent"]


FAMILIES: tuple[str, ...] = ("proportional", "usage-independent")


# Mean node usage (fraction of allocatable) the whole cluster settles at.
MEAN_USAGE = {"loose": (0.40, 0.42), "tight": (0.63, 0.64)}  # (cpu, memory)


# Request fill is derived from the usage target with these divisors: usage runs
# below requests on average, as it does where requests are sized for the peak.
CPU_FILL_DIVISOR = 0.75


MEMORY_FILL_DIVISOR = 0.85


# After the outage kube-scheduler packed the survivors up to this request fill.
HOT_FILL = (0.86, 0.93)


MAX_FILL = 0.92


# Requests are scaled to this share of the pool's request budget, so that the
# least-allocated placement below always finds room.
BUDGET_USE = 0.96


# The usage-independent family (see the module docstring).
WARM_SHARE = 0.07  # of the nodes: few requests, usage just under targetThresholds


RESERVED_SHARE = 0.12  # of the nodes: large requests, little usage


RATIO_BOUNDS = (0.3, 3.0)  # cpu usage / request of a workload's pods


RATIO_SIGMA = 0.65  # log-normal spread of those ratios, before clipping


RATIO_BANDS = 8  # workloads and nodes are matched in this many bands of ratio


# Usage per request the warm nodes' non-DaemonSet pods need: high, but reachable
# with the top of the ratio distribution.
WARM_RATIO = 2.5


# Per-node request fill of the nodes without a story, by capacity (uniform).
INDEPENDENT_FILL = {"loose": (0.25, 0.8), "tight": (0.45, 0.9)}


SAFE_ALPHABET = np.array(list("bcdfghjklmnpqrstvwxz2456789"))  # as kube's generated names


HEX = "0123456789abcdef"


REGION = "region-1"


KUBE_VERSION = "v1.31.2"


DS_COUNT = 3  # kube-proxy, node-exporter, log-agent: one pod each per node


PROXY_IMAGE = "registry.example.com/platform/proxy:1.22.0"  # the workloads' sidecar


# The "gpu" scenario's GPU nodes: NVIDIA's labels and resource, the usual taint.
GPU_POOL = "gpu"


GPU_RESOURCE = "nvidia.com/gpu"  # the device plugin's extended resource


GPU_PRESENT_LABEL = "nvidia.com/gpu.present"


GPU_TAINT: dict[str, str] = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


GPU_PRODUCT = "NVIDIA-A10G"  # GPU feature discovery's spelling, dashes for spaces


GPU_INSTANCE_GPUS = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class _InstanceType:
    name: str
    cores: int
    memory_gib: int
    weight: float


INSTANCE_TYPES = (
    _InstanceType(name="general-4x16", cores=4, memory_gib=16, weight=0.25),
    _InstanceType(name="general-8x32", cores=8, memory_gib=32, weight=0.5),
    _InstanceType(name="general-16x64", cores=16, memory_gib=64, weight=0.25),
)


BATCH_TYPE = INSTANCE_TYPES[2]


GPU_INSTANCE_TYPE = _InstanceType(name="gpu-32x128-4g", cores=32, memory_gib=128, weight=0.0)


@dataclass(slots=True, kw_only=True)
class Workload:
    """A controller and its pod template, sized before placement."""

    kind: str  # Deployment | StatefulSet | DaemonSet | Pod (a bare pod)
    namespace: str
    name: str
    team: str
    replicas: int
    cpu_m: float  # main container request, before scaling
    memory_b: float
    scalable: bool = True  # system add-ons keep their well-known sizes
    sidecar: bool = False  # a fixed-size proxy container next to the main one
    limits: str = "none"  # none | burst (limits above requests) | guaranteed
    pool: str = "default"  # default | batch | all (DaemonSets)
    tolerations: str = "default"  # default | batch | critical | all
    priority_class: str = ""
    priority: int = 0
    empty_dir: bool = False
    host_paths: tuple[tuple[str, str], ...] = ()
    pvc_size: str = ""
    anti_affinity: str = ""  # "" | hostname | zone
    pdb: tuple[str, int | str] | None = None  # (minAvailable | maxUnavailable, value)
    cpu_ratio: float = 0.5  # median usage/request of its pods
    memory_ratio: float = 0.8
    image: str = ""
    service_account: str = "default"
    old_revisions: int = 0
    gpus: int = 0  # nvidia.com/gpu per pod (the "gpu" scenario)
    # Filled in by sizing and placement:
    main_cpu_m: int = 0
    main_memory_b: int = 0
    pod_cpu_m: int = 0
    pod_memory_b: int = 0
    pod_indices: list[int] = field(default_factory=list)

    @property
    def selector(self) -> dict[str, str]:
        return {"app.kubernetes.io/name": self.name}


# fmt: off
TEAMS = (
    "shop", "payments", "search", "identity", "analytics", "media", "ads", "notifications",
    "catalog", "logistics"
)
WORDS_A = (
    "order", "cart", "price", "stock", "user", "session", "profile", "review", "image", "video",
    "mail", "push", "feed", "rank", "report", "invoice", "ship", "route", "token", "audit",
    "event", "quote", "coupon", "geo"
)
WORDS_B = (
    "api", "worker", "gateway", "consumer", "sync", "cache", "indexer", "renderer", "scorer",
    "exporter", "scheduler", "service"
)
# fmt: on


def coredns_workload(replicas: int) -> Workload:
    """The cluster DNS every scenario runs (system-critical, never a candidate)."""
    return Workload(
        kind="Deployment",
        namespace="kube-system",
        name="coredns",
        team="platform",
        replicas=replicas,
        cpu_m=100,
        memory_b=70 * MiB,
        scalable=False,
        limits="burst",
        tolerations="critical",
        priority_class="system-cluster-critical",
        priority=2000000000,
        pdb=("maxUnavailable", 1),
        cpu_ratio=0.4,
        memory_ratio=0.6,
        image="registry.example.com/platform/coredns:1.11.3",
        service_account="coredns",
    )


def daemonset_workloads() -> list[Workload]:
    """The node agents every cluster runs, one pod per node: kube-proxy, node-exporter,
    log-agent."""
    node_paths = (("proc", "/proc"), ("sys", "/sys"), ("root", "/"))
    return [
        Workload(
            kind="DaemonSet",
            namespace="kube-system",
            name="kube-proxy",
            team="platform",
            replicas=0,
            cpu_m=100,
            memory_b=64 * MiB,
            scalable=False,
            pool="all",
            tolerations="all",
            priority_class="system-node-critical",
            priority=2000001000,
            host_paths=(("lib-modules", "/lib/modules"), ("xtables-lock", "/run/xtables.lock")),
            cpu_ratio=0.3,
            memory_ratio=0.6,
            image="registry.example.com/platform/kube-proxy:" + KUBE_VERSION,
            service_account="kube-proxy",
        ),
        Workload(
            kind="DaemonSet",
            namespace="monitoring",
            name="node-exporter",
            team="platform",
            replicas=0,
            cpu_m=50,
            memory_b=64 * MiB,
            scalable=False,
            limits="burst",
            pool="all",
            tolerations="all",
            host_paths=node_paths,
            cpu_ratio=0.25,
            memory_ratio=0.5,
            image="registry.example.com/platform/node-exporter:1.8.2",
            service_account="node-exporter",
        ),
        Workload(
            kind="DaemonSet",
            namespace="logging",
            name="log-agent",
            team="platform",
            replicas=0,
            cpu_m=100,
            memory_b=200 * MiB,
            scalable=False,
            limits="burst",
            pool="all",
            tolerations="all",
            host_paths=(("varlog", "/var/log"), ("pods", "/var/log/pods")),
            cpu_ratio=0.5,
            memory_ratio=0.7,
            image="registry.example.com/platform/log-agent:3.1.0",
            service_account="log-agent",
        ),
    ]
