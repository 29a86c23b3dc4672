"""PodTopologySpread's state: the placed pods a spreading selector matches, per node.

PodTopologySpread counts, per domain, the pods of the incoming pod's namespace
that a constraint's selector matches, leaving out the terminating ones.
`SpreadIndex` keeps a count per node for each (namespace, selector) asked about,
current across moves, so that a pod's Filter and Score sum them by domain.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from loadaware.cluster._types import LabelSelector, Pod
from loadaware.scheduling._affinity_index import Bucket, buckets_of, selector_key
from loadaware.scheduling._nodes import IntArray, read_only


@dataclass(slots=True, eq=False)
class _SpreadCounts:
    """Placed pods of `namespace` matching `selector`, per node (in Occupancy.nodes order)."""

    namespace: str
    selector: LabelSelector
    counts: IntArray


class SpreadIndex:
    """Per (namespace, selector), the matching placed pods per node that are not
    terminating. Reads the placed pods from the ledger's `pods_by_namespace`."""

    __slots__ = (
        "_node_count",
        "_pods_by_label",
        "_pods_by_namespace",
        "_spread",
        "_spread_buckets",
    )

    def __init__(
        self, node_count: int, pods_by_namespace: Mapping[str, Mapping[str, tuple[Pod, int]]]
    ) -> None:
        self._node_count = node_count
        self._pods_by_namespace = pods_by_namespace
        # Per (namespace, selector), matching pods per node.
        self._spread: dict[tuple[str, object], tuple[LabelSelector, _SpreadCounts]] = {}
        self._spread_buckets: dict[Bucket, list[_SpreadCounts]] = {}
        # namespace -> label pair -> placed pods with it; built for a namespace when
        # its first spread selector is counted, so building counts is not a scan.
        self._pods_by_label: dict[str, dict[tuple[str, str], set[str]]] = {}

    def file(self, pod: Pod) -> None:
        """`pod` is now placed (its node is counted by `count`)."""
        by_label = self._pods_by_label.get(pod.namespace)
        if by_label is not None:
            for pair in pod.labels.items():
                by_label.setdefault(pair, set()).add(pod.key)

    def unfile(self, recorded: Pod) -> None:
        """`recorded` is no longer placed."""
        by_label = self._pods_by_label.get(recorded.namespace)
        if by_label is not None:
            for pair in recorded.labels.items():
                by_label[pair].discard(recorded.key)

    def count(self, pod: Pod, i: int, delta: int) -> None:
        """Add (delta 1) or take away (-1) the placed `pod` on node `i`."""
        if self._spread_buckets and pod.deletion_timestamp is None:
            # PodTopologySpread does not count terminating pods (#87621).
            for bucket in buckets_of(pod):
                for spread in self._spread_buckets.get(bucket, ()):
                    if spread.namespace == pod.namespace and spread.selector.matches(pod.labels):
                        spread.counts[i] += delta

    def counts(self, namespace: str, selector: LabelSelector) -> IntArray:
        """Placed pods of `namespace` that `selector` matches and that are not
        terminating, per node; kept current across moves (read-only view)."""
        # By identity first: the scheduler model hands out one selector object per
        # label set, and the entry holds it, so its id is not reused.
        fast_key = (namespace, id(selector))
        known = self._spread.get(fast_key)
        if known is not None and known[0] is selector:
            return read_only(known[1].counts)
        cache_key = (namespace, selector_key(selector) or ())
        found = self._spread.get(cache_key)
        entry = found[1] if found is not None else None
        if entry is None:
            counts = np.zeros(self._node_count, dtype=np.int64)
            in_namespace = self._pods_by_namespace.get(namespace, {})
            pair = min(selector.match_labels.items(), default=None)
            if pair is None:
                keys: Iterable[str] = in_namespace
            else:
                by_label = self._pods_by_label.get(namespace)
                if by_label is None:
                    by_label = self._pods_by_label[namespace] = {}
                    for key, (placed_pod, _i) in in_namespace.items():
                        for label in placed_pod.labels.items():
                            by_label.setdefault(label, set()).add(key)
                keys = by_label.get(pair, ())
            for key in keys:
                pod, i = in_namespace[key]
                if pod.deletion_timestamp is None and selector.matches(pod.labels):
                    counts[i] += 1
            entry = _SpreadCounts(namespace, selector, counts)
            self._spread[cache_key] = (selector, entry)
            self._spread_buckets.setdefault((namespace, pair), []).append(entry)
        self._spread[fast_key] = (selector, entry)
        return read_only(entry.counts)
