"""The planning problem of one round, built once and shared by the solvers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from loadaware.cluster import ClusterState, Pod
from loadaware.plan._classify import NodeTable
from loadaware.policy import LoadAwarePolicy


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Candidate:
    """A pod on a hot node that may be evicted."""

    pod: Pod
    node_index: int
    usage: np.ndarray  # (resources,) cores and bytes
    prefer_no_eviction: bool
    pdbs: tuple[str, ...]  # keys of the PodDisruptionBudgets it is charged to


@dataclass(frozen=True, kw_only=True, eq=False)
class Problem:
    cluster: ClusterState
    policy: LoadAwarePolicy
    table: NodeTable
    candidates: Mapping[int, tuple[Candidate, ...]]  # hot node index -> its candidates
    target_indexes: np.ndarray  # nodes that may receive pods: not hot, not excluded, schedulable

    @property
    def hot_indexes(self) -> list[int]:
        return [i for i, c in enumerate(self.table.classes) if c == "hot"]

    def node_excess(self, usage: np.ndarray, index: int) -> np.ndarray:
        """Usage above the node's targetThresholds per resource (0 where under or unjudged)."""
        limit = self.table.high[index] * self.table.allocatable[index]
        excess = np.where(np.isnan(limit), 0.0, usage[index] - np.nan_to_num(limit))
        return np.maximum(excess, 0.0)

    def is_hot(self, usage: np.ndarray, index: int) -> bool:
        return bool(np.any(self.node_excess(usage, index) > 1e-9))
