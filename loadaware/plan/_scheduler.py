"""A model of the default kube-scheduler profile: where would a new pod land.

loadaware does not bind pods; it evicts them and lets kube-scheduler place the
replacements. To say where a replacement is expected to go (`expectedNode`),
this module filters nodes with the same rules as `Occupancy.fit_failure` and
with PodTopologySpread's Filter for the pod's DoNotSchedule constraints
(`spread_filter_mask`), and scores the feasible ones as the default profile
does, with the Go code's integer arithmetic and normalisation, so that scores
equal kube-scheduler's:

- NodeResourcesFit, LeastAllocated, weight 1: per resource
  (allocatable - requested) * 100 / allocatable, cpu and memory weighted 1 each,
  requested counting the pod and using the scheduler's non-zero defaults
  (100m cpu, 200MiB memory) for pods requesting nothing.
- NodeResourcesBalancedAllocation, weight 1: 100 * (1 - standard deviation of the
  cpu and memory fractions), on actual requests including the pod; skipped for a
  pod requesting nothing, as in Kubernetes 1.32 and later.
- TaintToleration, weight 3: PreferNoSchedule taints the pod does not tolerate,
  normalised reversed across the feasible nodes (most taints 0, none 100).
- NodeAffinity, weight 2: the weights of the pod's preferred terms a node
  matches, normalised to the best node.
- PodTopologySpread, weight 2: the pod's ScheduleAnyway constraints, or — for a
  pod without constraints that a ReplicaSet, ReplicationController or
  StatefulSet owns — the system defaults (hostname maxSkew 3, zone maxSkew 5).
  Terminating pods are not counted, so a source whose pod is being evicted
  looks better spread than before.
- InterPodAffinity, weight 2: the pod's preferred (anti-)affinity terms over the
  placed pods, and placed pods' required affinity (weight 1) and preferred terms
  that select the pod, per topology domain, normalised min-max.
- ImageLocality, weight 1: per image of the pod's init containers and containers
  a node reports (`status.images`), the image's size times the share of all
  nodes reporting it, summed, clamped between 23 MiB and 1000 MiB per image and
  scaled to 0-100 (`_images`). Absent where no feasible node reports any of the
  pod's images: every node would score 0.

kube-scheduler keeps counting a terminating pod's requests on its node until the
pod object is gone (kubernetes/kubernetes#96515), and the replacement is
scheduled while its predecessor terminates: `predict_replacement` scores the
replacement with the predecessor still placed.

Among nodes with equal best scores kube-scheduler picks at random, so a
prediction is the set of best-scoring nodes (`best_nodes`), not one node.

Not modelled: volume plugins, image volumes (`spec.volumes[].image`, which
kube-scheduler's development sources also count among a pod's images), Service
selectors in the default spreading (the owner's pods stand for them: same
namespace, same labels). It scores the nodes it is given: kube-scheduler's
sampling of large clusters is planned for by the caller (_placement's landing
sets, _sampling).

Pure: no I/O, no clock.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

import numpy as np

from loadaware.cluster._types import LabelSelector, Pod, Taint, Toleration
from loadaware.plan import _fit, _images

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

HOSTNAME_KEY = "kubernetes.io/hostname"
ZONE_KEY = "topology.kubernetes.io/zone"
# PodTopologySpread's system defaults (pkg/scheduler/apis/config/v1/defaults.go).
SYSTEM_DEFAULT_SPREAD: tuple[tuple[str, int], ...] = ((HOSTNAME_KEY, 3), (ZONE_KEY, 5))
# Owners whose pods the system-default spreading covers (helper.DefaultSelector).
SPREAD_OWNER_KINDS = frozenset({"ReplicaSet", "ReplicationController", "StatefulSet"})
# A name no Kubernetes object can have: the replacement's stand-in while its
# predecessor (same namespace and labels) still counts.
_REPLACEMENT_SUFFIX = "~replacement"

_NO_TAINTS: Mapping[str, Sequence[Taint]] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeScores:
    """The feasible nodes of one pod and their scores, in Occupancy.nodes indexes."""

    indexes: _fit.IntArray  # feasible nodes
    totals: _fit.IntArray  # the weighted sum of every plugin
    # Intolerable PreferNoSchedule taints per feasible node, and whether the pod
    # tolerates loadaware's own soft taint (then steering cannot move it).
    soft_taints: _fit.IntArray
    tolerates_steering: bool
    # Each scoring plugin's normalised score (0-100, before its weight) per feasible
    # node; a plugin that skipped the pod is absent, as is ImageLocality where no
    # feasible node reports any of the pod's images.
    plugins: Mapping[str, _fit.IntArray] = dataclasses.field(default_factory=dict)

    def best(self) -> _fit.IntArray:
        """Positions (into `indexes`) of the nodes with the best total."""
        if not self.indexes.size:
            return self.indexes
        return np.flatnonzero(self.totals == self.totals.max())

    def best_names(self, node_names: Sequence[str]) -> tuple[str, ...]:
        """The names of the best-scoring nodes, sorted: kube-scheduler's random pick
        is among them. `node_names` are the occupancy's, in its order."""
        return tuple(sorted(node_names[int(self.indexes[p])] for p in self.best()))

    def with_steering(self, steer: _fit.BoolArray) -> _fit.IntArray:
        """Totals when loadaware's soft taint is added to the nodes `steer` marks
        (positions into `indexes`)."""
        if self.tolerates_steering or not steer.any():
            return self.totals
        before = self.plugins["TaintToleration"]
        after = _normalised_taint_score(self.soft_taints + steer)
        return self.totals + TAINT_TOLERATION_WEIGHT * (after - before)


