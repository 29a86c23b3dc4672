"""Planning a round: the pure planner, timed (the planner itself has no clock)."""

from __future__ import annotations

import dataclasses
import datetime
import time

from loadaware import cluster, metrics, plan, policy
from loadaware.round import _forecast


def timed_plan(
    state: cluster.ClusterState,
    usage: metrics.Usage,
    settings: policy.LoadAwarePolicy,
    now: datetime.datetime,
    *,
    carried: plan.CarriedBudget = plan.NO_CARRIED_BUDGET,
    source_nodes: frozenset[str] | None = None,
) -> plan.Plan:
    """build_plan with its wall time in solver.seconds."""
    planned, _basis = timed_plan_with_basis(
        state, usage, settings, now, carried=carried, source_nodes=source_nodes
    )
    return planned


def timed_plan_with_basis(
    state: cluster.ClusterState,
    usage: metrics.Usage,
    settings: policy.LoadAwarePolicy,
    now: datetime.datetime,
    *,
    carried: plan.CarriedBudget = plan.NO_CARRIED_BUDGET,
    source_nodes: frozenset[str] | None = None,
) -> tuple[plan.Plan, plan.LandingBasis | None]:
    """timed_plan, and what the plan was made on for the round's landing control
    (plan.plan_with_basis): the same plan, planned once."""
    started = time.perf_counter()
    result, basis = plan.plan_with_basis(
        state, usage, settings, now, carried=carried, source_nodes=source_nodes
    )
    seconds = time.perf_counter() - started
    result = dataclasses.replace(result, solver=dataclasses.replace(result.solver, seconds=seconds))
    # Planned on a forecast: the plan says so, and names what had none.
    return _forecast.with_forecast_note(result, usage.forecast), basis
