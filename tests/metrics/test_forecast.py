"""The forecast's pure parts: which workload a pod's history follows, the weekly
offsets of the forecast query, the quantile across weeks and coverage, and the
usage a forecast round plans on (forecast values, current sample times, no
sample where there is no forecast). Against a real Prometheus:
tests/e2e/test_forecast_through_prometheus.py."""

from __future__ import annotations

import datetime

import pytest

from loadaware import metrics, policy
from loadaware.metrics import _forecast
from tests.lib.builders import NOW, make_usage, sample


@pytest.mark.parametrize(
    ("pod", "workload"),
    [
        ("shop/web-7d9f8c6b5-x2k4p", "shop/web"),
        ("shop/my-api-v2-5bd7f9c8d4-zq2wx", "shop/my-api-v2"),
        ("shop/worker-x7k2p", "shop/worker"),
        ("monitoring/node-exporter-x7k2p", "monitoring/node-exporter"),
        ("db/postgres-0", "db/postgres-0"),
        ("db/plain", "db/plain"),
    ],
    ids=[
        "deployment",
        "deployment-with-dashes",
        "bare-replicaset",
        "daemonset",
        "statefulset",
        "bare-pod",
    ],
)
def test_workload_of(pod: str, workload: str) -> None:
    assert metrics.workload_of(pod) == workload


def test_forecast_query_windows_are_the_same_hours_of_past_weeks() -> None:
    text = _forecast.forecast_query(
        "up", datetime.timedelta(hours=1), datetime.timedelta(minutes=15), 2
    )
    # Week k ends at now - k*7d + 1h: offset k*7d - 1h.
    assert "max_over_time((up)[3600s:900s] offset 601200s)" in text
    assert "max_over_time((up)[3600s:900s] offset 1206000s)" in text
    assert text.count(" or ") == 1
    assert f'"{_forecast.WEEK_LABEL}", "2"' in text


def test_quantile_across_weeks_and_coverage() -> None:
    answers = {
        "cpu": {"a": {1: 1.0, 2: 2.0, 3: 3.0, 4: 4.0}, "b": {1: 1.0, 2: 1.0}},
        "memory": {"a": {1: 10.0, 2: 10.0, 3: 10.0, 4: 50.0}, "b": {1: 5.0, 2: 5.0, 3: 5.0}},
    }
    values, uncovered = _forecast._combine(answers, frozenset({"a", "b", "c"}), 0.9, 3, 4)
    # Linear interpolation, as PromQL's quantile(): 3 + 0.7 * (4 - 3).
    assert values["a"].cpu_cores == pytest.approx(3.7)
    assert values["a"].memory_bytes == pytest.approx(38.0)
    assert values["a"].weeks == 4
    # b has 2 weeks of cpu: no forecast, though memory has 3.
    assert uncovered == {
        "b": "no forecast: 2 of the last 4 weeks have data (minWeeks 3)",
        "c": "no forecast: 0 of the last 4 weeks have data (minWeeks 3)",
    }


def _forecast_of(nodes: dict[str, float], workloads: dict[str, float]) -> metrics.Forecast:
    def value(cpu: float) -> metrics.ForecastValue:
        return metrics.ForecastValue(cpu_cores=cpu, memory_bytes=1e9, weeks=4)

    return metrics.Forecast(
        at=NOW,
        horizon=datetime.timedelta(hours=1),
        weeks=4,
        min_weeks=3,
        quantile=0.9,
        nodes={n: value(c) for n, c in nodes.items()},
        workloads={w: value(c) for w, c in workloads.items()},
        uncovered_nodes={"n2": "no forecast: 1 of the last 4 weeks have data (minWeeks 3)"},
        uncovered_workloads={"default/new": "no forecast: 2 of the last 4 weeks"},
    )


def test_forecast_usage_keeps_current_times_and_fails_closed() -> None:
    current = make_usage(
        {"n1": sample(0.5, 2e9, age_seconds=30), "n2": sample(0.5, 2e9)},
        {
            "default/web-7d9f8c6b5-x2k4p": sample(0.1, 1e8, age_seconds=40),
            "default/new-5bd7f9c8d4-zq2wx": sample(0.1, 1e8),
        },
    )
    usage = metrics.forecast_usage(current, _forecast_of({"n1": 3.5}, {"default/web": 1.2}))
    node = usage.nodes["n1"]
    assert (node.cpu_cores, node.memory_bytes) == (3.5, 1e9)
    assert node.timestamp == current.nodes["n1"].timestamp
    pod = usage.pods["default/web-7d9f8c6b5-x2k4p"]
    assert pod.cpu_cores == 1.2
    assert pod.timestamp == current.pods["default/web-7d9f8c6b5-x2k4p"].timestamp
    # No forecast: no sample, and judging says why.
    assert "n2" not in usage.nodes
    assert "default/new-5bd7f9c8d4-zq2wx" not in usage.pods
    assert usage.unforecast["n2"].startswith("no forecast: 1 of the last 4 weeks")
    assert usage.forecast is not None
    assert usage.forecast.uncovered_workloads == {
        "default/new": "no forecast: 2 of the last 4 weeks"
    }
    assert usage.history is None


def test_named_resources_are_forecast_where_they_have_history() -> None:
    answers = {
        "cpu": {"gpu-node": {1: 1.0, 2: 1.0, 3: 1.0}, "cpu-node": {1: 1.0, 2: 1.0, 3: 1.0}},
        "memory": {"gpu-node": {1: 1.0, 2: 1.0, 3: 1.0}, "cpu-node": {1: 1.0, 2: 1.0, 3: 1.0}},
        "gpu": {"gpu-node": {1: 2.0, 2: 3.0, 3: 4.0}, "new-gpu": {1: 1.0}},
    }
    answers["cpu"]["new-gpu"] = answers["memory"]["new-gpu"] = {1: 1.0, 2: 1.0, 3: 1.0}
    wanted = frozenset({"gpu-node", "cpu-node", "new-gpu"})
    values, uncovered = _forecast._combine(answers, wanted, 1.0, 3, 4)
    assert values["gpu-node"].named == {"gpu": 4.0}
    # No GPU series at all: no GPU use, still a forecast.
    assert values["cpu-node"].named == {}
    # GPU series in one week only: too little history.
    assert set(uncovered) == {"new-gpu"}


def test_forecaster_reads_every_named_resource() -> None:
    forecaster = metrics.PrometheusForecaster(
        policy.MetricsSettings.model_validate(
            {
                "prometheus": {
                    "url": "http://prometheus:9090",
                    "resources": {
                        "gpu": {
                            "node": "avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL) / 100",
                            "pod": "sum by (namespace, pod) (DCGM_FI_DEV_GPU_UTIL) / 100",
                            "capacity": "nvidia.com/gpu",
                            "nodeTimestamp": "max by (Hostname) (timestamp(DCGM_FI_DEV_GPU_UTIL))",
                            "podTimestamp": "max by (namespace, pod) "
                            "(timestamp(DCGM_FI_DEV_GPU_UTIL))",
                            "nodeLabel": "Hostname",
                        }
                    },
                }
            }
        )
    )
    parts = {(kind, resource): label for kind, resource, _, label in forecaster._parts()}
    assert parts == {
        ("node", "cpu"): None,
        ("node", "memory"): None,
        ("pod", "cpu"): None,
        ("pod", "memory"): None,
        ("node", "gpu"): "Hostname",
        ("pod", "gpu"): None,
    }
