"""Offline rounds: plan from files, no cluster and no network."""

from __future__ import annotations

import datetime
import gc
import os

from loadaware import cluster, gc_freeze, metrics, plan, policy
from loadaware import round as rounds

# What the last plan_from_files(freeze_loaded=True) loaded. A process that plans
# once holds it until it exits, and the CLI's process entry exits without freeing
# anything: 150,000 pods freed one by one as the function returned cost a third of
# a second. A later call replaces it.
_held_until_exit: list[object] = []


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
    forecast_file: str | os.PathLike[str] | None = None,
    forecast_horizon: datetime.timedelta | None = None,
) -> plan.Plan:
    """Plan from the files. `freeze_loaded` (a process that plans once, as the CLI):
    the loaded cluster lives until exit (it is held, not freed when this returns),
    so it is moved out of the collector's reach (gc.freeze) and not scanned again
    at every collection while the planner allocates (2-3 s at 150,000 pods)."""
    settings = with_solver(policy.load_policy(policy_file), solver)
    # The collector stays paused from the first file read to the plan made. Each
    # step pauses it too, but resumed between them it would walk what the last one
    # built at its next collection, for nothing: the metrics file's 150,000 samples
    # before they are frozen, and the planner's landing basis (its Placement and
    # scheduler model) before the plan is returned without it, a fifth of a second
    # at 5,000 nodes.
    with gc_freeze.paused():
        state = cluster.load_cluster_file(cluster_file)
        usage = metrics.load_metrics_file(metrics_file)
        if forecast_file is not None:
            usage = with_forecast_file(usage, settings, forecast_file, forecast_horizon)
        if freeze_loaded:
            _held_until_exit[:] = [state, usage]
            gc.freeze()
        return rounds.timed_plan(state, usage, settings, now)


def with_forecast_file(
    usage: metrics.Usage,
    settings: policy.LoadAwarePolicy,
    forecast_file: str | os.PathLike[str],
    horizon: datetime.timedelta | None = None,
) -> metrics.Usage:
    """Usage to plan on from a forecast given as a metrics file (`--forecast`): its
    values, with the current file's sample times. The horizon: as given, else the
    first schedule's that plans ahead, else an hour."""
    if horizon is None:
        ahead = [s.forecast.horizon for s in settings.schedules if s.forecast is not None]
        horizon = ahead[0] if ahead else datetime.timedelta(hours=1)
    config = (
        settings.metrics.prometheus.forecast
        if settings.metrics.prometheus is not None
        else policy.ForecastSettings()
    )
    forecast = metrics.forecast_from_usage(
        metrics.load_metrics_file(forecast_file),
        horizon=horizon,
        weeks=config.weeks,
        min_weeks=config.min_weeks,
        quantile=config.quantile,
    )
    return metrics.forecast_usage(usage, forecast)