def predict_node(
    pod: Pod,
    occupancy: _fit.Occupancy,
    node_names: Iterable[str],
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
    terminating: Collection[Pod] = (),
) -> str | None:
    """One node kube-scheduler may bind the new `pod` to (the first by name among the
    best-scoring), or None when none fits. `extra_taints` are added to the named
    nodes' taints; `terminating` pods are placed but not counted for spreading."""
    best = best_nodes(
        pod, occupancy, node_names, extra_taints=extra_taints, terminating=terminating
    )
    return best[0] if best else None


def best_nodes(
    pod: Pod,
    occupancy: _fit.Occupancy,
    node_names: Iterable[str],
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
    terminating: Collection[Pod] = (),
) -> tuple[str, ...]:
    """Every node with the best score for the new `pod`, sorted by name: kube-scheduler
    picks one of them at random. Empty when none fits."""
    scores = score_pod(
        pod,
        occupancy,
        occupancy.node_indexes(node_names),
        extra_taints=extra_taints,
        terminating=terminating,
    )
    return scores.best_names(occupancy.node_names)


def predict_replacement(
    pod: Pod,
    occupancy: _fit.Occupancy,
    node_names: Iterable[str],
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
) -> tuple[str, ...]:
    """The best-scoring nodes for the replacement of the placed `pod` (see
    score_replacement), sorted by name; empty when none fits."""
    scores = score_replacement(
        pod, occupancy, occupancy.node_indexes(node_names), extra_taints=extra_taints
    )
    return scores.best_names(occupancy.node_names)


def score_replacement(
    pod: Pod,
    occupancy: _fit.Occupancy,
    indexes: _fit.IntArray,
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
) -> NodeScores:
    """Scores for the replacement of the placed `pod` once it is evicted (see
    scheduling_replacement)."""
    with scheduling_replacement(pod, occupancy) as (incoming, terminating):
        return score_pod(
            incoming, occupancy, indexes, extra_taints=extra_taints, terminating=terminating
        )


@contextlib.contextmanager
def scheduling_replacement(
    pod: Pod, occupancy: _fit.Occupancy
) -> Iterator[tuple[Pod, tuple[Pod, ...]]]:
    """The pod kube-scheduler schedules when the placed `pod` is evicted, and the pods
    it sees terminating meanwhile, with `occupancy` as it sees it within the block.

    A ReplicaSet's replacement is created while `pod` terminates: `pod`'s requests,
    ports and anti-affinity still count where it is, its spreading does not. A
    StatefulSet recreates the pod under the same name only once it is gone, so
    then `pod` counts nowhere (it is out of `occupancy` until the block ends)."""
    if not recreated_after_deletion(pod):
        yield replacement_of(pod), (pod,)
        return
    node = occupancy.placed_index(pod)
    if node is None:
        yield pod, ()
        return
    occupancy.remove(pod)
    try:
        yield pod, ()
    finally:
        occupancy.add(pod, occupancy.node_names[node])


