"""Rounds planned ahead of a peak: usage = the forecast for the coming horizon.

A schedule with `forecast: {horizon}` starts a round whose plan, its re-checks
before each eviction and its landing control all see the forecast usage
(metrics.forecast_usage): the values the nodes and workloads are expected to
reach over [start, start + horizon], with the current samples' times, so a
round still refuses on stale current metrics. The forecast itself is read once
per round (past weeks do not change while it runs); the current usage under it
is read again as usual. The relief check after the evictions judges the
moment's usage, which is all there is to see before the peak: the forecast is
proved after it (_forecast_proof).
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from loadaware import cluster, metrics, plan, policy
from loadaware.errors import RefusedError

if TYPE_CHECKING:
    from loadaware.runtime._round import RoundContext, RoundOptions

log = logging.getLogger(__name__)

# Reads a forecast for a cluster's nodes and pods: (state, now, horizon) -> Forecast.
ForecastReader = Callable[
    [cluster.ClusterState, datetime.datetime, datetime.timedelta], metrics.Forecast
]


def forecast_reader(
    settings: policy.LoadAwarePolicy, forecaster: metrics.PrometheusForecaster
) -> ForecastReader:
    """A ForecastReader over the nodes of the policy's pools and the pods bound to them."""

    def read(
        state: cluster.ClusterState, now: datetime.datetime, horizon: datetime.timedelta
    ) -> metrics.Forecast:
        scopes = plan.node_scopes(state, settings.node_pools)
        pod_keys = [key for scope in scopes.values() for key in scope.pod_keys]
        forecast = forecaster.fetch_forecast(list(scopes), pod_keys, now=now, horizon=horizon)
        log.info(
            "forecast read",
            extra={
                "nodes": len(forecast.nodes),
                "workloads": len(forecast.workloads),
                "uncovered_nodes": len(forecast.uncovered_nodes),
                "uncovered_workloads": len(forecast.uncovered_workloads),
                "seconds": round(forecast.seconds, 3),
            },
        )
        return forecast

    return read


def forecast_usage_reader(
    read_usage: Callable[[cluster.ClusterState], metrics.Usage],
    forecast: metrics.Forecast,
) -> Callable[[cluster.ClusterState], metrics.Usage]:
    """read_usage with the forecast's values put in place of the moment's."""

    def read(state: cluster.ClusterState) -> metrics.Usage:
        return metrics.forecast_usage(read_usage(state), forecast)

    return read


def plan_ahead(
    context: RoundContext,
    state: cluster.ClusterState,
    current: metrics.Usage,
    options: RoundOptions,
) -> tuple[RoundContext, metrics.Usage]:
    """The context a round planned ahead runs with (its read_usage gives the forecast
    usage), and the usage to plan on. The forecast is read once, at the round's start."""
    horizon = options.forecast_horizon
    assert horizon is not None
    if context.read_forecast is None:
        raise RefusedError(
            "the round is to plan on a forecast and its metrics source has none "
            "(a forecast needs metrics.prometheus)",
            reference="forecast-unavailable",
        )
    forecast = context.read_forecast(state, context.clock(), horizon)
    read = forecast_usage_reader(context.read_usage, forecast)
    return dataclasses.replace(context, read_usage=read), metrics.forecast_usage(current, forecast)


def with_forecast_note(planned: plan.Plan, info: metrics.ForecastInfo | None) -> plan.Plan:
    """The plan with its forecast, and its reason naming what had no forecast."""
    if info is None:
        return planned
    reason = planned.reason
    gaps = [
        *(f"node {n}" for n in sorted(info.uncovered_nodes)),
        *(f"workload {w}" for w in sorted(info.uncovered_workloads)),
    ]
    if gaps and planned.status != "refused":
        shown = ", ".join(gaps[:5]) + (f" and {len(gaps) - 5} more" if len(gaps) > 5 else "")
        reason = f"{reason}; no forecast (too little history) for {shown}"
    return dataclasses.replace(planned, reason=reason, forecast=info)
