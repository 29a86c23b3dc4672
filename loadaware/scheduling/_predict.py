"""A model of a kube-scheduler profile (the default one unless told): where would
a new pod land.

loadaware does not bind pods; it evicts them and lets kube-scheduler place the
replacements. To say where a replacement is expected to go (`expectedNode`),
this module filters nodes with the same rules as `Occupancy.fit_failure` and
with PodTopologySpread's Filter for the pod's DoNotSchedule constraints
(`_spread.spread_filter_mask`), and scores the feasible ones as the default
profile does (`_scores`, `_spread`, `_images`), with the Go code's integer
arithmetic and normalisation, so that scores equal kube-scheduler's:

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

A profile of the cluster's own KubeSchedulerConfiguration (`profile`, a
`_profiles.SchedulerProfile`) changes which of these score and their weights,
NodeResourcesFit's scoringStrategy (MostAllocated: requested * 100 / allocatable
per resource; RequestedToCapacityRatio: its shape of that utilization; each over
the configured resources and weights, an extended resource the pod does not
request left out), BalancedAllocation's resources and PodTopologySpread's
default constraints. The filters stay the default profile's.

Among nodes with equal best scores kube-scheduler picks at random, so a
prediction is the set of best-scoring nodes (`best_nodes`), not one node.

Not modelled: volume plugins, image volumes (`spec.volumes[].image`, which
kube-scheduler's development sources also count among a pod's images), Service
selectors in the default spreading (the owner's pods stand for them: same
namespace, same labels). It scores the nodes it is given: kube-scheduler's
sampling of large clusters is planned for by the caller (the planner's landing
sets, `_sampling`) or walked by `_node_sampling`.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from loadaware.cluster._types import Pod, Taint
from loadaware.scheduling import _filters, _images, _ledger, _profiles, _scores, _spread
from loadaware.scheduling._nodes import BoolArray, IntArray
from loadaware.scheduling._occupancy import Occupancy

# A name no Kubernetes object can have: the replacement's stand-in while its
# predecessor (same namespace and labels) still counts.
_REPLACEMENT_SUFFIX = "~replacement"

_NO_TAINTS: Mapping[str, Sequence[Taint]] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeScores:
    """The feasible nodes of one pod and their scores, in Occupancy.nodes indexes."""

    indexes: IntArray  # feasible nodes
    totals: IntArray  # the weighted sum of every plugin
    # Intolerable PreferNoSchedule taints per feasible node, and whether the pod
    # tolerates loadaware's own soft taint (then steering cannot move it).
    soft_taints: IntArray
    tolerates_steering: bool
    # Each scoring plugin's normalised score (0-100, before its weight) per feasible
    # node; a plugin that skipped the pod is absent, as is ImageLocality where no
    # feasible node reports any of the pod's images.
    plugins: Mapping[str, IntArray] = dataclasses.field(default_factory=dict)
    # TaintToleration's weight in the profile that scored them (0: not scored).
    taint_weight: int = _scores.TAINT_TOLERATION_WEIGHT

    def best(self) -> IntArray:
        """Positions (into `indexes`) of the nodes with the best total."""
        if not self.indexes.size:
            return self.indexes
        return np.flatnonzero(self.totals == self.totals.max())

    def best_names(self, node_names: Sequence[str]) -> tuple[str, ...]:
        """The names of the best-scoring nodes, sorted: kube-scheduler's random pick
        is among them. `node_names` are the occupancy's, in its order."""
        return tuple(sorted(node_names[int(self.indexes[p])] for p in self.best()))

    def with_steering(self, steer: BoolArray) -> IntArray:
        """Totals when loadaware's soft taint is added to the nodes `steer` marks
        (positions into `indexes`)."""
        if self.tolerates_steering or not steer.any() or not self.taint_weight:
            return self.totals
        before = self.plugins["TaintToleration"]
        after = _scores.normalised_taint_score(self.soft_taints + steer)
        return self.totals + self.taint_weight * (after - before)


def predict_node(
    pod: Pod,
    occupancy: Occupancy,
    node_names: Iterable[str],
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
    terminating: Collection[Pod] = (),
    profile: _profiles.SchedulerProfile = _profiles.DEFAULT_PROFILE,
) -> str | None:
    """One node kube-scheduler may bind the new `pod` to (the first by name among the
    best-scoring), or None when none fits. `extra_taints` are added to the named
    nodes' taints; `terminating` pods are placed but not counted for spreading."""
    best = best_nodes(
        pod,
        occupancy,
        node_names,
        extra_taints=extra_taints,
        terminating=terminating,
        profile=profile,
    )
    return best[0] if best else None


