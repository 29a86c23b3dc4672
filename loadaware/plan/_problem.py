"""The planning problem of one round, built once and shared by the solvers."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from loadaware.cluster import ClusterState, Pod
from loadaware.plan._budget import NO_CARRIED_BUDGET, CarriedBudget, RoundBudget
from loadaware.plan._classify import NodeTable
from loadaware.policy import LoadAwarePolicy

# The rule of hotspot relief; must-move candidates carry their strategy's name instead.
HOTSPOT = "hotspot"

# A move already applied in a replay: (pod, source node, landing node or None).
AppliedMove = tuple[Pod, str, str | None]
# Whether a replacement landing on the named node no longer breaks the rule that
# made the pod a must-move, given the moves applied before it.
LandingCheck = Callable[[str, Sequence[AppliedMove]], bool]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Candidate:
    """A pod that may be evicted: from a hot node (reason "hotspot"), or a must-move
    named by a deschedule strategy, on any node in the round."""

    pod: Pod
    node_index: int
    usage: np.ndarray  # (resources,) cores and bytes
    prefer_no_eviction: bool
    pdbs: tuple[str, ...]  # keys of the PodDisruptionBudgets it is charged to
    reason: str = HOTSPOT
    profile: str = "default"
    # Must-moves only: None when any landing that passes nodeFit resolves the violation.
    landing_check: LandingCheck | None = None
    # A Failed pod (RemoveFailedPods): it holds nothing and needs no landing.
    terminal: bool = False

    @property
    def must_move(self) -> bool:
        return self.reason != HOTSPOT


@dataclass(frozen=True, kw_only=True, eq=False)
class Problem:
    cluster: ClusterState
    policy: LoadAwarePolicy
    table: NodeTable
    candidates: Mapping[int, tuple[Candidate, ...]]  # hot node index -> its candidates
    # Hot node index -> why its other pods are not candidates (reason -> pods).
    left_alone: Mapping[int, Mapping[str, int]] = field(default_factory=dict)
    target_indexes: np.ndarray  # nodes that may receive pods: not hot, not excluded, schedulable
    carried: CarriedBudget = NO_CARRIED_BUDGET
    # Pods deschedule strategies name, in the order they are to be taken: before any
    # hotspot relief, since violations come first. A pod on a hot node may also be
    # among `candidates`; at most one of the two leaves.
    must_move: tuple[Candidate, ...] = ()

    def new_budget(self) -> RoundBudget:
        return RoundBudget.for_round(self.policy.limits, self.cluster.pdbs, self.carried)

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


# One unit of residual overload (a whole node's allocatable of one resource above
# its targetThresholds) outweighs this many evictions. Large enough that relief
# comes first (0.1 percentage point of overload is worth one eviction), small
# enough to keep HiGHS numerically comfortable.
OVERLOAD_WEIGHT = 1000.0
# A must-move eviction is worth this much: more than any one eviction can gain by
# relieving overload (a pod's usage is at most twice its node's allocatable per
# resource, so at most 4 * OVERLOAD_WEIGHT), so the solvers take every must-move a
# budget allows first, then relieve hotspots with what is left: a lexicographic
# tier above overload, as the descheduler runs deschedule plugins before balance ones.
MUST_MOVE_REWARD = 10 * OVERLOAD_WEIGHT
# Evicting a pod marked prefer-no-eviction costs this much more than another.
PREFER_NO_EVICTION_COST = 0.2
# Tie-breaks between otherwise equal pods (priority, deletion cost) stay below this.
TIE_BREAK_SPAN = 0.01
DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"


def _squash(value: float) -> float:
    """An int32-ranged value into [0, 1], monotonically, on a log scale: small
    differences near zero (deletion costs of -5 and 100) stay far apart enough for
    the solver's tolerances, and 2,000,000,000 still fits."""
    limit = math.log1p(2**31)
    clamped = max(min(value, 2**31), -(2**31))
    return 0.5 + 0.5 * math.copysign(math.log1p(abs(clamped)), clamped) / limit


def eviction_cost(candidate: Candidate) -> float:
    """1 per eviction, plus a small premium for pods that are costlier to disturb:
    prefer-no-eviction, higher priority, higher pod-deletion-cost, older, fewer
    restarts; minus MUST_MOVE_REWARD for a must-move."""
    pod = candidate.pod
    cost = 1.0 + (PREFER_NO_EVICTION_COST if candidate.prefer_no_eviction else 0.0)
    priority = _squash(pod.priority)
    try:
        deletion = _squash(float(pod.annotations.get(DELETION_COST_ANNOTATION, "0")))
    except ValueError:
        deletion = _squash(0.0)
    # Older pods (warm caches, long-held connections) cost a little more to move;
    # pods that keep restarting cost a little less. The creation time ranks age
    # without a clock: unix seconds stay below 2**32 until 2106.
    created = pod.creation_timestamp
    age = 1.0 - min(max(created.timestamp(), 0.0), 2.0**32) / 2.0**32 if created else 0.0
    restarts = pod.restart_count / (pod.restart_count + 10.0)
    cost += TIE_BREAK_SPAN * (
        0.45 * priority + 0.35 * deletion + 0.1 * age + 0.09 * (1.0 - restarts)
    )
    return cost - MUST_MOVE_REWARD if candidate.must_move else cost


def residual_overload(problem: Problem, usage: np.ndarray) -> float:
    """Sum over hot nodes and resources of utilisation above targetThresholds (ratio units)."""
    table = problem.table
    hot = problem.hot_indexes
    if not hot:
        return 0.0
    ratios = table.utilisation(usage)[hot]
    over = np.nan_to_num(ratios - table.high[hot], nan=0.0)
    return float(np.maximum(over, 0.0).sum())


def plan_objective(problem: Problem, usage_after: np.ndarray, evicted: list[Candidate]) -> float:
    """The value both solvers minimise: overload first, then the cost of the evictions."""
    return OVERLOAD_WEIGHT * residual_overload(problem, usage_after) + sum(
        eviction_cost(c) for c in evicted
    )
