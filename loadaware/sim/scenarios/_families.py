"""Nodes and their classes, by family: the instance types and zones, then which nodes
are hot, cold, warm or reserved and how full, for the "proportional" family (usage
follows requests) and the "usage-independent" one (usage drawn apart from requests,
with per-workload usage/request ratios).
"""

from __future__ import annotations

import math

import numpy as np

from loadaware.sim.scenarios import _base, _catalogue


class Families(_base.GeneratorBase):
    """The nodes and their classes, by family."""

    def make_nodes(self) -> None:
        rng, n = self.rng, self.n
        n_batch = max(1, round(0.05 * n)) if n >= 10 else 0
        n_default = n - n_batch
        weights = np.array([t.weight for t in _catalogue.INSTANCE_TYPES])
        types = rng.choice(
            len(_catalogue.INSTANCE_TYPES), size=n_default, p=weights / weights.sum()
        )
        self.node_type = [_catalogue.INSTANCE_TYPES[t] for t in types.tolist()]
        self.node_type += [_catalogue.BATCH_TYPE] * n_batch
        self.node_pool = ["default"] * n_default + ["batch"] * n_batch
        self.zone_names = [f"{_catalogue.REGION}{chr(ord('a') + z)}" for z in range(self.zones)]
        zone_index = np.concatenate(
            [np.arange(n_default) % self.zones, np.arange(n_batch) % self.zones]
        )
        self.node_zone = zone_index.tolist()
        self.size_nodes()

        self.ready = np.ones(n, dtype=bool)
        self.schedulable = np.ones(n, dtype=bool)
        if n >= 30:
            # A cordoned node (maintenance) and, in larger clusters, nodes whose kubelet
            # reports NotReady: neither may receive pods.
            default_idx = rng.permutation(n_default)
            n_cordoned = 1 + n // 1000
            n_not_ready = (1 + n // 1000) if n >= 100 else 0
            self.schedulable[default_idx[:n_cordoned]] = False
            self.ready[default_idx[n_cordoned : n_cordoned + n_not_ready]] = False

    def size_nodes(self) -> None:
        """Names, capacity and allocatable of the nodes whose type, pool and zone are set."""
        rng, n = self.rng, self.n
        width = max(3, len(str(n)))
        counters: dict[tuple[str, int], int] = {}
        self.node_names: list[str] = []
        for pool, z in zip(self.node_pool, self.node_zone, strict=True):
            k = counters.get((pool, z), 0) + 1
            counters[pool, z] = k
            self.node_names.append(f"{pool}-{chr(ord('a') + z)}-{k:0{width}d}")

        cores = np.array([t.cores for t in self.node_type])
        # kube-reserved cpu as managed offerings size it: a share of each core, falling.
        reserved_m = 60 + 10 + np.where(cores > 2, 10 * (np.minimum(cores, 4) - 2) / 2, 0)
        reserved_m = reserved_m + np.where(cores > 4, 2.5 * (cores - 4), 0)
        self.capacity_cpu_m = cores * 1000
        self.alloc_cpu_m = (cores * 1000 - np.rint(reserved_m)).astype(np.int64)
        nominal_ki = np.array([t.memory_gib for t in self.node_type]) * 1024 * 1024
        # The kernel keeps a little of the nominal size, differently on every boot.
        capacity_ki = (nominal_ki * 0.985).astype(np.int64) - rng.integers(0, 4096, size=n)
        self.capacity_memory_ki = capacity_ki
        alloc_ki = capacity_ki - (capacity_ki * 0.04).astype(np.int64) - 100 * 1024
        self.alloc_memory_b = alloc_ki * _catalogue.KiB
        self.alloc_memory_ki = alloc_ki
        self.alloc_pods = np.full(n, 110)

    def classify_nodes(self) -> None:
        """Hot survivors, cold replacements, normal rest; usage targets and request budgets."""
        rng, n = self.rng, self.n
        in_default = np.array([p == "default" for p in self.node_pool])
        eligible = np.flatnonzero(in_default & self.ready & self.schedulable)
        n_hot = round(self.hot_fraction * n)
        if self.hot_fraction > 0:
            n_hot = max(1, n_hot)
        n_hot = min(n_hot, len(eligible) // 2)
        n_cold = min(n_hot, len(eligible) - n_hot)
        order = rng.permutation(eligible)
        self.node_class = np.full(n, "normal", dtype=object)
        self.node_class[order[:n_hot]] = "hot"
        self.node_class[order[n_hot : n_hot + n_cold]] = "cold"
        self.node_class[~self.ready] = "down"
        is_hot = self.node_class == "hot"
        is_cold = self.node_class == "cold"
        is_normal = self.node_class == "normal"

        hot_kind = rng.choice(3, size=n, p=[0.45, 0.25, 0.30])  # cpu, memory, both
        hot_cpu = is_hot & (hot_kind != 1)
        hot_memory = is_hot & (hot_kind != 0)
        target_cpu = np.zeros(n)
        target_memory = np.zeros(n)
        target_cpu[hot_cpu] = rng.uniform(0.78, 0.95, size=hot_cpu.sum())
        target_memory[hot_memory] = rng.uniform(0.84, 0.94, size=hot_memory.sum())
        warm_cpu, warm_memory = is_hot & ~hot_cpu, is_hot & ~hot_memory
        target_cpu[warm_cpu] = rng.uniform(0.45, 0.66, size=warm_cpu.sum())
        target_memory[warm_memory] = rng.uniform(0.5, 0.74, size=warm_memory.sum())
        target_cpu[is_cold] = rng.uniform(0.16, 0.32, size=is_cold.sum())
        target_memory[is_cold] = rng.uniform(0.22, 0.42, size=is_cold.sum())

        # The normal level is what brings the cluster's mean to the capacity setting.
        mean_cpu, mean_memory = _catalogue.MEAN_USAGE[self.capacity]
        n_up = int(self.ready.sum())
        n_normal = int(is_normal.sum())
        if n_normal:
            level_cpu = (mean_cpu * n_up - target_cpu[is_hot | is_cold].sum()) / n_normal
            level_memory = (mean_memory * n_up - target_memory[is_hot | is_cold].sum()) / n_normal
            noise = rng.normal(0.0, 0.04, size=(2, n_normal))
            target_cpu[is_normal] = np.clip(np.clip(level_cpu, 0.2, 0.63) + noise[0], 0.15, 0.66)
            target_memory[is_normal] = np.clip(
                np.clip(level_memory, 0.25, 0.7) + noise[1], 0.2, 0.74
            )
        self.target_cpu = target_cpu
        self.target_memory = target_memory

        fill_cpu = np.clip(target_cpu / _catalogue.CPU_FILL_DIVISOR, 0.1, _catalogue.MAX_FILL)
        fill_memory = np.clip(
            target_memory / _catalogue.MEMORY_FILL_DIVISOR, 0.1, _catalogue.MAX_FILL
        )
        packed = rng.uniform(*_catalogue.HOT_FILL, size=(2, n))
        fill_cpu[is_hot] = packed[0][is_hot]
        fill_memory[is_hot] = packed[1][is_hot]
        fill_cpu[~self.ready] = 0.0
        fill_memory[~self.ready] = 0.0
        self.budget_cpu_m = fill_cpu * self.alloc_cpu_m
        self.budget_memory_b = fill_memory * self.alloc_memory_b

        # The outage: survivors took replicas some hours ago; replacements came up after.
        self.outage_age = float(rng.uniform(2 * 3600, 6 * 3600))
        ages = rng.uniform(5 * 86400, 90 * 86400, size=n)
        ages[is_cold] = self.outage_age - rng.uniform(600, 2400, size=is_cold.sum())
        self.node_age = ages

    def classify_nodes_independently(self) -> None:
        """The usage-independent family's classes, targets and request budgets: usage and
        requests are drawn apart, then warm and reserved nodes push them to opposite ends."""
        rng, n = self.rng, self.n
        in_default = np.array([p == "default" for p in self.node_pool])
        eligible = np.flatnonzero(in_default & self.ready & self.schedulable)
        n_hot = round(self.hot_fraction * n)
        if self.hot_fraction > 0:
            n_hot = max(1, n_hot)
        n_hot = min(n_hot, len(eligible) // 2)
        n_cold = min(n_hot, len(eligible) - n_hot)
        # Warm and reserved nodes never crowd out the normal ones completely.
        spare = max(0, len(eligible) - n_hot - n_cold - 1)
        n_warm = min(round(_catalogue.WARM_SHARE * n), spare)
        n_reserved = min(round(_catalogue.RESERVED_SHARE * n), spare - n_warm)
        order = rng.permutation(eligible)
        bounds = np.cumsum([n_hot, n_cold, n_warm, n_reserved])
        self.node_class = np.full(n, "normal", dtype=object)
        for label, (a, b) in zip(
            ("hot", "cold", "warm", "reserved"),
            zip([0, *bounds[:-1].tolist()], bounds.tolist(), strict=True),
            strict=True,
        ):
            self.node_class[order[a:b]] = label
        self.node_class[~self.ready] = "down"
        is_ = {c: self.node_class == c for c in ("hot", "cold", "warm", "reserved", "normal")}

        hot_kind = rng.choice(3, size=n, p=[0.45, 0.25, 0.30])  # cpu, memory, both
        hot_cpu = is_["hot"] & (hot_kind != 1)
        hot_memory = is_["hot"] & (hot_kind != 0)
        target_cpu = np.zeros(n)
        target_memory = np.zeros(n)
        draws = {
            # class: cpu usage range, memory usage range
            "cold": ((0.16, 0.32), (0.22, 0.42)),
            "warm": ((0.56, 0.65), (0.22, 0.38)),
            "reserved": ((0.15, 0.25), (0.25, 0.4)),
        }
        for label, (cpu_range, memory_range) in draws.items():
            mask = is_[label]
            target_cpu[mask] = rng.uniform(*cpu_range, size=mask.sum())
            target_memory[mask] = rng.uniform(*memory_range, size=mask.sum())
        target_cpu[hot_cpu] = rng.uniform(0.78, 0.95, size=hot_cpu.sum())
        target_memory[hot_memory] = rng.uniform(0.84, 0.94, size=hot_memory.sum())
        warm_cpu, warm_memory = is_["hot"] & ~hot_cpu, is_["hot"] & ~hot_memory
        target_cpu[warm_cpu] = rng.uniform(0.45, 0.66, size=warm_cpu.sum())
        target_memory[warm_memory] = rng.uniform(0.5, 0.74, size=warm_memory.sum())

        mean_cpu, mean_memory = _catalogue.MEAN_USAGE[self.capacity]
        n_up = int(self.ready.sum())
        normal = is_["normal"]
        n_normal = int(normal.sum())
        if n_normal:
            storied = ~normal & self.ready
            level_cpu = (mean_cpu * n_up - target_cpu[storied].sum()) / n_normal
            level_memory = (mean_memory * n_up - target_memory[storied].sum()) / n_normal
            noise = rng.normal(0.0, (0.08, 0.05), size=(n_normal, 2)).T
            target_cpu[normal] = np.clip(np.clip(level_cpu, 0.2, 0.6) + noise[0], 0.12, 0.66)
            target_memory[normal] = np.clip(np.clip(level_memory, 0.25, 0.7) + noise[1], 0.2, 0.74)
        self.target_cpu = target_cpu
        self.target_memory = target_memory

        # Requests apart from usage: uniform for nodes without a story, then the stories.
        fill_cpu = rng.uniform(*_catalogue.INDEPENDENT_FILL[self.capacity], size=n)
        fill_cpu[hot_cpu] = rng.uniform(0.35, 0.85, size=hot_cpu.sum())
        fill_cpu[is_["cold"]] = target_cpu[is_["cold"]] / _catalogue.CPU_FILL_DIVISOR
        fill_cpu[is_["reserved"]] = rng.uniform(0.7, 0.85, size=is_["reserved"].sum())
        fill_cpu[is_["warm"]] = self._warm_cpu_fill(is_["warm"])
        # Placement stops at whichever budget a node reaches first, and pods bring memory
        # and cpu in about the same proportion everywhere: the memory budget follows the
        # cpu budget, except where memory is the story.
        fill_memory = fill_cpu * rng.uniform(0.85, 1.15, size=n)
        fill_memory[hot_memory] = target_memory[hot_memory] / rng.uniform(
            0.85, 1.2, size=hot_memory.sum()
        )
        fill_cpu[hot_memory] = np.maximum(fill_cpu[hot_memory], fill_memory[hot_memory])
        fill_cpu = np.clip(fill_cpu, 0.1, _catalogue.MAX_FILL)
        fill_memory = np.clip(fill_memory, 0.1, _catalogue.MAX_FILL)
        fill_cpu[~self.ready] = 0.0
        fill_memory[~self.ready] = 0.0
        self.budget_cpu_m = fill_cpu * self.alloc_cpu_m
        self.budget_memory_b = fill_memory * self.alloc_memory_b

        self.outage_age = float(rng.uniform(2 * 3600, 6 * 3600))
        ages = rng.uniform(5 * 86400, 90 * 86400, size=n)
        ages[is_["cold"]] = self.outage_age - rng.uniform(600, 2400, size=is_["cold"].sum())
        self.node_age = ages

    def _warm_cpu_fill(self, warm: np.ndarray) -> np.ndarray:
        """Request fill of warm nodes: as little as lets their usage target be reached
        with pods at WARM_RATIO times their requests, next to the DaemonSets' pods."""
        agents = _catalogue.daemonset_workloads()
        agent_request = sum(x.cpu_m for x in agents) / 1000.0
        agent_usage = sum(x.cpu_m * x.cpu_ratio for x in agents) / 1000.0
        overhead = 0.1  # the middle of compute_usage's system overhead
        alloc = self.alloc_cpu_m[warm] / 1000.0
        needed = self.target_cpu[warm] * alloc - overhead - agent_usage
        requests = agent_request + np.maximum(needed, 0.0) / _catalogue.WARM_RATIO
        return requests / (_catalogue.BUDGET_USE * alloc)

    def draw_independent_ratios(self) -> None:
        """Each scalable workload's cpu usage/request ratio, heavy-tailed and clipped to
        RATIO_BOUNDS, its median set so that the cluster's usage meets its targets; limits
        are loosened where a ratio would not fit under them."""
        rng = self.rng
        movable = [x for x in self.workloads if x.scalable and x.pool != "all"]
        if not movable:
            return
        spread = np.exp(rng.normal(0.0, _catalogue.RATIO_SIGMA, size=len(movable)))
        weight = np.array([x.replicas * x.cpu_m for x in movable], dtype=float)
        up = self.node_class != "down"
        agents = _catalogue.daemonset_workloads()
        alloc = self.alloc_cpu_m[up] / 1000.0
        usage = (self.target_cpu[up] * alloc).sum() - 0.1 * up.sum()
        usage -= up.sum() * sum(x.cpu_m * x.cpu_ratio for x in agents) / 1000.0
        requests = (_catalogue.BUDGET_USE * self.budget_cpu_m[up]).sum() / 1000.0
        requests -= up.sum() * sum(x.cpu_m for x in agents) / 1000.0
        wanted = float(np.clip(usage / max(requests, 1e-9), *_catalogue.RATIO_BOUNDS))
        low, high = (
            _catalogue.RATIO_BOUNDS[0] / spread.max(),
            _catalogue.RATIO_BOUNDS[1] / spread.min(),
        )
        for _ in range(40):  # bisection on the median: the weighted mean is monotone in it
            median = math.sqrt(low * high)
            ratios = np.clip(median * spread, *_catalogue.RATIO_BOUNDS)
            if float(np.average(ratios, weights=weight)) < wanted:
                low = median
            else:
                high = median
        for x, ratio in zip(movable, ratios.tolist(), strict=True):
            x.cpu_ratio = ratio
            # Under-requested workloads run without cpu limits: they would be throttled.
            if x.limits == "guaranteed" and ratio > 0.7:
                x.limits = "burst"
            if x.limits == "burst" and ratio > 1.0:
                x.limits = "none"
