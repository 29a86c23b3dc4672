"""The example policies in policy/: every one validates as it is, and each shows
what its name promises.
"""

from __future__ import annotations

import datetime
import pathlib

import pytest

from loadaware import policy

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "policy").glob("*.yaml"))


def test_the_examples_exist() -> None:
    names = {p.name for p in EXAMPLES}
    assert {"default.yaml", "prometheus.yaml", "metrics-server.yaml", "peak-hours.yaml"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_is_valid(path: pathlib.Path) -> None:
    policy.load_policy(path)


def test_prometheus_example() -> None:
    p = policy.load_policy(REPO / "policy" / "prometheus.yaml")
    assert p.metrics.prometheus is not None
    assert p.metrics.prometheus.auth_token is not None
    assert p.metrics.prometheus.auth_token.secret_reference.key == "token"
    assert [pool.name for pool in p.node_pools] == ["gpu", "general"]
    assert p.limits.max_no_of_pods_to_evict_total is not None


def test_metrics_server_example() -> None:
    p = policy.load_policy(REPO / "policy" / "metrics-server.yaml")
    assert p.metrics.metrics_server is not None
    assert p.metrics.prometheus is None


def test_peak_hours_example() -> None:
    p = policy.load_policy(REPO / "policy" / "peak-hours.yaml")
    peak = p.schedules[0]
    assert (peak.cron, peak.timezone) == ("*/10 8-20 * * mon-fri", "Europe/Berlin")
    assert p.serve.webhook.token_file is not None
    assert p.serve.webhook.cooldown == datetime.timedelta(minutes=5)


def test_peak_forecast_example() -> None:
    p = policy.load_policy(REPO / "policy" / "peak-forecast.yaml")
    assert p.metrics.prometheus is not None
    forecast = p.metrics.prometheus.forecast
    assert (forecast.weeks, forecast.min_weeks, forecast.quantile) == (4, 3, 0.9)
    ahead = p.schedules[0]
    assert ahead.forecast is not None
    assert ahead.forecast.horizon == datetime.timedelta(hours=1)
    assert (ahead.cron, ahead.timezone) == ("30 8 * * mon-fri", "Europe/Berlin")
    assert p.schedules[1].forecast is None
