"""Eviction budgets of one round: the four limits and PodDisruptionBudgets."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from loadaware.cluster import Pod, PodDisruptionBudget
from loadaware.policy import Limits


def workload_key(pod: Pod) -> str:
    """The key budgets count a pod's workload under: its top owner, else the pod itself."""
    owner = pod.workload or pod.owner
    if owner is None:
        return f"Pod/{pod.namespace}/{pod.name}"
    return f"{owner.kind}/{pod.namespace}/{owner.name}"


@dataclass(kw_only=True)
class RoundBudget:
    """Counts what a round has planned and says which limit a further eviction would break."""

    limits: Limits
    pdb_allowed: dict[str, int] = field(default_factory=dict)  # PDB key -> disruptions left
    per_node: Counter[str] = field(default_factory=Counter)
    per_namespace: Counter[str] = field(default_factory=Counter)
    per_workload: Counter[str] = field(default_factory=Counter)
    total: int = 0

    @classmethod
    def for_round(cls, limits: Limits, pdbs: Iterable[PodDisruptionBudget]) -> RoundBudget:
        return cls(limits=limits, pdb_allowed={p.key: p.disruptions_allowed for p in pdbs})

    def exceeded_by(self, pod: Pod, node: str, pdbs: Iterable[str]) -> str | None:
        """Name of the first budget one more eviction would exceed, or None."""
        lim = self.limits
        if (
            lim.max_no_of_pods_to_evict_total is not None
            and self.total >= lim.max_no_of_pods_to_evict_total
        ):
            return "maxNoOfPodsToEvictTotal"
        if (
            lim.max_no_of_pods_to_evict_per_node is not None
            and self.per_node[node] >= lim.max_no_of_pods_to_evict_per_node
        ):
            return "maxNoOfPodsToEvictPerNode"
        if (
            lim.max_no_of_pods_to_evict_per_namespace is not None
            and self.per_namespace[pod.namespace] >= lim.max_no_of_pods_to_evict_per_namespace
        ):
            return "maxNoOfPodsToEvictPerNamespace"
        if (
            lim.max_no_of_pods_to_evict_per_workload is not None
            and self.per_workload[workload_key(pod)] >= lim.max_no_of_pods_to_evict_per_workload
        ):
            return "maxNoOfPodsToEvictPerWorkload"
        for key in pdbs:
            if self.pdb_allowed.get(key, 0) <= 0:
                return "podDisruptionBudget"
        return None

    def charge(self, pod: Pod, node: str, pdbs: Iterable[str]) -> None:
        self.total += 1
        self.per_node[node] += 1
        self.per_namespace[pod.namespace] += 1
        self.per_workload[workload_key(pod)] += 1
        for key in pdbs:
            self.pdb_allowed[key] = self.pdb_allowed.get(key, 0) - 1

    @property
    def used(self) -> Mapping[str, int]:
        return {"total": self.total}
