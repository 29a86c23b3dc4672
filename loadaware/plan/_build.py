"""build_plan: ClusterState + Usage + Policy (+ the time) in, Plan out."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime
from collections import Counter

import numpy as np

from loadaware import gc_freeze, metrics, scheduling
from loadaware.cluster import ClusterState, Pod
from loadaware.errors import RefusedError
from loadaware.metrics import Usage
from loadaware.plan import (
    _candidates,
    _classify,
    _consolidate,
    _greedy,
    _milp,
    _order,
    _placement,
    _profiles,
    strategies,
)
from loadaware.plan._basis import LandingBasis
from loadaware.plan._budget import NO_CARRIED_BUDGET, CarriedBudget, workload_key
from loadaware.plan._placement import Placement
from loadaware.plan._problem import HOTSPOT, Candidate, Problem, plan_objective
from loadaware.plan._types import (
    ConsolidationReport,
    Eviction,
    NodeReport,
    Plan,
    Refusal,
    SolverInfo,
    SolverMethod,
)
from loadaware.policy import BUILTIN_RESOURCES, LoadAwarePolicy

# Evictor reasons that put a pod outside a profile's scope rather than protect it.
OUT_OF_SCOPE = frozenset({"namespace-excluded", "label-selector"})


# A round builds hundreds of thousands of objects that live until it ends (the
# candidates, the occupancy's indexes) and forms next to no cycles: with the
# collector on, its full collections walk them again and again, 1-2 s at
# 150,000 pods, to free a few dozen objects.
@gc_freeze.paused()
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
    planned, _basis = plan_with_basis(
        cluster, usage, policy, now, carried=carried, source_nodes=source_nodes
    )
    return planned


@gc_freeze.paused()
def plan_with_basis(
    cluster: ClusterState,
    usage: Usage,
    policy: LoadAwarePolicy,
    now: datetime.datetime,
    *,
    carried: CarriedBudget = NO_CARRIED_BUDGET,
    source_nodes: frozenset[str] | None = None,
) -> tuple[Plan, LandingBasis | None]:
    """build_plan, and what it was made on for the LandingControl that carries it
    out (LandingControl.from_basis): None when the plan has no evictions. The same
    Plan as build_plan's, from the same inputs."""
    try:
        assessment = metrics.assess_usage(
            usage, _classify.node_scopes(cluster, policy.node_pools), policy.metrics, now
        )
    except RefusedError as exc:
        refused = Plan(
            status="refused",
            reason=exc.summary(),
            refusal=Refusal(code=exc.reference, message=exc.message),
        )
        return refused, None

    table = classify_for_plan(cluster, usage, policy, assessment)
    profiles = _profiles.scoped_profiles(policy, cluster)
    tally = _profiles.Tally()
    problem, skipped = _build_problem(
        cluster,
        usage,
        policy,
        table,
        assessment.stale_pods,
        now,
        carried,
        source_nodes,
        profiles,
        tally,
    )
    hot = problem.hot_indexes
    consolidating = policy.consolidation.enabled
    if not hot and not problem.must_move and not consolidating:
        named = sum(c.skipped for rules in tally.as_plan().values() for c in rules.values())
        nothing = Plan(
            status="noop",
            reason="no hot nodes"
            + (f"; {named} pods named by deschedule strategies cannot move" if named else ""),
            nodes=_node_reports(table, table.usage, {}),
            solver=SolverInfo(method="none"),
            skipped=dict(sorted(skipped.items())),
            profiles=tally.as_plan(),
        )
        return nothing, None

    solution, method, lower_bound, placement = _solve(problem)
    # Violations first, then the hottest nodes' moves: the order the evictor keeps.
    solution = _order.in_relief_order(problem, placement, solution)
    skipped.update(solution.skipped)
    moves = list(solution.moves)
    planned_keys = {m.candidate.pod.key for m in moves}
    for move in moves:
        tally.planned[(move.candidate.profile, move.candidate.reason)] += 1
    for cand in problem.must_move:
        if cand.pod.key not in planned_keys:
            why = solution.unplaced.get(cand.pod.key, "not-chosen")
            tally.skip(cand.profile, cand.reason, why)
    consolidation: ConsolidationReport | None = None
    usage_after = solution.usage_after
    if consolidating:
        placement.reset()
        for move in moves:
            placement.apply(move.candidate, move.landing)
        extra, consolidation = _consolidate.consolidate(
            problem, placement, profiles, moves, now, usage, assessment.stale_pods, source_nodes
        )
        for move in extra:
            tally.declare(move.candidate.profile, move.candidate.reason)
            tally.planned[(move.candidate.profile, move.candidate.reason)] += 1
        moves = [*moves, *extra]
        usage_after = placement.usage.copy()
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
            reason=move.candidate.reason,
            workload=workload_key(move.candidate.pod),
            steer=tuple(sorted(table.names[i] for i in move.steer)),
            landing_set=tuple(sorted(table.names[i] for i in move.landing_set)),
            named={
                r: float(move.candidate.usage[k])
                for k, r in enumerate(table.resources)
                if r not in BUILTIN_RESOURCES
            },
        )
        for move in moves
    )
    objective = plan_objective(problem, solution.usage_after, [m.candidate for m in solution.moves])
    still_hot = [i for i in hot if problem.is_hot(usage_after, i)]
    would_relieve = _steering_would_relieve(problem, len(still_hot)) if still_hot else None
    must = sum(1 for e in evictions if e.reason != HOTSPOT)
    reason = f"{len(hot)} hot nodes; {len(evictions)} evictions planned"
    if must:
        reason += f" ({must} for deschedule strategies or consolidation)"
    if still_hot:
        reason += f"; {len(still_hot)} stay hot"
    if not evictions:
        reason = (
            f"{len(hot)} hot nodes, but no eviction can relieve them"
            if hot
            else "no hot nodes, and nothing the strategies name can move"
        )
    if would_relieve:
        reason += f"; steering (steering.softTaint) would relieve {would_relieve} more"
    planned = Plan(
        status="planned" if evictions else "noop",
        reason=reason,
        evictions=evictions,
        nodes=_node_reports(table, usage_after, solution.notes),
        solver=SolverInfo(
            method=method,
            objective=round(objective, 6),
            lower_bound=round(lower_bound, 6) if lower_bound is not None else None,
        ),
        skipped=dict(sorted(skipped.items())),
        profiles=tally.as_plan(),
        consolidation=consolidation,
        steering_would_relieve=would_relieve,
    )
    if not evictions:
        return planned, None
    # The placement still holds the moves of the last replay; the control undoes them.
    basis = LandingBasis(
        problem=problem, placement=placement, candidates=tuple(m.candidate for m in moves)
    )
    return planned, basis


