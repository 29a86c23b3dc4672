"""A round planned ahead (RoundOptions.forecast_horizon) on the simulated API: its
plan, re-checks and landing control see the forecast, its relief check the moment.

The forecast here is made up from the moment's usage (the Prometheus forecast
itself is covered in tests/e2e/test_forecast_through_prometheus.py): the
coldest node of the "small" scenario is forecast hot, every hot node normal.

Covered: the node cold now but hot in the forecast is the only source, and a
node hot now but fine in the forecast is none; the evictions are carried out
(the re-check before each one sees the forecast, not the cold moment); the
record and plan carry the forecast and what to prove after the horizon; a
context without a forecast refuses (forecast-unavailable, exit 3).
"""

from __future__ import annotations

import datetime

import pytest

from loadaware import cluster, metrics, report
from loadaware import round as rounds
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import sim_server

HORIZON = datetime.timedelta(hours=1)


@pytest.fixture
def server():
    with sim_server("small", ready_delay=5.0) as running:
        yield running


def _made_up_reader(hot_node: str, calm_nodes: set[str], context: rounds.RoundContext):
    def read(
        state: cluster.ClusterState, now: datetime.datetime, horizon: datetime.timedelta
    ) -> metrics.Forecast:
        current = context.read_usage(state)
        sizes = {
            n.name: (n.allocatable_cpu_millicores / 1000, n.allocatable_memory_bytes)
            for n in state.nodes
        }
        nodes = {}
        for name, sample in current.nodes.items():
            cpu, memory = sample.cpu_cores, sample.memory_bytes
            if name == hot_node:
                cpu = 0.9 * sizes[name][0]
            elif name in calm_nodes:
                cpu, memory = 0.5 * sizes[name][0], 0.5 * sizes[name][1]
            nodes[name] = metrics.ForecastValue(cpu_cores=cpu, memory_bytes=memory, weeks=4)
        workloads: dict[str, metrics.ForecastValue] = {}
        for key, sample in current.pods.items():
            workload = metrics.workload_of(key)
            seen = workloads.get(workload)
            if seen is None or seen.cpu_cores < sample.cpu_cores:
                workloads[workload] = metrics.ForecastValue(
                    cpu_cores=sample.cpu_cores, memory_bytes=sample.memory_bytes, weeks=4
                )
        return metrics.Forecast(
            at=now,
            horizon=horizon,
            weeks=4,
            min_weeks=3,
            quantile=0.9,
            nodes=nodes,
            workloads=workloads,
        )

    return read


def test_round_plans_and_evicts_on_the_forecast(server, tmp_path) -> None:
    settings = metrics_server_policy()
    context = live_context(server, tmp_path, settings)
    now_plan = rounds.run_round(settings, context, rounds.RoundOptions(dry_run=True)).record.plan
    assert now_plan is not None
    classes = {n.name: n.node_class for n in now_plan.nodes}
    hot_now = {n for n, c in classes.items() if c == "hot"}
    cold_now = sorted(n for n, c in classes.items() if c == "cold")
    assert hot_now
    assert cold_now
    coming = cold_now[0]
    ahead = context.__class__(
        **{
            **{f: getattr(context, f) for f in context.__dataclass_fields__},
            "read_forecast": _made_up_reader(coming, hot_now, context),
        }
    )
    options = rounds.RoundOptions(forecast_horizon=HORIZON)
    result = rounds.run_round(settings, ahead, options)
    record = result.record
    assert record.plan is not None
    assert record.plan.forecast is not None
    planned_hot = {n.name for n in record.plan.nodes if n.node_class == "hot"}
    assert planned_hot == {coming}
    assert {e.node for e in record.plan.evictions} == {coming}
    audit = report.round_to_json(record)
    assert audit["plan"]["forecast"]["horizon"] == "1h"
    evicted = [e for e in audit["evictions"] if e["result"] == "evicted"]
    assert evicted, audit["evictions"]
    assert all(e["node"] == coming for e in audit["evictions"])
    assert record.status == "executed", record.reason
    assert record.exit_code == 0
    assert result.proof is not None
    assert coming in result.proof.forecast_hot
    assert result.proof.due == record.plan.forecast.at + HORIZON


def test_round_without_a_forecast_source_refuses(server, tmp_path) -> None:
    settings = metrics_server_policy()
    context = live_context(server, tmp_path, settings)
    record = rounds.run_round(
        settings, context, rounds.RoundOptions(dry_run=True, forecast_horizon=HORIZON)
    ).record
    assert record.status == "refused"
    assert record.exit_code == 3
    assert record.reason.startswith("forecast-unavailable:")
