"""InterPodAffinity's state: the placed pods' terms and the pods they select, per domain.

kube-scheduler's InterPodAffinity PreFilter counts, for the incoming pod, the
placed pods its required (anti-)affinity terms select per topology domain, and
the placed pods whose required anti-affinity selects it; its PreScore does the
same for the preferred terms both ways. `AffinityIndex` keeps those counts
current across moves instead of rebuilding them per pod, and answers the
plugin's Filter (`failure` for one node, `allowed` for many).

Indexes are built only for what pods actually use: required affinity counts per
distinct (namespace, terms) of the pods that are checked, and anti-affinity
holders grouped by (namespace, term) per topology key that some term names. A
cluster without affinity terms pays nothing for them.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TypeAlias, TypeVar

import numpy as np

from loadaware.cluster._types import LabelSelector, Node, Pod, PodAffinityTerm
from loadaware.scheduling._nodes import BoolArray, IntArray, NodeCache

# PodAffinityTerm holds dicts (match_labels), so it is not hashable; this is its
# hashable, value-equal stand-in for use as a dictionary key.
TermKey: TypeAlias = tuple[object, ...]
_GroupId: TypeAlias = tuple[str, TermKey]  # (namespace of the pod holding the term, term)
# A namespace (None: any) and a label pair (None: any) a pod must have to be
# selected: counts are filed under them, so a move visits only those it may change.
Bucket: TypeAlias = tuple[str | None, tuple[str, str] | None]
_K = TypeVar("_K")
# A group of placed pods holding one term: _AntiAffinityGroup or ScoreGroup.
_G = TypeVar("_G", "_AntiAffinityGroup", "ScoreGroup")


def selector_key(selector: LabelSelector | None) -> TermKey | None:
    if selector is None:
        return None
    return (tuple(sorted(selector.match_labels.items())), selector.match_expressions)


def _term_key(term: PodAffinityTerm) -> TermKey:
    return (
        selector_key(term.label_selector),
        term.topology_key,
        term.namespaces,
        selector_key(term.namespace_selector),
    )


class _MatchCounts:
    """How many placed pods match all of `terms` (of a pod in `namespace`), per topology domain.

    This is the count kube-scheduler's InterPodAffinity PreFilter builds for the
    incoming pod, kept up to date across moves instead of rebuilt per pod.
    """

    __slots__ = ("by_domain", "namespace", "terms", "totals")

    def __init__(self, namespace: str, terms: tuple[PodAffinityTerm, ...]) -> None:
        self.namespace = namespace
        self.terms = terms
        keys = dict.fromkeys(t.topology_key for t in terms)
        self.by_domain: dict[str, dict[str, int]] = {key: {} for key in keys}
        # Matching pods on nodes that have the key at all, for the "first pod of its
        # kind" special case of required affinity.
        self.totals: dict[str, int] = dict.fromkeys(keys, 0)

    def matches(self, pod: Pod, namespace_labels: Mapping[str, Mapping[str, str]]) -> bool:
        return all(
            term.selects(self.namespace, pod.namespace, pod.labels, namespace_labels)
            for term in self.terms
        )

    def shift(self, node_labels: Mapping[str, str], delta: int) -> None:
        for key, counts in self.by_domain.items():
            value = node_labels.get(key)
            if value is None:
                continue
            count = counts.get(value, 0) + delta
            if count:
                counts[value] = count
            else:
                del counts[value]
            self.totals[key] += delta


@dataclass(slots=True, eq=False)
class _AntiAffinityGroup:
    """Placed pods of one namespace holding one required anti-affinity term."""

    namespace: str
    term: PodAffinityTerm
    counts: dict[str, int]  # domain value of term.topology_key -> holders there


@dataclass(slots=True, eq=False)
class ScoreGroup:
    """Placed pods of one namespace holding one term that scores pods it selects:
    `weight` per holder in the incoming node's domain (negative for anti-affinity)."""

    namespace: str
    term: PodAffinityTerm
    weight: int
    counts: dict[str, int]  # domain value of term.topology_key -> holders there