def _steering_would_relieve(problem: Problem, still_hot: int) -> int | None:
    """With steering off, how many more hot nodes the greedy relieves with it on."""
    settings = problem.policy
    if settings.steering.soft_taint:
        return None
    steered = settings.model_copy(
        update={"steering": settings.steering.model_copy(update={"soft_taint": True})}
    )
    trial = dataclasses.replace(problem, policy=steered)
    solution = _greedy.solve_greedy(trial)
    left = sum(1 for i in problem.hot_indexes if problem.is_hot(solution.usage_after, i))
    return max(still_hot - left, 0)


def _solve(
    problem: Problem,
) -> tuple[_greedy.Solution, SolverMethod, float | None, Placement]:
    """Run the configured solver. The MILP also runs the greedy and keeps the better
    plan (scipy's milp takes no starting solution), and falls back to it when HiGHS
    has no incumbent in time. The Placement is returned for further replays."""
    if problem.policy.optimizer.method == "greedy":
        placement = Placement(problem)
        greedy = _greedy.solve_greedy(problem, placement)
        return greedy, "greedy", _milp.cover_bound(problem), placement
    # Stage 1 needs no Placement and HiGHS releases the GIL while it solves, so it
    # runs beside the greedy: on two cores the greedy costs little more than nothing.
    # Its model is built first, as building it beside the greedy would share one core.
    prepared = _milp.selection_model(problem)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        selection = pool.submit(_milp.select, problem, prepared)
        placement = Placement(problem)
        greedy = _greedy.solve_greedy(problem, placement)
        outcome = _milp.solve_milp(problem, placement, selection.result())
    if outcome.solution is None:
        return greedy, "greedy", outcome.lower_bound, placement

    def value(solution: _greedy.Solution) -> float:
        return plan_objective(problem, solution.usage_after, [m.candidate for m in solution.moves])

    exact = outcome.solution
    if value(exact) <= value(greedy) + 1e-9:
        return exact, "milp", outcome.lower_bound, placement
    return greedy, "greedy", outcome.lower_bound, placement