def best_nodes(
    pod: Pod,
    occupancy: Occupancy,
    node_names: Iterable[str],
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
    terminating: Collection[Pod] = (),
    profile: _profiles.SchedulerProfile = _profiles.DEFAULT_PROFILE,
) -> tuple[str, ...]:
    """Every node with the best score for the new `pod`, sorted by name: kube-scheduler
    picks one of them at random. Empty when none fits."""
    scores = score_pod(
        pod,
        occupancy,
        occupancy.node_indexes(node_names),
        extra_taints=extra_taints,
        terminating=terminating,
        profile=profile,
    )
    return scores.best_names(occupancy.node_names)


def predict_replacement(
    pod: Pod,
    occupancy: Occupancy,
    node_names: Iterable[str],
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
    profile: _profiles.SchedulerProfile = _profiles.DEFAULT_PROFILE,
) -> tuple[str, ...]:
    """The best-scoring nodes for the replacement of the placed `pod` (see
    score_replacement), sorted by name; empty when none fits."""
    scores = score_replacement(
        pod,
        occupancy,
        occupancy.node_indexes(node_names),
        extra_taints=extra_taints,
        profile=profile,
    )
    return scores.best_names(occupancy.node_names)


def score_replacement(
    pod: Pod,
    occupancy: Occupancy,
    indexes: IntArray,
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
    profile: _profiles.SchedulerProfile = _profiles.DEFAULT_PROFILE,
) -> NodeScores:
    """Scores for the replacement of the placed `pod` once it is evicted (see
    scheduling_replacement)."""
    with scheduling_replacement(pod, occupancy) as (incoming, terminating):
        return score_pod(
            incoming,
            occupancy,
            indexes,
            extra_taints=extra_taints,
            terminating=terminating,
            profile=profile,
        )


@contextlib.contextmanager
def scheduling_replacement(pod: Pod, occupancy: Occupancy) -> Iterator[tuple[Pod, tuple[Pod, ...]]]:
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
    occupancy: Occupancy,
    node_names: Iterable[str],
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
    terminating: Collection[Pod] = (),
    profile: _profiles.SchedulerProfile = _profiles.DEFAULT_PROFILE,
) -> list[tuple[str, float]]:
    """Feasible nodes with their total score, best first (ties by node name)."""
    scores = score_pod(
        pod,
        occupancy,
        occupancy.node_indexes(node_names),
        extra_taints=extra_taints,
        terminating=terminating,
        profile=profile,
    )
    all_names = occupancy.node_names
    names = [all_names[i] for i in scores.indexes.tolist()]
    return sorted(
        ((name, float(total)) for name, total in zip(names, scores.totals.tolist(), strict=True)),
        key=lambda item: (-item[1], item[0]),
    )


def feasible_mask(
    pod: Pod,
    occupancy: Occupancy,
    indexes: IntArray,
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
    terminating: Collection[Pod] = (),
) -> BoolArray:
    """Per indexed node, whether `pod` passes the Filter plugins the model runs: the
    checks of `Occupancy.fit_mask`, then PodTopologySpread's for its DoNotSchedule
    constraints."""
    mask = occupancy.fit_mask(pod, indexes, extra_taints=extra_taints)
    if mask.any() and pod.topology_spread_constraints:
        mask[mask] = _spread.spread_filter_mask(pod, occupancy, indexes[mask], terminating)
    return mask