def recreated_after_deletion(pod: Pod) -> bool:
    """Whether the pod's controller creates its replacement only once it is gone."""
    return pod.owner is not None and pod.owner.kind == "StatefulSet"


def replacement_of(pod: Pod) -> Pod:
    """The pod its controller creates when `pod` is evicted: same spec and labels, a
    name of its own (so the predecessor is another pod to the model)."""
    return dataclasses.replace(pod, name=pod.name + _REPLACEMENT_SUFFIX, uid="", node_name=None)


def score_nodes(
    pod: Pod,
    occupancy: _fit.Occupancy,
    node_names: Iterable[str],
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
    terminating: Collection[Pod] = (),
) -> list[tuple[str, float]]:
    """Feasible nodes with their total score, best first (ties by node name)."""
    scores = score_pod(
        pod,
        occupancy,
        occupancy.node_indexes(node_names),
        extra_taints=extra_taints,
        terminating=terminating,
    )
    all_names = occupancy.node_names
    names = [all_names[i] for i in scores.indexes.tolist()]
    return sorted(
        ((name, float(total)) for name, total in zip(names, scores.totals.tolist(), strict=True)),
        key=lambda item: (-item[1], item[0]),
    )


def feasible_mask(
    pod: Pod,
    occupancy: _fit.Occupancy,
    indexes: _fit.IntArray,
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
    terminating: Collection[Pod] = (),
) -> _fit.BoolArray:
    """Per indexed node, whether `pod` passes the Filter plugins the model runs: the
    checks of `Occupancy.fit_mask`, then PodTopologySpread's for its DoNotSchedule
    constraints."""
    mask = occupancy.fit_mask(pod, indexes, extra_taints=extra_taints)
    if mask.any() and pod.topology_spread_constraints:
        mask[mask] = spread_filter_mask(pod, occupancy, indexes[mask], terminating)
    return mask


def score_pod(
    pod: Pod,
    occupancy: _fit.Occupancy,
    indexes: _fit.IntArray,
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
    terminating: Collection[Pod] = (),
) -> NodeScores:
    """Filter the indexed nodes for `pod` and score the feasible ones."""
    feasible = indexes[
        feasible_mask(pod, occupancy, indexes, extra_taints=extra_taints, terminating=terminating)
    ]
    tolerates = _fit.tolerates(pod.tolerations, STEERING_TAINT)
    if not feasible.size:
        empty = np.zeros(0, dtype=np.int64)
        return NodeScores(
            indexes=feasible, totals=empty, soft_taints=empty, tolerates_steering=tolerates
        )
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
    soft_taints = _soft_taint_counts(pod, occupancy, feasible, extra_taints)
    plugins: dict[str, _fit.IntArray] = {
        "NodeResourcesFit": least,
        "TaintToleration": _normalised_taint_score(soft_taints),
    }
    if pod.cpu_request_millicores or pod.memory_request_bytes:
        plugins["NodeResourcesBalancedAllocation"] = balanced
    if pod.preferred_node_affinity:
        plugins["NodeAffinity"] = _node_affinity(pod, occupancy, feasible)
    spread = _topology_spread(pod, occupancy, feasible, terminating)
    if spread is not None:
        plugins["PodTopologySpread"] = spread
    affinity = _inter_pod_affinity(pod, occupancy, feasible)
    if affinity is not None:
        plugins["InterPodAffinity"] = affinity
    if pod.container_images:
        images = _images.image_locality(pod.container_images, occupancy.node_images, feasible)
        if images is not None:
            plugins["ImageLocality"] = images
    totals = np.zeros(len(feasible), dtype=np.int64)
    for name, score in plugins.items():
        totals += PLUGIN_WEIGHTS[name] * score
    return NodeScores(
        indexes=feasible,
        totals=totals,
        soft_taints=soft_taints,
        tolerates_steering=tolerates,
        plugins=plugins,
    )


# loadaware's steering taint, the one the evictor puts on nodes (see _placement).
STEERING_TAINT = Taint(key="loadaware.io/hotspot", value="true", effect="PreferNoSchedule")


def _least_allocated(
    cpu: _fit.IntArray, alloc_cpu: _fit.IntArray, mem: _fit.IntArray, alloc_mem: _fit.IntArray
) -> _fit.IntArray:
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


def _balanced_allocation(
    cpu: _fit.IntArray, alloc_cpu: _fit.IntArray, mem: _fit.IntArray, alloc_mem: _fit.IntArray
) -> _fit.IntArray:
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


