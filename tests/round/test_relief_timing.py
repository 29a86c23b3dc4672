"""How long and how often the relief check after a round waits, per metrics source.

Covered: Prometheus polls at its scrapeInterval and waits rateWindow plus two
scrape intervals; metrics-server polls at the resolution its samples' window
says and waits two of them (60s, its default, when no sample says); an explicit
verify.reliefTimeout wins; a sample counts as covering time from its timestamp
minus the larger of its own window and the source's; bad durations are refused
naming the field.
"""

from __future__ import annotations

import datetime

import pytest

from loadaware import errors, metrics, policy
from loadaware.round import _relief

NOW = datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)


def _usage(*windows: float) -> metrics.Usage:
    return metrics.Usage(
        collected_at=NOW,
        nodes={
            f"node-{i}": metrics.UsageSample(
                cpu_cores=1.0, memory_bytes=1.0, timestamp=NOW, window_seconds=w
            )
            for i, w in enumerate(windows)
        },
    )


def test_prometheus_waits_the_rate_window_and_two_scrapes() -> None:
    settings = policy.parse_policy(
        {"metrics": {"prometheus": {"url": "http://prometheus:9090", "rateWindow": "2m"}}}
    )
    timing = _relief.source_timing(settings, _usage())
    assert timing.poll_seconds == 30.0  # scrapeInterval's default
    assert timing.window_seconds == 120.0
    assert timing.timeout == datetime.timedelta(minutes=3)
    sample = metrics.UsageSample(cpu_cores=1, memory_bytes=1, timestamp=NOW)
    assert timing.covers_from(sample) == NOW - datetime.timedelta(minutes=2)


def test_metrics_server_waits_two_resolutions_read_from_the_samples() -> None:
    settings = policy.parse_policy({"metrics": {"metricsServer": {}}})
    timing = _relief.source_timing(settings, _usage(15.0, 20.0))
    assert timing.poll_seconds == 20.0
    assert timing.timeout == datetime.timedelta(seconds=40)
    # Without a window in any sample: metrics-server's default resolution.
    assert _relief.source_timing(settings, _usage()).poll_seconds == 60.0
    sample = metrics.UsageSample(cpu_cores=1, memory_bytes=1, timestamp=NOW, window_seconds=30)
    assert timing.covers_from(sample) == NOW - datetime.timedelta(seconds=30)


def test_an_explicit_relief_timeout_wins() -> None:
    settings = policy.parse_policy(
        {
            "metrics": {"prometheus": {"url": "http://p:9090", "scrapeInterval": "15s"}},
            "verify": {"reliefTimeout": "10m"},
        }
    )
    timing = _relief.source_timing(settings, _usage())
    assert timing.poll_seconds == 15.0
    assert timing.timeout == datetime.timedelta(minutes=10)


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({"verify": {"reliefTimeout": "0s"}}, "verify.reliefTimeout"),
        (
            {"metrics": {"prometheus": {"url": "http://p:9090", "scrapeInterval": "0s"}}},
            "metrics.prometheus.scrapeInterval",
        ),
    ],
)
def test_bad_durations_name_the_field(document: dict, field: str) -> None:
    with pytest.raises(errors.PolicyError) as caught:
        policy.parse_policy(document)
    assert field in str(caught.value)
