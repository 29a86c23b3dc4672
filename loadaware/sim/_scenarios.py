"""Generated clusters: raw Kubernetes objects plus a `--metrics` document.

The objects are what `kubectl get nodes,pods,pdb,rs,deploy,sts,ds -A -o json`
prints (apiVersion, kind, metadata, spec, status), so that everything reading a
real dump (the loader, `loadaware plan`, the simulated API server) reads these
too. The metrics document is the `--metrics FILE` format of DESIGN.md.

The story behind every cluster: a few nodes failed some hours ago and their
replicas were re-created on the survivors, which kube-scheduler packed by
requests. The failed nodes were replaced, and the replacements sit nearly
empty, because nothing moves pods back. The survivors that took the extra
replicas are now hot (75-95 % cpu and/or memory of allocatable at peak), the
replacements cold, the rest at a level set by `capacity` ("loose": the cluster
as a whole at about 40 %, "tight": about 63 %). Usage is heavy-tailed against
requests on cpu (a few pods burst to 2-3x their request), closer to requests on
memory, and never above a container limit.

Requests fit allocatable on every node; a node's usage is the sum of its pods'
usage plus a system overhead, so node and pod metrics agree.

Sharing, for speed at 150,000 pods: every object, its `metadata` (labels,
annotations and ownerReferences included), its `spec` and its `status` (all the
way down) are its own dicts. Deeper parts of a pod's spec -- `containers`,
`volumes` (except a StatefulSet pod's, which names its own claim),
`tolerations`, `affinity` (except a DaemonSet pod's, which names its node) and
`nodeSelector` -- are shared between the pods of one workload, and the entries
of the nodes' `status.images` between the nodes reporting them: treat them as
read-only, or copy them before changing them. Controllers' pod templates are
their own copies.

Every node reports in `status.images` what its kubelet has pulled: the images of
the pods placed on it and the sandbox (pause) image, each under its digest and
its tag, with a size derived from its name (`_images`: the same on every node,
and drawing nothing from the generator's random numbers).

Two families of clusters (`family`):

- "proportional" (the default, the story above): usage follows requests. A
  node's usage is its requests times a ratio that varies little between nodes,
  so the nodes that request least also use least, and a scheduler that places
  by requests sends replacements to cool nodes.
- "usage-independent": what real clusters look like once requests stop being
  revisited. Every workload has its own usage/request ratio on cpu, heavy-tailed
  between 0.3x and 3x (log-normal, clipped), and a node's usage is drawn apart
  from its requests. Two kinds of nodes make the difference visible: warm
  nodes (about 7 %) that request little -- a quarter of allocatable -- yet run
  at 55-65 % cpu, just under targetThresholds, on under-requested workloads;
  and reserved nodes (about 12 %) that hold 70-85 % of allocatable in requests
  and use 15-25 %. Hot nodes (same share as the other family) are hot by usage
  whatever they request. Requests-based placement prefers exactly the warm
  nodes, which a replacement would turn hot. Pods are placed so that their
  ratios match their node (workloads are banded by ratio, nodes by the usage
  per request they need), then scaled per node to its target; memory stays
  nearer its requests, as it does in practice.

Generation is deterministic for a (parameters, seed, now) triple.
"""

from __future__ import annotations

import datetime
import functools
import heapq
import math
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol

import numpy as np

from loadaware import collector, errors
from loadaware.sim import _images

KiB = 1024
MiB = 1024**2
GiB = 1024**3

SCENARIO_NAMES: tuple[str, ...] = ("peak-hour", "small", "warm-idle", "gpu")
DEFAULT_SCENARIO = "peak-hour"

Capacity = Literal["loose", "tight"]
Family = Literal["proportional", "usage-independent"]
FAMILIES: tuple[str, ...] = ("proportional", "usage-independent")

# Mean node usage (fraction of allocatable) the whole cluster settles at.
_MEAN_USAGE = {"loose": (0.40, 0.42), "tight": (0.63, 0.64)}  # (cpu, memory)
# Request fill is derived from the usage target with these divisors: usage runs
# below requests on average, as it does where requests are sized for the peak.
_CPU_FILL_DIVISOR = 0.75
_MEMORY_FILL_DIVISOR = 0.85
# After the outage kube-scheduler packed the survivors up to this request fill.
_HOT_FILL = (0.86, 0.93)
_MAX_FILL = 0.92
# Requests are scaled to this share of the pool's request budget, so that the
# least-allocated placement below always finds room.
_BUDGET_USE = 0.96

# The usage-independent family (see the module docstring).
_WARM_SHARE = 0.07  # of the nodes: few requests, usage just under targetThresholds
_RESERVED_SHARE = 0.12  # of the nodes: large requests, little usage
_RATIO_BOUNDS = (0.3, 3.0)  # cpu usage / request of a workload's pods
_RATIO_SIGMA = 0.65  # log-normal spread of those ratios, before clipping
_RATIO_BANDS = 8  # workloads and nodes are matched in this many bands of ratio
# Usage per request the warm nodes' non-DaemonSet pods need: high, but reachable
# with the top of the ratio distribution.
_WARM_RATIO = 2.5
# Per-node request fill of the nodes without a story, by capacity (uniform).
_INDEPENDENT_FILL = {"loose": (0.25, 0.8), "tight": (0.45, 0.9)}

_SAFE_ALPHABET = np.array(list("bcdfghjklmnpqrstvwxz2456789"))  # as kube's generated names
_HEX = "0123456789abcdef"
_REGION = "region-1"
_KUBE_VERSION = "v1.31.2"
_DS_COUNT = 3  # kube-proxy, node-exporter, log-agent: one pod each per node
_PROXY_IMAGE = "registry.example.com/platform/proxy:1.22.0"  # the workloads' sidecar

# The "gpu" scenario's GPU nodes: NVIDIA's labels and resource, the usual taint.
_GPU_POOL = "gpu"
_GPU_RESOURCE = "nvidia.com/gpu"  # the device plugin's extended resource
_GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
_GPU_TAINT: dict[str, str] = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
_GPU_PRODUCT = "NVIDIA-A10G"  # GPU feature discovery's spelling, dashes for spaces
_GPU_INSTANCE_GPUS = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    name: str
    description: str
    objects: list[dict[str, Any]]  # raw Kubernetes objects
    metrics: dict[str, Any]  # the --metrics document (collectedAt, nodes, pods)

    def cluster_document(self) -> dict[str, Any]:
        """The objects as a `kind: List`, as kubectl prints them. The items are not copied."""
        return {
            "apiVersion": "v1",
            "kind": "List",
            "items": list(self.objects),
            "metadata": {"resourceVersion": ""},
        }


def builtin_scenario(name: str, *, now: datetime.datetime) -> Scenario:
    """A named, fixed scenario. "peak-hour" is what `loadaware simulate` shows."""
    match name:
        case "peak-hour":
            generated = generate_cluster(
                nodes=40, pods_per_node=24, zones=3, seed=2026, hot_fraction=0.15, now=now
            )
            description = (
                "40 nodes in 3 zones at peak hour; after a node outage the survivors "
                "took the replicas and run hot while the replacements sit idle"
            )
        case "small":
            generated = generate_cluster(
                nodes=6, pods_per_node=14, zones=3, seed=7, hot_fraction=0.25, now=now
            )
            description = "6 nodes, two of them hot: a quick case for tests"
        case "warm-idle":
            generated = _WarmIdle(now=now).run()
            description = (
                "16 nodes: 4 hot, 8 that request much and use little, 4 that request little "
                "and run warm; replacements placed by requests alone would turn the warm "
                "nodes hot, steered ones land on the idle nodes"
            )
        case "gpu":
            generated = _GpuPool(now=now).run()
            description = (
                "6 nodes: 3 GPU nodes of 4 GPUs (tainted, judged by GPU use) and 3 CPU nodes; "
                "one GPU node is hot by GPU alone, another has 3 free GPUs and little to do"
            )
        case _:
            raise errors.InputError(
                f"unknown scenario {name!r}",
                hint="built-in scenarios: " + ", ".join(SCENARIO_NAMES),
            )
    return Scenario(
        name=name, description=description, objects=generated.objects, metrics=generated.metrics
    )


# --- what is generated, before it becomes objects --------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class _InstanceType:
    name: str
    cores: int
    memory_gib: int
    weight: float


_INSTANCE_TYPES = (
    _InstanceType(name="general-4x16", cores=4, memory_gib=16, weight=0.25),
    _InstanceType(name="general-8x32", cores=8, memory_gib=32, weight=0.5),
    _InstanceType(name="general-16x64", cores=16, memory_gib=64, weight=0.25),
)
_BATCH_TYPE = _INSTANCE_TYPES[2]
_GPU_INSTANCE_TYPE = _InstanceType(name="gpu-32x128-4g", cores=32, memory_gib=128, weight=0.0)


@dataclass(slots=True, kw_only=True)
class _Workload:
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


@dataclass(frozen=True, slots=True, kw_only=True)
class _Generated:
    objects: list[dict[str, Any]]
    metrics: dict[str, Any]


def generate_cluster(
    *,
    nodes: int,
    pods_per_node: int = 30,
    zones: int = 3,
    seed: int = 0,
    capacity: Capacity = "loose",
    hot_fraction: float = 0.1,
    family: Family = "proportional",
    now: datetime.datetime,
) -> Scenario:
    """A cluster of `nodes` nodes and about `nodes * pods_per_node` pods, DaemonSets included.

    `family` chooses how usage relates to requests (see the module docstring);
    the default's output does not depend on the other family's existence."""
    if nodes < 1:
        raise ValueError("nodes must be at least 1")
    if pods_per_node < _DS_COUNT + 2:
        raise ValueError(f"pods_per_node must be at least {_DS_COUNT + 2}")
    if not 1 <= zones <= 26:
        raise ValueError("zones must be between 1 and 26")
    if capacity not in _MEAN_USAGE:
        raise ValueError("capacity must be 'loose' or 'tight'")
    if not 0.0 <= hot_fraction <= 0.5:
        raise ValueError("hot_fraction must be between 0 and 0.5")
    if family not in FAMILIES:
        raise ValueError("family must be " + " or ".join(repr(f) for f in FAMILIES))
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    generated = _Generator(
        nodes=nodes,
        pods_per_node=pods_per_node,
        zones=zones,
        seed=seed,
        capacity=capacity,
        hot_fraction=hot_fraction,
        family=family,
        now=now,
    ).run()
    description = (
        f"{nodes} nodes, about {pods_per_node} pods each, {zones} zones, "
        f"{capacity} capacity, seed {seed}"
    )
    if family != "proportional":
        description += f", {family} usage"
    return Scenario(
        name=f"generated-{nodes}",
        description=description,
        objects=generated.objects,
        metrics=generated.metrics,
    )


# --- small helpers ----------------------------------------------------------------------------