def classify_for_plan(
    cluster: ClusterState,
    usage: Usage,
    policy: LoadAwarePolicy,
    assessment: metrics.UsageAssessment,
) -> _classify.NodeTable:
    """The node table a plan is made on: pools, classes and the resources judged."""
    return _classify.classify_nodes(
        cluster,
        usage,
        policy.node_pools,
        assessment.excluded_nodes,
        confirm_consecutive=policy.metrics.hotspot_confirmation.consecutive,
        resources=_classify.judged_resources(
            policy.node_pools,
            policy.consolidation.thresholds.as_dict() if policy.consolidation.enabled else {},
        ),
        allocatable_names=allocatable_names(policy),
    )


def target_indexes(cluster: ClusterState, table: _classify.NodeTable) -> np.ndarray:
    """Nodes that may receive pods: cold or normal, and schedulable."""
    nodes = cluster.nodes_by_name
    return np.array(
        [
            i
            for i, c in enumerate(table.classes)
            if c in ("cold", "normal") and not nodes[table.names[i]].unschedulable
        ],
        dtype=np.int64,
    )


def allocatable_names(policy: LoadAwarePolicy) -> dict[str, str]:
    """Named resources whose capacity is a node allocatable resource, by name."""
    source = policy.metrics.prometheus
    if source is None:
        return {}
    return {n: r.capacity for n, r in source.resources.items() if not r.capacity_is_query}


def _build_problem(
    cluster: ClusterState,
    usage: Usage,
    policy: LoadAwarePolicy,
    table: _classify.NodeTable,
    stale_pods: frozenset[str],
    now: datetime.datetime,
    carried: CarriedBudget,
    source_nodes: frozenset[str] | None,
    profiles: tuple[_profiles.ScopedProfile, ...],
    tally: _profiles.Tally,
) -> tuple[Problem, Counter[str]]:
    skipped: Counter[str] = Counter()
    left_alone: dict[int, Counter[str]] = {}
    by_node: dict[int, tuple[Candidate, ...]] = {}
    steering = policy.steering
    modelled = scheduling.modelled_profiles(
        steering.scheduler_config, steering.scheduler_names
    ).by_name
    balancing = [p for p in profiles if p.strategies.load_balancing.enabled]
    for profile in profiles:
        tally.rules.setdefault(profile.name, [])
    for profile in balancing:
        tally.declare(profile.name, HOTSPOT)
    for index, node_class in enumerate(table.classes):
        if node_class != "hot":
            continue
        if source_nodes is not None and table.names[index] not in source_nodes:
            by_node[index] = ()
            continue
        # The profiles that relieve this node's pool; a pod goes with the first
        # whose evictor lets it go.
        covering = [p for p in balancing if p.covers_pool(table.pools[index])]
        if not covering:
            by_node[index] = ()
            continue
        found: list[Candidate] = []
        for pod in cluster.pods_by_node.get(table.names[index], ()):
            profile = covering[0]
            judged = _candidates.pod_eligibility(pod, profile.rules, now)
            if not judged.evictable and len(covering) > 1:
                for other in covering[1:]:
                    again = _candidates.pod_eligibility(pod, other.rules, now)
                    if again.evictable:
                        judged, profile = again, other
                        break
            why: str | None = None
            if not judged.evictable:
                why = judged.reason or "protected"
            elif workload_key(pod) in carried.cooling_workloads:
                # Moved by an earlier round within limits.cooldown: leave it settle.
                why = "cooldown"
            elif pod.key in stale_pods:
                # Without a fresh sample the relief of moving it is unknown.
                why = "no-fresh-usage"
            elif pod.scheduler_name not in modelled:
                # Another scheduler places its replacement: no landing can be predicted.
                why = _placement.UNMODELLED_SCHEDULER
            if why is not None:
                skipped[why] += 1
                left_alone.setdefault(index, Counter())[why] += 1
                continue
            found.append(
                Candidate(
                    pod=pod,
                    node_index=index,
                    usage=table.pod_usage(usage.pods[pod.key]),
                    prefer_no_eviction=judged.prefer_no_eviction,
                    pdbs=tuple(p.key for p in judged.pdbs),
                    profile=profile.name,
                )
            )
        by_node[index] = tuple(found)
    targets = target_indexes(cluster, table)
    must = _must_moves(
        cluster, usage, table, stale_pods, now, carried, source_nodes, profiles, tally, skipped
    )
    return (
        Problem(
            cluster=cluster,
            policy=policy,
            table=table,
            candidates=by_node,
            left_alone=left_alone,
            target_indexes=targets,
            carried=carried,
            must_move=must,
        ),
        skipped,
    )


