"""kube-scheduler's PodTopologySpread: its Filter for a pod's DoNotSchedule
constraints and its Score for the ScheduleAnyway ones or the system defaults.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from functools import lru_cache

import numpy as np

from loadaware.cluster._types import LabelSelector, Pod
from loadaware.scheduling._nodes import BoolArray, IntArray
from loadaware.scheduling._occupancy import Occupancy
from loadaware.scheduling._scores import MAX_NODE_SCORE

HOSTNAME_KEY = "kubernetes.io/hostname"
ZONE_KEY = "topology.kubernetes.io/zone"
# PodTopologySpread's system defaults (pkg/scheduler/apis/config/v1/defaults.go).
SYSTEM_DEFAULT_SPREAD: tuple[tuple[str, int], ...] = ((HOSTNAME_KEY, 3), (ZONE_KEY, 5))
# Owners whose pods the system-default spreading covers (helper.DefaultSelector).
SPREAD_OWNER_KINDS = frozenset({"ReplicaSet", "ReplicationController", "StatefulSet"})


def spread_filter_mask(
    pod: Pod,
    occupancy: Occupancy,
    indexes: IntArray,
    terminating: Collection[Pod] = (),
) -> BoolArray:
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
    occupancy: Occupancy,
    namespace: str,
    selector: LabelSelector,
    terminating: Collection[Pod],
) -> IntArray:
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


def spread_constraints(
    pod: Pod, defaults: tuple[tuple[str, int], ...] = SYSTEM_DEFAULT_SPREAD
) -> tuple[tuple[str, int, LabelSelector], ...] | None:
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
    if not defaults:
        return None
    selector = pod.owner_selector or _sibling_selector(pod.labels)
    return tuple((key, skew, selector) for key, skew in defaults)


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


def topology_spread_score(
    pod: Pod,
    occupancy: Occupancy,
    feasible: IntArray,
    terminating: Collection[Pod],
    defaults: tuple[tuple[str, int], ...] = SYSTEM_DEFAULT_SPREAD,
) -> IntArray | None:
    """PodTopologySpread's Score and NormalizeScore over the feasible nodes;
    `defaults` are the profile's constraints for a pod without its own."""
    constraints = spread_constraints(pod, defaults)
    if not constraints:
        return None
    domains = [occupancy.domain_codes(key) for key, _skew, _sel in constraints]
    # With constraints of its own a pod ignores nodes lacking any topology key;
    # with the system defaults every node takes part.
    ignored: BoolArray | None = None
    considered = feasible
    if pod.topology_spread_constraints:
        ignored = np.zeros(len(feasible), dtype=np.bool_)
        for codes, _values in domains:
            ignored |= codes[feasible] < 0
        considered = feasible[~ignored]
    include = occupancy.affinity_mask(pod)
    raw = np.zeros(len(feasible), dtype=np.float64)
    # The system defaults share one selector over two keys: counted once.
    counted: dict[int, IntArray] = {}
    for (key, max_skew, selector), (_codes, values) in zip(constraints, domains, strict=True):
        counts = counted.get(id(selector))
        if counts is None:
            counts = counted[id(selector)] = _spread_counts(
                occupancy, pod.namespace, selector, terminating
            )
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
