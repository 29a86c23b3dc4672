"""kube-scheduler's Score plugins of the default profile, one function each, with
the Go code's integer arithmetic and normalisation (see `_predict` for what each
plugin scores). PodTopologySpread's is in `_spread`, ImageLocality's in `_images`.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType

import numpy as np

from loadaware.cluster._types import Pod, Taint, Toleration
from loadaware.scheduling import _filters
from loadaware.scheduling._nodes import IntArray
from loadaware.scheduling._occupancy import Occupancy

MAX_NODE_SCORE = 100
LEAST_ALLOCATED_WEIGHT = 1
BALANCED_ALLOCATION_WEIGHT = 1
TAINT_TOLERATION_WEIGHT = 3
NODE_AFFINITY_WEIGHT = 2
POD_TOPOLOGY_SPREAD_WEIGHT = 2
INTER_POD_AFFINITY_WEIGHT = 2
IMAGE_LOCALITY_WEIGHT = 1

# The default profile's score plugins and their weights (getDefaultPlugins).
PLUGIN_WEIGHTS: Mapping[str, int] = MappingProxyType(
    {
        "NodeResourcesFit": LEAST_ALLOCATED_WEIGHT,
        "NodeResourcesBalancedAllocation": BALANCED_ALLOCATION_WEIGHT,
        "TaintToleration": TAINT_TOLERATION_WEIGHT,
        "NodeAffinity": NODE_AFFINITY_WEIGHT,
        "PodTopologySpread": POD_TOPOLOGY_SPREAD_WEIGHT,
        "InterPodAffinity": INTER_POD_AFFINITY_WEIGHT,
        "ImageLocality": IMAGE_LOCALITY_WEIGHT,
    }
)


def least_allocated(
    cpu: IntArray,
    alloc_cpu: IntArray,
    mem: IntArray,
    alloc_mem: IntArray,
) -> IntArray:
    if alloc_cpu.min(initial=1) > 0 and alloc_mem.min(initial=1) > 0:
        # Every node has both (the usual case): the general way below, in half the steps.
        cpu_room = np.where(cpu <= alloc_cpu, (alloc_cpu - cpu) * MAX_NODE_SCORE // alloc_cpu, 0)
        mem_room = np.where(mem <= alloc_mem, (alloc_mem - mem) * MAX_NODE_SCORE // alloc_mem, 0)
        return (cpu_room + mem_room) // 2
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


def balanced_allocation(
    cpu: IntArray,
    alloc_cpu: IntArray,
    mem: IntArray,
    alloc_mem: IntArray,
) -> IntArray:
    if alloc_cpu.min(initial=1) > 0 and alloc_mem.min(initial=1) > 0:
        # Every node has both (the usual case): the general way below, in half the steps.
        std = np.abs((np.minimum(cpu / alloc_cpu, 1.0) - np.minimum(mem / alloc_mem, 1.0)) / 2)
        return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
    has_cpu, has_mem = alloc_cpu > 0, alloc_mem > 0
    cpu_fraction = np.minimum(cpu / np.where(has_cpu, alloc_cpu, 1), 1.0)
    mem_fraction = np.minimum(mem / np.where(has_mem, alloc_mem, 1), 1.0)
    # With one fraction (the other resource absent) the deviation is zero.
    std = np.where(has_cpu & has_mem, np.abs((cpu_fraction - mem_fraction) / 2), 0.0)
    return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)


def soft_taint_counts(
    pod: Pod,
    occupancy: Occupancy,
    feasible: IntArray,
    extra_taints: Mapping[str, Sequence[Taint]],
) -> IntArray:
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
    return counts


def normalised_taint_score(counts: IntArray) -> IntArray:
    """helper.DefaultNormalizeScore(100, reverse=true)."""
    most = int(counts.max(initial=0))
    if most == 0:
        return np.full(len(counts), MAX_NODE_SCORE, dtype=np.int64)
    return MAX_NODE_SCORE - MAX_NODE_SCORE * counts // most


@lru_cache(maxsize=4096)
def _intolerable_soft_taints(tolerations: tuple[Toleration, ...], taints: tuple[Taint, ...]) -> int:
    return sum(
        1
        for taint in taints
        if taint.effect == "PreferNoSchedule" and not _filters.tolerates(tolerations, taint)
    )


def node_affinity_score(pod: Pod, occupancy: Occupancy, feasible: IntArray) -> IntArray:
    """NodeAffinity: the summed weights of matching preferred terms, normalised to the
    best node (helper.DefaultNormalizeScore(100, reverse=false))."""
    nodes = occupancy.nodes
    raw = np.fromiter(
        (
            sum(
                t.weight
                for t in pod.preferred_node_affinity
                if t.weight and t.preference.matches(nodes[i])
            )
            for i in feasible.tolist()
        ),
        dtype=np.int64,
        count=len(feasible),
    )
    most = int(raw.max(initial=0))
    if most == 0:
        return raw
    return MAX_NODE_SCORE * raw // most


def inter_pod_affinity_score(pod: Pod, occupancy: Occupancy, feasible: IntArray) -> IntArray | None:
    """InterPodAffinity's Score and NormalizeScore; None when PreScore would skip."""
    # topology key -> domain value -> score
    topology: dict[str, dict[str, int]] = {}

    def credit(key: str, counts: Mapping[str, int], weight: int) -> None:
        if not counts:
            return
        values = topology.setdefault(key, {})
        for value, count in counts.items():
            values[value] = values.get(value, 0) + weight * count

    for weighted in pod.preferred_pod_affinity:
        term = weighted.term
        credit(term.topology_key, occupancy.domain_counts(pod.namespace, term), weighted.weight)
    for weighted in pod.preferred_pod_anti_affinity:
        term = weighted.term
        credit(term.topology_key, occupancy.domain_counts(pod.namespace, term), -weighted.weight)
    for group in occupancy.score_groups_selecting(pod):
        credit(group.term.topology_key, group.counts, group.weight)
    if not topology:
        return None
    raw = np.zeros(len(feasible), dtype=np.int64)
    for key, values in topology.items():
        codes, code_of = occupancy.domain_codes(key)
        by_code = np.zeros(len(code_of) + 1, dtype=np.int64)
        for value, score in values.items():
            code = code_of.get(value)
            if code is not None:
                by_code[code + 1] += score
        raw += by_code[codes[feasible] + 1]
    low, high = int(raw.min()), int(raw.max())
    if high == low:
        return np.zeros(len(feasible), dtype=np.int64)
    # float64(MaxNodeScore) * (score - min) / (max - min), truncated as int64().
    return (MAX_NODE_SCORE * ((raw - low) / (high - low))).astype(np.int64)


