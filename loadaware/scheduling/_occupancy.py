"""nodeFit: whether a pod can go to a node, against a working copy of what is placed where.

`Occupancy` is the model's mutable view of the cluster during one planning
call, as kube-scheduler's cache is its view: the nodes (`_nodes.NodeCache`),
the requests ledger (`_ledger.RequestsLedger`: requests, pod counts, host
ports), and the (anti-)affinity and spreading indexes of every placed pod
(`_affinity_index`, `_spread_index`). Moves recorded with `remove` / `add` are
seen by every later check, so a plan never stacks two replicas that exclude
each other on one node or zone. A long-lived copy (the simulated scheduler's)
is kept current by deltas, as kube-scheduler's cache is: pods added, moved
and removed with `add` / `remove`, a changed node with `replace_node`.

The checks follow kube-scheduler's Filter plugins (NodeUnschedulable,
TaintToleration, NodeAffinity, NodeResourcesFit, NodePorts, InterPodAffinity;
one function each in `_filters`) plus the descheduler's readiness check, and
report the first failing rule in the order of `FIT_REASONS`. Extended
resources (`nvidia.com/gpu`) are fitted as NodeResourcesFit fits them: a
request needs that many free on the node. Volumes and DRA claims are not
modelled; topology spread constraints are filtered by `_spread`.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType

import numpy as np

from loadaware.cluster._types import ClusterState, LabelSelector, Node, Pod, PodAffinityTerm, Taint
from loadaware.scheduling import _filters, _images
from loadaware.scheduling._affinity_index import AffinityIndex, ScoreGroup
from loadaware.scheduling._ledger import NodeResources, RequestsLedger
from loadaware.scheduling._nodes import BoolArray, IntArray, NodeCache, read_only
from loadaware.scheduling._spread_index import SpreadIndex

_NO_TAINTS: Mapping[str, Sequence[Taint]] = MappingProxyType({})
_NO_NAMESPACE_LABELS: Mapping[str, Mapping[str, str]] = MappingProxyType({})


class Occupancy:
    """Mutable working copy of what is placed where, local to one planning call.

    Tracks per node the requested cpu millicores, memory bytes, pod count and host
    ports, and indexes placed pods by topology domain for (anti-)affinity. A pod is
    identified by namespace/name, so a replacement added under the same name takes
    the evicted pod's place. A pod never conflicts with itself: when the pod being
    checked is placed, its own requests, ports and terms are left out.
    """

    __slots__ = ("_affinity", "_cache", "_ledger", "_spread")

    def __init__(
        self,
        nodes: Iterable[Node],
        pods: Iterable[Pod] = (),
        *,
        namespace_labels: Mapping[str, Mapping[str, str]] = _NO_NAMESPACE_LABELS,
    ) -> None:
        """`pods` are placed on their node_name; pods bound to no listed node are skipped."""
        self._cache = NodeCache(nodes)
        self._ledger = RequestsLedger(self._cache)
        by_namespace = self._ledger.pods_by_namespace
        self._affinity = AffinityIndex(self._cache, by_namespace, namespace_labels)
        self._spread = SpreadIndex(len(self._cache.nodes), by_namespace)
        self._place_initial(pods)

    def _place_initial(self, pods: Iterable[Pod]) -> None:
        """Place the starting pods. Most pods carry no ports or affinity terms and no
        index exists yet, so their requests are summed in bulk; the others, and any
        pod listed twice, go through add()."""
        index = self._cache.index
        ledger = self._ledger
        plain_nodes: list[int] = []
        plain_pods: list[Pod] = []
        for pod in pods:
            i = index.get(pod.node_name) if pod.node_name is not None else None
            if i is None:
                continue
            if pod.key in ledger.placed or (
                pod.host_ports
                or pod.extended_requests
                or pod.required_pod_anti_affinity
                or pod.required_pod_affinity
                or pod.preferred_pod_affinity
                or pod.preferred_pod_anti_affinity
            ):
                self.add(pod, pod.node_name or "")
                continue
            ledger.file(pod, i)
            plain_nodes.append(i)
            plain_pods.append(pod)
        if plain_pods:
            ledger.count_in_bulk(plain_nodes, plain_pods)

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
        return self._cache.nodes

    @property
    def node_names(self) -> tuple[str, ...]:
        return self._cache.names

    @property
    def node_images(self) -> _images.NodeImages:
        """The image names the nodes report (status.images), for ImageLocality."""
        return self._cache.images

    @property
    def tainted(self) -> BoolArray:
        """Whether each node (in `nodes` order) has any taint."""
        return self._cache.tainted

    def node_indexes(self, node_names: Iterable[str]) -> IntArray:
        """Positions in `nodes` of the named nodes, duplicates dropped; KeyError on a stranger."""
        return self._cache.node_indexes(node_names)

    def placement(self, pod: Pod) -> str | None:
        """The node the pod (by namespace/name) counts on, or None."""
        placed = self._ledger.placed.get(pod.key)
        return None if placed is None else self._cache.names[placed[1]]

    def has_node(self, node_name: str) -> bool:
        return node_name in self._cache.index

    def placed_pod(self, key: str) -> Pod | None:
        """The pod placed under `key` (namespace/name) as it was recorded, or None."""
        placed = self._ledger.placed.get(key)
        return None if placed is None else placed[0]

    def placed_index(self, pod: Pod) -> int | None:
        """The index in `nodes` of the node the pod (by namespace/name) counts on, or None."""
        placed = self._ledger.placed.get(pod.key)
        return None if placed is None else placed[1]

    def requested(self, node_name: str) -> tuple[int, int, int]:
        """Requested cpu millicores, memory bytes, and pod count on the node."""
        return self._ledger.requested(self._cache.index[node_name])

    def requested_without(self, pod: Pod, indexes: IntArray) -> tuple[IntArray, ...]:
        """Requested cpu, memory, non-zero cpu and non-zero memory of the indexed nodes,
        with `pod` left out where it is placed (fresh arrays)."""
        return self._ledger.requested_without(pod, indexes)

    def resources(self) -> NodeResources:
        return self._ledger.resources()

    def extended_resource(self, name: str) -> tuple[IntArray, IntArray]:
        """Allocatable and requested counts of one extended resource, per node
        (read-only views, live until the next add or remove)."""
        allocatable, used = self._ledger.extended(name)
        return read_only(allocatable), read_only(used)

    # --- moves ---

    def add(self, pod: Pod, node_name: str) -> None:
        """The pod (or its replacement, same namespace/name) now counts on node_name.

        A pod already placed elsewhere is moved: it stops counting where it was.
        """
        i = self._cache.index[node_name]
        if pod.key in self._ledger.placed:
            self.remove(pod)
        self._ledger.file(pod, i)
        self._spread.file(pod)
        self._count(pod, i, 1)

    def remove(self, pod: Pod) -> None:
        """The pod leaves the node it counts on here; KeyError when it counts nowhere."""
        recorded, i = self._ledger.unfile(pod)
        self._spread.unfile(recorded)
        # Undo exactly what was recorded, even if the caller passes a changed copy.
        self._count(recorded, i, -1)

    def replace_node(self, node: Node) -> None:
        """The node of that name changed (taints, labels, allocatable, readiness, images);
        what is placed on it stays. KeyError when no node has that name."""
        old = self._cache.replace_node(node)
        if old.labels == node.labels:
            self._affinity.nodes_changed()
            return
        # Inter-pod affinity counts pods per domain of their node's labels: the pods
        # here leave their old domains and join the new ones.
        i = self._cache.index[node.name]
        here = [pod for pod, at in self._ledger.placed.values() if at == i]
        for pod in here:
            self._affinity.count(pod, i, -1)
        self._affinity.nodes_changed()
        for pod in here:
            self._affinity.count(pod, i, 1)

    def _count(self, pod: Pod, i: int, delta: int) -> None:
        self._ledger.count(pod, i, delta)
        self._spread.count(pod, i, delta)
        self._affinity.count(pod, i, delta)

    # --- what the scheduler's scoring reads ---

    def domain_codes(self, key: str) -> tuple[IntArray, Mapping[str, int]]:
        """Per node (in `nodes` order), a small integer for its value of label `key`
        (-1: the node has no such label), and the value -> code map."""
        return self._cache.domain_codes(key)

    def shifted_domain_codes(self, key: str) -> tuple[IntArray, bool]:
        """domain_codes(key) plus one, so that "no such label" is code 0 (read-only),
        and whether every node has the label."""
        return self._cache.shifted_domain_codes(key)

    def affinity_mask(self, pod: Pod) -> BoolArray:
        """Per node, whether it matches the pod's nodeSelector and required node affinity
        (PodTopologySpread's nodeAffinityPolicy: Honor)."""
        return self._cache.affinity_mask(pod)

    def toleration_mask(self, pod: Pod) -> BoolArray:
        """Per node, whether the pod tolerates its NoSchedule and NoExecute taints
        (PodTopologySpread's nodeTaintsPolicy: Honor)."""
        return self._cache.toleration_mask(pod)

    def spread_counts(self, namespace: str, selector: LabelSelector) -> IntArray:
        """Placed pods of `namespace` that `selector` matches and that are not
        terminating, per node; kept current across moves (read-only view)."""
        return self._spread.counts(namespace, selector)

    def domain_counts(self, namespace: str, term: PodAffinityTerm) -> Mapping[str, int]:
        """Placed pods the term (of a pod in `namespace`) selects, per domain value of
        its topology key."""
        return self._affinity.domain_counts(namespace, term)

    def score_groups_selecting(self, pod: Pod) -> Iterator[ScoreGroup]:
        """Placed pods' scoring terms (ScoreGroup) that select `pod`, with holders."""
        return self._affinity.score_groups_selecting(pod)

    # --- the checks ---

    def fit_failure(
        self, pod: Pod, node_name: str, *, extra_taints: Sequence[Taint] = ()
    ) -> str | None:
        """None when the pod fits on the node, else the first failing rule of FIT_REASONS.

        `extra_taints` are treated as taints of the node (e.g. one loadaware would add).
        """
        i = self._cache.index[node_name]
        node = self._cache.nodes[i]
        reason = _filters.static_failure(pod, node, extra_taints)
        if reason is not None:
            return reason
        placed = self._ledger.placed.get(pod.key)
        own = placed[0] if placed is not None and placed[1] == i else None
        reason = self._ledger.resources_failure(pod, i, own)
        if reason is not None:
            return reason
        if pod.host_ports and self._ledger.ports_conflict(pod, i, own):
            return "host-port"
        return self._affinity.failure(pod, node.labels, placed)

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
        mask = self._cache.static_mask(pod)[indexes]
        if extra_taints:
            position = {int(i): p for p, i in enumerate(indexes)}
            for name, taints in extra_taints.items():
                p = position.get(self._cache.index.get(name, -1))
                if p is not None and _filters.untolerated_hard_taint(pod.tolerations, taints):
                    mask[p] = False
        placed = self._ledger.placed.get(pod.key)
        mask &= self._ledger.resources_mask(pod, indexes, placed)
        needs_ports = bool(pod.host_ports and self._ledger.has_ports())
        if (
            pod.required_pod_affinity
            or pod.required_pod_anti_affinity
            or self._affinity.has_anti_affinity
        ):
            mask &= self._affinity.allowed(pod, indexes, placed)
        if needs_ports:
            for p in np.flatnonzero(mask).tolist():
                i = int(indexes[p])
                own = placed[0] if placed is not None and placed[1] == i else None
                if self._ledger.ports_conflict(pod, i, own):
                    mask[p] = False
        return mask
