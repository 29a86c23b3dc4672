"""The workloads of a generated cluster, from the catalogue: system add-ons, node
agents, the teams' Deployments and StatefulSets, batch Jobs, fillers; then sized so
that their requests fit each node's target.
"""

from __future__ import annotations

import numpy as np

from loadaware.sim.scenarios import _base, _catalogue


class Workloads(_base.GeneratorBase):
    """The workloads, drawn from the catalogue and sized to the nodes' targets."""

    def make_workloads(self) -> None:
        rng, n = self.rng, self.n
        n_default_up = int(((self.node_class != "down") & self.schedulable).sum())
        has_batch = "batch" in self.node_pool
        w: list[_catalogue.Workload] = _catalogue.daemonset_workloads()
        w.append(_catalogue.coredns_workload(int(np.clip(n // 16 + 1, 2, 40))))
        w.append(
            _catalogue.Workload(
                kind="Deployment",
                namespace="kube-system",
                name="metrics-server",
                team="platform",
                replicas=1,
                cpu_m=100,
                memory_b=200 * _catalogue.MiB,
                scalable=False,
                tolerations="critical",
                priority_class="system-cluster-critical",
                priority=2000000000,
                empty_dir=True,
                cpu_ratio=0.3,
                memory_ratio=0.5,
                image="registry.example.com/platform/metrics-server:0.7.2",
                service_account="metrics-server",
            )
        )
        w.append(
            _catalogue.Workload(
                kind="StatefulSet",
                namespace="monitoring",
                name="prometheus",
                team="platform",
                replicas=2,
                cpu_m=500,
                memory_b=2 * _catalogue.GiB,
                limits="burst",
                pvc_size="100Gi",
                pdb=("maxUnavailable", 1),
                cpu_ratio=0.5,
                memory_ratio=0.85,
                image="registry.example.com/platform/prometheus:2.54.1",
                service_account="prometheus",
            )
        )
        w.append(
            _catalogue.Workload(
                kind="Deployment",
                namespace="payments",
                name="payments-api",
                team="payments",
                replicas=min(max(3, n // 20), 12, n_default_up),
                cpu_m=400,
                memory_b=768 * _catalogue.MiB,
                limits="burst",
                sidecar=True,
                anti_affinity="hostname",
                pdb=("maxUnavailable", 1),
                cpu_ratio=0.7,
                memory_ratio=0.8,
            )
        )
        w.append(
            _catalogue.Workload(
                kind="Deployment",
                namespace="payments",
                name="ledger",
                team="payments",
                replicas=3,
                cpu_m=300,
                memory_b=1 * _catalogue.GiB,
                limits="guaranteed",
                # minAvailable equal to replicas: a common setting that blocks every eviction.
                pdb=("minAvailable", 3),
                cpu_ratio=0.5,
                memory_ratio=0.85,
            )
        )
        if self.zones >= 2:
            w.append(
                _catalogue.Workload(
                    kind="StatefulSet",
                    namespace="data",
                    name="zookeeper",
                    team="data",
                    replicas=min(3, self.zones),
                    cpu_m=250,
                    memory_b=1 * _catalogue.GiB,
                    limits="burst",
                    pvc_size="10Gi",
                    anti_affinity="zone",
                    pdb=("maxUnavailable", 1),
                    cpu_ratio=0.4,
                    memory_ratio=0.8,
                )
            )
        w.append(
            _catalogue.Workload(
                kind="StatefulSet",
                namespace="data",
                name="postgres",
                team="data",
                replicas=2,
                cpu_m=1000,
                memory_b=4 * _catalogue.GiB,
                limits="guaranteed",
                pvc_size="50Gi",
                pdb=("minAvailable", 1),
                cpu_ratio=0.5,
                memory_ratio=0.9,
            )
        )
        w.append(
            _catalogue.Workload(
                kind="Deployment",
                namespace="shop",
                name="frontend",
                team="shop",
                replicas=max(4, n // 5),
                cpu_m=300,
                memory_b=512 * _catalogue.MiB,
                limits="burst",
                sidecar=True,
                pdb=("maxUnavailable", "25%"),
                cpu_ratio=0.8,
                memory_ratio=0.75,
            )
        )
        w.append(
            _catalogue.Workload(
                kind="Deployment",
                namespace="search",
                name="indexer",
                team="search",
                replicas=max(2, n // 25),
                cpu_m=500,
                memory_b=2 * _catalogue.GiB,
                empty_dir=True,
                cpu_ratio=0.7,
                memory_ratio=0.85,
            )
        )
        if n >= 20:
            # A pod somebody started by hand: nothing would recreate it.
            w.append(
                _catalogue.Workload(
                    kind="Pod",
                    namespace="default",
                    name="debug-shell",
                    team="platform",
                    replicas=1,
                    cpu_m=100,
                    memory_b=128 * _catalogue.MiB,
                    cpu_ratio=0.05,
                    memory_ratio=0.3,
                )
            )
        if has_batch:
            n_batch = self.node_pool.count("batch")
            batch_pods = max(2, round(n_batch * (self.pods_per_node - _catalogue.DS_COUNT) * 0.9))
            n_batch_workloads = max(2, batch_pods // 40)
            split = rng.multinomial(
                batch_pods - n_batch_workloads, [1 / n_batch_workloads] * n_batch_workloads
            )
            for i, extra in enumerate(split.tolist()):
                w.append(
                    _catalogue.Workload(
                        kind="Deployment",
                        namespace="batch",
                        name=("report-builder", "etl-worker")[i] if i < 2 else f"etl-shard-{i - 1}",
                        team="analytics",
                        replicas=1 + extra,
                        cpu_m=1000,
                        memory_b=2 * _catalogue.GiB,
                        pool="batch",
                        tolerations="batch",
                        empty_dir=True,
                        cpu_ratio=0.9,
                        memory_ratio=0.8,
                    )
                )

        non_ds_target = n * (self.pods_per_node - _catalogue.DS_COUNT)
        default_target = non_ds_target - sum(x.replicas for x in w if x.pool == "batch")
        have = sum(x.replicas for x in w if x.pool == "default")
        w.extend(self.filler_workloads(default_target - have))
        self.workloads = w

    def filler_workloads(self, pods: int) -> list[_catalogue.Workload]:
        rng = self.rng
        out: list[_catalogue.Workload] = []
        if pods <= 0:
            return out
        # Batches of random draws keep the per-workload cost low at 5,000 nodes.
        batch = max(16, pods // 4)
        taken: set[tuple[str, str]] = set()
        while pods > 0:
            replicas = 1 + np.floor(rng.lognormal(np.log(4.0), 0.9, size=batch)).astype(int)
            replicas = np.minimum(replicas, 80)
            teams = rng.integers(0, len(_catalogue.TEAMS), size=batch)
            word_a = rng.integers(0, len(_catalogue.WORDS_A), size=batch)
            word_b = rng.integers(0, len(_catalogue.WORDS_B), size=batch)
            cpu = rng.lognormal(np.log(250.0), 0.7, size=batch)
            gib_per_core = rng.lognormal(np.log(2.5), 0.5, size=batch)
            u = rng.random(size=(6, batch))
            cpu_ratio = rng.lognormal(np.log(0.55), 0.35, size=batch)
            memory_ratio = rng.uniform(0.65, 0.95, size=batch)
            for i in range(batch):
                if pods <= 0:
                    break
                r = int(min(replicas[i], pods))
                team = _catalogue.TEAMS[teams[i]]
                base = f"{_catalogue.WORDS_A[word_a[i]]}-{_catalogue.WORDS_B[word_b[i]]}"
                name, k = base, 1
                while (team, name) in taken:
                    k += 1
                    name = f"{base}-{k}"
                taken.add((team, name))
                pdb: tuple[str, int | str] | None = None
                if r >= 2 and u[0, i] < 0.25:
                    roll = u[1, i]
                    if roll < 0.5:
                        pdb = ("maxUnavailable", 1)
                    elif roll < 0.75:
                        pdb = ("minAvailable", "50%")
                    elif roll < 0.9:
                        pdb = ("maxUnavailable", "25%")
                    else:
                        pdb = ("minAvailable", r)  # blocks every eviction
                limits = "guaranteed" if u[2, i] < 0.15 else ("burst" if u[2, i] < 0.6 else "none")
                out.append(
                    _catalogue.Workload(
                        kind="Deployment",
                        namespace=team,
                        name=name,
                        team=team,
                        replicas=r,
                        cpu_m=float(cpu[i]),
                        memory_b=float(cpu[i] / 1000 * gib_per_core[i] * _catalogue.GiB),
                        sidecar=bool(u[3, i] < 0.3),
                        limits=limits,
                        empty_dir=bool(u[4, i] < 0.15),
                        pdb=pdb,
                        cpu_ratio=float(cpu_ratio[i]),
                        memory_ratio=float(memory_ratio[i]),
                        old_revisions=int(u[5, i] * 3),
                    )
                )
                pods -= r
        return out

    def size_workloads(self) -> None:
        """Scale the scalable requests so that each pool's pods fill its request budget."""
        sidecar_cpu_m, sidecar_memory_b = 50, 64 * _catalogue.MiB
        up = self.node_class != "down"
        for pool in ("default", "batch"):
            in_pool = np.array([p == pool for p in self.node_pool]) & up
            members = [x for x in self.workloads if x.pool == pool]
            if not members or not in_pool.any():
                continue
            ds = [x for x in self.workloads if x.pool == "all"]
            fixed_cpu = in_pool.sum() * sum(x.cpu_m for x in ds)
            fixed_memory = in_pool.sum() * sum(x.memory_b for x in ds)
            raw_cpu = raw_memory = 0.0
            for x in members:
                side = x.replicas if x.sidecar else 0
                fixed_cpu += side * sidecar_cpu_m
                fixed_memory += side * sidecar_memory_b
                if x.scalable:
                    raw_cpu += x.replicas * x.cpu_m
                    raw_memory += x.replicas * x.memory_b
                else:
                    fixed_cpu += x.replicas * x.cpu_m
                    fixed_memory += x.replicas * x.memory_b
            budget_cpu = _catalogue.BUDGET_USE * self.budget_cpu_m[in_pool].sum()
            budget_memory = _catalogue.BUDGET_USE * self.budget_memory_b[in_pool].sum()
            scale_cpu = max(budget_cpu - fixed_cpu, 0.05 * budget_cpu) / max(raw_cpu, 1.0)
            scale_memory = max(budget_memory - fixed_memory, 0.05 * budget_memory) / max(
                raw_memory, 1.0
            )
            # No single pod may be too big for the smallest node of its pool.
            cap_cpu = 0.3 * self.alloc_cpu_m[in_pool].min()
            cap_memory = 0.3 * self.alloc_memory_b[in_pool].min()
            for x in members:
                cpu, memory = x.cpu_m, x.memory_b
                if x.scalable:
                    cpu, memory = cpu * scale_cpu, memory * scale_memory
                x.main_cpu_m = max(10, 5 * round(min(cpu, cap_cpu) / 5))
                x.main_memory_b = max(
                    32 * _catalogue.MiB,
                    8 * _catalogue.MiB * round(min(memory, cap_memory) / (8 * _catalogue.MiB)),
                )
        for x in self.workloads:
            if x.pool == "all":
                x.main_cpu_m, x.main_memory_b = int(x.cpu_m), int(x.memory_b)
            x.pod_cpu_m = x.main_cpu_m + (sidecar_cpu_m if x.sidecar else 0)
            x.pod_memory_b = x.main_memory_b + (sidecar_memory_b if x.sidecar else 0)
