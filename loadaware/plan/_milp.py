"""The exact planner: which pods leave which hot nodes, decided for the whole round at once.

A joint pod x node model is too large beyond a few hundred nodes, so the round
is solved in two stages:

1. Selection (a MILP, HiGHS through scipy.optimize.milp): one binary per
   candidate pod says whether it leaves. Rows: the overload of each hot node and
   resource (soft, with a slack weighted far above an eviction), the aggregate
   usage and request headroom of the nodes that may receive pods, the four
   limits and each PodDisruptionBudget. Objective: overload first, then the
   evictions' cost.
2. Placement certificate: the chosen evictions are replayed in the order they are
   carried out through the kube-scheduler model (_placement), keeping the moves
   that hold and relieving greedily any hot node they leave over its targets. A
   pod whose replacement would bounce back, stay Pending or push its landing node
   over its targets is banned, and stage 1 is solved again; the last replay is the
   plan. A pod refused for the taint cap is not banned: the cap is the moment's,
   and the greedy completion works around it where HiGHS, not knowing it, would
   choose pods that meet it again.

Must-move pods (deschedule strategies) are columns too, ahead of the hot
nodes' pods in the execution order, with a negative cost (MUST_MOVE_REWARD, a
tier above overload: see _problem) and the same budget, PodDisruptionBudget and
headroom rows; a must-move on a hot node counts in that node's overload rows.
A pod that is both a must-move and a hotspot candidate has two columns, of
which at most one may be chosen.

Stage 1 with no bans relaxes the real problem (aggregate headroom instead of
per-node capacity), so its dual bound is a lower bound on any plan's objective;
so is the per-node cover bound. The larger of the two is reported.

Pure: HiGHS gets a time limit of its own; nothing here reads a clock.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

from loadaware.plan._budget import workload_key
from loadaware.plan._greedy import (
    Move,
    Solution,
    hottest_first,
    place_must_moves,
    relieve_node,
)
from loadaware.plan._placement import TAINT_CAP, Placement
from loadaware.plan._problem import (
    MUST_MOVE_REWARD,
    OVERLOAD_WEIGHT,
    Candidate,
    Problem,
    eviction_cost,
)

MAX_REPAIR_ROUNDS = 6


@dataclass(frozen=True, kw_only=True)
class MilpOutcome:
    solution: Solution | None  # None: HiGHS found no incumbent in time
    lower_bound: float
    rounds: int


@dataclass(frozen=True, kw_only=True)
class Selection:
    """Stage 1 solved without bans. It needs no Placement, so it can be solved while
    something else uses one: HiGHS releases the GIL while it solves."""

    ordered: list[Candidate]
    model: _SelectionModel | None  # None: no candidate
    result: tuple[np.ndarray, float | None] | None  # as _SelectionModel.solve


def selection_model(problem: Problem) -> tuple[list[Candidate], _SelectionModel | None]:
    """Stage 1's candidates in execution order, and its model (None: no candidate)."""
    ordered = _ordered_candidates(problem)
    return ordered, (_SelectionModel(problem, ordered) if ordered else None)


def select(
    problem: Problem,
    prepared: tuple[list[Candidate], _SelectionModel | None] | None = None,
) -> Selection:
    """Stage 1 without bans, on the `prepared` selection_model when given."""
    ordered, model = prepared if prepared is not None else selection_model(problem)
    if model is None:
        return Selection(ordered=ordered, model=None, result=None)
    settings = problem.policy.optimizer
    result = model.solve(
        np.zeros(len(ordered), dtype=bool),
        time_limit=_first_share(settings.time_limit.total_seconds()),
        gap=settings.mip_rel_gap,
    )
    return Selection(ordered=ordered, model=model, result=result)


def _first_share(total: float) -> float:
    # Half the time for the first solve, the rest shared by the repairs.
    return total / 2


