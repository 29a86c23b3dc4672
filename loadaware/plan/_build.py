"""build_plan: ClusterState + Usage + Policy (+ the time) in, Plan out."""

from __future__ import annotations

import datetime
from collections import Counter

import numpy as np

from loadaware import metrics
from loadaware.cluster import ClusterState
from loadaware.errors import RefusedError
from loadaware.metrics import Usage
from loadaware.plan import _candidates, _classify, _greedy, _milp
from loadaware.plan._budget import NO_CARRIED_BUDGET, CarriedBudget, workload_key
from loadaware.plan._placement import Placement
from loadaware.plan._problem import Candidate, Problem, plan_objective
from loadaware.plan._types import (
    RESOURCES,
    Eviction,
    NodeReport,
    Plan,
    SolverInfo,
    SolverMethod,
)
from loadaware.policy import LoadAwarePolicy


def build_plan(
    cluster: ClusterState,
    usage: Usage,
    policy: LoadAwarePolicy,
    now: datetime.datetime,
    *,
    carried: CarriedBudget = NO_CARRIED_BUDGET,
    source_nodes: frozenset[str] | None = None,
) -> Plan:
    """Decide which pods to evict from hot nodes and where their replacements should land.

    `carried` is what earlier rounds used of the budgets spanning rounds;
    `source_nodes`, when given, limits which hot nodes pods may leave (an alert
    names the node it is about). Deterministic: the same inputs give the same Plan.
    Refusals (stale or implausible metrics) are a Plan with status "refused", not an
    exception.
    """
    try:
        verdict = metrics.judge_usage(usage, _node_scopes(cluster), policy.metrics, now)
    except RefusedError as exc:
        return Plan(status="refused", reason=f"{exc.reference}: {exc.message}")

    table = _classify.classify_nodes(cluster, usage, policy.node_pools, verdict.excluded_nodes)
    problem, skipped = _build_problem(
        cluster, usage, policy, table, verdict.stale_pods, now, carried, source_nodes
    )
    hot = problem.hot_indexes
    if not hot:
        return Plan(
            status="noop",
            reason="no hot nodes",
            nodes=_node_reports(table, table.usage, {}),
            solver=SolverInfo(method="none"),
        )

    solution, method, lower_bound = _solve(problem)
    skipped.update(solution.skipped)
    evictions = tuple(
        Eviction(
            pod=move.candidate.pod.key,
            uid=move.candidate.pod.uid,
            node=table.names[move.candidate.node_index],
            expected_node=(
                table.names[move.target_index] if move.target_index is not None else None
            ),
            cpu_cores=float(move.candidate.usage[0]),
            memory_bytes=float(move.candidate.usage[1]),
            reason="hotspot",
            workload=workload_key(move.candidate.pod),
        )
        for move in solution.moves
    )
    objective = plan_objective(problem, solution.usage_after, [m.candidate for m in solution.moves])
    still_hot = [i for i in hot if problem.is_hot(solution.usage_after, i)]
    reason = f"{len(hot)} hot nodes; {len(evictions)} evictions planned"
    if still_hot:
        reason += f"; {len(still_hot)} stay hot"
    return Plan(
        status="planned" if evictions else "noop",
        reason=reason if evictions else f"{len(hot)} hot nodes, but no eviction can relieve them",
        evictions=evictions,
        nodes=_node_reports(table, solution.usage_after, solution.notes),
        solver=SolverInfo(
            method=method,
            objective=round(objective, 6),
            lower_bound=round(lower_bound, 6) if lower_bound is not None else None,
        ),
        skipped=dict(sorted(skipped.items())),
    )


