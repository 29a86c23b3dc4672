"""The greedy planner: hot node by hot node, the pods whose usage best covers the excess.

It is the fallback of the exact planner and the baseline it is measured against.
Koordinator's LowNodeLoad picks pods by usage the same way; loadaware adds
nodeFit and the bounce-back check: a pod is evicted only if kube-scheduler is
predicted to place its replacement on a cool node that stays under its
targetThresholds (see _placement).

Must-move pods (deschedule strategies) go first, in the order the strategies
named them, under the same budgets; then the hot nodes, without the pods
already moved.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from loadaware.plan._budget import RoundBudget
from loadaware.plan._placement import Landing, Placement
from loadaware.plan._problem import Candidate, Problem


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Move:
    candidate: Candidate
    landing: Landing

    @classmethod
    def landed(cls, candidate: Candidate, landing: Landing) -> Move:
        return cls(candidate=candidate, landing=landing)

    @property
    def target_index(self) -> int | None:
        """None: nodeFit is off and nothing fits; it will stay Pending."""
        return self.landing.target

    @property
    def steer(self) -> tuple[int, ...]:
        """Nodes carrying the soft taint while it is scheduled."""
        return self.landing.steer

    @property
    def landing_set(self) -> tuple[int, ...]:
        """Every node it may land on: all good landings."""
        return self.landing.landing_set


@dataclass(kw_only=True, eq=False)
class Solution:
    moves: list[Move] = field(default_factory=list)
    usage_after: np.ndarray
    notes: dict[int, str] = field(default_factory=dict)  # hot node index -> why still hot
    skipped: dict[str, int] = field(default_factory=dict)
    # Must-move pods (by namespace/name) that were not moved, and why.
    unplaced: dict[str, str] = field(default_factory=dict)
    # Hot node index -> (reason, landing node) of candidates whose replacement would
    # land badly: what a note says when nothing else stopped the node's relief.
    blocked: dict[int, Counter[tuple[str, str]]] = field(default_factory=dict)

    def count(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def block(self, source: int, reason: str, where: str | None) -> None:
        self.blocked.setdefault(source, Counter())[(reason, where or "")] += 1


def solve_greedy(problem: Problem, placement: Placement | None = None) -> Solution:
    if placement is None:
        placement = Placement(problem)
    placement.reset()
    budget = problem.new_budget()
    solution = Solution(usage_after=placement.usage)
    moved = place_must_moves(problem, placement, budget, problem.must_move, solution)
    for hot in hottest_first(problem):
        remaining = list(problem.candidates.get(hot, ()))
        if moved:
            remaining = [c for c in remaining if c.pod.key not in moved]
        relieve_node(problem, placement, budget, hot, remaining, solution)
    solution.usage_after = placement.usage.copy()
    return solution


def place_must_moves(
    problem: Problem,
    placement: Placement,
    budget: RoundBudget,
    must_moves: Sequence[Candidate],
    solution: Solution,
) -> set[str]:
    """Move each must-move pod, in order, that a budget allows and whose replacement
    lands well; record the others in solution.unplaced. Returns the keys moved."""
    moved: set[str] = set()
    names = problem.table.names
    for cand in must_moves:
        source = names[cand.node_index]
        over = budget.exceeded_by(cand.pod, source, cand.pdbs)
        why = over
        found = Landing(None)
        if over is None:
            found = placement.landing(cand)
            why = found.reason
        if why is not None:
            solution.count(why)
            solution.unplaced[cand.pod.key] = why
            continue
        budget.charge(cand.pod, source, cand.pdbs)
        placement.apply(cand, found)
        solution.moves.append(Move.landed(cand, found))
        solution.unplaced.pop(cand.pod.key, None)
        moved.add(cand.pod.key)
    return moved


def hottest_first(problem: Problem) -> list[int]:
    """Hot node indexes, the furthest above its targets first, then by name."""
    table = problem.table
    ratios = table.utilisation()

    def severity(index: int) -> tuple[float, str]:
        over = np.nan_to_num(ratios[index] - table.high[index], nan=-1.0)
        return (-float(np.max(over)), table.names[index])

    return sorted(problem.hot_indexes, key=severity)


def relieve_node(
    problem: Problem,
    placement: Placement,
    budget: RoundBudget,
    hot: int,
    remaining: list[Candidate],
    solution: Solution,
) -> None:
    """Evict from one hot node, best cover first, until it is no longer hot or nothing
    more can go. Records the moves in `solution` and applies them to `placement`."""
    table = problem.table
    source = table.names[hot]
    stop_reason = ""
    if not problem.candidates.get(hot):
        stop_reason = no_candidate_note(problem.left_alone.get(hot, {}))
    elif not remaining:
        stop_reason = "every candidate is already planned to move"
    while problem.is_hot(placement.usage, hot) and remaining:
        excess = problem.node_excess(placement.usage, hot)
        pick = _best_cover(remaining, excess, table.allocatable[hot])
        if pick is None:
            stop_reason = "no candidate's usage reduces the excess"
            break
        remaining.remove(pick)
        over = budget.exceeded_by(pick.pod, source, pick.pdbs)
        if over is not None:
            solution.count(over)
            stop_reason = f"budget {over} reached"
            if over in ("maxNoOfPodsToEvictTotal", "maxNoOfPodsToEvictPerNode"):
                break
            continue
        found = placement.landing(pick)
        if found.reason is not None:
            solution.count(found.reason)
            where = table.names[found.where] if found.where is not None else None
            solution.block(hot, found.reason, where)
            stop_reason = ""
            continue
        budget.charge(pick.pod, source, pick.pdbs)
        placement.apply(pick, found)
        solution.moves.append(Move.landed(pick, found))
    if problem.is_hot(placement.usage, hot):
        blocked = solution.blocked.get(hot)
        if blocked and not stop_reason.startswith("budget"):
            stop_reason = blocked_note(blocked)
        solution.notes[hot] = f"still hot: {stop_reason or 'candidates exhausted'}"
    else:
        solution.notes.pop(hot, None)


_BLOCKED_WORDS = {
    "bounce-back": "back on a hot, excluded or source node",
    "target-over-threshold": "over its targets",
    "no-fit": "nowhere (no node fits)",
    "still-violates": "where its rule still breaks",
    "taint-cap": "only with more nodes tainted than steering.maxTaintedFraction allows",
}


def no_candidate_note(left_alone: Mapping[str, int]) -> str:
    """Why no pod of a hot node may leave: the protections, PDBs, cooldown or missing
    usage that hold each, most pods first."""
    if not left_alone:
        return "no pod on it may leave"
    reasons = sorted(left_alone.items(), key=lambda item: (-item[1], item[0]))
    return "no pod on it may leave: " + ", ".join(f"{why} {count}" for why, count in reasons)


def blocked_note(blocked: Counter[tuple[str, str]]) -> str:
    """Why candidates' replacements could not go, in words: reason and where, most
    frequent first (a few landing nodes named)."""
    total = sum(blocked.values())
    parts = []
    for (reason, where), count in blocked.most_common(3):
        words = _BLOCKED_WORDS.get(reason, reason)
        parts.append(f"{count} on {where} ({words})" if where else f"{count} {words}")
    more = total - sum(c for _, c in blocked.most_common(3))
    tail = f", {more} more" if more else ""
    return f"{total} candidates' replacements would land badly: " + ", ".join(parts) + tail


def _best_cover(
    candidates: list[Candidate], excess: np.ndarray, allocatable: np.ndarray
) -> Candidate | None:
    """The smallest pod that covers the whole excess alone, else the one covering most of it."""
    if not candidates:
        return None
    needed = excess > 0
    scale = np.where(allocatable > 0, allocatable, 1.0)
    # One matrix for all candidates: numpy calls on two-element rows, one pod at a
    # time, cost more than the choice itself on large clusters.
    usage = np.array([c.usage for c in candidates])
    covered = (np.minimum(usage, excess)[:, needed] / scale[needed]).sum(axis=1)
    covers_all = np.all(usage[:, needed] >= excess[needed], axis=1)
    size = (usage / scale).sum(axis=1)
    best: Candidate | None = None
    best_key: tuple[float, float, float, float, str] | None = None
    for i, cand in enumerate(candidates):
        cover = float(covered[i])
        if cover <= 0:
            continue
        whole = bool(covers_all[i])
        # Lower is better: prefer-no-eviction pods last, then whole cover with the least
        # overshoot, then the largest partial cover, then lower priority, then name.
        key = (
            float(cand.prefer_no_eviction),
            0.0 if whole else 1.0,
            float(size[i]) if whole else -cover,
            float(cand.pod.priority),
            cand.pod.key,
        )
        if best_key is None or key < best_key:
            best, best_key = cand, key
    return best
