"""Usage: each pod's cpu and memory from its requests and its workload's ratio, scaled
per node to the node's target, never above a container limit; and the pods' ages.
"""

from __future__ import annotations

import math

import numpy as np

from loadaware.sim.scenarios import _base, _catalogue


class Usage(_base.GeneratorBase):
    """The pods' usage and ages."""

    def compute_usage(self) -> None:
        rng, n = self.rng, self.n
        count = len(self.pod_workload)
        wl = self.workloads
        # Workload indices shifted when empty workloads were dropped: re-map by identity.
        index_of = {id(x): i for i, x in enumerate(wl)}
        remap = np.zeros(count, dtype=np.int64)
        for x in wl:
            remap[x.pod_indices] = index_of[id(x)]
        self.pod_workload = remap

        req_cpu = np.array([x.pod_cpu_m for x in wl], dtype=float)[remap] / 1000.0
        req_memory = np.array([x.pod_memory_b for x in wl], dtype=float)[remap]
        cpu_ratio = np.array([x.cpu_ratio for x in wl])[remap]
        memory_ratio = np.array([x.memory_ratio for x in wl])[remap]
        lim_cpu, lim_memory = self._limits()
        scalable = np.array([x.scalable and x.pool != "all" for x in wl])[remap]

        cpu_noise, cpu_bounds, memory_bounds = self.usage_spread()
        raw_cpu = req_cpu * cpu_ratio * rng.lognormal(0.0, cpu_noise, size=count)
        raw_memory = req_memory * memory_ratio * rng.lognormal(0.0, 0.1, size=count)
        self.overhead_cpu = rng.uniform(0.04, 0.15, size=n)
        self.overhead_memory = rng.uniform(250, 600, size=n) * _catalogue.MiB

        cpu = self._fit_to_target(
            raw_cpu,
            scalable,
            lim_cpu[remap],
            self.target_cpu * self.alloc_cpu_m / 1000.0 - self.overhead_cpu,
            cpu_bounds,
        )
        memory = self._fit_to_target(
            raw_memory,
            scalable,
            0.97 * lim_memory[remap],
            self.target_memory * self.alloc_memory_b - self.overhead_memory,
            memory_bounds,
        )
        if self.independent:
            low, high = _catalogue.RATIO_BOUNDS
            cpu = np.where(
                scalable,
                np.clip(cpu, low * req_cpu, np.minimum(high * req_cpu, lim_cpu[remap])),
                cpu,
            )
            memory = np.where(
                scalable,
                np.clip(
                    memory, low * req_memory, np.minimum(1.5 * req_memory, 0.97 * lim_memory[remap])
                ),
                memory,
            )
        self.pod_usage_cpu = np.maximum(np.round(cpu, 3), 0.001)
        self.pod_usage_memory = np.maximum(np.round(memory / 4096), 256) * 4096
        node_cpu = np.bincount(self.pod_node, weights=self.pod_usage_cpu, minlength=n)
        node_memory = np.bincount(self.pod_node, weights=self.pod_usage_memory, minlength=n)
        self.node_usage_cpu = np.round(node_cpu + self.overhead_cpu, 3)
        self.node_usage_memory = np.round((node_memory + self.overhead_memory) / 4096) * 4096

    def usage_spread(self) -> tuple[float, tuple[float, float], tuple[float, float]]:
        """Per-pod cpu noise (log-normal sigma) and the bounds of the per-node factor that
        brings cpu and memory usage to the node's target."""
        if self.independent:
            # The ratio is the workload's and its node's: little noise, little correction.
            return 0.12, (0.5, 2.0), (0.4, 1.6)
        return 0.45, (0.2, 3.5), (0.4, 1.35)

    def _limits(self) -> tuple[np.ndarray, np.ndarray]:
        """Per workload, the pod's cpu (cores) and memory limits; inf where a container has none."""
        cpu, memory = [], []
        for x in self.workloads:
            if x.limits == "guaranteed":
                cpu.append(x.pod_cpu_m / 1000.0)
                memory.append(float(x.pod_memory_b))
            elif x.limits == "burst":
                side_cpu, side_memory = (50 * 2, 64 * _catalogue.MiB * 2) if x.sidecar else (0, 0)
                cpu.append((2 * x.main_cpu_m + side_cpu) / 1000.0)
                memory.append(float(x.main_memory_b * 3 // 2 + side_memory))
            else:
                cpu.append(math.inf)
                memory.append(math.inf)
        return np.array(cpu), np.array(memory)

    def _fit_to_target(
        self,
        raw: np.ndarray,
        scalable: np.ndarray,
        limit: np.ndarray,
        target: np.ndarray,
        bounds: tuple[float, float],
    ) -> np.ndarray:
        """Scale the scalable pods of each node so the node meets its usage target, never
        above a limit (a container at its cpu limit is throttled, at its memory limit killed)."""
        n = self.n
        usage = np.minimum(raw, limit)
        free = scalable.copy()
        for _ in range(3):
            fixed = np.bincount(self.pod_node, weights=np.where(free, 0.0, usage), minlength=n)
            movable = np.bincount(self.pod_node, weights=np.where(free, usage, 0.0), minlength=n)
            factor = np.where(movable > 0, (target - fixed) / np.maximum(movable, 1e-9), 1.0)
            factor = np.clip(factor, *bounds)
            scaled = usage * factor[self.pod_node]
            usage = np.where(free, np.minimum(scaled, limit), usage)
            free = free & (scaled < limit)
        return usage

    def compute_ages(self) -> None:
        """Creation ages in seconds before now, consistent along owner chains."""
        rng = self.rng
        count = len(self.pod_workload)
        node_age = self.node_age[self.pod_node]
        ages = np.exp(rng.uniform(np.log(2 * 3600), np.log(12 * 86400), size=count))
        ages = np.minimum(ages, node_age - 60)
        on_cold = self.node_class[self.pod_node] == "cold"
        ages[on_cold] = rng.uniform(600, np.maximum(node_age[on_cold] - 60, 601))
        # About a third of a hot node's pods are the replicas re-created during the outage.
        is_ds = np.array([x.kind == "DaemonSet" for x in self.workloads])[self.pod_workload]
        moved = (self.node_class[self.pod_node] == "hot") & ~is_ds
        moved &= rng.random(count) < 0.35
        ages[moved] = self.outage_age - rng.uniform(30, 400, size=int(moved.sum()))
        for x in self.workloads:
            if x.kind == "DaemonSet":
                rollout = float(rng.uniform(86400, 20 * 86400))
                idx = np.array(x.pod_indices)
                ages[idx] = np.minimum(node_age[idx], rollout) - rng.uniform(5, 40, size=len(idx))
        self.pod_age = np.maximum(ages, 120.0)
        self.ready_age = self.pod_age - rng.uniform(3, 40, size=count)
        restarts = np.where(rng.random(count) < 0.15, rng.geometric(0.5, size=count), 0)
        crashy = rng.random(count) < 0.005
        self.restarts = np.where(crashy, rng.integers(10, 60, size=count), restarts)
