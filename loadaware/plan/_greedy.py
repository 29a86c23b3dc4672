"""The greedy planner: hot node by hot node, the pods whose usage best covers the excess.

It is the fallback of the exact planner and the baseline it is measured against.
Koordinator's LowNodeLoad picks pods by usage the same way; loadaware adds the
target choice (furthest below its targetThresholds after the move) and nodeFit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from loadaware.plan._budget import RoundBudget
from loadaware.plan._fit import Occupancy
from loadaware.plan._problem import Candidate, Problem


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Move:
    candidate: Candidate
    target_index: int


@dataclass(kw_only=True, eq=False)
class Solution:
    moves: list[Move] = field(default_factory=list)
    usage_after: np.ndarray
    notes: dict[int, str] = field(default_factory=dict)  # hot node index -> why still hot
    skipped: dict[str, int] = field(default_factory=dict)


def solve_greedy(problem: Problem) -> Solution:
    table = problem.table
    usage = table.usage.copy()
    occupancy = Occupancy.from_cluster(problem.cluster)
    budget = RoundBudget.for_round(problem.policy.limits, problem.cluster.pdbs)
    node_fit = problem.policy.evictor.node_fit
    solution = Solution(usage_after=usage)
    targets = problem.target_indexes

    def severity(index: int) -> tuple[float, str]:
        ratio = np.nan_to_num(table.utilisation(usage)[index] - table.high[index], nan=-1.0)
        return (-float(np.max(ratio)), table.names[index])

    for hot in sorted(problem.hot_indexes, key=severity):
        source = table.names[hot]
        remaining = list(problem.candidates.get(hot, ()))
        stop_reason = "no evictable pod with fresh usage" if not remaining else ""
        while problem.is_hot(usage, hot) and remaining:
            excess = problem.node_excess(usage, hot)
            pick = _best_cover(remaining, excess, table.allocatable[hot])
            if pick is None:
                stop_reason = "no candidate's usage reduces the excess"
                break
            remaining.remove(pick)
            over = budget.exceeded_by(pick.pod, source, pick.pdbs)
            if over is not None:
                solution.skipped[over] = solution.skipped.get(over, 0) + 1
                stop_reason = f"budget {over} reached"
                if over in ("maxNoOfPodsToEvictTotal", "maxNoOfPodsToEvictPerNode"):
                    break
                continue
            target = _best_target(problem, usage, occupancy, pick, targets, node_fit)
            if target is None:
                solution.skipped["no-target"] = solution.skipped.get("no-target", 0) + 1
                stop_reason = "no node can take its pods below targetThresholds"
                continue
            budget.charge(pick.pod, source, pick.pdbs)
            occupancy.remove(pick.pod)
            occupancy.add(pick.pod, table.names[target])
            usage[hot] -= pick.usage
            usage[target] += pick.usage
            solution.moves.append(Move(candidate=pick, target_index=target))
        if problem.is_hot(usage, hot):
            solution.notes[hot] = f"still hot: {stop_reason or 'candidates exhausted'}"
    return solution


def _best_cover(
    candidates: list[Candidate], excess: np.ndarray, allocatable: np.ndarray
) -> Candidate | None:
    """The smallest pod that covers the whole excess alone, else the one covering most of it."""
    needed = excess > 0
    scale = np.where(allocatable > 0, allocatable, 1.0)
    best: Candidate | None = None
    best_key: tuple[float, ...] | None = None
    for cand in candidates:
        covered = np.minimum(cand.usage, excess)[needed] / scale[needed]
        cover = float(covered.sum())
        if cover <= 0:
            continue
        covers_all = bool(np.all(cand.usage[needed] >= excess[needed]))
        size = float((cand.usage / scale).sum())
        # Lower is better: prefer-no-eviction pods last, then whole cover with the least
        # overshoot, then the largest partial cover, then lower priority, then name.
        key = (
            float(cand.prefer_no_eviction),
            0.0 if covers_all else 1.0,
            size if covers_all else -cover,
            float(cand.pod.priority),
        )
        if best_key is None or key < best_key or (key == best_key and cand.pod.key < best.pod.key):  # type: ignore[union-attr]
            best, best_key = cand, key
    return best


def _best_target(
    problem: Problem,
    usage: np.ndarray,
    occupancy: Occupancy,
    cand: Candidate,
    targets: np.ndarray,
    node_fit: bool,
) -> int | None:
    """The fitting target that stays furthest below its targetThresholds after the move."""
    if targets.size == 0:
        return None
    table = problem.table
    after = (usage[targets] + cand.usage) / np.where(
        table.allocatable[targets] > 0, table.allocatable[targets], 1.0
    )
    slack = np.nanmin(
        np.where(np.isnan(table.high[targets]), np.inf, table.high[targets] - after), axis=1
    )
    order = np.lexsort((targets, -slack))
    for pos in order:
        if slack[pos] < 0:
            break
        index = int(targets[pos])
        if index == cand.node_index:
            continue
        if node_fit and occupancy.fit_failure(cand.pod, table.names[index]) is not None:
            continue
        return index
    return None
