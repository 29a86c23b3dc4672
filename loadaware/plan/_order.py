"""The order a plan's moves are carried out in, chosen for time to relief.

A round can end before its last eviction (a budget, a stop signal, the breaker,
lost leadership); what it did carry out should then have relieved the worst
nodes. So the moves go: the deschedule strategies' must-moves first, in the
order they were named (violations before relief); then hot node by hot node,
hottest first (`_greedy.hottest_first`: the furthest above its targets), each
node's moves together and in the order the solver planned them; then any other.

Each landing is predicted with the moves before it applied, and kube-scheduler
places the replacements in the order they are evicted: the order of prediction
and of execution must be the same. Where a solver's order differs (the exact
planner relieves nodes it left still hot greedily, after its whole selection),
the moves are predicted again from the first that changes place: one whose
landing no longer holds, or that a budget no longer allows, is dropped, and a
hot node that this leaves over its targets is relieved again, greedily, right
after its own moves.
"""

from __future__ import annotations

from collections import Counter

from loadaware.plan._greedy import Move, Solution, hottest_first, relieve_node
from loadaware.plan._placement import Placement
from loadaware.plan._problem import Problem


def relief_order(problem: Problem, moves: list[Move]) -> list[Move]:
    """The moves in the order to carry them out (see the module)."""
    rank = {hot: k for k, hot in enumerate(hottest_first(problem))}
    last = len(rank)

    def key(item: tuple[int, Move]) -> tuple[int, int, int]:
        position, move = item
        if move.candidate.must_move:
            return (0, 0, position)
        return (1, rank.get(move.candidate.node_index, last), position)

    return [move for _, move in sorted(enumerate(moves), key=key)]


def in_relief_order(problem: Problem, placement: Placement, solution: Solution) -> Solution:
    """`solution` with its moves in relief order, their landings predicted in that
    order; `solution` itself when its moves are in that order already. Where the
    order changes, `placement` holds the moves returned, in that order."""
    ordered = relief_order(problem, solution.moves)
    first = next(
        (k for k, (a, b) in enumerate(zip(ordered, solution.moves, strict=True)) if a is not b),
        None,
    )
    if first is None:
        return solution
    # The moves before `first` keep their places, so their landings hold as predicted.
    kept = solution.moves[:first]
    placement.reset()
    for move in kept:
        placement.apply(move.candidate, move.landing)
    names = problem.table.names
    budget = problem.new_budget()
    for move in kept:
        cand = move.candidate
        budget.charge(cand.pod, names[cand.node_index], cand.pdbs)
    result = Solution(
        moves=list(kept),
        usage_after=placement.usage,
        notes=dict(solution.notes),
        skipped=dict(solution.skipped),
        unplaced=dict(solution.unplaced),
        blocked={hot: Counter(c) for hot, c in solution.blocked.items()},
    )
    planned = {m.candidate.pod.key for m in solution.moves}
    # Hot nodes the solver relieved: one that the new order leaves over its
    # targets is relieved again right after its own moves.
    relieved = {h for h in problem.hot_indexes if not problem.is_hot(solution.usage_after, h)}
    rest = ordered[first:]
    for position, move in enumerate(rest):
        cand = move.candidate
        source = names[cand.node_index]
        over = budget.exceeded_by(cand.pod, source, cand.pdbs)
        if over is not None:
            result.count(over)
            if cand.must_move:
                result.unplaced[cand.pod.key] = over
        elif (found := placement.landing(cand)).reason is not None:
            result.count(found.reason)
            where = names[found.where] if found.where is not None else None
            result.block(cand.node_index, found.reason, where)
            if cand.must_move:
                result.unplaced[cand.pod.key] = found.reason
        else:
            budget.charge(cand.pod, source, cand.pdbs)
            placement.apply(cand, found)
            result.moves.append(Move.landed(cand, found))
            result.unplaced.pop(cand.pod.key, None)
        after = rest[position + 1] if position + 1 < len(rest) else None
        hot = cand.node_index
        node_done = after is None or after.candidate.node_index != hot or after.candidate.must_move
        if (
            node_done
            and not cand.must_move
            and hot in relieved
            and problem.is_hot(placement.usage, hot)
        ):
            others = [c for c in problem.candidates.get(hot, ()) if c.pod.key not in planned]
            relieve_node(problem, placement, budget, hot, others, result)
    result.usage_after = placement.usage.copy()
    return result