class AffinityIndex:
    """The inter-pod affinity counts of the placed pods, kept current across moves.

    Reads the placed pods from the ledger's `pods_by_namespace` (the same dict,
    kept by the ledger) when it builds counts for a term first asked about.
    """

    __slots__ = (
        "_anti_buckets",
        "_anti_domains",
        "_anti_groups",
        "_cache",
        "_match_buckets",
        "_matches",
        "_namespace_labels",
        "_nodes",
        "_pods_by_namespace",
        "_score_buckets",
        "_score_groups",
        "_term_keys",
    )

    def __init__(
        self,
        nodes: NodeCache,
        pods_by_namespace: Mapping[str, Mapping[str, tuple[Pod, int]]],
        namespace_labels: Mapping[str, Mapping[str, str]],
    ) -> None:
        self._cache = nodes
        self._nodes: tuple[Node, ...] = nodes.nodes
        self._pods_by_namespace = pods_by_namespace
        self._namespace_labels = namespace_labels
        self._term_keys: dict[int, tuple[PodAffinityTerm, TermKey]] = {}
        self._matches: dict[tuple[str, tuple[TermKey, ...]], _MatchCounts] = {}
        # The same entries, filed under a namespace (None: any) and a label pair (None:
        # any) a pod must have to match, so a move visits only entries it may change.
        self._match_buckets: dict[Bucket, list[_MatchCounts]] = {}
        self._anti_groups: dict[_GroupId, _AntiAffinityGroup] = {}
        # topology key -> domain value -> anti-affinity group -> holders in that domain
        self._anti_domains: dict[str, dict[str, dict[_GroupId, int]]] = {}
        # The same groups filed by what an incoming pod must have to be selected, so a
        # check visits only groups that may select it (see _buckets_for).
        self._anti_buckets: dict[Bucket, list[_AntiAffinityGroup]] = {}
        # InterPodAffinity scoring: placed pods' terms that score an incoming pod they
        # select (required affinity, preferred affinity and anti-affinity).
        self._score_groups: dict[tuple[object, ...], ScoreGroup] = {}
        self._score_buckets: dict[Bucket, list[ScoreGroup]] = {}

    def nodes_changed(self) -> None:
        """The node cache replaced a node: read its nodes from now on. A node whose
        labels change must have its pods counted out before and back in after."""
        self._nodes = self._cache.nodes

    @property
    def has_anti_affinity(self) -> bool:
        """Whether any placed pod holds a required anti-affinity term."""
        return bool(self._anti_groups)

    def count(self, pod: Pod, i: int, delta: int) -> None:
        """Add (delta 1) or take away (-1) the placed `pod` on node `i`: as a pod the
        counted terms may select, and as the holder of its own terms."""
        labels = self._nodes[i].labels
        if self._match_buckets:
            for bucket in buckets_of(pod):
                for entry in self._match_buckets.get(bucket, ()):
                    if entry.matches(pod, self._namespace_labels):
                        entry.shift(labels, delta)
        if (
            pod.required_pod_affinity
            or pod.preferred_pod_affinity
            or pod.preferred_pod_anti_affinity
        ):
            self._account_score_terms(pod, labels, delta)
        for term in pod.required_pod_anti_affinity:
            value = labels.get(term.topology_key)
            if value is None:
                continue  # a node without the key is in no domain of this term
            gid = (pod.namespace, self._key_of(term))
            group = self._anti_groups.get(gid)
            if group is None:
                group = self._anti_groups[gid] = _AntiAffinityGroup(pod.namespace, term, {})
                for bucket in _buckets_for(pod.namespace, term):
                    self._anti_buckets.setdefault(bucket, []).append(group)
            _bump(group.counts, value, delta)
            domain = self._anti_domains.setdefault(term.topology_key, {}).setdefault(value, {})
            _bump(domain, gid, delta)
            if not domain:
                del self._anti_domains[term.topology_key][value]

    def _account_score_terms(self, pod: Pod, labels: Mapping[str, str], delta: int) -> None:
        # kube-scheduler scores an incoming pod a placed pod's required affinity selects
        # with hardPodAffinityWeight (1 by default), its preferred terms with their weight.
        weighted = (
            *((1, term) for term in pod.required_pod_affinity),
            *((w.weight, w.term) for w in pod.preferred_pod_affinity),
            *((-w.weight, w.term) for w in pod.preferred_pod_anti_affinity),
        )
        for weight, term in weighted:
            value = labels.get(term.topology_key)
            if value is None:
                continue
            gid = (pod.namespace, self._key_of(term), weight)
            group = self._score_groups.get(gid)
            if group is None:
                group = self._score_groups[gid] = ScoreGroup(pod.namespace, term, weight, {})
                for bucket in _buckets_for(pod.namespace, term):
                    self._score_buckets.setdefault(bucket, []).append(group)
            _bump(group.counts, value, delta)

    # --- InterPodAffinity's Filter ---

    def allowed(self, pod: Pod, indexes: IntArray, placed: tuple[Pod, int] | None) -> BoolArray:
        """Per indexed node, whether the pod passes the required (anti-)affinity checks;
        `placed` is where the pod itself is placed, if anywhere.

        The rules become allowed and forbidden domains once per pod, then every node
        is tested at once on its domain codes."""
        mask = np.ones(len(indexes), dtype=np.bool_)
        cache = self._cache
        required_keys, wanted = self._affinity_domains(pod, placed)
        for key in required_keys:
            mask &= cache.domain_codes(key)[0][indexes] >= 0
        for key, values in wanted:
            mask &= cache.in_domains(key, values, indexes)
        for key, values in self._blocked_domains(pod, placed).items():
            mask &= ~cache.in_domains(key, values, indexes)
        return mask

    def _affinity_domains(
        self, pod: Pod, placed: tuple[Pod, int] | None
    ) -> tuple[tuple[str, ...], list[tuple[str, set[str]]]]:
        """Topology keys a node must have, and per term the domains holding a matching pod
        (no domain constraint when the first-pod special case applies)."""
        terms = pod.required_pod_affinity
        if not terms:
            return (), []
        entry = self._match_counts(pod.namespace, terms)
        self_labels = self._own_labels(entry, placed) or {}
        keys = tuple(entry.by_domain)
        if all(entry.totals[key] - (key in self_labels) <= 0 for key in keys) and entry.matches(
            pod, self._namespace_labels
        ):
            return keys, []
        wanted = []
        for term in terms:
            key = term.topology_key
            own_value = self_labels.get(key)
            values = {v for v, c in entry.by_domain[key].items() if c - (v == own_value) > 0}
            wanted.append((key, values))
        return keys, wanted

    def _blocked_domains(self, pod: Pod, placed: tuple[Pod, int] | None) -> dict[str, set[str]]:
        """Topology key -> domain values the pod may not go to: those holding a pod its
        own anti-affinity selects, and those where a placed pod's anti-affinity selects it."""
        blocked: dict[str, set[str]] = {}
        for term in pod.required_pod_anti_affinity:
            entry = self._match_counts(pod.namespace, (term,))
            own_value = (self._own_labels(entry, placed) or {}).get(term.topology_key)
            values = blocked.setdefault(term.topology_key, set())
            for value, count in entry.by_domain[term.topology_key].items():
                if count - (value == own_value) > 0:
                    values.add(value)
        own = self._own_holdings(placed)
        for group in self._groups_selecting(pod, self._anti_buckets):
            gid = (group.namespace, self._key_of(group.term))
            values = blocked.setdefault(group.term.topology_key, set())
            for value, count in group.counts.items():
                if own:
                    count -= own.get((gid, value), 0)
                if count > 0:
                    values.add(value)
        return {key: values for key, values in blocked.items() if values}

    def failure(
        self,
        pod: Pod,
        labels: Mapping[str, str],
        placed: tuple[Pod, int] | None,
    ) -> str | None:
        """InterPodAffinity's Filter on a node with these labels: the first failing
        reason, or None."""
        if pod.required_pod_affinity and not self._affinity_satisfied(pod, labels, placed):
            return "pod-affinity"
        if pod.required_pod_anti_affinity and self._incoming_anti_blocked(pod, labels, placed):
            return "pod-anti-affinity"
        if self._anti_domains and self._existing_anti_blocked(pod, labels, placed):
            return "pod-anti-affinity"
        return None

    def _affinity_satisfied(
        self, pod: Pod, labels: Mapping[str, str], placed: tuple[Pod, int] | None
    ) -> bool:
        terms = pod.required_pod_affinity
        entry = self._match_counts(pod.namespace, terms)
        self_labels = self._own_labels(entry, placed)
        pods_exist = True
        for term in terms:
            value = labels.get(term.topology_key)
            if value is None:
                return False  # the node must have every term's topology key
            count = entry.by_domain[term.topology_key].get(value, 0)
            if self_labels is not None and self_labels.get(term.topology_key) == value:
                count -= 1
            if count <= 0:
                pods_exist = False
        if pods_exist:
            return True
        # The API lets the first pod of a group with affinity to itself be placed
        # anywhere (with the topology keys): no other pod matches yet, it matches itself.
        for key, total in entry.totals.items():
            if self_labels is not None and key in self_labels:
                total -= 1
            if total > 0:
                return False
        return entry.matches(pod, self._namespace_labels)

    def _incoming_anti_blocked(
        self, pod: Pod, labels: Mapping[str, str], placed: tuple[Pod, int] | None
    ) -> bool:
        for term in pod.required_pod_anti_affinity:
            value = labels.get(term.topology_key)
            if value is None:
                continue
            entry = self._match_counts(pod.namespace, (term,))
            count = entry.by_domain[term.topology_key].get(value, 0)
            if count:
                self_labels = self._own_labels(entry, placed)
                if self_labels is not None and self_labels.get(term.topology_key) == value:
                    count -= 1
            if count > 0:
                return True
        return False

    def _existing_anti_blocked(
        self, pod: Pod, labels: Mapping[str, str], placed: tuple[Pod, int] | None
    ) -> bool:
        """Whether a placed pod in the node's domain has a required anti-affinity term
        selecting `pod` (kube-scheduler's "existing pods' anti-affinity")."""
        own = self._own_holdings(placed)
        for key, domains in self._anti_domains.items():
            value = labels.get(key)
            if value is None:
                continue
            groups = domains.get(value)
            if not groups:
                continue
            for gid, count in groups.items():
                if own:
                    count -= own.get((gid, value), 0)
                if count <= 0:
                    continue
                group = self._anti_groups[gid]
                if group.term.selects(
                    group.namespace, pod.namespace, pod.labels, self._namespace_labels
                ):
                    return True
        return False

    def _own_labels(
        self, entry: _MatchCounts, placed: tuple[Pod, int] | None
    ) -> Mapping[str, str] | None:
        """The node labels of the checked pod when it is placed and counted in `entry`."""
        if placed is None or not entry.matches(placed[0], self._namespace_labels):
            return None
        return self._nodes[placed[1]].labels

    def _own_holdings(self, placed: tuple[Pod, int] | None) -> dict[tuple[_GroupId, str], int]:
        """What the checked pod itself contributes to the anti-affinity groups."""
        if placed is None or not placed[0].required_pod_anti_affinity:
            return {}
        recorded, i = placed
        labels = self._nodes[i].labels
        own: dict[tuple[_GroupId, str], int] = {}
        for term in recorded.required_pod_anti_affinity:
            value = labels.get(term.topology_key)
            if value is not None:
                slot = ((recorded.namespace, self._key_of(term)), value)
                own[slot] = own.get(slot, 0) + 1
        return own

    def _match_counts(self, namespace: str, terms: tuple[PodAffinityTerm, ...]) -> _MatchCounts:
        cache_key = (namespace, tuple(self._key_of(t) for t in terms))
        entry = self._matches.get(cache_key)
        if entry is None:
            entry = _MatchCounts(namespace, terms)
            for pod, i in self._pods_in_scope(namespace, terms[0]):
                if entry.matches(pod, self._namespace_labels):
                    entry.shift(self._nodes[i].labels, 1)
            self._matches[cache_key] = entry
            for bucket in _buckets_for(namespace, terms[0]):
                self._match_buckets.setdefault(bucket, []).append(entry)
        return entry

    def _pods_in_scope(self, namespace: str, term: PodAffinityTerm) -> Iterable[tuple[Pod, int]]:
        """Placed pods that could be selected by `term`, narrowed by namespace when that
        is cheap to know; the term itself still decides."""
        if term.namespace_selector is not None:
            namespaces: Iterable[str] = list(self._pods_by_namespace)
        elif term.namespaces:
            namespaces = term.namespaces
        else:
            namespaces = (namespace,)
        for ns in namespaces:
            yield from self._pods_by_namespace.get(ns, {}).values()

    def _key_of(self, term: PodAffinityTerm) -> TermKey:
        # Memoised by identity: replicas built from one template often share term
        # objects, and holding the term keeps its id from being reused.
        memo = self._term_keys.get(id(term))
        if memo is None:
            memo = self._term_keys[id(term)] = (term, _term_key(term))
        return memo[1]

    # --- what InterPodAffinity's Score reads ---

    def domain_counts(self, namespace: str, term: PodAffinityTerm) -> Mapping[str, int]:
        """Placed pods the term (of a pod in `namespace`) selects, per domain value of
        its topology key."""
        return self._match_counts(namespace, (term,)).by_domain[term.topology_key]

    def score_groups_selecting(self, pod: Pod) -> Iterator[ScoreGroup]:
        """Placed pods' scoring terms (ScoreGroup) that select `pod`, with holders."""
        return self._groups_selecting(pod, self._score_buckets)

    def _groups_selecting(self, pod: Pod, buckets: Mapping[Bucket, list[_G]]) -> Iterator[_G]:
        """The groups filed in `buckets` whose term selects `pod` and that have holders."""
        if not buckets:
            return
        seen: set[int] = set()
        for bucket in buckets_of(pod):
            for group in buckets.get(bucket, ()):
                if id(group) in seen or not group.counts:
                    continue
                seen.add(id(group))
                if group.term.selects(
                    group.namespace, pod.namespace, pod.labels, self._namespace_labels
                ):
                    yield group


def _buckets_for(namespace: str, term: PodAffinityTerm) -> list[Bucket]:
    """Where to file counts of pods matching `term` (a term of a pod in `namespace`)."""
    if term.label_selector is None:
        return []  # selects no pod: the counts never change
    pair = min(term.label_selector.match_labels.items(), default=None)
    if term.namespace_selector is not None:
        return [(None, pair)]
    return [(ns, pair) for ns in term.namespaces or (namespace,)]


def buckets_of(pod: Pod) -> Iterator[Bucket]:
    """Every bucket whose entries may match `pod`."""
    for namespace in (pod.namespace, None):
        yield namespace, None
        for pair in pod.labels.items():
            yield namespace, pair


def _bump(counts: dict[_K, int], key: _K, delta: int) -> None:
    count = counts.get(key, 0) + delta
    if count:
        counts[key] = count
    else:
        del counts[key]
