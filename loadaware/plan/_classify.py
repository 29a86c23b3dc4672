"""Node pools and the hot / cold / normal / excluded classification.

Utilisation is real usage over allocatable, as a ratio (0-1); thresholds in the
policy are percentages, converted once here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from loadaware import metrics
from loadaware.cluster import ClusterState, Node
from loadaware.metrics import Usage
from loadaware.plan._types import POD_COUNT, RESOURCES, NodeClass
from loadaware.policy import BUILTIN_RESOURCES, NodePool


@dataclass(frozen=True, kw_only=True, eq=False)
class NodeTable:
    """Per-node arrays in one fixed order (sorted by name), with the name<->index map.

    usage and allocatable are (nodes, resources) arrays in cores, bytes and pods,
    one column per name in `resources`; low and high are the per-node threshold
    ratios (NaN where a resource is not judged).
    """

    resources: tuple[str, ...]
    names: tuple[str, ...]
    index: Mapping[str, int]
    pools: tuple[str | None, ...]
    classes: tuple[NodeClass, ...]
    notes: tuple[str, ...]
    allocatable: np.ndarray
    usage: np.ndarray
    low: np.ndarray
    high: np.ndarray

    def pod_usage(self, sample: metrics.UsageSample | None) -> np.ndarray:
        """What a pod adds to its node, column by column: its usage and, where pods
        are judged, one pod. Zero for a pod without a sample (a finished one)."""
        if sample is None:
            return np.zeros(len(self.resources))
        extra = [1.0 if r == POD_COUNT else sample.named.get(r, 0.0) for r in self.resources[2:]]
        return np.array([sample.cpu_cores, sample.memory_bytes, *extra])

    def headroom(self, indexes: np.ndarray) -> np.ndarray:
        """What the nodes may still take before their targets, per resource (never
        negative); unlimited where a resource is not judged."""
        with np.errstate(invalid="ignore"):
            room = self.high[indexes] * self.allocatable[indexes] - self.usage[indexes]
        return np.where(np.isnan(self.high[indexes]), np.inf, np.maximum(room, 0.0))

    def utilisation_by_node(self, usage: np.ndarray | None = None) -> list[dict[str, float]]:
        """utilisation() as one {resource: ratio} per node, in `names` order, rounded
        as reports show it."""
        ratios = self.utilisation(usage)
        return [
            {r: round(float(row[k]), 4) for k, r in enumerate(self.resources)} for row in ratios
        ]

    def utilisation(self, usage: np.ndarray | None = None) -> np.ndarray:
        used = self.usage if usage is None else usage
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.allocatable > 0, used / self.allocatable, 0.0)


def pool_of(node: Node, pools: Sequence[NodePool]) -> NodePool | None:
    """The first pool whose nodeSelector matches the node's labels."""
    for pool in pools:
        if all(node.labels.get(k) == v for k, v in pool.node_selector.items()):
            return pool
    return None


def named_resources(pool: NodePool | None) -> tuple[str, ...]:
    """The metrics.prometheus.resources a pool judges, in the order of its targets."""
    if pool is None:
        return ()
    return tuple(r for r in pool.target_thresholds.as_dict() if r not in BUILTIN_RESOURCES)


def node_scopes(cluster: ClusterState, pools: Sequence[NodePool]) -> dict[str, metrics.NodeScope]:
    """What judging usage needs of each node: allocatable, its pods' keys, and the
    named resources its pool judges."""
    return {
        node.name: metrics.NodeScope(
            allocatable_cpu_cores=node.allocatable_cpu_millicores / 1000,
            allocatable_memory_bytes=node.allocatable_memory_bytes,
            pod_keys=tuple(p.key for p in cluster.pods_by_node.get(node.name, ())),
            named=named_resources(pool_of(node, pools)),
        )
        for node in cluster.nodes
    }


def judged_resources(pools: Sequence[NodePool], *more: Mapping[str, float]) -> tuple[str, ...]:
    """The resource axis of a round: cpu and memory, then pods if a pool (or one
    of `more`'s limits, e.g. consolidation's thresholds) judges it."""
    limits = [pool.target_thresholds.as_dict() for pool in pools] + list(more)
    pods = any(POD_COUNT in judged for judged in limits)
    named = sorted({r for judged in limits for r in judged if r not in BUILTIN_RESOURCES})
    return RESOURCES + ((POD_COUNT,) if pods else ()) + tuple(named)


