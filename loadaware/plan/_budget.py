"""Eviction budgets: the four per-round limits, PodDisruptionBudgets, and what
earlier rounds already used of the budgets that span rounds (window, cooldown,
unavailable pods per workload), as the evictor's state reports it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from loadaware.cluster import ClusterState, Pod, PodDisruptionBudget
from loadaware.policy import Limits


def workload_key(pod: Pod) -> str:
    """The key budgets count a pod's workload under: its top owner, else the pod itself."""
    owner = pod.workload or pod.owner
    if owner is None:
        return f"Pod/{pod.namespace}/{pod.name}"
    return f"{owner.kind}/{pod.namespace}/{owner.name}"


@dataclass(frozen=True, kw_only=True)
class CarriedBudget:
    """What earlier rounds used of budgets that span rounds. None: no such limit."""

    cooling_workloads: frozenset[str] = frozenset()  # workload keys moved within the cooldown
    window_total_left: int | None = None
    window_namespace_left: Mapping[str, int] | None = None  # absent namespace: full limit
    window_namespace_limit: int | None = None
    # Pods of each workload unavailable now (not Ready, Pending, terminating).
    unavailable_per_workload: Mapping[str, int] = field(default_factory=dict)


NO_CARRIED_BUDGET = CarriedBudget()


@dataclass(kw_only=True)
class RoundBudget:
    """Counts what a round has planned and says which limit a further eviction would break."""

    limits: Limits
    carried: CarriedBudget = NO_CARRIED_BUDGET
    pdb_allowed: dict[str, int] = field(default_factory=dict)  # PDB key -> disruptions left
    per_node: Counter[str] = field(default_factory=Counter)
    per_namespace: Counter[str] = field(default_factory=Counter)
    per_workload: Counter[str] = field(default_factory=Counter)
    total: int = 0

    @classmethod
    def for_round(
        cls,
        limits: Limits,
        pdbs: Iterable[PodDisruptionBudget],
        carried: CarriedBudget = NO_CARRIED_BUDGET,
    ) -> RoundBudget:
        return cls(
            limits=limits,
            carried=carried,
            pdb_allowed={p.key: p.disruptions_allowed for p in pdbs},
        )

    def total_limit(self) -> int | None:
        """The tighter of maxNoOfPodsToEvictTotal and what the window has left."""
        return _tighter(self.limits.max_no_of_pods_to_evict_total, self.carried.window_total_left)

    def namespace_limit(self, namespace: str) -> int | None:
        carried = self.carried
        window: int | None = None
        if carried.window_namespace_limit is not None:
            left = carried.window_namespace_left or {}
            window = left.get(namespace, carried.window_namespace_limit)
        return _tighter(self.limits.max_no_of_pods_to_evict_per_namespace, window)

    def workload_limit(self, workload: str) -> int | None:
        unavailable_cap: int | None = None
        if self.limits.max_unavailable_per_workload is not None:
            already = self.carried.unavailable_per_workload.get(workload, 0)
            unavailable_cap = max(self.limits.max_unavailable_per_workload - already, 0)
        return _tighter(self.limits.max_no_of_pods_to_evict_per_workload, unavailable_cap)

    def exceeded_by(self, pod: Pod, node: str, pdbs: Iterable[str]) -> str | None:
        """Name of the first budget one more eviction would exceed, or None."""
        lim = self.limits
        total = self.total_limit()
        if total is not None and self.total >= total:
            return (
                "maxNoOfPodsToEvictTotal"
                if total == lim.max_no_of_pods_to_evict_total
                else "window.maxEvictions"
            )
        if (
            lim.max_no_of_pods_to_evict_per_node is not None
            and self.per_node[node] >= lim.max_no_of_pods_to_evict_per_node
        ):
            return "maxNoOfPodsToEvictPerNode"
        namespace = self.namespace_limit(pod.namespace)
        if namespace is not None and self.per_namespace[pod.namespace] >= namespace:
            return (
                "maxNoOfPodsToEvictPerNamespace"
                if namespace == lim.max_no_of_pods_to_evict_per_namespace
                else "window.maxEvictionsPerNamespace"
            )
        key = workload_key(pod)
        workload = self.workload_limit(key)
        if workload is not None and self.per_workload[key] >= workload:
            return (
                "maxNoOfPodsToEvictPerWorkload"
                if workload == lim.max_no_of_pods_to_evict_per_workload
                else "maxUnavailablePerWorkload"
            )
        for pdb in pdbs:
            if self.pdb_allowed.get(pdb, 0) <= 0:
                return "podDisruptionBudget"
        return None

    def charge(self, pod: Pod, node: str, pdbs: Iterable[str]) -> None:
        self.total += 1
        self.per_node[node] += 1
        self.per_namespace[pod.namespace] += 1
        self.per_workload[workload_key(pod)] += 1
        for key in pdbs:
            self.pdb_allowed[key] = self.pdb_allowed.get(key, 0) - 1

    def refund(self, pod: Pod, node: str, pdbs: Iterable[str]) -> None:
        """Undo a charge: the eviction it was for will not happen."""
        self.total -= 1
        self.per_node[node] -= 1
        self.per_namespace[pod.namespace] -= 1
        self.per_workload[workload_key(pod)] -= 1
        for key in pdbs:
            self.pdb_allowed[key] += 1


def _tighter(first: int | None, second: int | None) -> int | None:
    if first is None:
        return second
    if second is None:
        return first
    return min(first, second)


def unavailable_by_workload(cluster: ClusterState) -> dict[str, int]:
    """Pods of each workload that are unavailable now: Pending, not Ready, or terminating."""
    counts: Counter[str] = Counter()
    for pod in cluster.pods:
        if pod.is_terminal or (pod.owner is None and pod.workload is None):
            continue
        if pod.node_name is None or not pod.ready or pod.deletion_timestamp is not None:
            counts[workload_key(pod)] += 1
    return dict(counts)