def node_conditions(heartbeat: str, created: str, *, ready: bool) -> list[dict[str, Any]]:
    """A kubelet's node conditions: no pressure, and Ready, or NotReady as when its
    network plugin is down (the kubelet still runs, so metrics still arrive)."""
    conditions = [
        {
            "type": kind,
            "status": "False",
            "lastHeartbeatTime": heartbeat,
            "lastTransitionTime": created,
            "reason": reason,
            "message": message,
        }
        for kind, reason, message in (
            (
                "MemoryPressure",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        )
    ]
    if ready:
        conditions.append(
            {
                "type": "Ready",
                "status": "True",
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": created,
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
            }
        )
    else:
        conditions.append(
            {
                "type": "Ready",
                "status": "False",
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": heartbeat,
                "reason": "KubeletNotReady",
                "message": "container runtime network not ready: NetworkReady=false "
                "reason:NetworkPluginNotReady message:Network plugin returns error: "
                "cni plugin not initialized",
            }
        )
    return conditions


def node_object(
    *,
    name: str,
    uid: str,
    resource_version: str,
    created: str,
    instance_type: str,
    zone: str,
    pool: str,
    spec: dict[str, Any],
    capacity: dict[str, str],
    allocatable: dict[str, str],
    conditions: list[dict[str, Any]],
    ip: str,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Node as kube-apiserver returns it: the well-known labels (plus `labels`),
    the kubelet's annotations, addresses and node info."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": uid,
            "resourceVersion": resource_version,
            "creationTimestamp": created,
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/os": "linux",
                "kubernetes.io/hostname": name,
                "node.kubernetes.io/instance-type": instance_type,
                "topology.kubernetes.io/region": _REGION,
                "topology.kubernetes.io/zone": zone,
                "pool": pool,
                **(labels or {}),
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": conditions,
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                # The kubelet always reports these; clients that check required
                # fields (the official Python client does) refuse a node without.
                "bootID": str(uuid.uuid5(uuid.NAMESPACE_OID, f"boot/{uid}")),
                "containerRuntimeVersion": "containerd://1.7.22",
                "kernelVersion": "6.1.0-26-amd64",
                "kubeProxyVersion": _KUBE_VERSION,
                "kubeletVersion": _KUBE_VERSION,
                "machineID": uuid.uuid5(uuid.NAMESPACE_OID, f"machine/{uid}").hex,
                "operatingSystem": "linux",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "systemUUID": str(uuid.uuid5(uuid.NAMESPACE_OID, f"system/{uid}")),
            },
        },
    }