def solve_milp(
    problem: Problem, placement: Placement | None = None, selection: Selection | None = None
) -> MilpOutcome:
    """Stage 2 from `selection` (stage 1 solved now when not given)."""
    if selection is None:
        selection = select(problem)
    ordered, model = selection.ordered, selection.model
    if model is None:
        return MilpOutcome(solution=None, lower_bound=cover_bound(problem), rounds=0)
    if placement is None:
        placement = Placement(problem)
    settings = problem.policy.optimizer
    total = settings.time_limit.total_seconds()
    banned = np.zeros(len(ordered), dtype=bool)
    ban_reasons: dict[str, int] = {}
    blocked: dict[int, Counter[tuple[str, str]]] = {}
    unplaced: dict[str, str] = {}
    lower = cover_bound(problem)
    replayed: Solution | None = None
    rounds = 0
    for rounds in range(1, MAX_REPAIR_ROUNDS + 1):
        if rounds == 1:
            result = selection.result
        else:
            share = (total - _first_share(total)) / (MAX_REPAIR_ROUNDS - 1)
            result = model.solve(banned, time_limit=share, gap=settings.mip_rel_gap)
        if result is None:
            break
        chosen, dual_bound = result
        if rounds == 1 and dual_bound is not None:
            lower = max(lower, dual_bound)
        replayed, failed = _replay(problem, placement, ordered, chosen, banned, blocked)
        # A taint-cap refusal says how many nodes the taints of the moment would
        # need, not that the pod cannot go: banned, HiGHS picks other pods of the
        # same nodes, which meet the same cap. The replay's greedy completion has
        # relieved what they leave over.
        bannable = [f for f in failed if f[1] != TAINT_CAP]
        if not bannable or rounds == MAX_REPAIR_ROUNDS:
            break
        for i, why, where in bannable:
            banned[i] = True
            ban_reasons[why] = ban_reasons.get(why, 0) + 1
            blocked.setdefault(ordered[i].node_index, Counter())[
                (why, problem.table.names[where] if where is not None else "")
            ] += 1
            if ordered[i].must_move:
                unplaced[ordered[i].pod.key] = why
        replayed = None
    if replayed is None:
        return MilpOutcome(solution=None, lower_bound=lower, rounds=rounds)
    solution = replayed
    for why, count in ban_reasons.items():
        solution.skipped[why] = solution.skipped.get(why, 0) + count
    moved = {m.candidate.pod.key for m in solution.moves}
    for key, why in unplaced.items():
        if key not in moved:
            solution.unplaced.setdefault(key, why)
    return MilpOutcome(solution=solution, lower_bound=lower, rounds=rounds)


def _ordered_candidates(problem: Problem) -> list[Candidate]:
    """Candidates that could move at all, in the order evictions will be executed:
    hottest node first, then the larger pods of each node first."""
    table = problem.table
    if problem.target_indexes.size == 0:
        return [c for c in problem.must_move if c.terminal]
    targets = problem.target_indexes
    headroom = table.headroom(targets)
    biggest_room = headroom.max(axis=0)
    ratios = table.utilisation()
    # Violations first, in the order the strategies named them; a must-move too big
    # for any receiving node cannot move (it is reported as unplaced).
    order: list[Candidate] = [
        c for c in problem.must_move if c.terminal or np.all(c.usage <= biggest_room)
    ]

    def severity(index: int) -> tuple[float, str]:
        over = np.nan_to_num(ratios[index] - table.high[index], nan=-1.0)
        return (-float(np.max(over)), table.names[index])

    for hot in sorted(problem.hot_indexes, key=severity):
        candidates = problem.candidates.get(hot, ())
        if not candidates:
            continue
        scale = np.where(table.allocatable[hot] > 0, table.allocatable[hot], 1.0)
        usage = np.array([c.usage for c in candidates])
        # A pod whose usage exceeds every receiving node's headroom cannot move anywhere.
        movable = np.all(usage <= biggest_room, axis=1) & np.any(usage > 0, axis=1)
        size = (usage / scale).sum(axis=1).tolist()
        # Larger pods first; the pod key (unique) breaks ties, never the index.
        ranked = sorted(
            (-size[i], c.pod.key, i)
            for i, (c, keep) in enumerate(zip(candidates, movable.tolist(), strict=True))
            if keep
        )
        order.extend(candidates[i] for _size, _key, i in ranked)
    return order