def _soft_taint_counts(
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
    return counts


def _normalised_taint_score(counts: _fit.IntArray) -> _fit.IntArray:
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
        if taint.effect == "PreferNoSchedule" and not _fit.tolerates(tolerations, taint)
    )


def _node_affinity(pod: Pod, occupancy: _fit.Occupancy, feasible: _fit.IntArray) -> _fit.IntArray:
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


def spread_filter_mask(
    pod: Pod,
    occupancy: _fit.Occupancy,
    indexes: _fit.IntArray,
    terminating: Collection[Pod] = (),
) -> _fit.BoolArray:
    """PodTopologySpread's Filter: per indexed node, whether placing `pod` there keeps
    every DoNotSchedule constraint of its own within maxSkew.

    As in the Go code, a domain's count is of the matching pods that are not
    terminating, on nodes that carry every constraint's topology key and pass the
    constraint's node inclusion policies; the global minimum is 0 while fewer
    domains than minDomains exist; a node lacking a key fails."""
    keep = np.ones(len(indexes), dtype=np.bool_)
    hard = [c for c in pod.topology_spread_constraints if c.when_unsatisfiable == "DoNotSchedule"]
    if not hard:
        return keep
    labelled = np.ones(len(occupancy.nodes), dtype=np.bool_)
    for constraint in hard:
        labelled &= occupancy.domain_codes(constraint.topology_key)[0] >= 0
    keep &= labelled[indexes]
    for constraint in hard:
        codes, values = occupancy.domain_codes(constraint.topology_key)
        eligible = labelled.copy()
        if constraint.node_affinity_policy == "Honor":
            eligible &= occupancy.affinity_mask(pod)
        if constraint.node_taints_policy == "Honor":
            eligible &= occupancy.toleration_mask(pod)
        if not eligible.any():
            continue  # no domain: the Go code skips the constraint
        selector = constraint.label_selector
        # labels.Nothing() for a nil selector; an empty one counts no pod either
        # (countPodsMatchSelector), but still matches the pod itself.
        if selector is None or selector.is_empty:
            counts = np.zeros(len(occupancy.nodes), dtype=np.int64)
        else:
            counts = _spread_counts(occupancy, pod.namespace, selector, terminating)
        totals = np.bincount(
            codes[eligible], weights=counts[eligible], minlength=len(values)
        ).astype(np.int64)
        present = np.zeros(len(values), dtype=np.bool_)
        present[codes[eligible]] = True
        domains = int(np.count_nonzero(present))
        lowest = int(totals[present].min())
        if domains < (constraint.min_domains or 1):
            lowest = 0
        own = 1 if selector is not None and selector.matches(pod.labels) else 0
        node_codes = codes[indexes]
        matched = np.where(node_codes >= 0, totals[np.maximum(node_codes, 0)], 0)
        keep &= matched + own - lowest <= constraint.max_skew
    return keep


def _spread_counts(
    occupancy: _fit.Occupancy,
    namespace: str,
    selector: LabelSelector,
    terminating: Collection[Pod],
) -> _fit.IntArray:
    """Per node, the placed pods of `namespace` that `selector` matches, less those
    terminating: the scheduler does not count a pod that is terminating."""
    counts = occupancy.spread_counts(namespace, selector)
    gone = [
        i
        for t in terminating
        # Placed pods marked for deletion are left out of the counts already.
        if t.deletion_timestamp is None
        and t.namespace == namespace
        and selector.matches(t.labels)
        and (i := occupancy.placed_index(t)) is not None
    ]
    if not gone:
        return counts
    counts = counts.copy()
    for i in gone:
        counts[i] -= 1
    return counts


def spread_constraints(pod: Pod) -> tuple[tuple[str, int, LabelSelector], ...] | None:
    """The constraints PodTopologySpread scores `pod` by: (topology key, maxSkew,
    selector); None when the plugin skips the pod. The system defaults select the
    pod's siblings by its owner's selector (kube-scheduler adds the selectors of
    Services selecting the pod, which a cluster file does not carry). Where the
    owner is not in the input its pods' labels stand in for it, but for those
    that name one pod or one revision."""
    if pod.topology_spread_constraints:
        # A constraint without a selector counts no pod but still scores its key.
        return (
            tuple(
                (c.topology_key, c.max_skew, c.label_selector or _SELECTS_NOTHING)
                for c in pod.topology_spread_constraints
                if c.when_unsatisfiable == "ScheduleAnyway"
            )
            or None
        )
    if pod.owner is None or pod.owner.kind not in SPREAD_OWNER_KINDS or not pod.labels:
        return None
    selector = pod.owner_selector or _sibling_selector(pod.labels)
    return tuple((key, skew, selector) for key, skew in SYSTEM_DEFAULT_SPREAD)


