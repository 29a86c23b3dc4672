"""Offline rounds: plan from files, no cluster and no network."""

from __future__ import annotations

import dataclasses
import datetime
import gc
import os
import time

from loadaware import cluster, metrics, plan, policy
from loadaware.runtime import _forecast


def timed_plan(
    state: cluster.ClusterState,
    usage: metrics.Usage,
    settings: policy.LoadAwarePolicy,
    now: datetime.datetime,
    *,
    carried: plan.CarriedBudget = plan.NO_CARRIED_BUDGET,
    source_nodes: frozenset[str] | None = None,
) -> plan.Plan:
    """build_plan with its wall time in solver.seconds (the planner itself has no clock)."""
    started = time.perf_counter()
    result = plan.build_plan(
        state, usage, settings, now, carried=carried, source_nodes=source_nodes
    )
    seconds = time.perf_counter() - started
    result = dataclasses.replace(result, solver=dataclasses.replace(result.solver, seconds=seconds))
    # Planned on a forecast: the plan says so, and names what had none.
    return _forecast.with_forecast_note(result, usage.forecast)


def with_solver(settings: policy.LoadAwarePolicy, solver: str | None) -> policy.LoadAwarePolicy:
    """The policy with optimizer.method replaced (the CLI's --solver), or unchanged."""
    if solver is None:
        return settings
    return settings.model_copy(
        update={"optimizer": settings.optimizer.model_copy(update={"method": solver})}
    )


def plan_from_files(
    *,
    cluster_file: str | os.PathLike[str],
    metrics_file: str | os.PathLike[str],
    policy_file: str | os.PathLike[str],
    now: datetime.datetime,
    solver: str | None = None,
    freeze_loaded: bool = False,
) -> plan.Plan:
    """Plan from the files. `freeze_loaded` (a process that plans once, as the CLI):
    the loaded cluster lives until exit, so it is moved out of the collector's reach
    (gc.freeze) and not scanned again at every collection while the planner
    allocates (2-3 s at 150,000 pods)."""
    settings = with_solver(policy.load_policy(policy_file), solver)
    state = cluster.load_cluster_file(cluster_file)
    usage = metrics.load_metrics_file(metrics_file)
    if freeze_loaded:
        gc.freeze()
    return timed_plan(state, usage, settings, now)