class _SelectionModel:
    """Stage 1: x_p (leave or stay) per candidate, s_hr overload slack per hot node and resource."""

    def __init__(self, problem: Problem, candidates: list[Candidate]) -> None:
        table = problem.table
        count = len(candidates)
        hot_rows: list[tuple[int, int, float]] = []  # (hot node, resource, excess ratio)
        for hot in problem.hot_indexes:
            excess = problem.node_excess(table.usage, hot)
            for r in np.flatnonzero(excess > 0):
                hot_rows.append((hot, int(r), float(excess[r] / table.allocatable[hot, r])))
        self.count = count
        slack = len(hot_rows)
        width = count + slack
        cost = np.concatenate(
            [[eviction_cost(c) for c in candidates], np.full(slack, OVERLOAD_WEIGHT)]
        )
        rows: list[sparse.csr_array] = []
        lower: list[float] = []
        upper: list[float] = []

        by_node: dict[int, list[int]] = defaultdict(list)
        for i, cand in enumerate(candidates):
            by_node[cand.node_index].append(i)

        # Overload: sum of the leaving pods' usage plus the slack covers the excess.
        if hot_rows:
            data, row_ids, col_ids = [], [], []
            for k, (hot, r, excess_ratio) in enumerate(hot_rows):
                for i in by_node.get(hot, ()):
                    share = candidates[i].usage[r] / table.allocatable[hot, r]
                    if share > 0:
                        data.append(share)
                        row_ids.append(k)
                        col_ids.append(i)
                data.append(1.0)
                row_ids.append(k)
                col_ids.append(count + k)
                lower.append(excess_ratio)
                upper.append(np.inf)
            rows.append(sparse.csr_array((data, (row_ids, col_ids)), shape=(len(hot_rows), width)))

        # Aggregate headroom of the receiving nodes, in usage and in requests.
        targets = problem.target_indexes
        usage = np.array([c.usage for c in candidates])
        room = table.headroom(targets).sum(axis=0)
        # A failed pod's replacement, if any, exists already: it takes no room.
        requests = np.array(
            [
                [0, 0] if c.terminal else [c.pod.cpu_request_millicores, c.pod.memory_request_bytes]
                for c in candidates
            ],
            dtype=float,
        ).reshape(count, 2)
        free = _free_requests(problem)
        for column, capacity in (
            *((usage[:, r], room[r]) for r in range(usage.shape[1])),
            *((requests[:, r], free[r]) for r in range(requests.shape[1])),
        ):
            if not np.isfinite(capacity) or capacity <= 0 or column.max(initial=0) <= 0:
                continue
            scaled = np.concatenate([column / capacity, np.zeros(slack)])
            rows.append(sparse.csr_array(scaled.reshape(1, -1)))
            lower.append(-np.inf)
            upper.append(1.0)

        # Budgets: the four limits and PodDisruptionBudgets.
        budget = problem.new_budget()
        per_node = problem.policy.limits.max_no_of_pods_to_evict_per_node
        groups: list[tuple[list[int], int]] = []
        total = budget.total_limit()
        if total is not None and total < count:
            groups.append((list(range(count)), total))
        for limit_of, key_of in (
            (lambda _key: per_node, lambda c: str(c.node_index)),
            (budget.namespace_limit, lambda c: c.pod.namespace),
            (budget.workload_limit, lambda c: workload_key(c.pod)),
        ):
            members: dict[str, list[int]] = defaultdict(list)
            for i, cand in enumerate(candidates):
                members[key_of(cand)].append(i)
            for key, member_list in members.items():
                limit = limit_of(key)
                if limit is not None and len(member_list) > limit:
                    groups.append((member_list, limit))
        allowed = {p.key: p.disruptions_allowed for p in problem.cluster.pdbs}
        covered: dict[str, list[int]] = defaultdict(list)
        for i, cand in enumerate(candidates):
            for key in cand.pdbs:
                covered[key].append(i)
        groups.extend(
            (m, max(allowed.get(k, 0), 0)) for k, m in covered.items() if len(m) > allowed.get(k, 0)
        )
        # A pod both must move and relieves a hotspot: one eviction at most.
        if problem.must_move:
            columns: dict[str, list[int]] = defaultdict(list)
            for i, cand in enumerate(candidates):
                columns[cand.pod.key].append(i)
            groups.extend((m, 1) for m in columns.values() if len(m) > 1)
        if groups:
            data, row_ids, col_ids = [], [], []
            for k, (members_list, limit) in enumerate(groups):
                data.extend([1.0] * len(members_list))
                row_ids.extend([k] * len(members_list))
                col_ids.extend(members_list)
                lower.append(-np.inf)
                upper.append(float(limit))
            rows.append(sparse.csr_array((data, (row_ids, col_ids)), shape=(len(groups), width)))

        self.cost = cost
        self.matrix = sparse.vstack(rows, format="csr") if rows else None
        self.lower = np.array(lower)
        self.upper = np.array(upper)
        self.integrality = np.concatenate([np.ones(count), np.zeros(slack)])
        self.slack = slack

    def solve(
        self, banned: np.ndarray, *, time_limit: float, gap: float
    ) -> tuple[np.ndarray, float | None] | None:
        """(chosen mask, dual bound) or None when HiGHS has no incumbent."""
        upper = np.concatenate([np.where(banned, 0.0, 1.0), np.full(self.slack, np.inf)])
        constraints = (
            [LinearConstraint(self.matrix, self.lower, self.upper)]
            if self.matrix is not None
            else []
        )
        result = milp(
            c=self.cost,
            integrality=self.integrality,
            bounds=Bounds(np.zeros(len(self.cost)), upper),
            constraints=constraints,
            options={"time_limit": max(time_limit, 0.05), "mip_rel_gap": gap, "disp": False},
        )
        if result.x is None:
            return None
        dual = getattr(result, "mip_dual_bound", None)
        if dual is not None and not np.isfinite(dual):
            dual = None
        chosen = result.x[: self.count] > 0.5
        return chosen, (float(dual) if dual is not None else None)


