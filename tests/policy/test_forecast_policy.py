"""Policy for planning ahead: metrics.prometheus.forecast (weeks, minWeeks, quantile,
step) and schedules[].forecast.horizon; `loadaware validate` refuses a forecast
without a Prometheus source, naming the field (exit 2)."""

from __future__ import annotations

import datetime
import pathlib

import pytest

from loadaware import cli, policy
from loadaware.errors import PolicyError

PROMETHEUS = {"prometheus": {"url": "http://prometheus:9090"}}


def _schedule(**forecast: object) -> dict[str, object]:
    return {"name": "peak", "cron": "30 8 * * mon-fri", "forecast": forecast}


def test_forecast_defaults() -> None:
    loaded = policy.parse_policy({"metrics": PROMETHEUS})
    assert loaded.metrics.prometheus is not None
    forecast = loaded.metrics.prometheus.forecast
    assert (forecast.weeks, forecast.min_weeks, forecast.quantile) == (4, 3, 0.9)
    assert forecast.step == datetime.timedelta(minutes=5)


def test_schedule_forecast_horizon_is_read() -> None:
    loaded = policy.parse_policy({"metrics": PROMETHEUS, "schedules": [_schedule(horizon="1h")]})
    assert loaded.schedules[0].forecast is not None
    assert loaded.schedules[0].forecast.horizon == datetime.timedelta(hours=1)
    assert (
        policy.parse_policy({"schedules": [{"name": "a", "cron": "* * * * *"}]})
        .schedules[0]
        .forecast
        is None
    )


@pytest.mark.parametrize(
    ("forecast", "expected"),
    [
        ({"weeks": 0}, "metrics.prometheus.forecast.weeks"),
        ({"weeks": 2, "minWeeks": 3}, "minWeeks (3) must not exceed weeks (2)"),
        ({"minWeeks": 0}, "metrics.prometheus.forecast.minWeeks"),
        ({"quantile": 0}, "metrics.prometheus.forecast.quantile: must be greater than 0"),
        ({"quantile": 1.5}, "metrics.prometheus.forecast.quantile"),
        ({"step": "0s"}, "metrics.prometheus.forecast.step"),
    ],
    ids=[
        "weeks-at-least-1",
        "min-weeks-within-weeks",
        "min-weeks-at-least-1",
        "quantile-positive",
        "quantile-at-most-1",
        "step-positive",
    ],
)
def test_forecast_ranges_are_checked(forecast: dict[str, object], expected: str) -> None:
    source = {"prometheus": {"url": "http://prometheus:9090", "forecast": forecast}}
    with pytest.raises(PolicyError) as caught:
        policy.parse_policy({"metrics": source})
    assert any(expected in problem for problem in caught.value.problems), caught.value.problems


@pytest.mark.parametrize("horizon", ["0s", "25h"])
def test_horizon_range(horizon: str) -> None:
    with pytest.raises(PolicyError) as caught:
        policy.parse_policy({"metrics": PROMETHEUS, "schedules": [_schedule(horizon=horizon)]})
    assert any("schedules[0].forecast.horizon" in p for p in caught.value.problems)


def test_forecast_needs_prometheus() -> None:
    with pytest.raises(PolicyError) as caught:
        policy.parse_policy(
            {
                "metrics": {"metricsServer": {}},
                "schedules": [{"name": "a", "cron": "* * * * *"}, _schedule(horizon="1h")],
            }
        )
    assert any(
        "schedules[1].forecast" in p and "metrics-server keeps no history" in p
        for p in caught.value.problems
    ), caught.value.problems


def test_validate_refuses_forecast_with_metrics_server(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "policy.yaml"
    file.write_text(
        "metrics:\n  metricsServer: {}\n"
        "schedules:\n- name: peak\n  cron: '30 8 * * mon-fri'\n  forecast: {horizon: 1h}\n"
    )
    assert cli.main(["validate", "--policy", str(file)]) == 2
    captured = capsys.readouterr()
    assert "schedules[0].forecast" in captured.out + captured.err