def cpu_quantity(millicores: int) -> str:
    return str(millicores // 1000) if millicores % 1000 == 0 else f"{millicores}m"


def memory_quantity(size: int) -> str:
    for unit, factor in (("Gi", GiB), ("Mi", MiB), ("Ki", KiB)):
        if size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def _uids(rng: np.random.Generator, count: int) -> list[str]:
    """Version-4-shaped UIDs from the seeded generator (uuid4 would break determinism)."""
    text = rng.bytes(16 * count).hex()
    variants = rng.integers(8, 12, size=count).tolist()
    out = []
    for i in range(count):
        h = text[32 * i : 32 * i + 32]
        out.append(f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{_HEX[variants[i]]}{h[17:20]}-{h[20:]}")
    return out


def _hex_ids(rng: np.random.Generator, count: int, length: int = 64) -> list[str]:
    text = rng.bytes(count * length // 2).hex()
    return [text[i * length : (i + 1) * length] for i in range(count)]


def _safe_strings(rng: np.random.Generator, count: int, length: int) -> list[str]:
    chars = _SAFE_ALPHABET[rng.integers(0, len(_SAFE_ALPHABET), size=(count, length))]
    return chars.view(f"<U{length}").ravel().tolist()


def _timestamps(now: datetime.datetime, ages_seconds: np.ndarray) -> list[str]:
    """RFC 3339 strings for `now - age`, vectorised: formatting 300,000 datetimes one by one
    costs more than building the pods."""
    base = np.datetime64(now.astimezone(datetime.UTC).replace(tzinfo=None), "s")
    moments = base - np.rint(ages_seconds).astype("timedelta64[s]")
    return [s + "Z" for s in np.datetime_as_string(moments, unit="s").tolist()]


def _scaled(value: int | str, expected: int) -> int:
    """An IntOrString of a PodDisruptionBudget against the expected pod count, rounded up
    as the disruption controller does."""
    if isinstance(value, str):
        return math.ceil(int(value.rstrip("%")) * expected / 100)
    return value


# --- the generator ----------------------------------------------------------------------------

# fmt: off
_TEAMS = (
    "shop", "payments", "search", "identity", "analytics", "media", "ads", "notifications",
    "catalog", "logistics"
)
_WORDS_A = (
    "order", "cart", "price", "stock", "user", "session", "profile", "review", "image", "video",
    "mail", "push", "feed", "rank", "report", "invoice", "ship", "route", "token", "audit",
    "event", "quote", "coupon", "geo"
)
_WORDS_B = (
    "api", "worker", "gateway", "consumer", "sync", "cache", "indexer", "renderer", "scorer",
    "exporter", "scheduler", "service"
)
# fmt: on


def _coredns_workload(replicas: int) -> _Workload:
    """The cluster DNS every scenario runs (system-critical, never a candidate)."""
    return _Workload(
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


def _daemonset_workloads() -> list[_Workload]:
    """The node agents every cluster runs, one pod per node: kube-proxy, node-exporter,
    log-agent."""
    node_paths = (("proc", "/proc"), ("sys", "/sys"), ("root", "/"))
    return [
        _Workload(
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
            image="registry.example.com/platform/kube-proxy:" + _KUBE_VERSION,
            service_account="kube-proxy",
        ),
        _Workload(
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
        _Workload(
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


class _Generator:
    def __init__(
        self,
        *,
        nodes: int,
        pods_per_node: int,
        zones: int,
        seed: int,
        capacity: Capacity,
        hot_fraction: float,
        family: Family = "proportional",
        now: datetime.datetime,
    ) -> None:
        self.n = nodes
        self.family = family
        self.pods_per_node = pods_per_node
        self.zones = zones
        self.capacity = capacity
        self.hot_fraction = hot_fraction
        self.now = now.astimezone(datetime.UTC).replace(microsecond=0)
        self.rng = np.random.default_rng(seed)
        self.resource_version = 4_000_000 + int(self.rng.integers(0, 1_000_000))
        self.uid_buffer: list[str] = []
        self.hash_buffer: list[str] = []

    def uid(self) -> str:
        # Drawn in blocks: one draw per object would cost more than the object.
        if not self.uid_buffer:
            self.uid_buffer = _uids(self.rng, 1024)[::-1]
        return self.uid_buffer.pop()

    def name_hash(self) -> str:
        """A pod-template-hash-like string."""
        if not self.hash_buffer:
            self.hash_buffer = _safe_strings(self.rng, 1024, 10)[::-1]
        return self.hash_buffer.pop()

    def next_rv(self) -> str:
        self.resource_version += 1
        return str(self.resource_version)

    def run(self) -> _Generated:
        # Millions of small acyclic dicts: the cycle collector would only rescan them.
        with collector.paused():
            return self._run()

    @property
    def independent(self) -> bool:
        return self.family == "usage-independent"

    def _run(self) -> _Generated:
        self.make_nodes()
        if self.independent:
            self.classify_nodes_independently()
        else:
            self.classify_nodes()
        self.make_workloads()
        if self.independent:
            self.draw_independent_ratios()
        self.size_workloads()
        self.place_pods()
        self.compute_usage()
        self.compute_ages()
        objects = self.node_objects()
        objects += self.workload_and_pod_objects()
        return _Generated(objects=objects, metrics=self.metrics_document())

    # -- nodes --

    def make_nodes(self) -> None:
        rng, n = self.rng, self.n
        n_batch = max(1, round(0.05 * n)) if n >= 10 else 0
        n_default = n - n_batch
        weights = np.array([t.weight for t in _INSTANCE_TYPES])
        types = rng.choice(len(_INSTANCE_TYPES), size=n_default, p=weights / weights.sum())
        self.node_type = [_INSTANCE_TYPES[t] for t in types.tolist()]
        self.node_type += [_BATCH_TYPE] * n_batch
        self.node_pool = ["default"] * n_default + ["batch"] * n_batch
        self.zone_names = [f"{_REGION}{chr(ord('a') + z)}" for z in range(self.zones)]
        zone_index = np.concatenate(
            [np.arange(n_default) % self.zones, np.arange(n_batch) % self.zones]
        )
        self.node_zone = zone_index.tolist()
        self.size_nodes()

        self.ready = np.ones(n, dtype=bool)
        self.schedulable = np.ones(n, dtype=bool)
        if n >= 30:
            # A cordoned node (maintenance) and, in larger clusters, nodes whose kubelet
            # reports NotReady: neither may receive pods.
            default_idx = rng.permutation(n_default)
            n_cordoned = 1 + n // 1000
            n_not_ready = (1 + n // 1000) if n >= 100 else 0
            self.schedulable[default_idx[:n_cordoned]] = False
            self.ready[default_idx[n_cordoned : n_cordoned + n_not_ready]] = False

    def size_nodes(self) -> None:
        """Names, capacity and allocatable of the nodes whose type, pool and zone are set."""
        rng, n = self.rng, self.n
        width = max(3, len(str(n)))
        counters: dict[tuple[str, int], int] = {}
        self.node_names: list[str] = []
        for pool, z in zip(self.node_pool, self.node_zone, strict=True):
            k = counters.get((pool, z), 0) + 1
            counters[pool, z] = k
            self.node_names.append(f"{pool}-{chr(ord('a') + z)}-{k:0{width}d}")

        cores = np.array([t.cores for t in self.node_type])
        # kube-reserved cpu as managed offerings size it: a share of each core, falling.
        reserved_m = 60 + 10 + np.where(cores > 2, 10 * (np.minimum(cores, 4) - 2) / 2, 0)
        reserved_m = reserved_m + np.where(cores > 4, 2.5 * (cores - 4), 0)
        self.capacity_cpu_m = cores * 1000
        self.alloc_cpu_m = (cores * 1000 - np.rint(reserved_m)).astype(np.int64)
        nominal_ki = np.array([t.memory_gib for t in self.node_type]) * 1024 * 1024
        # The kernel keeps a little of the nominal size, differently on every boot.
        capacity_ki = (nominal_ki * 0.985).astype(np.int64) - rng.integers(0, 4096, size=n)
        self.capacity_memory_ki = capacity_ki
        alloc_ki = capacity_ki - (capacity_ki * 0.04).astype(np.int64) - 100 * 1024
        self.alloc_memory_b = alloc_ki * KiB
        self.alloc_memory_ki = alloc_ki
        self.alloc_pods = np.full(n, 110)

    def classify_nodes(self) -> None:
        """Hot survivors, cold replacements, normal rest; usage targets and request budgets."""
        rng, n = self.rng, self.n
        in_default = np.array([p == "default" for p in self.node_pool])
        eligible = np.flatnonzero(in_default & self.ready & self.schedulable)
        n_hot = round(self.hot_fraction * n)
        if self.hot_fraction > 0:
            n_hot = max(1, n_hot)
        n_hot = min(n_hot, len(eligible) // 2)
        n_cold = min(n_hot, len(eligible) - n_hot)
        order = rng.permutation(eligible)
        self.node_class = np.full(n, "normal", dtype=object)
        self.node_class[order[:n_hot]] = "hot"
        self.node_class[order[n_hot : n_hot + n_cold]] = "cold"
        self.node_class[~self.ready] = "down"
        is_hot = self.node_class == "hot"
        is_cold = self.node_class == "cold"
        is_normal = self.node_class == "normal"

        hot_kind = rng.choice(3, size=n, p=[0.45, 0.25, 0.30])  # cpu, memory, both
        hot_cpu = is_hot & (hot_kind != 1)
        hot_memory = is_hot & (hot_kind != 0)
        target_cpu = np.zeros(n)
        target_memory = np.zeros(n)
        target_cpu[hot_cpu] = rng.uniform(0.78, 0.95, size=hot_cpu.sum())
        target_memory[hot_memory] = rng.uniform(0.84, 0.94, size=hot_memory.sum())
        warm_cpu, warm_memory = is_hot & ~hot_cpu, is_hot & ~hot_memory
        target_cpu[warm_cpu] = rng.uniform(0.45, 0.66, size=warm_cpu.sum())
        target_memory[warm_memory] = rng.uniform(0.5, 0.74, size=warm_memory.sum())
        target_cpu[is_cold] = rng.uniform(0.16, 0.32, size=is_cold.sum())
        target_memory[is_cold] = rng.uniform(0.22, 0.42, size=is_cold.sum())

        # The normal level is what brings the cluster's mean to the capacity setting.
        mean_cpu, mean_memory = _MEAN_USAGE[self.capacity]
        n_up = int(self.ready.sum())
        n_normal = int(is_normal.sum())
        if n_normal:
            level_cpu = (mean_cpu * n_up - target_cpu[is_hot | is_cold].sum()) / n_normal
            level_memory = (mean_memory * n_up - target_memory[is_hot | is_cold].sum()) / n_normal
            noise = rng.normal(0.0, 0.04, size=(2, n_normal))
            target_cpu[is_normal] = np.clip(np.clip(level_cpu, 0.2, 0.63) + noise[0], 0.15, 0.66)
            target_memory[is_normal] = np.clip(
                np.clip(level_memory, 0.25, 0.7) + noise[1], 0.2, 0.74
            )
        self.target_cpu = target_cpu
        self.target_memory = target_memory

        fill_cpu = np.clip(target_cpu / _CPU_FILL_DIVISOR, 0.1, _MAX_FILL)
        fill_memory = np.clip(target_memory / _MEMORY_FILL_DIVISOR, 0.1, _MAX_FILL)
        packed = rng.uniform(*_HOT_FILL, size=(2, n))
        fill_cpu[is_hot] = packed[0][is_hot]
        fill_memory[is_hot] = packed[1][is_hot]
        fill_cpu[~self.ready] = 0.0
        fill_memory[~self.ready] = 0.0
        self.budget_cpu_m = fill_cpu * self.alloc_cpu_m
        self.budget_memory_b = fill_memory * self.alloc_memory_b

        # The outage: survivors took replicas some hours ago; replacements came up after.
        self.outage_age = float(rng.uniform(2 * 3600, 6 * 3600))
        ages = rng.uniform(5 * 86400, 90 * 86400, size=n)
        ages[is_cold] = self.outage_age - rng.uniform(600, 2400, size=is_cold.sum())
        self.node_age = ages

    def classify_nodes_independently(self) -> None:
        """The usage-independent family's classes, targets and request budgets: usage and
        requests are drawn apart, then warm and reserved nodes push them to opposite ends."""
        rng, n = self.rng, self.n
        in_default = np.array([p == "default" for p in self.node_pool])
        eligible = np.flatnonzero(in_default & self.ready & self.schedulable)
        n_hot = round(self.hot_fraction * n)
        if self.hot_fraction > 0:
            n_hot = max(1, n_hot)
        n_hot = min(n_hot, len(eligible) // 2)
        n_cold = min(n_hot, len(eligible) - n_hot)
        # Warm and reserved nodes never crowd out the normal ones completely.
        spare = max(0, len(eligible) - n_hot - n_cold - 1)
        n_warm = min(round(_WARM_SHARE * n), spare)
        n_reserved = min(round(_RESERVED_SHARE * n), spare - n_warm)
        order = rng.permutation(eligible)
        bounds = np.cumsum([n_hot, n_cold, n_warm, n_reserved])
        self.node_class = np.full(n, "normal", dtype=object)
        for label, (a, b) in zip(
            ("hot", "cold", "warm", "reserved"),
            zip([0, *bounds[:-1].tolist()], bounds.tolist(), strict=True),
            strict=True,
        ):
            self.node_class[order[a:b]] = label
        self.node_class[~self.ready] = "down"
        is_ = {c: self.node_class == c for c in ("hot", "cold", "warm", "reserved", "normal")}

        hot_kind = rng.choice(3, size=n, p=[0.45, 0.25, 0.30])  # cpu, memory, both
        hot_cpu = is_["hot"] & (hot_kind != 1)
        hot_memory = is_["hot"] & (hot_kind != 0)
        target_cpu = np.zeros(n)
        target_memory = np.zeros(n)
        draws = {
            # class: cpu usage range, memory usage range
            "cold": ((0.16, 0.32), (0.22, 0.42)),
            "warm": ((0.56, 0.65), (0.22, 0.38)),
            "reserved": ((0.15, 0.25), (0.25, 0.4)),
        }
        for label, (cpu_range, memory_range) in draws.items():
            mask = is_[label]
            target_cpu[mask] = rng.uniform(*cpu_range, size=mask.sum())
            target_memory[mask] = rng.uniform(*memory_range, size=mask.sum())
        target_cpu[hot_cpu] = rng.uniform(0.78, 0.95, size=hot_cpu.sum())
        target_memory[hot_memory] = rng.uniform(0.84, 0.94, size=hot_memory.sum())
        warm_cpu, warm_memory = is_["hot"] & ~hot_cpu, is_["hot"] & ~hot_memory
        target_cpu[warm_cpu] = rng.uniform(0.45, 0.66, size=warm_cpu.sum())
        target_memory[warm_memory] = rng.uniform(0.5, 0.74, size=warm_memory.sum())

        mean_cpu, mean_memory = _MEAN_USAGE[self.capacity]
        n_up = int(self.ready.sum())
        normal = is_["normal"]
        n_normal = int(normal.sum())
        if n_normal:
            storied = ~normal & self.ready
            level_cpu = (mean_cpu * n_up - target_cpu[storied].sum()) / n_normal
            level_memory = (mean_memory * n_up - target_memory[storied].sum()) / n_normal
            noise = rng.normal(0.0, (0.08, 0.05), size=(n_normal, 2)).T
            target_cpu[normal] = np.clip(np.clip(level_cpu, 0.2, 0.6) + noise[0], 0.12, 0.66)
            target_memory[normal] = np.clip(np.clip(level_memory, 0.25, 0.7) + noise[1], 0.2, 0.74)
        self.target_cpu = target_cpu
        self.target_memory = target_memory

        # Requests apart from usage: uniform for nodes without a story, then the stories.
        fill_cpu = rng.uniform(*_INDEPENDENT_FILL[self.capacity], size=n)
        fill_cpu[hot_cpu] = rng.uniform(0.35, 0.85, size=hot_cpu.sum())
        fill_cpu[is_["cold"]] = target_cpu[is_["cold"]] / _CPU_FILL_DIVISOR
        fill_cpu[is_["reserved"]] = rng.uniform(0.7, 0.85, size=is_["reserved"].sum())
        fill_cpu[is_["warm"]] = self._warm_cpu_fill(is_["warm"])
        # Placement stops at whichever budget a node reaches first, and pods bring memory
        # and cpu in about the same proportion everywhere: the memory budget follows the
        # cpu budget, except where memory is the story.
        fill_memory = fill_cpu * rng.uniform(0.85, 1.15, size=n)
        fill_memory[hot_memory] = target_memory[hot_memory] / rng.uniform(
            0.85, 1.2, size=hot_memory.sum()
        )
        fill_cpu[hot_memory] = np.maximum(fill_cpu[hot_memory], fill_memory[hot_memory])
        fill_cpu = np.clip(fill_cpu, 0.1, _MAX_FILL)
        fill_memory = np.clip(fill_memory, 0.1, _MAX_FILL)
        fill_cpu[~self.ready] = 0.0
        fill_memory[~self.ready] = 0.0
        self.budget_cpu_m = fill_cpu * self.alloc_cpu_m
        self.budget_memory_b = fill_memory * self.alloc_memory_b

        self.outage_age = float(rng.uniform(2 * 3600, 6 * 3600))
        ages = rng.uniform(5 * 86400, 90 * 86400, size=n)
        ages[is_["cold"]] = self.outage_age - rng.uniform(600, 2400, size=is_["cold"].sum())
        self.node_age = ages

    def _warm_cpu_fill(self, warm: np.ndarray) -> np.ndarray:
        """Request fill of warm nodes: as little as lets their usage target be reached
        with pods at _WARM_RATIO times their requests, next to the DaemonSets' pods."""
        agents = _daemonset_workloads()
        agent_request = sum(x.cpu_m for x in agents) / 1000.0
        agent_usage = sum(x.cpu_m * x.cpu_ratio for x in agents) / 1000.0
        overhead = 0.1  # the middle of compute_usage's system overhead
        alloc = self.alloc_cpu_m[warm] / 1000.0
        needed = self.target_cpu[warm] * alloc - overhead - agent_usage
        requests = agent_request + np.maximum(needed, 0.0) / _WARM_RATIO
        return requests / (_BUDGET_USE * alloc)

    def draw_independent_ratios(self) -> None:
        """Each scalable workload's cpu usage/request ratio, heavy-tailed and clipped to
        _RATIO_BOUNDS, its median set so that the cluster's usage meets its targets; limits
        are loosened where a ratio would not fit under them."""
        rng = self.rng
        movable = [x for x in self.workloads if x.scalable and x.pool != "all"]
        if not movable:
            return
        spread = np.exp(rng.normal(0.0, _RATIO_SIGMA, size=len(movable)))
        weight = np.array([x.replicas * x.cpu_m for x in movable], dtype=float)
        up = self.node_class != "down"
        agents = _daemonset_workloads()
        alloc = self.alloc_cpu_m[up] / 1000.0
        usage = (self.target_cpu[up] * alloc).sum() - 0.1 * up.sum()
        usage -= up.sum() * sum(x.cpu_m * x.cpu_ratio for x in agents) / 1000.0
        requests = (_BUDGET_USE * self.budget_cpu_m[up]).sum() / 1000.0
        requests -= up.sum() * sum(x.cpu_m for x in agents) / 1000.0
        wanted = float(np.clip(usage / max(requests, 1e-9), *_RATIO_BOUNDS))
        low, high = _RATIO_BOUNDS[0] / spread.max(), _RATIO_BOUNDS[1] / spread.min()
        for _ in range(40):  # bisection on the median: the weighted mean is monotone in it
            median = math.sqrt(low * high)
            ratios = np.clip(median * spread, *_RATIO_BOUNDS)
            if float(np.average(ratios, weights=weight)) < wanted:
                low = median
            else:
                high = median
        for x, ratio in zip(movable, ratios.tolist(), strict=True):
            x.cpu_ratio = ratio
            # Under-requested workloads run without cpu limits: they would be throttled.
            if x.limits == "guaranteed" and ratio > 0.7:
                x.limits = "burst"
            if x.limits == "burst" and ratio > 1.0:
                x.limits = "none"

    # -- workloads --

    def make_workloads(self) -> None:
        rng, n = self.rng, self.n
        n_default_up = int(((self.node_class != "down") & self.schedulable).sum())
        has_batch = "batch" in self.node_pool
        w: list[_Workload] = _daemonset_workloads()
        w.append(_coredns_workload(int(np.clip(n // 16 + 1, 2, 40))))
        w.append(
            _Workload(
                kind="Deployment",
                namespace="kube-system",
                name="metrics-server",
                team="platform",
                replicas=1,
                cpu_m=100,
                memory_b=200 * MiB,
                scalable=False,
                tolerations="critical",
                priority_class="system-cluster-critical",
                priority=2000000000,
                empty_dir=True,
                cpu_ratio=0.3,
                memory_ratio=0.5,
                image="registry.example.com/platform/metrics-server:0.7.2",
                service_account="metrics-server",
            )
        )
        w.append(
            _Workload(
                kind="StatefulSet",
                namespace="monitoring",
                name="prometheus",
                team="platform",
                replicas=2,
                cpu_m=500,
                memory_b=2 * GiB,
                limits="burst",
                pvc_size="100Gi",
                pdb=("maxUnavailable", 1),
                cpu_ratio=0.5,
                memory_ratio=0.85,
                image="registry.example.com/platform/prometheus:2.54.1",
                service_account="prometheus",
            )
        )
        w.append(
            _Workload(
                kind="Deployment",
                namespace="payments",
                name="payments-api",
                team="payments",
                replicas=min(max(3, n // 20), 12, n_default_up),
                cpu_m=400,
                memory_b=768 * MiB,
                limits="burst",
                sidecar=True,
                anti_affinity="hostname",
                pdb=("maxUnavailable", 1),
                cpu_ratio=0.7,
                memory_ratio=0.8,
            )
        )
        w.append(
            _Workload(
                kind="Deployment",
                namespace="payments",
                name="ledger",
                team="payments",
                replicas=3,
                cpu_m=300,
                memory_b=1 * GiB,
                limits="guaranteed",
                # minAvailable equal to replicas: a common setting that blocks every eviction.
                pdb=("minAvailable", 3),
                cpu_ratio=0.5,
                memory_ratio=0.85,
            )
        )
        if self.zones >= 2:
            w.append(
                _Workload(
                    kind="StatefulSet",
                    namespace="data",
                    name="zookeeper",
                    team="data",
                    replicas=min(3, self.zones),
                    cpu_m=250,
                    memory_b=1 * GiB,
                    limits="burst",
                    pvc_size="10Gi",
                    anti_affinity="zone",
                    pdb=("maxUnavailable", 1),
                    cpu_ratio=0.4,
                    memory_ratio=0.8,
                )
            )
        w.append(
            _Workload(
                kind="StatefulSet",
                namespace="data",
                name="postgres",
                team="data",
                replicas=2,
                cpu_m=1000,
                memory_b=4 * GiB,
                limits="guaranteed",
                pvc_size="50Gi",
                pdb=("minAvailable", 1),
                cpu_ratio=0.5,
                memory_ratio=0.9,
            )
        )
        w.append(
            _Workload(
                kind="Deployment",
                namespace="shop",
                name="frontend",
                team="shop",
                replicas=max(4, n // 5),
                cpu_m=300,
                memory_b=512 * MiB,
                limits="burst",
                sidecar=True,
                pdb=("maxUnavailable", "25%"),
                cpu_ratio=0.8,
                memory_ratio=0.75,
            )
        )
        w.append(
            _Workload(
                kind="Deployment",
                namespace="search",
                name="indexer",
                team="search",
                replicas=max(2, n // 25),
                cpu_m=500,
                memory_b=2 * GiB,
                empty_dir=True,
                cpu_ratio=0.7,
                memory_ratio=0.85,
            )
        )
        if n >= 20:
            # A pod somebody started by hand: nothing would recreate it.
            w.append(
                _Workload(
                    kind="Pod",
                    namespace="default",
                    name="debug-shell",
                    team="platform",
                    replicas=1,
                    cpu_m=100,
                    memory_b=128 * MiB,
                    cpu_ratio=0.05,
                    memory_ratio=0.3,
                )
            )
        if has_batch:
            n_batch = self.node_pool.count("batch")
            batch_pods = max(2, round(n_batch * (self.pods_per_node - _DS_COUNT) * 0.9))
            n_batch_workloads = max(2, batch_pods // 40)
            split = rng.multinomial(
                batch_pods - n_batch_workloads, [1 / n_batch_workloads] * n_batch_workloads
            )
            for i, extra in enumerate(split.tolist()):
                w.append(
                    _Workload(
                        kind="Deployment",
                        namespace="batch",
                        name=("report-builder", "etl-worker")[i] if i < 2 else f"etl-shard-{i - 1}",
                        team="analytics",
                        replicas=1 + extra,
                        cpu_m=1000,
                        memory_b=2 * GiB,
                        pool="batch",
                        tolerations="batch",
                        empty_dir=True,
                        cpu_ratio=0.9,
                        memory_ratio=0.8,
                    )
                )

        non_ds_target = n * (self.pods_per_node - _DS_COUNT)
        default_target = non_ds_target - sum(x.replicas for x in w if x.pool == "batch")
        have = sum(x.replicas for x in w if x.pool == "default")
        w.extend(self.filler_workloads(default_target - have))
        self.workloads = w

    def filler_workloads(self, pods: int) -> list[_Workload]:
        rng = self.rng
        out: list[_Workload] = []
        if pods <= 0:
            return out
        # Batches of random draws keep the per-workload cost low at 5,000 nodes.
        batch = max(16, pods // 4)
        taken: set[tuple[str, str]] = set()
        while pods > 0:
            replicas = 1 + np.floor(rng.lognormal(np.log(4.0), 0.9, size=batch)).astype(int)
            replicas = np.minimum(replicas, 80)
            teams = rng.integers(0, len(_TEAMS), size=batch)
            word_a = rng.integers(0, len(_WORDS_A), size=batch)
            word_b = rng.integers(0, len(_WORDS_B), size=batch)
            cpu = rng.lognormal(np.log(250.0), 0.7, size=batch)
            gib_per_core = rng.lognormal(np.log(2.5), 0.5, size=batch)
            u = rng.random(size=(6, batch))
            cpu_ratio = rng.lognormal(np.log(0.55), 0.35, size=batch)
            memory_ratio = rng.uniform(0.65, 0.95, size=batch)
            for i in range(batch):
                if pods <= 0:
                    break
                r = int(min(replicas[i], pods))
                team = _TEAMS[teams[i]]
                base = f"{_WORDS_A[word_a[i]]}-{_WORDS_B[word_b[i]]}"
                name, k = base, 1
                while (team, name) in taken:
                    k += 1
                    name = f"{base}-{k}"
                taken.add((team, name))
                pdb: tuple[str, int | str] | None = None
                if r >= 2 and u[0, i] < 0.25:
                    roll = u[1, i]
                    if roll < 0.5:
                        pdb = ("maxUnavailable", 1)
                    elif roll < 0.75:
                        pdb = ("minAvailable", "50%")
                    elif roll < 0.9:
                        pdb = ("maxUnavailable", "25%")
                    else:
                        pdb = ("minAvailable", r)  # blocks every eviction
                limits = "guaranteed" if u[2, i] < 0.15 else ("burst" if u[2, i] < 0.6 else "none")
                out.append(
                    _Workload(
                        kind="Deployment",
                        namespace=team,
                        name=name,
                        team=team,
                        replicas=r,
                        cpu_m=float(cpu[i]),
                        memory_b=float(cpu[i] / 1000 * gib_per_core[i] * GiB),
                        sidecar=bool(u[3, i] < 0.3),
                        limits=limits,
                        empty_dir=bool(u[4, i] < 0.15),
                        pdb=pdb,
                        cpu_ratio=float(cpu_ratio[i]),
                        memory_ratio=float(memory_ratio[i]),
                        old_revisions=int(u[5, i] * 3),
                    )
                )
                pods -= r
        return out

    def size_workloads(self) -> None:
        """Scale the scalable requests so that each pool's pods fill its request budget."""
        sidecar_cpu_m, sidecar_memory_b = 50, 64 * MiB
        up = self.node_class != "down"
        for pool in ("default", "batch"):
            in_pool = np.array([p == pool for p in self.node_pool]) & up
            members = [x for x in self.workloads if x.pool == pool]
            if not members or not in_pool.any():
                continue
            ds = [x for x in self.workloads if x.pool == "all"]
            fixed_cpu = in_pool.sum() * sum(x.cpu_m for x in ds)
            fixed_memory = in_pool.sum() * sum(x.memory_b for x in ds)
            raw_cpu = raw_memory = 0.0
            for x in members:
                side = x.replicas if x.sidecar else 0
                fixed_cpu += side * sidecar_cpu_m
                fixed_memory += side * sidecar_memory_b
                if x.scalable:
                    raw_cpu += x.replicas * x.cpu_m
                    raw_memory += x.replicas * x.memory_b
                else:
                    fixed_cpu += x.replicas * x.cpu_m
                    fixed_memory += x.replicas * x.memory_b
            budget_cpu = _BUDGET_USE * self.budget_cpu_m[in_pool].sum()
            budget_memory = _BUDGET_USE * self.budget_memory_b[in_pool].sum()
            scale_cpu = max(budget_cpu - fixed_cpu, 0.05 * budget_cpu) / max(raw_cpu, 1.0)
            scale_memory = max(budget_memory - fixed_memory, 0.05 * budget_memory) / max(
                raw_memory, 1.0
            )
            # No single pod may be too big for the smallest node of its pool.
            cap_cpu = 0.3 * self.alloc_cpu_m[in_pool].min()
            cap_memory = 0.3 * self.alloc_memory_b[in_pool].min()
            for x in members:
                cpu, memory = x.cpu_m, x.memory_b
                if x.scalable:
                    cpu, memory = cpu * scale_cpu, memory * scale_memory
                x.main_cpu_m = max(10, 5 * round(min(cpu, cap_cpu) / 5))
                x.main_memory_b = max(
                    32 * MiB, 8 * MiB * round(min(memory, cap_memory) / (8 * MiB))
                )
        for x in self.workloads:
            if x.pool == "all":
                x.main_cpu_m, x.main_memory_b = int(x.cpu_m), int(x.memory_b)
            x.pod_cpu_m = x.main_cpu_m + (sidecar_cpu_m if x.sidecar else 0)
            x.pod_memory_b = x.main_memory_b + (sidecar_memory_b if x.sidecar else 0)

    # -- placement --

    def place_pods(self) -> None:
        """DaemonSets first, then the anti-affinity replicas on distinct nodes or zones, then
        everything else least-allocated against each node's request budget."""
        rng, n = self.rng, self.n
        used_cpu = np.zeros(n, dtype=np.int64)
        used_memory = np.zeros(n, dtype=np.int64)
        used_pods = np.zeros(n, dtype=np.int64)
        pod_workload: list[int] = []
        pod_node: list[int] = []

        def put(wi: int, node: int) -> None:
            x = self.workloads[wi]
            used_cpu[node] += x.pod_cpu_m
            used_memory[node] += x.pod_memory_b
            used_pods[node] += 1
            x.pod_indices.append(len(pod_workload))
            pod_workload.append(wi)
            pod_node.append(node)

        for wi, x in enumerate(self.workloads):
            if x.kind == "DaemonSet":
                for node in range(n):
                    put(wi, node)

        up = (self.node_class != "down") & self.schedulable
        open_default = np.flatnonzero(up & np.array([p == "default" for p in self.node_pool]))

        def fits(wi: int, node: int) -> bool:
            x = self.workloads[wi]
            return bool(
                used_cpu[node] + x.pod_cpu_m <= self.alloc_cpu_m[node]
                and used_memory[node] + x.pod_memory_b <= self.alloc_memory_b[node]
                and used_pods[node] < self.alloc_pods[node]
            )

        for wi, x in enumerate(self.workloads):
            if x.anti_affinity == "hostname":
                for node in rng.permutation(open_default).tolist():
                    if len(x.pod_indices) == x.replicas:
                        break
                    if fits(wi, node):
                        put(wi, node)
            elif x.anti_affinity == "zone":
                for z in range(x.replicas):
                    in_zone = [i for i in open_default.tolist() if self.node_zone[i] == z]
                    for node in rng.permutation(in_zone).tolist():
                        if fits(wi, node):
                            put(wi, node)
                            break

        # Pods that must land go first (system add-ons, StatefulSets), the rest in random order.
        must: list[int] = []
        rest: list[int] = []
        for wi, x in enumerate(self.workloads):
            if x.kind == "DaemonSet" or x.anti_affinity:
                continue
            target = must if (not x.scalable or x.kind == "StatefulSet") else rest
            target.extend([wi] * x.replicas)
        order = must + [rest[i] for i in rng.permutation(len(rest)).tolist()]

        # One heap per pool, or per pool and band of ratio in the usage-independent family;
        # a workload tries its own heap first, then the others in the order it lists them.
        heaps: dict[tuple[str, int], list[tuple[float, int]]] = {}
        routes: dict[int, list[tuple[str, int]]] = {}
        for pool in ("default", "batch"):
            members = [
                i for i in range(n) if self.node_pool[i] == pool and self.node_class[i] != "down"
            ]
            placed = sorted({wi for wi in order if self.workloads[wi].pool == pool})
            if self.independent and pool == "default" and members:
                node_band, workload_band = self._ratio_bands(members, placed, used_cpu, used_memory)
            else:
                node_band = dict.fromkeys(members, 0)
                workload_band = dict.fromkeys(placed, 0)
            bands = sorted(set(node_band.values()))
            for band in bands:
                heap = [
                    (self._fill_key(i, used_cpu, used_memory), i)
                    for i in members
                    if node_band[i] == band
                ]
                heapq.heapify(heap)
                heaps[pool, band] = heap
            for wi in placed:
                own = workload_band[wi]
                routes[wi] = [(pool, b) for b in sorted(bands, key=lambda b: (abs(b - own), b))]

        for wi in order:
            for route in routes[wi]:
                heap = heaps[route]
                # A replica that fits none of the emptiest few nodes is dropped (the pool is
                # full); replicas are counted from placed pods below.
                tried: list[tuple[float, int]] = []
                landed = False
                while heap and len(tried) < 8:
                    entry = heapq.heappop(heap)
                    if fits(wi, entry[1]):
                        put(wi, entry[1])
                        heapq.heappush(
                            heap, (self._fill_key(entry[1], used_cpu, used_memory), entry[1])
                        )
                        landed = True
                        break
                    tried.append(entry)
                for entry in tried:
                    heapq.heappush(heap, entry)
                if landed:
                    break
        for x in self.workloads:
            if x.kind != "DaemonSet":
                x.replicas = len(x.pod_indices)
        self.workloads = [x for x in self.workloads if x.replicas or x.kind == "DaemonSet"]

        self.pod_workload = np.array(pod_workload, dtype=np.int64)
        self.pod_node = np.array(pod_node, dtype=np.int64)
        self.used_cpu_m = used_cpu
        self.used_memory_b = used_memory
        self.used_pods = used_pods

    def _ratio_bands(
        self,
        members: list[int],
        workloads: list[int],
        used_cpu: np.ndarray,
        used_memory: np.ndarray,
    ) -> tuple[dict[int, int], dict[int, int]]:
        """Bands of equal request mass: nodes by the cpu usage per request their target
        needs, workloads by their ratio, so that under-requested workloads fill the nodes
        that use much and request little, and over-requested ones the reverse."""
        nodes = np.array(members)
        needed = self.target_cpu[nodes] * self.alloc_cpu_m[nodes]
        needed = needed / np.maximum(self.budget_cpu_m[nodes], 1.0)
        # What a node will take, in cpu: placement stops at the first budget it reaches.
        placed = [wi for wi in workloads for _ in range(self.workloads[wi].replicas)]
        cpu_per_byte = sum(self.workloads[wi].pod_cpu_m for wi in placed) / max(
            sum(self.workloads[wi].pod_memory_b for wi in placed), 1
        )
        room = np.minimum(
            _BUDGET_USE * self.budget_cpu_m[nodes] - used_cpu[nodes],
            (_BUDGET_USE * self.budget_memory_b[nodes] - used_memory[nodes]) * cpu_per_byte,
        )
        room = np.maximum(room, 1.0)
        count = min(_RATIO_BANDS, len(members))
        node_band = _quantile_bands(needed, room, count)
        wl = np.array(workloads, dtype=np.int64)
        ratio = np.array([self.workloads[wi].cpu_ratio for wi in workloads])
        mass = np.array(
            [self.workloads[wi].replicas * self.workloads[wi].pod_cpu_m for wi in workloads],
            dtype=float,
        )
        workload_band = _quantile_bands(ratio, np.maximum(mass, 1.0), count)
        return (
            dict(zip(nodes.tolist(), node_band.tolist(), strict=True)),
            dict(zip(wl.tolist(), workload_band.tolist(), strict=True)),
        )

    def _fill_key(self, node: int, used_cpu: np.ndarray, used_memory: np.ndarray) -> float:
        """Smallest first: the node with the most of its budget left, relative to the budget."""
        left_cpu = 1.0 - used_cpu[node] / max(self.budget_cpu_m[node], 1.0)
        left_memory = 1.0 - used_memory[node] / max(self.budget_memory_b[node], 1.0)
        return -float(min(left_cpu, left_memory))

    # -- usage --

    def compute_usage(self) -> None:
        rng, n = self.rng, self.n
        count = len(self.pod_workload)
        wl = self.workloads
        # Workload indices shifted when empty workloads were dropped: re-map by identity.
        index_of = {id(x): i for i, x in enumerate(wl)}
        remap = np.zeros(count, dtype=np.int64)
        for x in wl:
            remap[x.pod_indices] = index_of[id(x)]
        self.pod_workload = remap

        req_cpu = np.array([x.pod_cpu_m for x in wl], dtype=float)[remap] / 1000.0
        req_memory = np.array([x.pod_memory_b for x in wl], dtype=float)[remap]
        cpu_ratio = np.array([x.cpu_ratio for x in wl])[remap]
        memory_ratio = np.array([x.memory_ratio for x in wl])[remap]
        lim_cpu, lim_memory = self._limits()
        scalable = np.array([x.scalable and x.pool != "all" for x in wl])[remap]

        cpu_noise, cpu_bounds, memory_bounds = self.usage_spread()
        raw_cpu = req_cpu * cpu_ratio * rng.lognormal(0.0, cpu_noise, size=count)
        raw_memory = req_memory * memory_ratio * rng.lognormal(0.0, 0.1, size=count)
        self.overhead_cpu = rng.uniform(0.04, 0.15, size=n)
        self.overhead_memory = rng.uniform(250, 600, size=n) * MiB

        cpu = self._fit_to_target(
            raw_cpu,
            scalable,
            lim_cpu[remap],
            self.target_cpu * self.alloc_cpu_m / 1000.0 - self.overhead_cpu,
            cpu_bounds,
        )
        memory = self._fit_to_target(
            raw_memory,
            scalable,
            0.97 * lim_memory[remap],
            self.target_memory * self.alloc_memory_b - self.overhead_memory,
            memory_bounds,
        )
        if self.independent:
            low, high = _RATIO_BOUNDS
            cpu = np.where(
                scalable,
                np.clip(cpu, low * req_cpu, np.minimum(high * req_cpu, lim_cpu[remap])),
                cpu,
            )
            memory = np.where(
                scalable,
                np.clip(
                    memory, low * req_memory, np.minimum(1.5 * req_memory, 0.97 * lim_memory[remap])
                ),
                memory,
            )
        self.pod_usage_cpu = np.maximum(np.round(cpu, 3), 0.001)
        self.pod_usage_memory = np.maximum(np.round(memory / 4096), 256) * 4096
        node_cpu = np.bincount(self.pod_node, weights=self.pod_usage_cpu, minlength=n)
        node_memory = np.bincount(self.pod_node, weights=self.pod_usage_memory, minlength=n)
        self.node_usage_cpu = np.round(node_cpu + self.overhead_cpu, 3)
        self.node_usage_memory = np.round((node_memory + self.overhead_memory) / 4096) * 4096

    def usage_spread(self) -> tuple[float, tuple[float, float], tuple[float, float]]:
        """Per-pod cpu noise (log-normal sigma) and the bounds of the per-node factor that
        brings cpu and memory usage to the node's target."""
        if self.independent:
            # The ratio is the workload's and its node's: little noise, little correction.
            return 0.12, (0.5, 2.0), (0.4, 1.6)
        return 0.45, (0.2, 3.5), (0.4, 1.35)

    def _limits(self) -> tuple[np.ndarray, np.ndarray]:
        """Per workload, the pod's cpu (cores) and memory limits; inf where a container has none."""
        cpu, memory = [], []
        for x in self.workloads:
            if x.limits == "guaranteed":
                cpu.append(x.pod_cpu_m / 1000.0)
                memory.append(float(x.pod_memory_b))
            elif x.limits == "burst":
                side_cpu, side_memory = (50 * 2, 64 * MiB * 2) if x.sidecar else (0, 0)
                cpu.append((2 * x.main_cpu_m + side_cpu) / 1000.0)
                memory.append(float(x.main_memory_b * 3 // 2 + side_memory))
            else:
                cpu.append(math.inf)
                memory.append(math.inf)
        return np.array(cpu), np.array(memory)

    def _fit_to_target(
        self,
        raw: np.ndarray,
        scalable: np.ndarray,
        limit: np.ndarray,
        target: np.ndarray,
        bounds: tuple[float, float],
    ) -> np.ndarray:
        """Scale the scalable pods of each node so the node meets its usage target, never
        above a limit (a container at its cpu limit is throttled, at its memory limit killed)."""
        n = self.n
        usage = np.minimum(raw, limit)
        free = scalable.copy()
        for _ in range(3):
            fixed = np.bincount(self.pod_node, weights=np.where(free, 0.0, usage), minlength=n)
            movable = np.bincount(self.pod_node, weights=np.where(free, usage, 0.0), minlength=n)
            factor = np.where(movable > 0, (target - fixed) / np.maximum(movable, 1e-9), 1.0)
            factor = np.clip(factor, *bounds)
            scaled = usage * factor[self.pod_node]
            usage = np.where(free, np.minimum(scaled, limit), usage)
            free = free & (scaled < limit)
        return usage

    # -- time --

    def compute_ages(self) -> None:
        """Creation ages in seconds before now, consistent along owner chains."""
        rng = self.rng
        count = len(self.pod_workload)
        node_age = self.node_age[self.pod_node]
        ages = np.exp(rng.uniform(np.log(2 * 3600), np.log(12 * 86400), size=count))
        ages = np.minimum(ages, node_age - 60)
        on_cold = self.node_class[self.pod_node] == "cold"
        ages[on_cold] = rng.uniform(600, np.maximum(node_age[on_cold] - 60, 601))
        # About a third of a hot node's pods are the replicas re-created during the outage.
        is_ds = np.array([x.kind == "DaemonSet" for x in self.workloads])[self.pod_workload]
        moved = (self.node_class[self.pod_node] == "hot") & ~is_ds
        moved &= rng.random(count) < 0.35
        ages[moved] = self.outage_age - rng.uniform(30, 400, size=int(moved.sum()))
        for x in self.workloads:
            if x.kind == "DaemonSet":
                rollout = float(rng.uniform(86400, 20 * 86400))
                idx = np.array(x.pod_indices)
                ages[idx] = np.minimum(node_age[idx], rollout) - rng.uniform(5, 40, size=len(idx))
        self.pod_age = np.maximum(ages, 120.0)
        self.ready_age = self.pod_age - rng.uniform(3, 40, size=count)
        restarts = np.where(rng.random(count) < 0.15, rng.geometric(0.5, size=count), 0)
        crashy = rng.random(count) < 0.005
        self.restarts = np.where(crashy, rng.integers(10, 60, size=count), restarts)

    # -- objects --

    def node_objects(self) -> list[dict[str, Any]]:
        n = self.n
        images = self.node_images()
        uids = _uids(self.rng, n)
        self.node_uid = uids
        created = _timestamps(self.now, self.node_age)
        heartbeat = _timestamps(self.now, self.rng.uniform(2, 30, size=n))
        self.metrics_age = self.rng.uniform(10, 40, size=n)
        self.node_ip = [
            f"172.{16 + (i >> 16)}.{(i >> 8) & 255}.{(i & 255) + 0}" for i in range(10, n + 10)
        ]
        objects = []
        for i in range(n):
            name = self.node_names[i]
            t = self.node_type[i]
            zone = self.zone_names[self.node_zone[i]]
            pool = self.node_pool[i]
            ready = bool(self.ready[i])
            taints: list[dict[str, Any]] = []
            if pool == "batch":
                taints.append({"key": "dedicated", "value": "batch", "effect": "NoSchedule"})
            if not self.schedulable[i]:
                taints.append(
                    {
                        "key": "node.kubernetes.io/unschedulable",
                        "effect": "NoSchedule",
                        "timeAdded": heartbeat[i],
                    }
                )
            if not ready:
                taints.append({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"})
                taints.append(
                    {
                        "key": "node.kubernetes.io/not-ready",
                        "effect": "NoExecute",
                        "timeAdded": created[i],
                    }
                )
            spec: dict[str, Any] = {
                "podCIDR": f"10.{i >> 8}.{i & 255}.0/24",
                "podCIDRs": [f"10.{i >> 8}.{i & 255}.0/24"],
                "providerID": f"sim://{zone}/{name}",
            }
            if taints:
                spec["taints"] = taints
            if not self.schedulable[i]:
                spec["unschedulable"] = True
            capacity = {
                "cpu": str(t.cores),
                "ephemeral-storage": "101430960Ki",
                "memory": f"{int(self.capacity_memory_ki[i])}Ki",
                "pods": "110",
            }
            allocatable = {
                "cpu": cpu_quantity(int(self.alloc_cpu_m[i])),
                "ephemeral-storage": "93478772582",
                "memory": f"{int(self.alloc_memory_ki[i])}Ki",
                "pods": "110",
            }
            conditions = node_conditions(heartbeat[i], created[i], ready=ready)
            objects.append(
                node_object(
                    name=name,
                    uid=uids[i],
                    resource_version=self.next_rv(),
                    created=created[i],
                    instance_type=t.name,
                    zone=zone,
                    pool=pool,
                    spec=spec,
                    capacity=capacity,
                    allocatable=allocatable,
                    conditions=conditions,
                    ip=self.node_ip[i],
                )
            )
            objects[-1]["status"]["images"] = images[i]
        return objects

    def node_images(self) -> list[list[Mapping[str, Any]]]:
        """Each node's status.images: the images of the pods placed on it and the pause
        image (see _images.listed), one entry per image shared by the nodes."""
        pulled: list[set[str]] = [{_images.PAUSE_IMAGE} for _ in range(self.n)]
        pod_node = self.pod_node
        for x in self.workloads:
            names = self._images(x)
            for node in set(pod_node[x.pod_indices].tolist()):
                pulled[node].update(names)
        entries = {image: _images.entry(image) for image in set().union(*pulled)}
        return [_images.listed(entries[image] for image in images) for images in pulled]

    def _tolerations(self, kind: str) -> list[dict[str, Any]]:
        # What admission adds to every pod, so that a node blip does not evict at once.
        defaults: list[dict[str, Any]] = [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ]
        match kind:
            case "batch":
                return [
                    {
                        "key": "dedicated",
                        "operator": "Equal",
                        "value": "batch",
                        "effect": "NoSchedule",
                    },
                    *defaults,
                ]
            case "critical":
                return [
                    {"key": "CriticalAddonsOnly", "operator": "Exists"},
                    {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
                    *defaults,
                ]
            case "all":
                # The DaemonSet controller's own tolerations, plus "everything" so agents run
                # on the tainted pool too.
                return [{"operator": "Exists"}] + [
                    {"key": f"node.kubernetes.io/{key}", "operator": "Exists", "effect": effect}
                    for key, effect in (
                        ("not-ready", "NoExecute"),
                        ("unreachable", "NoExecute"),
                        ("disk-pressure", "NoSchedule"),
                        ("memory-pressure", "NoSchedule"),
                        ("pid-pressure", "NoSchedule"),
                        ("unschedulable", "NoSchedule"),
                    )
                ]
        return defaults

    def _images(self, x: _Workload) -> tuple[str, ...]:
        """The images of the workload's containers, the sidecar's after the main one's."""
        main = (
            x.image
            or f"registry.example.com/{x.team}/{x.name}:1.{len(x.name) % 9}.{len(x.namespace)}"
        )
        return (main, _PROXY_IMAGE) if x.sidecar else (main,)

    def _containers(self, x: _Workload) -> list[dict[str, Any]]:
        image = self._images(x)[0]
        resources: dict[str, Any] = {
            "requests": {
                "cpu": cpu_quantity(x.main_cpu_m),
                "memory": memory_quantity(x.main_memory_b),
            }
        }
        if x.limits == "guaranteed":
            resources["limits"] = dict(resources["requests"])
        elif x.limits == "burst":
            resources["limits"] = {
                "cpu": cpu_quantity(2 * x.main_cpu_m),
                "memory": memory_quantity(x.main_memory_b * 3 // 2),
            }
        mounts: list[dict[str, Any]] = []
        if x.empty_dir:
            mounts.append({"name": "scratch", "mountPath": "/tmp/scratch"})
        if x.pvc_size:
            mounts.append({"name": "data", "mountPath": "/var/lib/data"})
        mounts += [{"name": v, "mountPath": f"/host{p}", "readOnly": True} for v, p in x.host_paths]
        main: dict[str, Any] = {
            "name": x.name,
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "resources": resources,
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }
        if mounts:
            main["volumeMounts"] = mounts
        if x.kind != "DaemonSet":
            main["ports"] = [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
        containers = [main]
        if x.sidecar:
            side_resources: dict[str, Any] = {"requests": {"cpu": "50m", "memory": "64Mi"}}
            if x.limits == "guaranteed":
                side_resources["limits"] = {"cpu": "50m", "memory": "64Mi"}
            elif x.limits == "burst":
                side_resources["limits"] = {"cpu": "100m", "memory": "128Mi"}
            containers.append(
                {
                    "name": "proxy",
                    "image": _PROXY_IMAGE,
                    "imagePullPolicy": "IfNotPresent",
                    "resources": side_resources,
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }
            )
        return containers

    def _pod_spec_parts(self, x: _Workload) -> dict[str, Any]:
        """The parts of a pod spec its siblings share (see the module docstring)."""
        parts: dict[str, Any] = {
            "containers": self._containers(x),
            "tolerations": self._tolerations(x.tolerations),
        }
        volumes: list[dict[str, Any]] = []
        if x.empty_dir:
            volumes.append({"name": "scratch", "emptyDir": {}})
        for v, p in x.host_paths:
            volumes.append({"name": v, "hostPath": {"path": p, "type": ""}})
        if volumes:
            parts["volumes"] = volumes
        if x.pool == "batch":
            parts["nodeSelector"] = {"pool": "batch"}
        if x.anti_affinity:
            key = (
                "kubernetes.io/hostname"
                if x.anti_affinity == "hostname"
                else "topology.kubernetes.io/zone"
            )
            parts["affinity"] = {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": x.selector}, "topologyKey": key}
                    ]
                }
            }
        return parts

    def workload_and_pod_objects(self) -> list[dict[str, Any]]:
        rng = self.rng
        count = len(self.pod_workload)
        pod_uids = _uids(rng, count)
        suffixes = _safe_strings(rng, count, 5)
        created = _timestamps(self.now, self.pod_age)
        ready_at = _timestamps(self.now, self.ready_age)
        restarts = self.restarts.tolist()
        pod_node = self.pod_node.tolist()
        n_containers = sum(
            2 if self.workloads[w].sidecar else 1 for w in self.pod_workload.tolist()
        )
        container_ids = iter(_hex_ids(rng, n_containers))
        ip_next = [2] * self.n
        node_ready = self.ready.tolist()
        pod_age = self.pod_age

        controllers: list[dict[str, Any]] = []
        pods: list[dict[str, Any]] = []
        pdbs: list[dict[str, Any]] = []
        self.pod_keys: list[str] = [""] * count
        for x in self.workloads:
            idx = x.pod_indices
            uid = self.uid()
            oldest_pod = float(pod_age[idx].max()) if idx else float(rng.uniform(86400, 864000))
            own_age = oldest_pod + float(rng.uniform(5, 60))
            parent_age = own_age + float(rng.uniform(0, 30 * 86400)) * (x.old_revisions > 0)
            own_created, parent_created = _timestamps(self.now, np.array([own_age, parent_age]))
            parts = self._pod_spec_parts(x)
            template_hash = self.name_hash()
            labels = {**x.selector, "team": x.team}
            template_spec = self._template_spec(x)
            ns, name = x.namespace, x.name
            owner_ref: dict[str, Any] | None = None
            generate_name = ""
            extra_labels: dict[str, str] = {}
            if x.kind == "Deployment":
                rs_name = f"{name}-{template_hash}"
                rs_uid = self.uid()
                revision = str(1 + x.old_revisions)
                controllers.append(
                    self._deployment(x, uid, parent_created, labels, template_spec, revision)
                )
                for old in range(x.old_revisions):
                    old_hash = self.name_hash()
                    controllers.append(
                        self._replica_set(
                            x,
                            f"{name}-{old_hash}",
                            self.uid(),
                            uid,
                            parent_created,
                            labels,
                            old_hash,
                            template_spec,
                            0,
                            str(old + 1),
                        )
                    )
                controllers.append(
                    self._replica_set(
                        x,
                        rs_name,
                        rs_uid,
                        uid,
                        own_created,
                        labels,
                        template_hash,
                        template_spec,
                        x.replicas,
                        revision,
                    )
                )
                owner_ref = owner_reference("ReplicaSet", rs_name, rs_uid)
                generate_name = f"{rs_name}-"
                extra_labels = {"pod-template-hash": template_hash}
            elif x.kind == "StatefulSet":
                revision_hash = f"{name}-{template_hash}"
                controllers.append(
                    self._stateful_set(x, uid, own_created, labels, template_spec, revision_hash)
                )
                owner_ref = owner_reference("StatefulSet", name, uid)
                generate_name = f"{name}-"
                extra_labels = {"controller-revision-hash": revision_hash}
            elif x.kind == "DaemonSet":
                revision_hash = template_hash[:9]
                controllers.append(self._daemon_set(x, uid, own_created, labels, template_spec))
                owner_ref = owner_reference("DaemonSet", name, uid)
                generate_name = f"{name}-"
                extra_labels = {
                    "controller-revision-hash": revision_hash,
                    "pod-template-generation": "1",
                }
            if x.pdb is not None:
                pdbs.append(self._pdb(x, own_created))
            pod_labels = {**labels, **extra_labels}
            qos_class = _qos_class(x.limits)
            images = [
                (c["name"], c["image"], f"{c['image']}@sha256:{_images.digest(c['image'])}")
                for c in parts["containers"]
            ]

            used_names: set[str] = set()
            for ordinal, p in enumerate(idx):
                node = pod_node[p]
                node_name = self.node_names[node]
                if x.kind in ("Deployment", "DaemonSet"):
                    pod_name = _unique_name(generate_name, suffixes[p], p, used_names)
                elif x.kind == "StatefulSet":
                    pod_name = f"{name}-{ordinal}"
                else:
                    pod_name = name
                meta: dict[str, Any] = {
                    "name": pod_name,
                    "namespace": ns,
                    "uid": pod_uids[p],
                    "resourceVersion": self.next_rv(),
                    "creationTimestamp": created[p],
                    "labels": dict(pod_labels),
                }
                if owner_ref is not None:
                    meta["generateName"] = generate_name
                    meta["ownerReferences"] = [dict(owner_ref)]
                spec: dict[str, Any] = {
                    "containers": parts["containers"],
                    "dnsPolicy": "ClusterFirst",
                    "enableServiceLinks": True,
                    "nodeName": node_name,
                    "preemptionPolicy": "PreemptLowerPriority",
                    "priority": x.priority,
                    "restartPolicy": "Always",
                    "schedulerName": "default-scheduler",
                    "securityContext": {},
                    "serviceAccountName": x.service_account,
                    "terminationGracePeriodSeconds": 30,
                    "tolerations": parts["tolerations"],
                }
                if x.priority_class:
                    spec["priorityClassName"] = x.priority_class
                if "volumes" in parts:
                    spec["volumes"] = parts["volumes"]
                if "nodeSelector" in parts:
                    spec["nodeSelector"] = parts["nodeSelector"]
                if "affinity" in parts:
                    spec["affinity"] = parts["affinity"]
                if x.kind == "StatefulSet":
                    meta["labels"]["statefulset.kubernetes.io/pod-name"] = pod_name
                    meta["labels"]["apps.kubernetes.io/pod-index"] = str(ordinal)
                    spec["hostname"] = pod_name
                    spec["subdomain"] = name
                    spec["volumes"] = [
                        {"name": "data", "persistentVolumeClaim": {"claimName": f"data-{pod_name}"}}
                    ]
                elif x.kind == "DaemonSet":
                    spec["affinity"] = pinned_to(node_name)
                ready = node_ready[node]
                ready_status = "True" if ready else "False"
                statuses = []
                for c_i, (c_name, image, image_id) in enumerate(images):
                    statuses.append(
                        {
                            "name": c_name,
                            "image": image,
                            "imageID": image_id,
                            "containerID": f"containerd://{next(container_ids)}",
                            "ready": ready,
                            "started": True,
                            "restartCount": restarts[p] if c_i == 0 else 0,
                            "state": {"running": {"startedAt": ready_at[p]}},
                        }
                    )
                ip = f"10.{node >> 8}.{node & 255}.{ip_next[node]}"
                ip_next[node] += 1
                pods.append(
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": meta,
                        "spec": spec,
                        "status": {
                            "phase": "Running",
                            "conditions": [
                                {
                                    "type": "Initialized",
                                    "status": "True",
                                    "lastTransitionTime": created[p],
                                },
                                {
                                    "type": "Ready",
                                    "status": ready_status,
                                    "lastTransitionTime": ready_at[p],
                                },
                                {
                                    "type": "ContainersReady",
                                    "status": ready_status,
                                    "lastTransitionTime": ready_at[p],
                                },
                                {
                                    "type": "PodScheduled",
                                    "status": "True",
                                    "lastTransitionTime": created[p],
                                },
                            ],
                            "hostIP": self.node_ip[node],
                            "podIP": ip,
                            "podIPs": [{"ip": ip}],
                            "startTime": created[p],
                            "qosClass": qos_class,
                            "containerStatuses": statuses,
                        },
                    }
                )
                self.pod_keys[p] = f"{ns}/{pod_name}"
        return controllers + pdbs + pods

    def _template_spec(self, x: _Workload) -> dict[str, Any]:
        # Built afresh rather than deep-copied: deepcopy costs seconds at 5,000 nodes.
        spec = self._pod_spec_parts(x)
        spec.update(
            {
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "securityContext": {},
                "serviceAccountName": x.service_account,
                "terminationGracePeriodSeconds": 30,
            }
        )
        # Admission adds the not-ready/unreachable tolerations to pods, not to templates.
        spec["tolerations"] = [t for t in spec["tolerations"] if "tolerationSeconds" not in t]
        if not spec["tolerations"]:
            del spec["tolerations"]
        if x.priority_class:
            spec["priorityClassName"] = x.priority_class
        return spec

    def _meta(self, x: _Workload, uid: str, created: str, labels: dict[str, str]) -> dict[str, Any]:
        return {
            "name": x.name,
            "namespace": x.namespace,
            "uid": uid,
            "resourceVersion": self.next_rv(),
            "generation": 1,
            "creationTimestamp": created,
            "labels": dict(labels),
        }

    def _deployment(
        self,
        x: _Workload,
        uid: str,
        created: str,
        labels: dict[str, str],
        template_spec: dict[str, Any],
        revision: str,
    ) -> dict[str, Any]:
        meta = self._meta(x, uid, created, labels)
        meta["generation"] = int(revision)
        meta["annotations"] = {"deployment.kubernetes.io/revision": revision}
        r = x.replicas
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta,
            "spec": {
                "replicas": r,
                "selector": {"matchLabels": dict(x.selector)},
                "template": {"metadata": {"labels": dict(labels)}, "spec": template_spec},
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                },
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
            },
            "status": {
                "observedGeneration": int(revision),
                "replicas": r,
                "updatedReplicas": r,
                "readyReplicas": r,
                "availableReplicas": r,
                "conditions": [
                    {
                        "type": "Available",
                        "status": "True",
                        "reason": "MinimumReplicasAvailable",
                        "message": "Deployment has minimum availability.",
                        "lastUpdateTime": created,
                        "lastTransitionTime": created,
                    },
                    {
                        "type": "Progressing",
                        "status": "True",
                        "reason": "NewReplicaSetAvailable",
                        "message": "ReplicaSet has successfully progressed.",
                        "lastUpdateTime": created,
                        "lastTransitionTime": created,
                    },
                ],
            },
        }

    def _replica_set(
        self,
        x: _Workload,
        name: str,
        uid: str,
        deployment_uid: str,
        created: str,
        labels: dict[str, str],
        template_hash: str,
        template_spec: dict[str, Any],
        replicas: int,
        revision: str,
    ) -> dict[str, Any]:
        rs_labels = {**labels, "pod-template-hash": template_hash}
        meta = self._meta(x, uid, created, rs_labels)
        meta["name"] = name
        meta["annotations"] = {
            "deployment.kubernetes.io/desired-replicas": str(x.replicas),
            "deployment.kubernetes.io/max-replicas": str(x.replicas + math.ceil(x.replicas / 4)),
            "deployment.kubernetes.io/revision": revision,
        }
        ref = owner_reference("Deployment", x.name, deployment_uid)
        meta["ownerReferences"] = [ref]
        status: dict[str, Any] = {"replicas": replicas, "observedGeneration": 1}
        if replicas:
            status.update(
                fullyLabeledReplicas=replicas, readyReplicas=replicas, availableReplicas=replicas
            )
        return {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": meta,
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {**x.selector, "pod-template-hash": template_hash}},
                "template": {
                    "metadata": {"labels": dict(rs_labels)},
                    "spec": self._template_spec(x),
                },
            },
            "status": status,
        }

    def _stateful_set(
        self,
        x: _Workload,
        uid: str,
        created: str,
        labels: dict[str, str],
        template_spec: dict[str, Any],
        revision_hash: str,
    ) -> dict[str, Any]:
        r = x.replicas
        return {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": self._meta(x, uid, created, labels),
            "spec": {
                "replicas": r,
                "serviceName": x.name,
                "podManagementPolicy": "OrderedReady",
                "selector": {"matchLabels": dict(x.selector)},
                "template": {"metadata": {"labels": dict(labels)}, "spec": template_spec},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                "revisionHistoryLimit": 10,
                "volumeClaimTemplates": [
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": x.pvc_size}},
                            "storageClassName": "standard-rwo",
                            "volumeMode": "Filesystem",
                        },
                    }
                ],
            },
            "status": {
                "observedGeneration": 1,
                "replicas": r,
                "readyReplicas": r,
                "currentReplicas": r,
                "updatedReplicas": r,
                "availableReplicas": r,
                "currentRevision": revision_hash,
                "updateRevision": revision_hash,
                "collisionCount": 0,
            },
        }

    def _daemon_set(
        self,
        x: _Workload,
        uid: str,
        created: str,
        labels: dict[str, str],
        template_spec: dict[str, Any],
    ) -> dict[str, Any]:
        desired = self.n
        ready = int(self.ready.sum())
        return {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": self._meta(x, uid, created, labels),
            "spec": {
                "selector": {"matchLabels": dict(x.selector)},
                "template": {"metadata": {"labels": dict(labels)}, "spec": template_spec},
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
                },
                "revisionHistoryLimit": 10,
            },
            "status": {
                "observedGeneration": 1,
                "currentNumberScheduled": desired,
                "desiredNumberScheduled": desired,
                "numberMisscheduled": 0,
                "numberReady": ready,
                "numberAvailable": ready,
                **({"numberUnavailable": desired - ready} if desired > ready else {}),
                "updatedNumberScheduled": desired,
            },
        }

    def _pdb(self, x: _Workload, created: str) -> dict[str, Any]:
        assert x.pdb is not None
        field_name, value = x.pdb
        expected = x.replicas
        # Every pod of a workload with a budget runs on a Ready node, so all are healthy.
        healthy = sum(1 for p in x.pod_indices if self.ready[self.pod_node[p]])
        if field_name == "minAvailable":
            desired = _scaled(value, expected)
        else:
            desired = max(0, expected - _scaled(value, expected))
        allowed = max(0, healthy - desired)
        return {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {
                "name": x.name,
                "namespace": x.namespace,
                "uid": self.uid(),
                "resourceVersion": self.next_rv(),
                "generation": 1,
                "creationTimestamp": created,
                "labels": {"team": x.team},
            },
            "spec": {field_name: value, "selector": {"matchLabels": dict(x.selector)}},
            "status": {
                "observedGeneration": 1,
                "currentHealthy": healthy,
                "desiredHealthy": desired,
                "expectedPods": expected,
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

    def metrics_document(self) -> dict[str, Any]:
        stamps = _timestamps(self.now, self.metrics_age)
        node_cpu = self.node_usage_cpu.tolist()
        node_memory = self.node_usage_memory.astype(np.int64).tolist()
        nodes = {
            name: {"cpu": node_cpu[i], "memory": node_memory[i], "timestamp": stamps[i]}
            for i, name in enumerate(self.node_names)
        }
        pod_cpu = self.pod_usage_cpu.tolist()
        pod_memory = self.pod_usage_memory.astype(np.int64).tolist()
        pod_node = self.pod_node.tolist()
        # A pod's sample comes from the same kubelet scrape as its node's.
        pods = {
            key: {"cpu": pod_cpu[p], "memory": pod_memory[p], "timestamp": stamps[pod_node[p]]}
            for p, key in enumerate(self.pod_keys)
        }
        return {
            "collectedAt": self.now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "nodes": nodes,
            "pods": pods,
        }


class _HandLaid(_Generator):
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
    def deployment(namespace: str, name: str, cpu_m: int, memory: int, **fields: Any) -> _Workload:
        """A Deployment of the team named after its namespace, its replicas counted
        once its pods are laid out."""
        return _Workload(
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
            for x in _daemonset_workloads():
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


class _WarmIdle(_HandLaid):
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
        self.node_type = [_INSTANCE_TYPES[1]] * n
        self.node_pool = ["default"] * n
        self.zone_names = [f"{_REGION}{chr(ord('a') + z)}" for z in range(self.zones)]
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
            *_daemonset_workloads(),
            _coredns_workload(0),
            app("shop", "checkout-api", 650, 2560 * MiB, pdb=("maxUnavailable", "50%"), **burst),
            app("catalog", "catalog-api", 650, 2560 * MiB, **burst),
            app("search", "search-frontend", 650, 2560 * MiB, **burst),
            app("analytics", "report-builder", 1400, 5 * GiB, limits="guaranteed", **idle),
            app("payments", "fraud-scorer", 1000, 4 * GiB, **idle),
            app("payments", "ledger-sync", 600, 2560 * MiB, **idle),
            app("analytics", "cache-warmer", 90, 448 * MiB, **idle),
            app("media", "stream-ingest", 100, 256 * MiB, **warm),
            app("media", "video-transcode", 100, 256 * MiB, **warm),
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


class _GpuPool(_HandLaid):
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
        self.node_type = [_GPU_INSTANCE_TYPE if g else _INSTANCE_TYPES[1] for g in gpu]
        self.node_pool = [_GPU_POOL if g else "default" for g in gpu]
        self.zone_names = [f"{_REGION}{chr(ord('a') + z)}" for z in range(self.zones)]
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
            "pool": _GPU_POOL,
            "tolerations": _GPU_POOL,
            "gpus": 1,
            "cpu_ratio": 1.0,
            "memory_ratio": 0.85,
        }
        self.workloads = [
            *_daemonset_workloads(),
            _coredns_workload(0),
            app("shop", "storefront", 500, 2 * GiB, **web),
            app("shop", "cart-api", 400, 1536 * MiB, **web),
            app("search", "query-api", 600, 4 * GiB, pdb=("maxUnavailable", 1), **web),
            app("ml", "llm-inference", 4000, 24 * GiB, **inference),
            app("ml", "embedding-server", 2000, 12 * GiB, **inference),
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
            if self.node_pool[i] != _GPU_POOL:
                continue
            count = str(_GPU_INSTANCE_GPUS)
            node["metadata"]["labels"].update(
                {
                    _GPU_PRESENT_LABEL: "true",
                    "nvidia.com/gpu.product": _GPU_PRODUCT,
                    "nvidia.com/gpu.count": count,
                }
            )
            node["spec"].setdefault("taints", []).append(dict(_GPU_TAINT))
            node["status"]["capacity"][_GPU_RESOURCE] = count
            node["status"]["allocatable"][_GPU_RESOURCE] = count
        return objects

    def _tolerations(self, kind: str) -> list[dict[str, Any]]:
        if kind != _GPU_POOL:
            return super()._tolerations(kind)
        gpu = {"key": _GPU_TAINT["key"], "operator": "Exists", "effect": _GPU_TAINT["effect"]}
        return [gpu, *super()._tolerations("default")]

    def _containers(self, x: _Workload) -> list[dict[str, Any]]:
        containers = super()._containers(x)
        if x.gpus:
            # Extended resources: the request equals the limit, or the API server refuses it.
            resources = containers[0]["resources"]
            resources["requests"][_GPU_RESOURCE] = str(x.gpus)
            resources.setdefault("limits", {})[_GPU_RESOURCE] = str(x.gpus)
        return containers

    def _pod_spec_parts(self, x: _Workload) -> dict[str, Any]:
        parts = super()._pod_spec_parts(x)
        if x.pool == _GPU_POOL:
            parts["nodeSelector"] = {_GPU_PRESENT_LABEL: "true"}
        return parts

    def metrics_document(self) -> dict[str, Any]:
        document = super().metrics_document()
        node_busy = np.bincount(
            self.pod_node, weights=np.nan_to_num(self.pod_gpu), minlength=self.n
        )
        for i, name in enumerate(self.node_names):
            if self.node_pool[i] == _GPU_POOL:
                document["nodes"][name]["named"] = {"gpu": round(float(node_busy[i]), 2)}
        for p, key in enumerate(self.pod_keys):
            if not math.isnan(self.pod_gpu[p]):
                document["pods"][key]["named"] = {"gpu": float(self.pod_gpu[p])}
        return document


def _quantile_bands(values: np.ndarray, weights: np.ndarray, count: int) -> np.ndarray:
    """0..count-1 per item: its position by value in the cumulative weight, cut evenly."""
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    middle = (cumulative - weights[order] / 2) / cumulative[-1]
    bands = np.empty(len(values), dtype=np.int64)
    bands[order] = np.minimum((middle * count).astype(np.int64), count - 1)
    return bands


def _unique_name(generate_name: str, suffix: str, position: int, used: set[str]) -> str:
    """generateName plus a random suffix, drawn again on a clash: a DaemonSet's thousands of
    pods would otherwise meet the birthday bound of five-character suffixes."""
    pod_name = f"{generate_name}{suffix}"
    attempt = 0
    while pod_name in used:
        attempt += 1
        # Seeded by position, so the draw stays deterministic and the main stream unchanged.
        redraw = _safe_strings(np.random.default_rng([position, attempt]), 1, 5)[0]
        pod_name = f"{generate_name}{redraw}"
    used.add(pod_name)
    return pod_name


def owner_reference(kind: str, name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "name": name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def pinned_to(node_name: str) -> dict[str, Any]:
    """The node affinity the DaemonSet controller writes into each of its pods."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": [node_name]}
                        ]
                    }
                ]
            }
        }
    }


def _qos_class(limits: str) -> str:
    return "Guaranteed" if limits == "guaranteed" else "Burstable"