def _free_requests(problem: Problem) -> np.ndarray:
    nodes = problem.cluster.nodes_by_name
    free = np.zeros(2)
    for i in problem.target_indexes:
        node = nodes[problem.table.names[int(i)]]
        pods = problem.cluster.pods_by_node.get(node.name, ())
        free[0] += max(
            node.allocatable_cpu_millicores - sum(p.cpu_request_millicores for p in pods), 0
        )
        free[1] += max(node.allocatable_memory_bytes - sum(p.memory_request_bytes for p in pods), 0)
    return free


def _replay(
    problem: Problem,
    placement: Placement,
    ordered: list[Candidate],
    chosen: np.ndarray,
    banned: np.ndarray,
    blocked: dict[int, Counter[tuple[str, str]]],
) -> tuple[Solution, list[tuple[int, str, int | None]]]:
    """The chosen evictions replayed in the order they are carried out (_order), each
    landing predicted with the moves before it applied, and the chosen candidates
    whose replacement would not land well: their position in `ordered`, why, and on
    which node.

    A hot node still hot after its chosen moves (HiGHS stops within its gap, and a
    chosen pod may fail to land) is relieved greedily right after them: a hot node
    receives no replacement, so what it uses then is what it ends with, and the
    moves stay in relief order with no second prediction."""
    placement.reset()
    names = problem.table.names
    picks = np.flatnonzero(chosen).tolist()
    budget = problem.new_budget()
    # HiGHS chose within the budgets: a node relieved greedily on the way must not
    # spend what a later chosen move needs. A chosen move that fails gives it back.
    for i in picks:
        cand = ordered[i]
        budget.charge(cand.pod, names[cand.node_index], cand.pdbs)
    solution = Solution(
        usage_after=placement.usage, blocked={h: Counter(c) for h, c in blocked.items()}
    )
    taken = {ordered[i].pod.key for i in (*picks, *np.flatnonzero(banned).tolist())}
    failed: list[tuple[int, str, int | None]] = []

    def place(i: int) -> None:
        cand = ordered[i]
        found = placement.landing(cand)
        if found.reason is None:
            placement.apply(cand, found)
            solution.moves.append(Move.landed(cand, found))
            return
        # Still taken: the greedy completion would predict it again, to the same end.
        budget.refund(cand.pod, names[cand.node_index], cand.pdbs)
        failed.append((i, found.reason, found.where))
        solution.count(found.reason)
        solution.block(
            cand.node_index, found.reason, names[found.where] if found.where is not None else None
        )
        if cand.must_move:
            solution.unplaced[cand.pod.key] = found.reason

    by_node: dict[int, list[int]] = defaultdict(list)
    for i in picks:
        if ordered[i].must_move:
            place(i)
        else:
            by_node[ordered[i].node_index].append(i)
    # Must-moves HiGHS left out (within its gap, or too big for the aggregate
    # headroom) are tried again in order; the reasons they fail are recorded.
    rest_must = [c for c in problem.must_move if c.pod.key not in taken]
    if rest_must:
        taken |= place_must_moves(problem, placement, budget, rest_must, solution)
    for hot in hottest_first(problem):
        for i in by_node.get(hot, ()):
            place(i)
        if problem.is_hot(placement.usage, hot):
            rest = [c for c in problem.candidates.get(hot, ()) if c.pod.key not in taken]
            relieve_node(problem, placement, budget, hot, rest, solution)
    solution.usage_after = placement.usage.copy()
    return solution, failed