def _must_moves(
    cluster: ClusterState,
    usage: Usage,
    table: _classify.NodeTable,
    stale_pods: frozenset[str],
    now: datetime.datetime,
    carried: CarriedBudget,
    source_nodes: frozenset[str] | None,
    profiles: tuple[_profiles.ScopedProfile, ...],
    tally: _profiles.Tally,
    skipped: Counter[str],
) -> tuple[Candidate, ...]:
    """The pods every profile's deschedule strategies name, judged by the profile's
    evictor, in order: profiles as listed, strategies in running order. Pods that may
    not go are counted (per profile and strategy, and in `skipped`)."""
    nodes = cluster.nodes_by_name
    in_round = [i for i, c in enumerate(table.classes) if c != "excluded"]
    schedulable = tuple(
        nodes[table.names[i]] for i in in_round if not nodes[table.names[i]].unschedulable
    )
    found: list[Candidate] = []
    seen: set[str] = set()
    for profile in profiles:
        names = strategies.enabled_strategies(profile.strategies)
        if not names:
            continue
        for name in names:
            tally.declare(profile.name, name)
        scope = frozenset(
            table.names[i]
            for i in in_round
            if profile.covers_pool(table.pools[i])
            and (source_nodes is None or table.names[i] in source_nodes)
        )
        eligibilities: dict[str, _candidates.PodEligibility] = {}

        def eligibility(
            pod: Pod,
            rules: _candidates.EvictionRules = profile.rules,
            memo: dict[str, _candidates.PodEligibility] = eligibilities,
        ) -> _candidates.PodEligibility:
            known = memo.get(pod.key)
            if known is None:
                known = memo[pod.key] = _candidates.pod_eligibility(
                    pod, rules, now, allow_failed=True
                )
            return known

        context = strategies.StrategyContext(
            profile=profile.name,
            settings=profile.strategies,
            now=now,
            nodes=scope,
            eligibility=eligibility,
            schedulable=schedulable,
        )
        for must in strategies.find_must_moves(cluster, context):
            pod = must.pod
            if pod.key in seen:
                continue  # an earlier profile or strategy named it already
            judged = eligibility(pod)
            if judged.reason in OUT_OF_SCOPE:
                continue  # not this profile's pod; another profile may name it
            seen.add(pod.key)
            terminal = pod.phase == "Failed"
            why: str | None = None
            if not judged.evictable:
                why = judged.reason or "protected"
            elif workload_key(pod) in carried.cooling_workloads:
                why = "cooldown"
            elif not terminal and (pod.key in stale_pods or pod.key not in usage.pods):
                why = "no-fresh-usage"
            if why is not None:
                skipped[why] += 1
                tally.skip(profile.name, must.reason, why)
                continue
            sample = usage.pods.get(pod.key)
            found.append(
                Candidate(
                    pod=pod,
                    node_index=table.index[pod.node_name or ""],
                    usage=table.pod_usage(None if terminal else sample),
                    prefer_no_eviction=judged.prefer_no_eviction,
                    pdbs=tuple(p.key for p in judged.pdbs),
                    reason=must.reason,
                    profile=profile.name,
                    landing_check=must.landing_check,
                    terminal=terminal,
                )
            )
    return tuple(found)


def _node_reports(
    table: _classify.NodeTable, usage_after: np.ndarray, notes: dict[int, str]
) -> tuple[NodeReport, ...]:
    before = table.utilisation_by_node()
    after = table.utilisation_by_node(usage_after)
    return tuple(
        NodeReport(
            name=name,
            node_class=table.classes[i],
            pool=table.pools[i],
            before=before[i],
            after=after[i],
            note=notes.get(i, table.notes[i]),
            low=_judged(table.resources, table.low[i]),
            high=_judged(table.resources, table.high[i]),
        )
        for i, name in enumerate(table.names)
    )


def _judged(resources: tuple[str, ...], ratios: np.ndarray) -> dict[str, float]:
    return {
        r: round(float(ratios[k]), 4) for k, r in enumerate(resources) if not np.isnan(ratios[k])
    }
