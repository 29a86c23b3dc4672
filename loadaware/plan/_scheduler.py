"""A model of the default kube-scheduler profile: where would a new pod land.

loadaware does not bind pods; it evicts them and lets kube-scheduler place the
replacements. To say where a replacement is expected to go (`expectedNode`),
this module filters nodes with the same rules as `Occupancy.fit_failure` and
scores the feasible ones like the default profile does:

- NodeResourcesFit, LeastAllocated, weight 1: per resource
  (allocatable - requested) * 100 / allocatable, cpu and memory weighted 1 each,
  requested counting the pod and using the scheduler's non-zero defaults
  (100m cpu, 200MiB memory) for pods requesting nothing.
- NodeResourcesBalancedAllocation, weight 1: 100 * (1 - standard deviation of the
  cpu and memory fractions), on actual requests including the pod; skipped for a
  pod requesting nothing, as in Kubernetes 1.32 and later.
- TaintToleration, weight 3: PreferNoSchedule taints the pod does not tolerate,
  normalised reversed across the feasible nodes (most taints 0, none 100).

Integer arithmetic follows the Go code, so scores equal kube-scheduler's. Not
modelled: NodeAffinity and InterPodAffinity preferred terms (the deschedule
strategies read preferred node affinity; scoring here does not),
PodTopologySpread including its system default spreading, ImageLocality,
volume plugins, percentageOfNodesToScore sampling on large clusters, and the
random choice kube-scheduler makes among equal best scores — here the tie goes
to the first node name, so that plans are deterministic.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType

import numpy as np

from loadaware.cluster._types import Pod, Taint, Toleration
from loadaware.plan import _fit

MAX_NODE_SCORE = 100
LEAST_ALLOCATED_WEIGHT = 1
BALANCED_ALLOCATION_WEIGHT = 1
TAINT_TOLERATION_WEIGHT = 3

_NO_TAINTS: Mapping[str, Sequence[Taint]] = MappingProxyType({})


def predict_node(
    pod: Pod,
    occupancy: _fit.Occupancy,
    node_names: Iterable[str],
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
) -> str | None:
    """The node kube-scheduler would bind the new `pod` to among `node_names`, or None
    when none fits. `extra_taints` are added to the named nodes' taints."""
    feasible, totals = _score(pod, occupancy, node_names, extra_taints)
    if not feasible.size:
        return None
    # Names only for the best-scoring nodes: building them for every feasible node
    # cost more than the scoring itself on large clusters.
    all_names = occupancy.node_names
    return min(all_names[int(feasible[p])] for p in np.flatnonzero(totals == totals.max()))


def score_nodes(
    pod: Pod,
    occupancy: _fit.Occupancy,
    node_names: Iterable[str],
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
) -> list[tuple[str, float]]:
    """Feasible nodes with their total score, best first (ties by node name)."""
    feasible, totals = _score(pod, occupancy, node_names, extra_taints)
    all_names = occupancy.node_names
    names = [all_names[i] for i in feasible.tolist()]
    return sorted(
        ((name, float(total)) for name, total in zip(names, totals.tolist(), strict=True)),
        key=lambda item: (-item[1], item[0]),
    )