def cover_bound(problem: Problem) -> float:
    """Per hot node, the cheapest mix of evictions and residual overload if its largest
    pods could leave with no other constraint; summed over hot nodes."""
    table = problem.table
    total = 0.0
    per_node_limit = problem.policy.limits.max_no_of_pods_to_evict_per_node
    # Each must-move costs at least 1 - MUST_MOVE_REWARD; counting its reward in full
    # here and its pod among its node's candidates keeps the bound valid.
    must_on: dict[int, list[Candidate]] = defaultdict(list)
    for cand in problem.must_move:
        must_on[cand.node_index].append(cand)
        total -= MUST_MOVE_REWARD
    for hot in problem.hot_indexes:
        # A resource the node's pool does not judge may have no capacity there (0).
        scale = np.where(table.allocatable[hot] > 0, table.allocatable[hot], 1.0)
        excess = problem.node_excess(table.usage, hot) / scale
        cands = problem.candidates.get(hot, ())
        if hot in must_on:
            known = {c.pod.key for c in cands}
            cands = (*cands, *(c for c in must_on[hot] if c.pod.key not in known))
        shares = np.array([c.usage for c in cands]) / scale if cands else np.zeros((0, excess.size))
        # Largest first per resource, independently: a relaxation of picking pods.
        top = -np.sort(-shares, axis=0)
        covered = np.vstack([np.zeros((1, excess.size)), np.cumsum(top, axis=0)])
        most = len(cands) if per_node_limit is None else min(len(cands), per_node_limit)
        values = [
            k + OVERLOAD_WEIGHT * float(np.maximum(excess - covered[k], 0.0).sum())
            for k in range(most + 1)
        ]
        total += min(values)
    return total
