"""nodeFit: whether a pod can go to a node, against a working copy of what is placed where.

`Occupancy` is the planner's mutable view of the cluster during one planning
call: requests, pod counts, host ports and the (anti-)affinity indexes of every
placed pod. Moves recorded with `remove` / `add` are seen by every later check,
so a plan never stacks two replicas that exclude each other on one node or zone.

The checks follow kube-scheduler's Filter plugins (NodeUnschedulable,
TaintToleration, NodeAffinity, NodeResourcesFit, NodePorts, InterPodAffinity)
plus the descheduler's readiness check, and report the first failing rule in
the order of `FIT_REASONS`. Extended resources (`nvidia.com/gpu`) are fitted
as NodeResourcesFit fits them: a request needs that many free on the node.
Volumes and DRA claims are not modelled; topology spread constraints are
filtered by the scheduler model (_scheduler.spread_filter_mask).

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt

from loadaware.cluster._types import (
    ClusterState,
    LabelSelector,
    Node,
    Pod,
    PodAffinityTerm,
    Taint,
    Toleration,
)
from loadaware.plan import _images

# Every reason fit_failure can return, in the order the checks run.
FIT_REASONS: tuple[str, ...] = (
    "node-not-ready",
    "node-unschedulable",
    "untolerated-taint",
    "node-selector",
    "node-affinity",
    "insufficient-cpu",
    "insufficient-memory",
    "insufficient-extended-resource",
    "too-many-pods",
    "host-port",
    "pod-affinity",
    "pod-anti-affinity",
)

# kube-scheduler counts a container without requests as asking for this much when
# it scores nodes (not when it filters them); see schedutil.GetNonzeroRequests.
# Approximated per pod: a pod requesting 0 is counted at the default.
NONZERO_CPU_MILLICORES = 100
NONZERO_MEMORY_BYTES = 200 * 1024 * 1024

HARD_TAINT_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
# NodeUnschedulable lets a pod onto a cordoned node when it tolerates this taint,
# which is how DaemonSet pods land on cordoned nodes.
UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")

_NO_TAINTS: Mapping[str, Sequence[Taint]] = MappingProxyType({})
_NO_NAMESPACE_LABELS: Mapping[str, Mapping[str, str]] = MappingProxyType({})

IntArray: TypeAlias = npt.NDArray[np.int64]
BoolArray: TypeAlias = npt.NDArray[np.bool_]
# PodAffinityTerm holds dicts (match_labels), so it is not hashable; this is its
# hashable, value-equal stand-in for use as a dictionary key.
_TermKey: TypeAlias = tuple[object, ...]
_GroupId: TypeAlias = tuple[str, _TermKey]  # (namespace of the pod holding the term, term)
_Bucket: TypeAlias = tuple[str | None, tuple[str, str] | None]
_K = TypeVar("_K")
# A group of placed pods holding one term: _AntiAffinityGroup or ScoreGroup.
_G = TypeVar("_G", "_AntiAffinityGroup", "ScoreGroup")


def tolerates(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    return any(tol.tolerates(taint) for tol in tolerations)


def _untolerated_hard_taint(tolerations: Sequence[Toleration], taints: Iterable[Taint]) -> bool:
    return any(
        taint.effect in HARD_TAINT_EFFECTS and not tolerates(tolerations, taint) for taint in taints
    )


def _static_failure(pod: Pod, node: Node, extra_taints: Sequence[Taint] = ()) -> str | None:
    """The checks that depend on the pod and the node only, never on what else is placed."""
    if not node.ready:
        return "node-not-ready"
    if node.unschedulable and not tolerates(pod.tolerations, UNSCHEDULABLE_TAINT):
        return "node-unschedulable"
    if _untolerated_hard_taint(pod.tolerations, node.taints) or (
        extra_taints and _untolerated_hard_taint(pod.tolerations, extra_taints)
    ):
        return "untolerated-taint"
    labels = node.labels
    for key, value in pod.node_selector.items():
        if labels.get(key) != value:
            return "node-selector"
    if pod.required_node_affinity and not any(
        term.matches(node) for term in pod.required_node_affinity
    ):
        return "node-affinity"
    return None


def node_admits(pod: Pod, node: Node) -> bool:
    """Whether the node passes the checks that depend on the pod and the node alone
    (readiness, cordon, NoSchedule/NoExecute taints, nodeSelector, required node
    affinity), whatever else is placed there."""
    return _static_failure(pod, node) is None


def _selector_key(selector: LabelSelector | None) -> _TermKey | None:
    if selector is None:
        return None
    return (tuple(sorted(selector.match_labels.items())), selector.match_expressions)


def _term_key(term: PodAffinityTerm) -> _TermKey:
    return (
        _selector_key(term.label_selector),
        term.topology_key,
        term.namespaces,
        _selector_key(term.namespace_selector),
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


@dataclass(slots=True, eq=False)
class _SpreadCounts:
    """Placed pods of `namespace` matching `selector`, per node (in Occupancy.nodes order)."""

    namespace: str
    selector: LabelSelector
    counts: IntArray


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeResources:
    """Per-node resource arrays, in Occupancy.nodes order; read-only views, live until
    the next add or remove."""

    allocatable_cpu_millicores: IntArray
    allocatable_memory_bytes: IntArray
    allocatable_pods: IntArray
    requested_cpu_millicores: IntArray
    requested_memory_bytes: IntArray
    # Requests with kube-scheduler's defaults for pods requesting nothing, for scoring.
    nonzero_cpu_millicores: IntArray
    nonzero_memory_bytes: IntArray
    pods: IntArray


def _read_only(array: IntArray) -> IntArray:
    view = array.view()
    view.flags.writeable = False
    return view


class Occupancy:
    """Mutable working copy of what is placed where, local to one planning call.

    Tracks per node the requested cpu millicores, memory bytes, pod count and host
    ports, and indexes placed pods by topology domain for (anti-)affinity. A pod is
    identified by namespace/name, so a replacement added under the same name takes
    the evicted pod's place. A pod never conflicts with itself: when the pod being
    checked is placed, its own requests, ports and terms are left out.

    Indexes are built only for what pods actually use: required affinity counts per
    distinct (namespace, terms) of the pods that are checked, and anti-affinity
    holders grouped by (namespace, term) per topology key that some term names. A
    cluster without affinity terms pays nothing for them.
    """

    __slots__ = (
        "_affinity_masks",
        "_alloc_cpu",
        "_alloc_mem",
        "_alloc_pods",
        "_anti_buckets",
        "_anti_domains",
        "_anti_groups",
        "_codes",
        "_cpu",
        "_ext_alloc",
        "_ext_used",
        "_images",
        "_index",
        "_match_buckets",
        "_matches",
        "_mem",
        "_names",
        "_namespace_labels",
        "_nodes",
        "_nz_cpu",
        "_nz_mem",
        "_placed",
        "_pod_count",
        "_pods_by_label",
        "_pods_by_namespace",
        "_ports",
        "_recent_indexes",
        "_req_cpu",
        "_req_mem",
        "_req_pods",
        "_score_buckets",
        "_score_groups",
        "_shifted_codes",
        "_spread",
        "_spread_buckets",
        "_static_masks",
        "_tainted",
        "_term_keys",
        "_toleration_masks",
    )

    def __init__(
        self,
        nodes: Iterable[Node],
        pods: Iterable[Pod] = (),
        *,
        namespace_labels: Mapping[str, Mapping[str, str]] = _NO_NAMESPACE_LABELS,
    ) -> None:
        """`pods` are placed on their node_name; pods bound to no listed node are skipped."""
        self._nodes: tuple[Node, ...] = tuple(nodes)
        self._names: tuple[str, ...] = tuple(n.name for n in self._nodes)
        self._index: dict[str, int] = {name: i for i, name in enumerate(self._names)}
        if len(self._index) != len(self._nodes):
            raise ValueError("node names must be unique")
        self._namespace_labels = namespace_labels
        count = len(self._nodes)

        def column(values: Iterable[int]) -> IntArray:
            return np.fromiter(values, dtype=np.int64, count=count)

        self._alloc_cpu = column(n.allocatable_cpu_millicores for n in self._nodes)
        self._alloc_mem = column(n.allocatable_memory_bytes for n in self._nodes)
        self._alloc_pods = column(n.allocatable_pods for n in self._nodes)
        self._tainted: BoolArray = np.fromiter(
            (bool(n.taints) for n in self._nodes), dtype=np.bool_, count=count
        )
        self._tainted.flags.writeable = False
        # Nodes never change here, so neither do the images they report.
        self._images = _images.NodeImages(self._nodes)
        self._recent_indexes: dict[tuple[str, ...], IntArray] = {}
        # Plain lists for the per-node checks (Python ints are faster to read one at a
        # time), numpy arrays mirroring them for the vectorised scheduler model.
        self._cpu: list[int] = [0] * count
        self._mem: list[int] = [0] * count
        self._pod_count: list[int] = [0] * count
        self._req_cpu = np.zeros(count, dtype=np.int64)
        self._req_mem = np.zeros(count, dtype=np.int64)
        self._req_pods = np.zeros(count, dtype=np.int64)
        self._nz_cpu = np.zeros(count, dtype=np.int64)
        self._nz_mem = np.zeros(count, dtype=np.int64)
        # Extended resources by name, for the names some placed or checked pod requests.
        self._ext_alloc: dict[str, IntArray] = {}
        self._ext_used: dict[str, IntArray] = {}
        self._ports: dict[int, dict[int, int]] = {}
        self._placed: dict[str, tuple[Pod, int]] = {}
        self._pods_by_namespace: dict[str, dict[str, tuple[Pod, int]]] = {}
        self._term_keys: dict[int, tuple[PodAffinityTerm, _TermKey]] = {}
        self._matches: dict[tuple[str, tuple[_TermKey, ...]], _MatchCounts] = {}
        # The same entries, filed under a namespace (None: any) and a label pair (None:
        # any) a pod must have to match, so a move visits only entries it may change.
        self._match_buckets: dict[_Bucket, list[_MatchCounts]] = {}
        self._codes: dict[str, tuple[IntArray, dict[str, int]]] = {}
        self._shifted_codes: dict[str, tuple[IntArray, bool]] = {}
        self._anti_groups: dict[_GroupId, _AntiAffinityGroup] = {}
        # topology key -> domain value -> anti-affinity group -> holders in that domain
        self._anti_domains: dict[str, dict[str, dict[_GroupId, int]]] = {}
        # The same groups filed by what an incoming pod must have to be selected, so a
        # check visits only groups that may select it (see _buckets_for).
        self._anti_buckets: dict[_Bucket, list[_AntiAffinityGroup]] = {}
        self._static_masks: dict[tuple[object, ...], BoolArray] = {}
        self._affinity_masks: dict[tuple[object, ...], BoolArray] = {}
        self._toleration_masks: dict[tuple[Toleration, ...], BoolArray] = {}
        # InterPodAffinity scoring: placed pods' terms that score an incoming pod they
        # select (required affinity, preferred affinity and anti-affinity).
        self._score_groups: dict[tuple[object, ...], ScoreGroup] = {}
        self._score_buckets: dict[_Bucket, list[ScoreGroup]] = {}
        # PodTopologySpread scoring: per (namespace, selector), matching pods per node.
        self._spread: dict[tuple[str, object], tuple[LabelSelector, _SpreadCounts]] = {}
        self._spread_buckets: dict[_Bucket, list[_SpreadCounts]] = {}
        # namespace -> label pair -> placed pods with it; built for a namespace when
        # its first spread selector is counted, so building counts is not a scan.
        self._pods_by_label: dict[str, dict[tuple[str, str], set[str]]] = {}
        self._place_initial(pods)

    def _place_initial(self, pods: Iterable[Pod]) -> None:
        """Place the starting pods. Most pods carry no ports or affinity terms and no
        index exists yet, so their requests are summed in bulk; the others, and any
        pod listed twice, go through add()."""
        index = self._index
        plain_nodes: list[int] = []
        plain_pods: list[Pod] = []
        for pod in pods:
            i = index.get(pod.node_name) if pod.node_name is not None else None
            if i is None:
                continue
            if pod.key in self._placed or (
                pod.host_ports
                or pod.extended_requests
                or pod.required_pod_anti_affinity
                or pod.required_pod_affinity
                or pod.preferred_pod_affinity
                or pod.preferred_pod_anti_affinity
            ):
                self.add(pod, pod.node_name or "")
                continue
            placed = self._placed[pod.key] = (pod, i)
            self._pods_by_namespace.setdefault(pod.namespace, {})[pod.key] = placed
            plain_nodes.append(i)
            plain_pods.append(pod)
        if not plain_pods:
            return
        count = len(plain_pods)
        nodes = np.fromiter(plain_nodes, dtype=np.int64, count=count)
        cpu = np.fromiter((p.cpu_request_millicores for p in plain_pods), np.int64, count=count)
        mem = np.fromiter((p.memory_request_bytes for p in plain_pods), np.int64, count=count)
        size = len(self._nodes)
        sums = {
            "cpu": np.bincount(nodes, weights=cpu, minlength=size),
            "mem": np.bincount(nodes, weights=mem, minlength=size),
            "pods": np.bincount(nodes, minlength=size),
            "nz_cpu": np.bincount(
                nodes, weights=np.where(cpu > 0, cpu, NONZERO_CPU_MILLICORES), minlength=size
            ),
            "nz_mem": np.bincount(
                nodes, weights=np.where(mem > 0, mem, NONZERO_MEMORY_BYTES), minlength=size
            ),
        }
        # Exact integers: bincount sums in float64, exact below 2**53 (bytes of
        # memory summed per node stay far below it).
        add_cpu, add_mem, add_pods, add_nz_cpu, add_nz_mem = (
            np.rint(sums[k]).astype(np.int64) for k in ("cpu", "mem", "pods", "nz_cpu", "nz_mem")
        )
        self._req_cpu += add_cpu
        self._req_mem += add_mem
        self._req_pods += add_pods
        self._nz_cpu += add_nz_cpu
        self._nz_mem += add_nz_mem
        for i in np.flatnonzero(add_pods).tolist():
            self._cpu[i] += int(add_cpu[i])
            self._mem[i] += int(add_mem[i])
            self._pod_count[i] += int(add_pods[i])

    @classmethod
    def from_cluster(cls, cluster: ClusterState) -> Occupancy:
        """Every pod that occupies its node (bound, not finished) counts where it is bound."""
        return cls(
            cluster.nodes,
            (p for p in cluster.pods if p.is_load),
            namespace_labels=cluster.namespace_labels,
        )

    # --- what is where ---

    @property
    def nodes(self) -> tuple[Node, ...]:
        return self._nodes

    @property
    def node_names(self) -> tuple[str, ...]:
        return self._names

    @property
    def node_images(self) -> _images.NodeImages:
        """The image names the nodes report (status.images), for ImageLocality."""
        return self._images

    @property
    def tainted(self) -> BoolArray:
        """Whether each node (in `nodes` order) has any taint."""
        return self._tainted

    def node_indexes(self, node_names: Iterable[str]) -> IntArray:
        """Positions in `nodes` of the named nodes, duplicates dropped; KeyError on a stranger."""
        names = tuple(node_names)
        # Callers ask about the same target list for pod after pod.
        found = self._recent_indexes.get(names)
        if found is None:
            index = self._index
            unique = dict.fromkeys(names)
            found = np.fromiter((index[n] for n in unique), dtype=np.int64, count=len(unique))
            found.flags.writeable = False
            if len(self._recent_indexes) >= 8:
                self._recent_indexes.clear()
            self._recent_indexes[names] = found
        return found

    def placement(self, pod: Pod) -> str | None:
        """The node the pod (by namespace/name) counts on, or None."""
        placed = self._placed.get(pod.key)
        return None if placed is None else self._names[placed[1]]

    def placed_index(self, pod: Pod) -> int | None:
        """The index in `nodes` of the node the pod (by namespace/name) counts on, or None."""
        placed = self._placed.get(pod.key)
        return None if placed is None else placed[1]

    def requested(self, node_name: str) -> tuple[int, int, int]:
        """Requested cpu millicores, memory bytes, and pod count on the node."""
        i = self._index[node_name]
        return self._cpu[i], self._mem[i], self._pod_count[i]

    def requested_without(self, pod: Pod, indexes: IntArray) -> tuple[IntArray, ...]:
        """Requested cpu, memory, non-zero cpu and non-zero memory of the indexed nodes,
        with `pod` left out where it is placed (fresh arrays)."""
        arrays = (
            self._req_cpu[indexes],
            self._req_mem[indexes],
            self._nz_cpu[indexes],
            self._nz_mem[indexes],
        )
        placed = self._placed.get(pod.key)
        if placed is not None:
            recorded, i = placed
            here = np.flatnonzero(indexes == i)
            cpu, mem = recorded.cpu_request_millicores, recorded.memory_request_bytes
            arrays[0][here] -= cpu
            arrays[1][here] -= mem
            arrays[2][here] -= cpu or NONZERO_CPU_MILLICORES
            arrays[3][here] -= mem or NONZERO_MEMORY_BYTES
        return arrays

    def resources(self) -> NodeResources:
        return NodeResources(
            allocatable_cpu_millicores=_read_only(self._alloc_cpu),
            allocatable_memory_bytes=_read_only(self._alloc_mem),
            allocatable_pods=_read_only(self._alloc_pods),
            requested_cpu_millicores=_read_only(self._req_cpu),
            requested_memory_bytes=_read_only(self._req_mem),
            nonzero_cpu_millicores=_read_only(self._nz_cpu),
            nonzero_memory_bytes=_read_only(self._nz_mem),
            pods=_read_only(self._req_pods),
        )

    # --- moves ---

    def add(self, pod: Pod, node_name: str) -> None:
        """The pod (or its replacement, same namespace/name) now counts on node_name.

        A pod already placed elsewhere is moved: it stops counting where it was.
        """
        i = self._index[node_name]
        if pod.key in self._placed:
            self.remove(pod)
        placed = self._placed[pod.key] = (pod, i)
        self._pods_by_namespace.setdefault(pod.namespace, {})[pod.key] = placed
        by_label = self._pods_by_label.get(pod.namespace)
        if by_label is not None:
            for pair in pod.labels.items():
                by_label.setdefault(pair, set()).add(pod.key)
        self._account(pod, i, 1)

    def remove(self, pod: Pod) -> None:
        """The pod leaves the node it counts on here; KeyError when it counts nowhere."""
        placed = self._placed.pop(pod.key, None)
        if placed is None:
            raise KeyError(f"pod {pod.key} is not placed in this occupancy")
        recorded, i = placed
        same_namespace = self._pods_by_namespace[recorded.namespace]
        del same_namespace[recorded.key]
        by_label = self._pods_by_label.get(recorded.namespace)
        if by_label is not None:
            for pair in recorded.labels.items():
                by_label[pair].discard(recorded.key)
        if not same_namespace:
            del self._pods_by_namespace[recorded.namespace]
        # Undo exactly what was recorded, even if the caller passes a changed copy.
        self._account(recorded, i, -1)

    def _account(self, pod: Pod, i: int, delta: int) -> None:
        cpu, mem = pod.cpu_request_millicores, pod.memory_request_bytes
        self._cpu[i] += delta * cpu
        self._mem[i] += delta * mem
        self._pod_count[i] += delta
        self._req_cpu[i] += delta * cpu
        self._req_mem[i] += delta * mem
        self._req_pods[i] += delta
        self._nz_cpu[i] += delta * (cpu or NONZERO_CPU_MILLICORES)
        self._nz_mem[i] += delta * (mem or NONZERO_MEMORY_BYTES)
        for name, amount in pod.extended_requests.items():
            self._extended(name)[1][i] += delta * amount
        if pod.host_ports:
            ports = self._ports.setdefault(i, {})
            for port in pod.host_ports:
                ports[port] = ports.get(port, 0) + delta
                if not ports[port]:
                    del ports[port]
        labels = self._nodes[i].labels
        if self._match_buckets:
            for bucket in _buckets_of(pod):
                for entry in self._match_buckets.get(bucket, ()):
                    if entry.matches(pod, self._namespace_labels):
                        entry.shift(labels, delta)
        if self._spread_buckets and pod.deletion_timestamp is None:
            # PodTopologySpread does not count terminating pods (#87621).
            for bucket in _buckets_of(pod):
                for spread in self._spread_buckets.get(bucket, ()):
                    if spread.namespace == pod.namespace and spread.selector.matches(pod.labels):
                        spread.counts[i] += delta
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

    # --- what the scheduler's scoring reads ---

    def domain_codes(self, key: str) -> tuple[IntArray, Mapping[str, int]]:
        """Per node (in `nodes` order), a small integer for its value of label `key`
        (-1: the node has no such label), and the value -> code map."""
        return self._domain_codes(key)

    def shifted_domain_codes(self, key: str) -> tuple[IntArray, bool]:
        """domain_codes(key) plus one, so that "no such label" is code 0 (read-only),
        and whether every node has the label."""
        found = self._shifted_codes.get(key)
        if found is None:
            codes = self._domain_codes(key)[0]
            shifted = codes + 1
            shifted.flags.writeable = False
            found = self._shifted_codes[key] = (shifted, bool(np.all(codes >= 0)))
        return found

    def affinity_mask(self, pod: Pod) -> BoolArray:
        """Per node, whether it matches the pod's nodeSelector and required node affinity
        (PodTopologySpread's nodeAffinityPolicy: Honor)."""
        signature = (tuple(sorted(pod.node_selector.items())), pod.required_node_affinity)
        mask = self._affinity_masks.get(signature)
        if mask is None:
            mask = np.fromiter(
                (
                    all(node.labels.get(k) == v for k, v in pod.node_selector.items())
                    and (
                        not pod.required_node_affinity
                        or any(term.matches(node) for term in pod.required_node_affinity)
                    )
                    for node in self._nodes
                ),
                dtype=np.bool_,
                count=len(self._nodes),
            )
            mask.flags.writeable = False
            self._affinity_masks[signature] = mask
        return mask

    def toleration_mask(self, pod: Pod) -> BoolArray:
        """Per node, whether the pod tolerates its NoSchedule and NoExecute taints
        (PodTopologySpread's nodeTaintsPolicy: Honor)."""
        mask = self._toleration_masks.get(pod.tolerations)
        if mask is None:
            mask = np.fromiter(
                (not _untolerated_hard_taint(pod.tolerations, n.taints) for n in self._nodes),
                dtype=np.bool_,
                count=len(self._nodes),
            )
            mask.flags.writeable = False
            self._toleration_masks[pod.tolerations] = mask
        return mask

    def spread_counts(self, namespace: str, selector: LabelSelector) -> IntArray:
        """Placed pods of `namespace` that `selector` matches and that are not
        terminating, per node; kept current across moves (read-only view)."""
        # By identity first: the scheduler model hands out one selector object per
        # label set, and the entry holds it, so its id is not reused.
        fast_key = (namespace, id(selector))
        known = self._spread.get(fast_key)
        if known is not None and known[0] is selector:
            return _read_only(known[1].counts)
        cache_key = (namespace, _selector_key(selector) or ())
        found = self._spread.get(cache_key)
        entry = found[1] if found is not None else None
        if entry is None:
            counts = np.zeros(len(self._nodes), dtype=np.int64)
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
        return _read_only(entry.counts)

    def domain_counts(self, namespace: str, term: PodAffinityTerm) -> Mapping[str, int]:
        """Placed pods the term (of a pod in `namespace`) selects, per domain value of
        its topology key."""
        return self._match_counts(namespace, (term,)).by_domain[term.topology_key]

    def score_groups_selecting(self, pod: Pod) -> Iterator[ScoreGroup]:
        """Placed pods' scoring terms (ScoreGroup) that select `pod`, with holders."""
        return self._groups_selecting(pod, self._score_buckets)

    def _groups_selecting(self, pod: Pod, buckets: Mapping[_Bucket, list[_G]]) -> Iterator[_G]:
        """The groups filed in `buckets` whose term selects `pod` and that have holders."""
        if not buckets:
            return
        seen: set[int] = set()
        for bucket in _buckets_of(pod):
            for group in buckets.get(bucket, ()):
                if id(group) in seen or not group.counts:
                    continue
                seen.add(id(group))
                if group.term.selects(
                    group.namespace, pod.namespace, pod.labels, self._namespace_labels
                ):
                    yield group

    # --- the checks ---

    def fit_failure(
        self, pod: Pod, node_name: str, *, extra_taints: Sequence[Taint] = ()
    ) -> str | None:
        """None when the pod fits on the node, else the first failing rule of FIT_REASONS.

        `extra_taints` are treated as taints of the node (e.g. one loadaware would add).
        """
        i = self._index[node_name]
        node = self._nodes[i]
        reason = _static_failure(pod, node, extra_taints)
        if reason is not None:
            return reason
        placed = self._placed.get(pod.key)
        own = placed[0] if placed is not None and placed[1] == i else None
        cpu, mem, count = self._cpu[i], self._mem[i], self._pod_count[i]
        if own is not None:
            cpu -= own.cpu_request_millicores
            mem -= own.memory_request_bytes
            count -= 1
        # As NodeResourcesFit: a zero request fits even on an overcommitted node.
        want = pod.cpu_request_millicores
        if want > 0 and want > node.allocatable_cpu_millicores - cpu:
            return "insufficient-cpu"
        want = pod.memory_request_bytes
        if want > 0 and want > node.allocatable_memory_bytes - mem:
            return "insufficient-memory"
        for name, want in pod.extended_requests.items():
            allocatable, used = self._extended(name)
            free = allocatable[i] - used[i] + (own.extended_requests.get(name, 0) if own else 0)
            if want > free:
                return "insufficient-extended-resource"
        if count + 1 > node.allocatable_pods:
            return "too-many-pods"
        if pod.host_ports and self._host_port_conflict(pod, i, own):
            return "host-port"
        return self._affinity_failure(pod, node.labels, placed)

    def fit_mask(
        self,
        pod: Pod,
        indexes: IntArray,
        *,
        extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
    ) -> BoolArray:
        """fit_failure(...) is None for each node of `indexes` (from node_indexes), vectorised.

        The node-only checks are cached per (tolerations, nodeSelector, node affinity),
        which replicas of one workload share.
        """
        mask = self._static_mask(pod)[indexes]
        if extra_taints:
            position = {int(i): p for p, i in enumerate(indexes)}
            for name, taints in extra_taints.items():
                p = position.get(self._index.get(name, -1))
                if p is not None and _untolerated_hard_taint(pod.tolerations, taints):
                    mask[p] = False
        cpu = self._req_cpu[indexes]
        mem = self._req_mem[indexes]
        count = self._req_pods[indexes]
        placed = self._placed.get(pod.key)
        if placed is not None:
            here = np.flatnonzero(indexes == placed[1])
            cpu[here] -= placed[0].cpu_request_millicores
            mem[here] -= placed[0].memory_request_bytes
            count[here] -= 1
        want = pod.cpu_request_millicores
        if want > 0:
            mask &= want <= self._alloc_cpu[indexes] - cpu
        want = pod.memory_request_bytes
        if want > 0:
            mask &= want <= self._alloc_mem[indexes] - mem
        for name, want in pod.extended_requests.items():
            allocatable, used = self._extended(name)
            free = allocatable[indexes] - used[indexes]
            if placed is not None:
                free[indexes == placed[1]] += placed[0].extended_requests.get(name, 0)
            mask &= want <= free
        mask &= count + 1 <= self._alloc_pods[indexes]

        needs_ports = bool(pod.host_ports and self._ports)
        if not (
            needs_ports
            or pod.required_pod_affinity
            or pod.required_pod_anti_affinity
            or self._anti_groups
        ):
            return mask
        # Turn the (anti-)affinity rules into allowed and forbidden domains once per pod,
        # then test all nodes at once on their domain codes.
        required_keys, wanted = self._affinity_domains(pod, placed)
        for key in required_keys:
            mask &= self._domain_codes(key)[0][indexes] >= 0
        for key, values in wanted:
            mask &= self._in_domains(key, values, indexes)
        for key, values in self._blocked_domains(pod, placed).items():
            mask &= ~self._in_domains(key, values, indexes)
        if needs_ports:
            for p in np.flatnonzero(mask).tolist():
                i = int(indexes[p])
                own = placed[0] if placed is not None and placed[1] == i else None
                if self._host_port_conflict(pod, i, own):
                    mask[p] = False
        return mask

    def _extended(self, name: str) -> tuple[IntArray, IntArray]:
        """Allocatable and requested counts of one extended resource, per node."""
        used = self._ext_used.get(name)
        if used is None:
            # A node without the resource has none of it, so any request fails there.
            self._ext_alloc[name] = np.fromiter(
                (int(n.allocatable_extended.get(name, 0)) for n in self._nodes),
                dtype=np.int64,
                count=len(self._nodes),
            )
            used = self._ext_used[name] = np.zeros(len(self._nodes), dtype=np.int64)
        return self._ext_alloc[name], used

    def _domain_codes(self, key: str) -> tuple[IntArray, dict[str, int]]:
        """Per node, a small integer for its value of label `key` (-1: no such label)."""
        found = self._codes.get(key)
        if found is None:
            code_of: dict[str, int] = {}
            codes = np.fromiter(
                (
                    code_of.setdefault(n.labels[key], len(code_of)) if key in n.labels else -1
                    for n in self._nodes
                ),
                dtype=np.int64,
                count=len(self._nodes),
            )
            found = self._codes[key] = (codes, code_of)
        return found

    def _in_domains(self, key: str, values: Iterable[str], indexes: IntArray) -> BoolArray:
        codes, code_of = self._domain_codes(key)
        wanted = [code_of[v] for v in values if v in code_of]
        if not wanted:
            return np.zeros(len(indexes), dtype=np.bool_)
        return np.isin(codes[indexes], wanted)

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

    def _static_mask(self, pod: Pod) -> BoolArray:
        signature = (
            pod.tolerations,
            tuple(sorted(pod.node_selector.items())),
            pod.required_node_affinity,
        )
        mask = self._static_masks.get(signature)
        if mask is None:
            mask = np.fromiter(
                (_static_failure(pod, node) is None for node in self._nodes),
                dtype=np.bool_,
                count=len(self._nodes),
            )
            self._static_masks[signature] = mask
        return mask

    def _host_port_conflict(self, pod: Pod, i: int, own: Pod | None) -> bool:
        ports = self._ports.get(i)
        if not ports:
            return False
        for port in pod.host_ports:
            used = ports.get(port, 0)
            if own is not None:
                used -= own.host_ports.count(port)
            if used > 0:
                return True
        return False

    def _affinity_failure(
        self,
        pod: Pod,
        labels: Mapping[str, str],
        placed: tuple[Pod, int] | None,
    ) -> str | None:
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

    def _key_of(self, term: PodAffinityTerm) -> _TermKey:
        # Memoised by identity: replicas built from one template often share term
        # objects, and holding the term keeps its id from being reused.
        memo = self._term_keys.get(id(term))
        if memo is None:
            memo = self._term_keys[id(term)] = (term, _term_key(term))
        return memo[1]


def _buckets_for(namespace: str, term: PodAffinityTerm) -> list[_Bucket]:
    """Where to file counts of pods matching `term` (a term of a pod in `namespace`)."""
    if term.label_selector is None:
        return []  # selects no pod: the counts never change
    pair = min(term.label_selector.match_labels.items(), default=None)
    if term.namespace_selector is not None:
        return [(None, pair)]
    return [(ns, pair) for ns in term.namespaces or (namespace,)]


def _buckets_of(pod: Pod) -> Iterator[_Bucket]:
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