def classify_nodes(
    cluster: ClusterState,
    usage: Usage,
    pools: Sequence[NodePool],
    excluded: Mapping[str, str],
    *,
    confirm_consecutive: int = 1,
    resources: tuple[str, ...] | None = None,
    allocatable_names: Mapping[str, str] | None = None,
) -> NodeTable:
    """Assign each node a pool and a class. `excluded` names nodes already ruled out
    (stale metrics) with the reason.

    A named resource's capacity on a node is what its capacity query gave
    (usage.capacity), else the node's allocatable of the resource
    `allocatable_names` maps it to (`gpu` -> `nvidia.com/gpu`). A node whose pool
    judges a resource it has no capacity for is excluded, with that reason.

    With `confirm_consecutive` above 1 and a usage history (Prometheus reads one),
    a node over its targets counts as hot only once it has been over them for that
    many consecutive points, so one spike moves nothing; until then it is normal."""
    nodes = sorted(cluster.nodes, key=lambda n: n.name)
    resources = resources or judged_resources(pools)
    count, width = len(nodes), len(resources)
    with_pods = POD_COUNT in resources
    named = [(k, r) for k, r in enumerate(resources) if r not in BUILTIN_RESOURCES]
    allocatable = np.zeros((count, width))
    used = np.zeros((count, width))
    low = np.full((count, width), np.nan)
    high = np.full((count, width), np.nan)
    node_pools: list[NodePool | None] = []
    notes: list[str] = []
    out_of_round: list[bool] = []

    for i, node in enumerate(nodes):
        allocatable[i, :2] = (node.allocatable_cpu_millicores / 1000, node.allocatable_memory_bytes)
        sample = usage.nodes.get(node.name)
        if sample is not None and node.name not in excluded:
            used[i, :2] = (sample.cpu_cores, sample.memory_bytes)
        if with_pods:
            # Every bound, unfinished pod holds one of the node's pod slots.
            allocatable[i, 2] = node.allocatable_pods
            used[i, 2] = len(cluster.pods_by_node.get(node.name, ()))
        capacity = usage.capacity.get(node.name, {})
        for k, resource in named:
            allocatable[i, k] = capacity.get(resource) or node.allocatable_extended.get(
                (allocatable_names or {}).get(resource, ""), 0.0
            )
            if sample is not None and node.name not in excluded:
                used[i, k] = sample.named.get(resource, 0.0)
        pool = pool_of(node, pools)
        node_pools.append(pool)
        note = ""
        lacking = [r for r in named_resources(pool) if allocatable[i, resources.index(r)] <= 0]
        if node.name in excluded:
            note = excluded[node.name]
        elif lacking:
            note = f"no capacity for {lacking[0]} (metrics.prometheus.resources.{lacking[0]})"
        elif pool is None:
            note = "in no node pool"
        elif not node.ready:
            note = "not ready"
        notes.append(note)
        out_of_round.append(bool(note))

    ratios = np.where(allocatable > 0, used / np.where(allocatable > 0, allocatable, 1), 0.0)
    for pool in pools:
        members = [i for i, p in enumerate(node_pools) if p is not None and p.name == pool.name]
        if not members:
            continue
        lows, highs = pool.thresholds.as_dict(), pool.target_thresholds.as_dict()
        judged = [i for i in members if not out_of_round[i]]
        for r, resource in enumerate(resources):
            if resource not in highs:
                continue
            lo, hi = lows[resource] / 100, highs[resource] / 100
            if pool.use_deviation_thresholds:
                # As descheduler: thresholds are distances below/above the pool's mean.
                mean = float(np.mean(ratios[judged, r])) if judged else 0.0
                lo, hi = max(0.0, mean - lo), min(1.0, mean + hi)
            low[members, r] = lo
            high[members, r] = hi

    confirmed: frozenset[str] | None = None
    if confirm_consecutive > 1 and usage.history is not None:
        limits = {
            node.name: metrics.HotLimits(
                cpu_cores=None if np.isnan(high[i, 0]) else float(high[i, 0] * allocatable[i, 0]),
                memory_bytes=None
                if np.isnan(high[i, 1])
                else float(high[i, 1] * allocatable[i, 1]),
            )
            for i, node in enumerate(nodes)
            if not out_of_round[i]
        }
        confirmed = metrics.confirm_hotspots(usage.history, limits, confirm_consecutive)

    classes: list[NodeClass] = []
    for i, node in enumerate(nodes):
        if out_of_round[i]:
            classes.append("excluded")
            continue
        judged = ~np.isnan(high[i])
        if np.any(ratios[i][judged] > high[i][judged]):
            if confirmed is not None and node.name not in confirmed:
                classes.append("normal")
                notes[i] = f"over its targets, not yet for {confirm_consecutive} samples in a row"
                continue
            classes.append("hot")
        elif not node.unschedulable and np.all(ratios[i][judged] < low[i][judged]):
            classes.append("cold")
        else:
            classes.append("normal")

    return NodeTable(
        resources=resources,
        names=tuple(n.name for n in nodes),
        index={n.name: i for i, n in enumerate(nodes)},
        pools=tuple(p.name if p is not None else None for p in node_pools),
        classes=tuple(classes),
        notes=tuple(notes),
        allocatable=allocatable,
        usage=used,
        low=low,
        high=high,
    )