def _solve(problem: Problem) -> tuple[_greedy.Solution, SolverMethod, float | None]:
    """Run the configured solver. The MILP also runs the greedy and keeps the better
    plan (scipy's milp takes no starting solution), and falls back to it when HiGHS
    has no incumbent in time."""
    placement = Placement(problem)
    greedy = _greedy.solve_greedy(problem, placement)
    if problem.policy.optimizer.method == "greedy":
        return greedy, "greedy", _milp.cover_bound(problem)
    outcome = _milp.solve_milp(problem, placement)
    if outcome.solution is None:
        return greedy, "greedy", outcome.lower_bound

    def value(solution: _greedy.Solution) -> float:
        return plan_objective(problem, solution.usage_after, [m.candidate for m in solution.moves])

    exact = outcome.solution
    if value(exact) <= value(greedy) + 1e-9:
        return exact, "milp", outcome.lower_bound
    return greedy, "greedy", outcome.lower_bound


def _node_scopes(cluster: ClusterState) -> dict[str, metrics.NodeScope]:
    return {
        node.name: metrics.NodeScope(
            allocatable_cpu_cores=node.allocatable_cpu_millicores / 1000,
            allocatable_memory_bytes=node.allocatable_memory_bytes,
            pod_keys=tuple(p.key for p in cluster.pods_by_node.get(node.name, ())),
        )
        for node in cluster.nodes
    }


def _build_problem(
    cluster: ClusterState,
    usage: Usage,
    policy: LoadAwarePolicy,
    table: _classify.NodeTable,
    stale_pods: frozenset[str],
    now: datetime.datetime,
    carried: CarriedBudget,
    source_nodes: frozenset[str] | None,
) -> tuple[Problem, Counter[str]]:
    rules = _candidates.EvictionRules.from_policy(policy.evictor, cluster)
    skipped: Counter[str] = Counter()
    by_node: dict[int, tuple[Candidate, ...]] = {}
    for index, node_class in enumerate(table.classes):
        if node_class != "hot":
            continue
        if source_nodes is not None and table.names[index] not in source_nodes:
            by_node[index] = ()
            continue
        found: list[Candidate] = []
        for pod in cluster.pods_by_node.get(table.names[index], ()):
            judged = _candidates.judge_pod(pod, rules, now)
            if not judged.evictable:
                skipped[judged.reason or "protected"] += 1
                continue
            if workload_key(pod) in carried.cooling_workloads:
                # Moved by an earlier round within limits.cooldown: leave it settle.
                skipped["cooldown"] += 1
                continue
            if pod.key in stale_pods:
                # Without a fresh sample the relief of moving it is unknown.
                skipped["no-fresh-usage"] += 1
                continue
            sample = usage.pods[pod.key]
            found.append(
                Candidate(
                    pod=pod,
                    node_index=index,
                    usage=np.array([sample.cpu_cores, sample.memory_bytes]),
                    prefer_no_eviction=judged.prefer_no_eviction,
                    pdbs=tuple(p.key for p in _candidates.pdbs_covering(pod, rules)),
                )
            )
        by_node[index] = tuple(found)
    nodes = cluster.nodes_by_name
    targets = np.array(
        [
            i
            for i, c in enumerate(table.classes)
            if c in ("cold", "normal") and not nodes[table.names[i]].unschedulable
        ],
        dtype=np.int64,
    )
    return (
        Problem(
            cluster=cluster,
            policy=policy,
            table=table,
            candidates=by_node,
            target_indexes=targets,
            carried=carried,
        ),
        skipped,
    )


def _node_reports(
    table: _classify.NodeTable, usage_after: np.ndarray, notes: dict[int, str]
) -> tuple[NodeReport, ...]:
    before = table.utilisation()
    after = table.utilisation(usage_after)
    return tuple(
        NodeReport(
            name=name,
            node_class=table.classes[i],
            pool=table.pools[i],
            before={r: round(float(before[i, k]), 4) for k, r in enumerate(RESOURCES)},
            after={r: round(float(after[i, k]), 4) for k, r in enumerate(RESOURCES)},
            note=notes.get(i, table.notes[i]),
        )
        for i, name in enumerate(table.names)
    )
