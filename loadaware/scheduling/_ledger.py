"""The requests ledger: what the placed pods request on each node.

kube-scheduler fits and scores by requests, never by usage: per node the
requested cpu millicores, memory bytes and pod count (and the same with the
scheduler's non-zero defaults, for scoring), extended resources by name, and
the host ports in use. `RequestsLedger` keeps them current as pods are placed
and removed, and knows which pod is placed on which node.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from loadaware.cluster._types import Pod
from loadaware.scheduling import _filters
from loadaware.scheduling._nodes import BoolArray, IntArray, NodeCache, read_only

# kube-scheduler counts a container without requests as asking for this much when
# it scores nodes (not when it filters them); see schedutil.GetNonzeroRequests.
# Approximated per pod: a pod requesting 0 is counted at the default.
NONZERO_CPU_MILLICORES = 100
NONZERO_MEMORY_BYTES = 200 * 1024 * 1024

_NO_PORTS: Mapping[int, int] = MappingProxyType({})


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


class RequestsLedger:
    """Per node, the requests, pod count and host ports of the pods placed there; and
    per pod (by namespace/name) where it is placed."""

    __slots__ = (
        "_cpu",
        "_ext_used",
        "_mem",
        "_nodes",
        "_nz_cpu",
        "_nz_mem",
        "_pod_count",
        "_ports",
        "_req_cpu",
        "_req_mem",
        "_req_pods",
        "placed",
        "pods_by_namespace",
    )

    def __init__(self, nodes: NodeCache) -> None:
        self._nodes = nodes
        count = len(nodes.nodes)
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
        self._ext_used: dict[str, IntArray] = {}
        self._ports: dict[int, dict[int, int]] = {}
        self.placed: dict[str, tuple[Pod, int]] = {}
        self.pods_by_namespace: dict[str, dict[str, tuple[Pod, int]]] = {}

    # --- who is where ---

    def file(self, pod: Pod, i: int) -> tuple[Pod, int]:
        """Record that `pod` is placed on node `i` (its requests are not counted here)."""
        placed = self.placed[pod.key] = (pod, i)
        self.pods_by_namespace.setdefault(pod.namespace, {})[pod.key] = placed
        return placed

    def unfile(self, pod: Pod) -> tuple[Pod, int]:
        """Forget where `pod` is placed; the pod as recorded and its node. KeyError when
        it is placed nowhere."""
        placed = self.placed.pop(pod.key, None)
        if placed is None:
            raise KeyError(f"pod {pod.key} is not placed in this occupancy")
        recorded = placed[0]
        same_namespace = self.pods_by_namespace[recorded.namespace]
        del same_namespace[recorded.key]
        if not same_namespace:
            del self.pods_by_namespace[recorded.namespace]
        return placed

    # --- requests ---

    def count_in_bulk(self, node_indexes: list[int], pods: list[Pod]) -> None:
        """Add the requests of `pods` (filed already, without host ports or extended
        resources) on their nodes, summed at once."""
        count = len(pods)
        nodes = np.fromiter(node_indexes, dtype=np.int64, count=count)
        cpu = np.fromiter((p.cpu_request_millicores for p in pods), np.int64, count=count)
        mem = np.fromiter((p.memory_request_bytes for p in pods), np.int64, count=count)
        size = len(self._nodes.nodes)
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

    def count(self, pod: Pod, i: int, delta: int) -> None:
        """Add (delta 1) or take away (-1) the pod's requests and host ports on node `i`."""
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
            self.extended(name)[1][i] += delta * amount
        if pod.host_ports:
            ports = self._ports.setdefault(i, {})
            for port in pod.host_ports:
                ports[port] = ports.get(port, 0) + delta
                if not ports[port]:
                    del ports[port]

    def extended(self, name: str) -> tuple[IntArray, IntArray]:
        """Allocatable and requested counts of one extended resource, per node."""
        used = self._ext_used.get(name)
        if used is None:
            used = self._ext_used[name] = np.zeros(len(self._nodes.nodes), dtype=np.int64)
        return self._nodes.extended_allocatable(name), used

    def requested(self, i: int) -> tuple[int, int, int]:
        """Requested cpu millicores, memory bytes, and pod count on node `i`."""
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
        placed = self.placed.get(pod.key)
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
        nodes = self._nodes
        return NodeResources(
            allocatable_cpu_millicores=read_only(nodes.alloc_cpu),
            allocatable_memory_bytes=read_only(nodes.alloc_mem),
            allocatable_pods=read_only(nodes.alloc_pods),
            requested_cpu_millicores=read_only(self._req_cpu),
            requested_memory_bytes=read_only(self._req_mem),
            nonzero_cpu_millicores=read_only(self._nz_cpu),
            nonzero_memory_bytes=read_only(self._nz_mem),
            pods=read_only(self._req_pods),
        )

    # --- the Filter plugins that read the ledger ---

    def resources_failure(self, pod: Pod, i: int, own: Pod | None) -> str | None:
        """NodeResourcesFit on node `i`; `own` is the pod itself when placed there."""
        cpu, mem, count = self._cpu[i], self._mem[i], self._pod_count[i]
        if own is not None:
            cpu -= own.cpu_request_millicores
            mem -= own.memory_request_bytes
            count -= 1

        def extended_free(name: str) -> int:
            allocatable, used = self.extended(name)
            return int(
                allocatable[i] - used[i] + (own.extended_requests.get(name, 0) if own else 0)
            )

        return _filters.node_resources_fit_failure(
            pod, self._nodes.nodes[i], (cpu, mem, count), extended_free
        )

    def resources_mask(
        self, pod: Pod, indexes: IntArray, placed: tuple[Pod, int] | None
    ) -> BoolArray:
        """NodeResourcesFit over the indexed nodes at once; `placed` is where the pod
        itself is placed, if anywhere."""
        nodes = self._nodes
        cpu = self._req_cpu[indexes]
        mem = self._req_mem[indexes]
        count = self._req_pods[indexes]
        if placed is not None:
            here = np.flatnonzero(indexes == placed[1])
            cpu[here] -= placed[0].cpu_request_millicores
            mem[here] -= placed[0].memory_request_bytes
            count[here] -= 1
        mask = np.ones(len(indexes), dtype=np.bool_)
        want = pod.cpu_request_millicores
        if want > 0:
            mask &= want <= nodes.alloc_cpu[indexes] - cpu
        want = pod.memory_request_bytes
        if want > 0:
            mask &= want <= nodes.alloc_mem[indexes] - mem
        for name, want in pod.extended_requests.items():
            allocatable, used = self.extended(name)
            free = allocatable[indexes] - used[indexes]
            if placed is not None:
                free[indexes == placed[1]] += placed[0].extended_requests.get(name, 0)
            mask &= want <= free
        mask &= count + 1 <= nodes.alloc_pods[indexes]
        return mask

    def has_ports(self) -> bool:
        return bool(self._ports)

    def ports_conflict(self, pod: Pod, i: int, own: Pod | None) -> bool:
        """NodePorts on node `i`; `own` is the pod itself when placed there."""
        return _filters.node_ports_conflict(pod, self._ports.get(i, _NO_PORTS), own)