def score_pod(
    pod: Pod,
    occupancy: Occupancy,
    indexes: IntArray,
    *,
    extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
    terminating: Collection[Pod] = (),
    profile: _profiles.SchedulerProfile = _profiles.DEFAULT_PROFILE,
) -> NodeScores:
    """Filter the indexed nodes for `pod` and score the feasible ones as `profile`
    does (the default profile unless given)."""
    feasible = indexes[
        feasible_mask(pod, occupancy, indexes, extra_taints=extra_taints, terminating=terminating)
    ]
    tolerates = _filters.tolerates(pod.tolerations, STEERING_TAINT)
    taint_weight = profile.weight("TaintToleration")
    if not feasible.size:
        empty = np.zeros(0, dtype=np.int64)
        return NodeScores(
            indexes=feasible,
            totals=empty,
            soft_taints=empty,
            tolerates_steering=tolerates,
            taint_weight=taint_weight,
        )
    resources = occupancy.resources()
    alloc_cpu = resources.allocatable_cpu_millicores[feasible]
    alloc_mem = resources.allocatable_memory_bytes[feasible]
    cpu, mem, nonzero_cpu, nonzero_mem = occupancy.requested_without(pod, feasible)
    soft_taints = _scores.soft_taint_counts(pod, occupancy, feasible, extra_taints)
    plugins: dict[str, IntArray] = {}
    if profile.weight("NodeResourcesFit"):
        pod_cpu = pod.cpu_request_millicores or _ledger.NONZERO_CPU_MILLICORES
        pod_mem = pod.memory_request_bytes or _ledger.NONZERO_MEMORY_BYTES
        strategy = profile.scoring_strategy
        if strategy.is_default:
            plugins["NodeResourcesFit"] = _scores.least_allocated(
                nonzero_cpu + pod_cpu, alloc_cpu, nonzero_mem + pod_mem, alloc_mem
            )
        else:
            fit = {
                "cpu": (nonzero_cpu + pod_cpu, alloc_cpu),
                "memory": (nonzero_mem + pod_mem, alloc_mem),
            }
            plugins["NodeResourcesFit"] = _scores.resource_fit_score(
                strategy.type,
                strategy.shape,
                [
                    (r.weight, *_resource_column(r.name, fit, pod, occupancy, feasible))
                    for r in strategy.resources
                ],
            )
    if taint_weight:
        plugins["TaintToleration"] = _scores.normalised_taint_score(soft_taints)
    if profile.weight("NodeResourcesBalancedAllocation"):
        balanced = _balanced_allocation(
            pod, profile, occupancy, feasible, (cpu, alloc_cpu), (mem, alloc_mem)
        )
        if balanced is not None:
            plugins["NodeResourcesBalancedAllocation"] = balanced
    if pod.preferred_node_affinity and profile.weight("NodeAffinity"):
        plugins["NodeAffinity"] = _scores.node_affinity_score(pod, occupancy, feasible)
    if profile.weight("PodTopologySpread"):
        spread = _spread.topology_spread_score(
            pod, occupancy, feasible, terminating, profile.default_spread
        )
        if spread is not None:
            plugins["PodTopologySpread"] = spread
    if profile.weight("InterPodAffinity"):
        affinity = _scores.inter_pod_affinity_score(pod, occupancy, feasible)
        if affinity is not None:
            plugins["InterPodAffinity"] = affinity
    if pod.container_images and profile.weight("ImageLocality"):
        images = _images.image_locality(pod.container_images, occupancy.node_images, feasible)
        if images is not None:
            plugins["ImageLocality"] = images
    totals = np.zeros(len(feasible), dtype=np.int64)
    for name, score in plugins.items():
        totals += profile.weight(name) * score
    return NodeScores(
        indexes=feasible,
        totals=totals,
        soft_taints=soft_taints,
        tolerates_steering=tolerates,
        plugins=plugins,
        taint_weight=taint_weight,
    )


def _resource_column(
    name: str,
    known: Mapping[str, tuple[IntArray, IntArray]],
    pod: Pod,
    occupancy: Occupancy,
    feasible: IntArray,
) -> tuple[IntArray, IntArray]:
    """(requested with the pod, allocatable) of one resource over the feasible nodes.
    An extended resource the pod does not request is left out of the score, as Go
    does, by an allocatable of 0."""
    found = known.get(name)
    if found is not None:
        return found
    wanted = pod.extended_requests.get(name, 0)
    if not wanted:
        zero = np.zeros(len(feasible), dtype=np.int64)
        return zero, zero
    allocatable, used = occupancy.extended_resource(name)
    requested = used[feasible] + wanted
    placed = occupancy.placed_index(pod)
    if placed is not None:
        requested[feasible == placed] -= wanted
    return requested, allocatable[feasible]


def _balanced_allocation(
    pod: Pod,
    profile: _profiles.SchedulerProfile,
    occupancy: Occupancy,
    feasible: IntArray,
    cpu: tuple[IntArray, IntArray],
    mem: tuple[IntArray, IntArray],
) -> IntArray | None:
    """NodeResourcesBalancedAllocation on actual requests including the pod; None
    when its PreScore skips: the pod requests none of the resources. Kubernetes
    skips best-effort pods since with nothing requested every node looks equally
    balanced and they would pile onto one node."""
    resources = profile.balanced_resources
    if resources == ("cpu", "memory"):
        if not (pod.cpu_request_millicores or pod.memory_request_bytes):
            return None
        return _scores.balanced_allocation(
            cpu[0] + pod.cpu_request_millicores,
            cpu[1],
            mem[0] + pod.memory_request_bytes,
            mem[1],
        )
    wants = {"cpu": pod.cpu_request_millicores, "memory": pod.memory_request_bytes}
    if not any(wants.get(r) or pod.extended_requests.get(r, 0) for r in resources):
        return None
    known = {"cpu": (cpu[0] + wants["cpu"], cpu[1]), "memory": (mem[0] + wants["memory"], mem[1])}
    return _scores.balanced_resources_score(
        [_resource_column(r, known, pod, occupancy, feasible) for r in resources]
    )


# loadaware's steering taint, the one the evictor puts on nodes (plan.HOTSPOT_TAINT).
STEERING_TAINT = Taint(key="loadaware.io/hotspot", value="true", effect="PreferNoSchedule")