# Stands for a nil labelSelector (labels.Nothing()): a label no pod can carry.
_SELECTS_NOTHING = LabelSelector(match_labels={"loadaware.io/selects-nothing~": "~"})


@lru_cache(maxsize=4096)
def _sibling_selector_cached(labels: tuple[tuple[str, str], ...]) -> LabelSelector:
    return LabelSelector(match_labels=dict(labels))


def _sibling_selector(labels: Mapping[str, str]) -> LabelSelector:
    shared = (item for item in labels.items() if item[0] not in _ONE_POD_LABELS)
    return _sibling_selector_cached(tuple(sorted(shared)))


# Labels controllers put on a single pod or revision, never in the owner's selector.
_ONE_POD_LABELS = frozenset(
    {
        "statefulset.kubernetes.io/pod-name",
        "apps.kubernetes.io/pod-index",
        "controller-revision-hash",
    }
)


def _topology_spread(
    pod: Pod,
    occupancy: _fit.Occupancy,
    feasible: _fit.IntArray,
    terminating: Collection[Pod],
) -> _fit.IntArray | None:
    """PodTopologySpread's Score and NormalizeScore over the feasible nodes."""
    constraints = spread_constraints(pod)
    if not constraints:
        return None
    domains = [occupancy.domain_codes(key) for key, _skew, _sel in constraints]
    # With constraints of its own a pod ignores nodes lacking any topology key;
    # with the system defaults every node takes part.
    ignored: _fit.BoolArray | None = None
    considered = feasible
    if pod.topology_spread_constraints:
        ignored = np.zeros(len(feasible), dtype=np.bool_)
        for codes, _values in domains:
            ignored |= codes[feasible] < 0
        considered = feasible[~ignored]
    include = occupancy.affinity_mask(pod)
    raw = np.zeros(len(feasible), dtype=np.float64)
    for (key, max_skew, selector), (_codes, values) in zip(constraints, domains, strict=True):
        counts = _spread_counts(occupancy, pod.namespace, selector, terminating)
        # Codes shift by one so that "no such label" (-1) is a bin too: a node
        # without the key forms the empty-valued domain, as the Go code's map
        # lookup does.
        shifted, every_node_has_key = occupancy.shifted_domain_codes(key)
        if key == HOSTNAME_KEY:
            size = len(considered)
            per_node = counts[feasible]
        else:
            feasible_shifted = shifted[feasible]
            bins = len(values) + 1
            in_considered = feasible_shifted if ignored is None else shifted[considered]
            size = int(np.count_nonzero(np.bincount(in_considered, minlength=bins)))
            # Each feasible node's domain has a considered node (or the node is
            # ignored, scored 0 below), so the totals read are those of every node
            # that matches the pod's node affinity.
            if include.all():
                totals = np.bincount(shifted, weights=counts, minlength=bins)
            else:
                totals = np.bincount(shifted[include], weights=counts[include], minlength=bins)
            per_node = totals[feasible_shifted]
        weight = math.log(size + 2)
        score = per_node * weight + (max_skew - 1)
        if not every_node_has_key:
            score = np.where(shifted[feasible] > 0, score, 0.0)
        raw += score
    # math.Round: halves away from zero (the values are not negative).
    scores = np.floor(raw + 0.5).astype(np.int64)
    valid = scores if ignored is None else scores[~ignored]
    if not valid.size:
        return np.zeros(len(feasible), dtype=np.int64)
    low, high = int(valid.min()), int(valid.max())
    if high == 0:
        normalised = np.full(len(feasible), MAX_NODE_SCORE, dtype=np.int64)
    else:
        normalised = MAX_NODE_SCORE * (high + low - scores) // high
    return normalised if ignored is None else np.where(ignored, 0, normalised)


def _inter_pod_affinity(
    pod: Pod, occupancy: _fit.Occupancy, feasible: _fit.IntArray
) -> _fit.IntArray | None:
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
