"""Placement: the pods onto nodes, by requests as kube-scheduler packed them after the
node outage, with anti-affinity and pools respected; in the usage-independent family
workloads and nodes are matched by bands of usage/request ratio.
"""

from __future__ import annotations

import heapq

import numpy as np

from loadaware.sim.scenarios import _base, _catalogue


class Placement(_base.GeneratorBase):
    """The pods onto the nodes."""

    def place_pods(self) -> None:
        """DaemonSets first, then the anti-affinity replicas on distinct nodes or zones, then
        everything else least-allocated against each node's request budget."""
        rng, n = self.rng, self.n
        used_cpu = np.zeros(n, dtype=np.int64)
        used_memory = np.zeros(n, dtype=np.int64)
        used_pods = np.zeros(n, dtype=np.int64)
        pod_workload: list[int] = []
        pod_node: list[int] = []

        def put(wi: int, node: int) -> None:
            x = self.workloads[wi]
            used_cpu[node] += x.pod_cpu_m
            used_memory[node] += x.pod_memory_b
            used_pods[node] += 1
            x.pod_indices.append(len(pod_workload))
            pod_workload.append(wi)
            pod_node.append(node)

        for wi, x in enumerate(self.workloads):
            if x.kind == "DaemonSet":
                for node in range(n):
                    put(wi, node)

        up = (self.node_class != "down") & self.schedulable
        open_default = np.flatnonzero(up & np.array([p == "default" for p in self.node_pool]))

        def fits(wi: int, node: int) -> bool:
            x = self.workloads[wi]
            return bool(
                used_cpu[node] + x.pod_cpu_m <= self.alloc_cpu_m[node]
                and used_memory[node] + x.pod_memory_b <= self.alloc_memory_b[node]
                and used_pods[node] < self.alloc_pods[node]
            )

        for wi, x in enumerate(self.workloads):
            if x.anti_affinity == "hostname":
                for node in rng.permutation(open_default).tolist():
                    if len(x.pod_indices) == x.replicas:
                        break
                    if fits(wi, node):
                        put(wi, node)
            elif x.anti_affinity == "zone":
                for z in range(x.replicas):
                    in_zone = [i for i in open_default.tolist() if self.node_zone[i] == z]
                    for node in rng.permutation(in_zone).tolist():
                        if fits(wi, node):
                            put(wi, node)
                            break

        # Pods that must land go first (system add-ons, StatefulSets), the rest in random order.
        must: list[int] = []
        rest: list[int] = []
        for wi, x in enumerate(self.workloads):
            if x.kind == "DaemonSet" or x.anti_affinity:
                continue
            target = must if (not x.scalable or x.kind == "StatefulSet") else rest
            target.extend([wi] * x.replicas)
        order = must + [rest[i] for i in rng.permutation(len(rest)).tolist()]

        # One heap per pool, or per pool and band of ratio in the usage-independent family;
        # a workload tries its own heap first, then the others in the order it lists them.
        heaps: dict[tuple[str, int], list[tuple[float, int]]] = {}
        routes: dict[int, list[tuple[str, int]]] = {}
        for pool in ("default", "batch"):
            members = [
                i for i in range(n) if self.node_pool[i] == pool and self.node_class[i] != "down"
            ]
            placed = sorted({wi for wi in order if self.workloads[wi].pool == pool})
            if self.independent and pool == "default" and members:
                node_band, workload_band = self._ratio_bands(members, placed, used_cpu, used_memory)
            else:
                node_band = dict.fromkeys(members, 0)
                workload_band = dict.fromkeys(placed, 0)
            bands = sorted(set(node_band.values()))
            for band in bands:
                heap = [
                    (self._fill_key(i, used_cpu, used_memory), i)
                    for i in members
                    if node_band[i] == band
                ]
                heapq.heapify(heap)
                heaps[pool, band] = heap
            for wi in placed:
                own = workload_band[wi]
                routes[wi] = [(pool, b) for b in sorted(bands, key=lambda b: (abs(b - own), b))]

        for wi in order:
            for route in routes[wi]:
                heap = heaps[route]
                # A replica that fits none of the emptiest few nodes is dropped (the pool is
                # full); replicas are counted from placed pods below.
                tried: list[tuple[float, int]] = []
                landed = False
                while heap and len(tried) < 8:
                    entry = heapq.heappop(heap)
                    if fits(wi, entry[1]):
                        put(wi, entry[1])
                        heapq.heappush(
                            heap, (self._fill_key(entry[1], used_cpu, used_memory), entry[1])
                        )
                        landed = True
                        break
                    tried.append(entry)
                for entry in tried:
                    heapq.heappush(heap, entry)
                if landed:
                    break
        for x in self.workloads:
            if x.kind != "DaemonSet":
                x.replicas = len(x.pod_indices)
        self.workloads = [x for x in self.workloads if x.replicas or x.kind == "DaemonSet"]

        self.pod_workload = np.array(pod_workload, dtype=np.int64)
        self.pod_node = np.array(pod_node, dtype=np.int64)
        self.used_cpu_m = used_cpu
        self.used_memory_b = used_memory
        self.used_pods = used_pods

    def _ratio_bands(
        self,
        members: list[int],
        workloads: list[int],
        used_cpu: np.ndarray,
        used_memory: np.ndarray,
    ) -> tuple[dict[int, int], dict[int, int]]:
        """Bands of equal request mass: nodes by the cpu usage per request their target
        needs, workloads by their ratio, so that under-requested workloads fill the nodes
        that use much and request little, and over-requested ones the reverse."""
        nodes = np.array(members)
        needed = self.target_cpu[nodes] * self.alloc_cpu_m[nodes]
        needed = needed / np.maximum(self.budget_cpu_m[nodes], 1.0)
        # What a node will take, in cpu: placement stops at the first budget it reaches.
        placed = [wi for wi in workloads for _ in range(self.workloads[wi].replicas)]
        cpu_per_byte = sum(self.workloads[wi].pod_cpu_m for wi in placed) / max(
            sum(self.workloads[wi].pod_memory_b for wi in placed), 1
        )
        room = np.minimum(
            _catalogue.BUDGET_USE * self.budget_cpu_m[nodes] - used_cpu[nodes],
            (_catalogue.BUDGET_USE * self.budget_memory_b[nodes] - used_memory[nodes])
            * cpu_per_byte,
        )
        room = np.maximum(room, 1.0)
        count = min(_catalogue.RATIO_BANDS, len(members))
        node_band = _quantile_bands(needed, room, count)
        wl = np.array(workloads, dtype=np.int64)
        ratio = np.array([self.workloads[wi].cpu_ratio for wi in workloads])
        mass = np.array(
            [self.workloads[wi].replicas * self.workloads[wi].pod_cpu_m for wi in workloads],
            dtype=float,
        )
        workload_band = _quantile_bands(ratio, np.maximum(mass, 1.0), count)
        return (
            dict(zip(nodes.tolist(), node_band.tolist(), strict=True)),
            dict(zip(wl.tolist(), workload_band.tolist(), strict=True)),
        )

    def _fill_key(self, node: int, used_cpu: np.ndarray, used_memory: np.ndarray) -> float:
        """Smallest first: the node with the most of its budget left, relative to the budget."""
        left_cpu = 1.0 - used_cpu[node] / max(self.budget_cpu_m[node], 1.0)
        left_memory = 1.0 - used_memory[node] / max(self.budget_memory_b[node], 1.0)
        return -float(min(left_cpu, left_memory))


def _quantile_bands(values: np.ndarray, weights: np.ndarray, count: int) -> np.ndarray:
    """0..count-1 per item: its position by value in the cumulative weight, cut evenly."""
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    middle = (cumulative - weights[order] / 2) / cumulative[-1]
    bands = np.empty(len(values), dtype=np.int64)
    bands[order] = np.minimum((middle * count).astype(np.int64), count - 1)
    return bands