def _score(
    pod: Pod,
    occupancy: _fit.Occupancy,
    node_names: Iterable[str],
    extra_taints: Mapping[str, Sequence[Taint]],
) -> tuple[list[str], _fit.IntArray]:
    indexes = occupancy.node_indexes(node_names)
    feasible = indexes[occupancy.fit_mask(pod, indexes, extra_taints=extra_taints)]
    if not feasible.size:
        return feasible, np.zeros(0, dtype=np.int64)
    resources = occupancy.resources()
    alloc_cpu = resources.allocatable_cpu_millicores[feasible]
    alloc_mem = resources.allocatable_memory_bytes[feasible]
    cpu, mem, nonzero_cpu, nonzero_mem = occupancy.requested_without(pod, feasible)

    least = _least_allocated(
        nonzero_cpu + (pod.cpu_request_millicores or _fit.NONZERO_CPU_MILLICORES),
        alloc_cpu,
        nonzero_mem + (pod.memory_request_bytes or _fit.NONZERO_MEMORY_BYTES),
        alloc_mem,
    )
    if pod.cpu_request_millicores or pod.memory_request_bytes:
        balanced = _balanced_allocation(
            cpu + pod.cpu_request_millicores, alloc_cpu, mem + pod.memory_request_bytes, alloc_mem
        )
    else:
        # Kubernetes skips this plugin for best-effort pods: with nothing requested
        # every node looks equally balanced and they would pile onto one node.
        balanced = np.zeros(feasible.size, dtype=np.int64)
    taints = _taint_toleration(pod, occupancy, feasible, extra_taints)
    totals = (
        LEAST_ALLOCATED_WEIGHT * least
        + BALANCED_ALLOCATION_WEIGHT * balanced
        + TAINT_TOLERATION_WEIGHT * taints
    )
    return feasible, totals


def _least_allocated(
    cpu: _fit.IntArray, alloc_cpu: _fit.IntArray, mem: _fit.IntArray, alloc_mem: _fit.IntArray
) -> _fit.IntArray:
    total = np.zeros(cpu.shape, dtype=np.int64)
    weights = np.zeros(cpu.shape, dtype=np.int64)
    for requested, allocatable in ((cpu, alloc_cpu), (mem, alloc_mem)):
        has = allocatable > 0
        room = np.where(
            has & (requested <= allocatable),
            (allocatable - requested) * MAX_NODE_SCORE // np.where(has, allocatable, 1),
            0,
        )
        total += room
        # A resource the node has none of is left out of the average, as in Go.
        weights += has
    return np.where(weights > 0, total // np.maximum(weights, 1), 0)


def _balanced_allocation(
    cpu: _fit.IntArray, alloc_cpu: _fit.IntArray, mem: _fit.IntArray, alloc_mem: _fit.IntArray
) -> _fit.IntArray:
    has_cpu, has_mem = alloc_cpu > 0, alloc_mem > 0
    cpu_fraction = np.minimum(cpu / np.where(has_cpu, alloc_cpu, 1), 1.0)
    mem_fraction = np.minimum(mem / np.where(has_mem, alloc_mem, 1), 1.0)
    # With one fraction (the other resource absent) the deviation is zero.
    std = np.where(has_cpu & has_mem, np.abs((cpu_fraction - mem_fraction) / 2), 0.0)
    return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


def _taint_toleration(
    pod: Pod,
    occupancy: _fit.Occupancy,
    feasible: _fit.IntArray,
    extra_taints: Mapping[str, Sequence[Taint]],
) -> _fit.IntArray:
    nodes = occupancy.nodes
    counts = np.zeros(len(feasible), dtype=np.int64)
    positions = np.flatnonzero(occupancy.tainted[feasible]).tolist()
    if extra_taints:
        extra_indexes = occupancy.node_indexes(tuple(extra_taints))
        extra_positions = np.flatnonzero(np.isin(feasible, extra_indexes)).tolist()
        positions = sorted({*positions, *extra_positions})
    for position in positions:
        node = nodes[int(feasible[position])]
        extra = extra_taints.get(node.name, ()) if extra_taints else ()
        counts[position] = _intolerable_soft_taints(pod.tolerations, (*node.taints, *extra))
    most = int(counts.max())
    if most == 0:
        return np.full(len(feasible), MAX_NODE_SCORE, dtype=np.int64)
    return MAX_NODE_SCORE - MAX_NODE_SCORE * counts // most


@lru_cache(maxsize=4096)
def _intolerable_soft_taints(tolerations: tuple[Toleration, ...], taints: tuple[Taint, ...]) -> int:
    return sum(
        1
        for taint in taints
        if taint.effect == "PreferNoSchedule" and not _fit.tolerates(tolerations, taint)
    )