# --- NodeResourcesFit's scoring strategies and BalancedAllocation over any resources ---


def _go_quotient(numerator: IntArray, denominator: IntArray | int) -> IntArray:
    """Integer division truncating toward zero, as Go's `/` on int64."""
    return np.sign(numerator) * (np.abs(numerator) // denominator)


def broken_linear(shape: Sequence[tuple[int, int]], utilization: IntArray) -> IntArray:
    """helper.BuildBrokenLinearFunction: the shape's score at each utilization,
    linear between its points (Go's integer arithmetic), flat beyond them."""
    out = np.full(utilization.shape, shape[-1][1], dtype=np.int64)
    done = np.zeros(utilization.shape, dtype=np.bool_)
    for i, (point, score) in enumerate(shape):
        hit = ~done & (utilization <= point)
        if i == 0:
            out[hit] = score
        else:
            before, before_score = shape[i - 1]
            out[hit] = before_score + _go_quotient(
                (score - before_score) * (utilization[hit] - before), point - before
            )
        done |= hit
    return out


def resource_fit_score(
    kind: str,
    shape: Sequence[tuple[int, int]],
    columns: Sequence[tuple[int, IntArray, IntArray]],
) -> IntArray:
    """NodeResourcesFit's score under a scoringStrategy: `columns` are (weight,
    requested, allocatable) per configured resource, in its order; a node with
    none of a resource (allocatable 0) leaves it out of its average, as in Go
    (least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go)."""
    size = len(columns[0][1]) if columns else 0
    total = np.zeros(size, dtype=np.int64)
    weights = np.zeros(size, dtype=np.int64)
    for weight, requested, allocatable in columns:
        has = allocatable > 0
        safe = np.where(has, allocatable, 1)
        if kind == "LeastAllocated":
            score = np.where(
                requested <= allocatable, (allocatable - requested) * MAX_NODE_SCORE // safe, 0
            )
            counted = has
        elif kind == "MostAllocated":
            # Requests may exceed allocatable (non-zero defaults): counted as full.
            score = np.minimum(requested, allocatable) * MAX_NODE_SCORE // safe
            counted = has
        else:
            utilization = np.where(
                requested >= allocatable,
                MAX_NODE_SCORE,
                np.where(requested <= 0, 0, requested * MAX_NODE_SCORE // safe),
            )
            score = broken_linear(shape, utilization)
            # A resource scoring 0 is left out of the average (requested_to_capacity_ratio.go).
            counted = has & (score > 0)
        total += np.where(counted, score * weight, 0)
        weights += np.where(counted, weight, 0)
    if kind == "RequestedToCapacityRatio":
        # math.Round(float64(nodeScore) / float64(weightSum)): halves away from zero.
        rounded = np.floor(total / np.maximum(weights, 1) + 0.5).astype(np.int64)
        return np.where(weights > 0, rounded, 0)
    return np.where(weights > 0, total // np.maximum(weights, 1), 0)


def balanced_resources_score(columns: Sequence[tuple[IntArray, IntArray]]) -> IntArray:
    """NodeResourcesBalancedAllocation over (requested, allocatable) per configured
    resource: 100 * (1 - the standard deviation of the requested fractions, each at
    most 1), leaving out a resource the node has none of (balanced_allocation.go)."""
    size = len(columns[0][0]) if columns else 0
    fractions = np.zeros((len(columns), size), dtype=np.float64)
    present = np.zeros((len(columns), size), dtype=np.bool_)
    for row, (requested, allocatable) in enumerate(columns):
        has = allocatable > 0
        present[row] = has
        fractions[row] = np.where(
            has, np.minimum(requested / np.where(has, allocatable, 1), 1.0), 0
        )
    count = present.sum(axis=0)
    std = np.zeros(size, dtype=np.float64)
    for node in np.flatnonzero(count >= 2).tolist():
        values = fractions[present[:, node], node]
        if len(values) == 2:
            std[node] = abs((values[0] - values[1]) / 2)
        else:
            mean = values.sum() / len(values)
            std[node] = np.sqrt(((values - mean) ** 2).sum() / len(values))
    return ((1 - std) * float(MAX_NODE_SCORE)).astype(np.int64)
