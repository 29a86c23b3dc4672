"""Consolidation (descheduler's HighNodeUtilization): empty the least-used nodes so
that a cluster autoscaler or Karpenter can remove them.

Runs after the round's must-moves and hotspot relief are planned, on what is
left of the same budgets. A node may be emptied when it is in the round (not
hot, not excluded, not cordoned), under every consolidation threshold after the
planned moves, no planned replacement is expected to land on it, and every pod
on it but DaemonSet and mirror pods may be evicted (the profile covering its
pool judges them), has a fresh usage sample, and has a predicted landing that
passes nodeFit and stays under its targetThresholds. Nodes are tried least used
first, up to maxNodesPerRound; a node is emptied whole or not at all.

kube-scheduler's default scoring (LeastAllocated) would send replacements back
to the emptiest node, so the plan assumes the emptied nodes take no new pods
(descheduler pairs HighNodeUtilization with the MostAllocated strategy, and
cluster autoscalers taint the nodes they remove): they are left out of the
scheduler model's choice. Pure: no I/O, no clock.
"""

from __future__ import annotations

import copy
import datetime

import numpy as np

from loadaware.metrics import Usage
from loadaware.plan import _candidates
from loadaware.plan._budget import workload_key
from loadaware.plan._greedy import Move
from loadaware.plan._placement import Placement
from loadaware.plan._problem import Candidate, Problem
from loadaware.plan._profiles import ScopedProfile
from loadaware.plan._types import ConsolidationReport

HIGH_NODE_UTILIZATION = "HighNodeUtilization"
HOURS_PER_DAY = 24


def consolidate(
    problem: Problem,
    placement: Placement,
    profiles: tuple[ScopedProfile, ...],
    planned: list[Move],
    now: datetime.datetime,
    usage: Usage,
    stale_pods: frozenset[str],
    source_nodes: frozenset[str] | None = None,
) -> tuple[list[Move], ConsolidationReport]:
    """Moves that empty nodes, applied to `placement`, and the report."""
    settings = problem.policy.consolidation
    table = problem.table
    nodes = problem.cluster.nodes_by_name
    budget = problem.new_budget()
    for move in planned:
        cand = move.candidate
        budget.charge(cand.pod, table.names[cand.node_index], cand.pdbs)
    landing_targets = {m.target_index for m in planned if m.target_index is not None}
    limits = settings.thresholds.as_dict()
    ratios = table.utilisation(placement.usage)
    columns = [k for k, r in enumerate(table.resources) if r in limits]
    bounds = np.array([limits[r] / 100 for r in table.resources if r in limits])
    under = [
        i
        for i, c in enumerate(table.classes)
        if c in ("cold", "normal")
        and not nodes[table.names[i]].unschedulable
        and (source_nodes is None or table.names[i] in source_nodes)
        and bool(np.all(ratios[i, columns] < bounds))
    ]
    under.sort(key=lambda i: (float(ratios[i, columns].sum()), table.names[i]))
    emptied: list[str] = []
    moves: list[Move] = []
    notes: list[str] = []
    for index in under:
        if len(emptied) >= settings.max_nodes_per_round:
            break
        name = table.names[index]
        if index in landing_targets:
            notes.append(f"{name}: a planned replacement lands there")
            continue
        covering = [p for p in profiles if p.covers_pool(table.pools[index])]
        if not covering:
            notes.append(f"{name}: no profile covers its pool")
            continue
        found, why = _node_candidates(problem, index, covering[0], now, usage, stale_pods)
        if why is not None:
            notes.append(f"{name}: {why}")
            continue
        if not found:
            notes.append(f"{name}: nothing to evict (already empty)")
            continue
        placement.close(index)
        trial = copy.deepcopy(budget)
        placed: list[Move] = []
        failure: str | None = None
        for cand in found:
            over = trial.exceeded_by(cand.pod, name, cand.pdbs)
            if over is not None:
                failure = f"budget {over} reached"
                break
            found = placement.landing(cand)
            if found.reason is not None or found.target is None:
                failure = f"{cand.pod.key} has no landing ({found.reason or 'no-fit'})"
                break
            trial.charge(cand.pod, name, cand.pdbs)
            placement.apply(cand, found)
            placed.append(Move.landed(cand, found))
        if failure is not None:
            for _ in placed:
                placement.undo_last()
            notes.append(f"{name}: {failure}")
            # The node stays closed to the model: the remaining candidates are
            # judged as if no replacement went there, which only errs on the safe side.
            continue
        budget = trial
        emptied.append(name)
        moves.extend(placed)
        landing_targets.update(m.target_index for m in placed if m.target_index is not None)
    report = ConsolidationReport(
        nodes=tuple(emptied),
        evictions=len(moves),
        node_hours_saved_per_day=float(HOURS_PER_DAY * len(emptied)),
        candidates=len(under),
        note="; ".join(notes),
    )
    return moves, report


def _node_candidates(
    problem: Problem,
    index: int,
    profile: ScopedProfile,
    now: datetime.datetime,
    usage: Usage,
    stale_pods: frozenset[str],
) -> tuple[list[Candidate], str | None]:
    """Every pod that has to leave for the node to be empty, largest first, or why the
    node cannot be emptied."""
    table = problem.table
    cooling = problem.carried.cooling_workloads
    found: list[Candidate] = []
    for pod in problem.cluster.pods_by_node.get(table.names[index], ()):
        if pod.is_daemonset_pod or pod.is_mirror:
            continue  # they go with the node
        judged = _candidates.pod_eligibility(pod, profile.rules, now)
        if not judged.evictable:
            return [], f"{pod.key} may not be evicted ({judged.reason})"
        if workload_key(pod) in cooling:
            return [], f"{pod.key} is cooling down"
        sample = usage.pods.get(pod.key)
        if pod.key in stale_pods or sample is None:
            return [], f"{pod.key} has no fresh usage"
        found.append(
            Candidate(
                pod=pod,
                node_index=index,
                usage=table.pod_usage(sample),
                prefer_no_eviction=judged.prefer_no_eviction,
                pdbs=tuple(p.key for p in judged.pdbs),
                reason=HIGH_NODE_UTILIZATION,
                profile=profile.name,
            )
        )
    scale = np.where(table.allocatable[index] > 0, table.allocatable[index], 1.0)
    found.sort(key=lambda c: (-float((c.usage / scale).sum()), c.pod.key))
    return found, None
