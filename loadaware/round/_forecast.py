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

from loadaware import cluster, metrics, plan, policy
from loadaware.errors import RefusedError

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


def read_forecast(
    reader: ForecastReader | None,
    state: cluster.ClusterState,
    now: datetime.datetime,
    horizon: datetime.timedelta,
) -> metrics.Forecast:
    """The forecast a round planned ahead plans on, read once at its start; refused
    when the metrics source keeps none."""
    if reader is None:
        raise RefusedError(
            "the round is to plan on a forecast and its metrics source has none "
            "(a forecast needs metrics.prometheus)",
            reference="forecast-unavailable",
        )
    return reader(state, now, horizon)


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
