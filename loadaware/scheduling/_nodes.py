"""The node side of the scheduler's cache: what does not change while pods move.

`NodeCache` holds the nodes in a fixed order with their positions, allocatable
resources as arrays, the domain each node is in per topology key, the images
they report, and the per-node results of the checks that depend on a pod's
spec and the node alone (cached per spec, which replicas of a workload share).
Every per-node array of the model is in this order. A node may change in place
(`replace_node`: taints, labels, allocatable, readiness), as kube-scheduler's
cache takes a node update; the order and the set of nodes stay fixed.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt

from loadaware.cluster._types import Node, Pod, Toleration
from loadaware.scheduling import _filters, _images

IntArray: TypeAlias = npt.NDArray[np.int64]
BoolArray: TypeAlias = npt.NDArray[np.bool_]


def read_only(array: IntArray) -> IntArray:
    view = array.view()
    view.flags.writeable = False
    return view


class NodeCache:
    """The nodes, indexed, with what the model reads of them per node."""

    __slots__ = (
        "_affinity_masks",
        "_codes",
        "_ext_alloc",
        "_recent_indexes",
        "_shifted_codes",
        "_static_masks",
        "_toleration_masks",
        "alloc_cpu",
        "alloc_mem",
        "alloc_pods",
        "images",
        "index",
        "names",
        "nodes",
        "tainted",
    )

    def __init__(self, nodes: Iterable[Node]) -> None:
        self.nodes: tuple[Node, ...] = tuple(nodes)
        self.names: tuple[str, ...] = tuple(n.name for n in self.nodes)
        self.index: dict[str, int] = {name: i for i, name in enumerate(self.names)}
        if len(self.index) != len(self.nodes):
            raise ValueError("node names must be unique")
        count = len(self.nodes)

        def column(values: Iterable[int]) -> IntArray:
            return np.fromiter(values, dtype=np.int64, count=count)

        self.alloc_cpu = column(n.allocatable_cpu_millicores for n in self.nodes)
        self.alloc_mem = column(n.allocatable_memory_bytes for n in self.nodes)
        self.alloc_pods = column(n.allocatable_pods for n in self.nodes)
        self.tainted: BoolArray = np.fromiter(
            (bool(n.taints) for n in self.nodes), dtype=np.bool_, count=count
        )
        self.tainted.flags.writeable = False
        # Rebuilt by replace_node when a node's images change.
        self.images = _images.NodeImages(self.nodes)
        self._recent_indexes: dict[tuple[str, ...], IntArray] = {}
        # Extended resources by name, for the names some placed or checked pod requests.
        self._ext_alloc: dict[str, IntArray] = {}
        self._codes: dict[str, tuple[IntArray, dict[str, int]]] = {}
        self._shifted_codes: dict[str, tuple[IntArray, bool]] = {}
        # Per spec signature, a pod with that spec (to recheck a changed node) and the mask.
        self._static_masks: dict[tuple[object, ...], tuple[Pod, BoolArray]] = {}
        self._affinity_masks: dict[tuple[object, ...], tuple[Pod, BoolArray]] = {}
        self._toleration_masks: dict[tuple[Toleration, ...], BoolArray] = {}

    def replace_node(self, node: Node) -> Node:
        """The node of that name changed (taints, labels, allocatable, readiness, images):
        every cached per-node answer is brought up to date at its position; the node as
        it was is returned. KeyError on a stranger.

        Cached arrays are replaced, not written, so that arrays handed out earlier
        keep the answers they were given with."""
        i = self.index[node.name]
        old = self.nodes[i]
        self.nodes = (*self.nodes[:i], node, *self.nodes[i + 1 :])
        self.alloc_cpu = _with(self.alloc_cpu, i, node.allocatable_cpu_millicores)
        self.alloc_mem = _with(self.alloc_mem, i, node.allocatable_memory_bytes)
        self.alloc_pods = _with(self.alloc_pods, i, node.allocatable_pods)
        self.tainted = _with(self.tainted, i, bool(node.taints))
        self.tainted.flags.writeable = False
        if node.images != old.images:
            self.images = _images.NodeImages(self.nodes)
        for name, allocatable in self._ext_alloc.items():
            self._ext_alloc[name] = _with(
                allocatable, i, int(node.allocatable_extended.get(name, 0))
            )
        if node.labels != old.labels:
            # Domain codes are numbered in node order: recounted when next asked for.
            self._codes.clear()
            self._shifted_codes.clear()
        for signature, (pod, mask) in self._static_masks.items():
            self._static_masks[signature] = (
                pod,
                _with(mask, i, _filters.static_failure(pod, node) is None),
            )
        for signature, (pod, mask) in self._affinity_masks.items():
            changed = _with(mask, i, _matches_node_affinity(pod, node))
            changed.flags.writeable = False
            self._affinity_masks[signature] = (pod, changed)
        for tolerations, mask in self._toleration_masks.items():
            changed = _with(mask, i, not _filters.untolerated_hard_taint(tolerations, node.taints))
            changed.flags.writeable = False
            self._toleration_masks[tolerations] = changed
        return old

    def node_indexes(self, node_names: Iterable[str]) -> IntArray:
        """Positions in `nodes` of the named nodes, duplicates dropped; KeyError on a stranger."""
        names = tuple(node_names)
        # Callers ask about the same target list for pod after pod.
        found = self._recent_indexes.get(names)
        if found is None:
            index = self.index
            unique = dict.fromkeys(names)
            found = np.fromiter((index[n] for n in unique), dtype=np.int64, count=len(unique))
            found.flags.writeable = False
            if len(self._recent_indexes) >= 8:
                self._recent_indexes.clear()
            self._recent_indexes[names] = found
        return found

    def extended_allocatable(self, name: str) -> IntArray:
        """Allocatable count of one extended resource, per node."""
        allocatable = self._ext_alloc.get(name)
        if allocatable is None:
            # A node without the resource has none of it, so any request fails there.
            allocatable = self._ext_alloc[name] = np.fromiter(
                (int(n.allocatable_extended.get(name, 0)) for n in self.nodes),
                dtype=np.int64,
                count=len(self.nodes),
            )
        return allocatable

    def domain_codes(self, key: str) -> tuple[IntArray, dict[str, int]]:
        """Per node, a small integer for its value of label `key` (-1: no such label),
        and the value -> code map."""
        found = self._codes.get(key)
        if found is None:
            code_of: dict[str, int] = {}
            codes = np.fromiter(
                (
                    code_of.setdefault(n.labels[key], len(code_of)) if key in n.labels else -1
                    for n in self.nodes
                ),
                dtype=np.int64,
                count=len(self.nodes),
            )
            found = self._codes[key] = (codes, code_of)
        return found

    def shifted_domain_codes(self, key: str) -> tuple[IntArray, bool]:
        """domain_codes(key) plus one, so that "no such label" is code 0 (read-only),
        and whether every node has the label."""
        found = self._shifted_codes.get(key)
        if found is None:
            codes = self.domain_codes(key)[0]
            shifted = codes + 1
            shifted.flags.writeable = False
            found = self._shifted_codes[key] = (shifted, bool(np.all(codes >= 0)))
        return found

    def in_domains(self, key: str, values: Iterable[str], indexes: IntArray) -> BoolArray:
        """Per indexed node, whether its value of label `key` is one of `values`."""
        codes, code_of = self.domain_codes(key)
        wanted = [code_of[v] for v in values if v in code_of]
        if not wanted:
            return np.zeros(len(indexes), dtype=np.bool_)
        return np.isin(codes[indexes], wanted)

    def static_mask(self, pod: Pod) -> BoolArray:
        """Per node, whether `_filters.static_failure` passes the pod; cached per
        (tolerations, nodeSelector, node affinity)."""
        signature = (
            pod.tolerations,
            tuple(sorted(pod.node_selector.items())),
            pod.required_node_affinity,
        )
        found = self._static_masks.get(signature)
        if found is None:
            mask = np.fromiter(
                (_filters.static_failure(pod, node) is None for node in self.nodes),
                dtype=np.bool_,
                count=len(self.nodes),
            )
            found = self._static_masks[signature] = (pod, mask)
        return found[1]

    def affinity_mask(self, pod: Pod) -> BoolArray:
        """Per node, whether it matches the pod's nodeSelector and required node affinity
        (PodTopologySpread's nodeAffinityPolicy: Honor)."""
        signature = (tuple(sorted(pod.node_selector.items())), pod.required_node_affinity)
        found = self._affinity_masks.get(signature)
        if found is None:
            mask = np.fromiter(
                (_matches_node_affinity(pod, node) for node in self.nodes),
                dtype=np.bool_,
                count=len(self.nodes),
            )
            mask.flags.writeable = False
            found = self._affinity_masks[signature] = (pod, mask)
        return found[1]

    def toleration_mask(self, pod: Pod) -> BoolArray:
        """Per node, whether the pod tolerates its NoSchedule and NoExecute taints
        (PodTopologySpread's nodeTaintsPolicy: Honor)."""
        mask = self._toleration_masks.get(pod.tolerations)
        if mask is None:
            mask = np.fromiter(
                (
                    not _filters.untolerated_hard_taint(pod.tolerations, n.taints)
                    for n in self.nodes
                ),
                dtype=np.bool_,
                count=len(self.nodes),
            )
            mask.flags.writeable = False
            self._toleration_masks[pod.tolerations] = mask
        return mask


def _matches_node_affinity(pod: Pod, node: Node) -> bool:
    return all(node.labels.get(k) == v for k, v in pod.node_selector.items()) and (
        not pod.required_node_affinity
        or any(term.matches(node) for term in pod.required_node_affinity)
    )


_T = TypeVar("_T", bound=np.generic)


def _with(array: npt.NDArray[_T], i: int, value: object) -> npt.NDArray[_T]:
    """A copy of `array` with position `i` set to `value` (writeable)."""
    changed = array.copy()
    changed[i] = value
    return changed
