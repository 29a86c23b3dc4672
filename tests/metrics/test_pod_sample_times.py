"""How PrometheusProvider dates pods, against a real Prometheus.

Covers: no per-pod sample-time answer by default; a fresh pod's time is its
node's cAdvisor scrape time, also for a pod gone for less than half of
maxSampleAge; a pod whose series stopped 4 minutes ago on an otherwise fresh
node keeps its own time and is stale at maxSampleAge 2m (the lookback trap);
judging up to half of maxSampleAge after the fetch gives the verdict of the
pods' own times; a pod on two nodes within the lookback (summed, as
`sum by (namespace, pod)` does) is not a duplicate; per-container series of
an overridden pod query are; an overridden pod sample-time query is used as
given; pod value queries overridden without the node label fall back to the
per-pod query.
"""

from __future__ import annotations

import datetime
import urllib.parse
from typing import Any

import pytest
import requests

from bench.prometheus import AuthProxy, GiB
from loadaware.errors import RefusedError
from loadaware.metrics import DEFAULT_QUERIES, NodeScope, PrometheusProvider, Usage, assess_usage
from loadaware.policy import MetricsSettings
from tests.metrics.conftest import FRESH_NODES, PrometheusWithHistory

MiB = 1024**2
FRESH_PODS = ("shop/web-1", "shop/web-2", "batch/job-1", "shop/cache-1", "shop/hot-1")
PER_POD_SAMPLE_TIME = DEFAULT_QUERIES["podMemory"].timestamp
NODE_OF = {
    "shop/web-1": "node-a",
    "shop/web-2": "node-a",
    "shop/old-1": "node-a",
    "shop/recent-1": "node-a",
    "shop/gone-1": "node-b",
    "batch/job-1": "node-b",
    "shop/cache-1": "node-c",
    "shop/hot-1": "node-hot",
}


def fetch_seeing_queries(
    prom: PrometheusWithHistory,
    pods: tuple[str, ...],
    metrics: dict[str, Any] | None = None,
    **source: Any,
) -> tuple[Usage, list[str]]:
    """Usage for FRESH_NODES and pods, and the PromQL of every query sent."""
    with AuthProxy(prom.server.url) as proxy:
        settings = MetricsSettings.model_validate(
            {"prometheus": {"url": proxy.url, "timeout": "5s", **source}, **(metrics or {})}
        )
        usage = PrometheusProvider(settings).fetch_usage(FRESH_NODES, pods, now=prom.now)
    sent = [urllib.parse.parse_qs(r.body.decode())["query"][0] for r in proxy.seen]
    return usage, sent


def scopes(pods: tuple[str, ...]) -> dict[str, NodeScope]:
    return {
        name: NodeScope(
            allocatable_cpu_cores=8.0,
            allocatable_memory_bytes=16 * GiB,
            pod_keys=tuple(p for p in pods if NODE_OF.get(p) == name),
        )
        for name in FRESH_NODES
    }


def seconds_ago(prom: PrometheusWithHistory, seconds: float) -> datetime.datetime:
    return prom.now - datetime.timedelta(seconds=seconds)


def test_fresh_pods_dated_by_their_nodes_scrape(prometheus: PrometheusWithHistory) -> None:
    pods = (*FRESH_PODS, "shop/recent-1")
    usage, sent = fetch_seeing_queries(prometheus, pods)
    assert PER_POD_SAMPLE_TIME not in sent
    # Every cAdvisor scrape of the fixture's live nodes is at NOW exactly.
    for key in FRESH_PODS:
        assert usage.pods[key].timestamp == prometheus.now, key
    # Gone 30s ago, under half of maxSampleAge (2m): its node's scrape dates it,
    # and it is fresh by either time.
    assert usage.pods["shop/recent-1"].timestamp == prometheus.now
    assert usage.pods["shop/recent-1"].memory_bytes == 32 * MiB
    verdict = assess_usage(usage, scopes(pods), MetricsSettings(), prometheus.now)
    assert verdict.stale_pods == frozenset()


def test_pod_gone_4_minutes_on_a_fresh_node_is_stale(prometheus: PrometheusWithHistory) -> None:
    pods = ("shop/web-1", "shop/web-2", "shop/old-1")
    usage, _ = fetch_seeing_queries(prometheus, pods)
    # The lookback trap: an instant query still returns its value...
    assert usage.pods["shop/old-1"].memory_bytes == 128 * MiB
    # ...but it keeps its own time, while the pods beside it have node-a's scrape time.
    assert usage.pods["shop/old-1"].timestamp == seconds_ago(prometheus, 240)
    assert usage.pods["shop/web-1"].timestamp == prometheus.now
    verdict = assess_usage(usage, scopes(pods), MetricsSettings(), prometheus.now)
    assert verdict.stale_pods == frozenset({"shop/old-1"})
    assert verdict.excluded_nodes == {}


def test_judging_later_gives_the_verdict_of_own_times(prometheus: PrometheusWithHistory) -> None:
    # A live round judges a few seconds after it fetched. Gone 75s ago, gone-1 is
    # older than half of maxSampleAge, so it keeps its own time: 50s later it is
    # 125s old, stale, as it is. recent-1 (its own time 30s ago) is fresh then too.
    pods = ("shop/gone-1", "shop/recent-1", "shop/web-1")
    usage, _ = fetch_seeing_queries(prometheus, pods)
    assert usage.pods["shop/gone-1"].timestamp == seconds_ago(prometheus, 75)
    later = prometheus.now + datetime.timedelta(seconds=50)
    verdict = assess_usage(usage, scopes(pods), MetricsSettings(), later)
    assert verdict.stale_pods == frozenset({"shop/gone-1"})
    # At maxSampleAge 5m it is under half of that old: dated by node-b's scrape.
    lenient = {"maxSampleAge": "5m"}
    usage, _ = fetch_seeing_queries(prometheus, pods, metrics=lenient)
    assert usage.pods["shop/gone-1"].timestamp == prometheus.now
    rules = MetricsSettings.model_validate(lenient)
    assert assess_usage(usage, scopes(pods), rules, later).stale_pods == frozenset()


def test_pod_on_two_nodes_is_summed_not_refused(prometheus: PrometheusWithHistory) -> None:
    usage, _ = fetch_seeing_queries(prometheus, ("db/db-0",))
    sample = usage.pods["db/db-0"]
    assert sample.memory_bytes == 1 * GiB + 512 * MiB
    # As `sum by (namespace, pod)` gives it (rate() of the series gone 30s ago
    # extrapolates less than its full rate).
    summed = requests.post(
        f"{prometheus.url}/api/v1/query",
        data={
            "query": "sum by (namespace, pod) "
            '(rate(container_cpu_usage_seconds_total{container!="", pod="db-0"}[5m]))',
            "time": f"{prometheus.now.timestamp():.3f}",
        },
        timeout=10,
    ).json()["data"]["result"]
    assert sample.cpu_cores == pytest.approx(float(summed[0]["value"][1]), rel=1e-9)
    assert 0.25 < sample.cpu_cores <= 0.75
    assert sample.timestamp == prometheus.now


def test_per_container_pod_series_refuse(prometheus: PrometheusWithHistory) -> None:
    with pytest.raises(RefusedError) as info:
        fetch_seeing_queries(
            prometheus,
            ("shop/web-1",),
            queries={"podMemory": 'container_memory_working_set_bytes{container!=""}'},
        )
    assert info.value.reference == "duplicate-series"
    assert "pod shop/web-1 has more than one series" in str(info.value)


def test_overridden_pod_timestamp_query_is_used(prometheus: PrometheusWithHistory) -> None:
    stamp = 'min by (namespace, pod) (timestamp(container_cpu_usage_seconds_total{container!=""}))'
    pods = ("shop/web-1", "shop/recent-1")
    usage, sent = fetch_seeing_queries(prometheus, pods, queries={"podCpuTimestamp": stamp})
    assert stamp in sent
    # A sample is as old as the older of its resources' times: the override's own.
    assert usage.pods["shop/recent-1"].timestamp == seconds_ago(prometheus, 30)
    assert usage.pods["shop/web-1"].timestamp == prometheus.now


def test_values_without_node_label_fall_back_to_per_pod_times(
    prometheus: PrometheusWithHistory,
) -> None:
    queries = {
        "podCpu": "sum by (namespace, pod) "
        '(rate(container_cpu_usage_seconds_total{container!=""}[$window]))',
        "podMemory": 'sum by (namespace, pod) (container_memory_working_set_bytes{container!=""})',
    }
    pods = ("shop/web-1", "shop/recent-1", "shop/old-1")
    usage, sent = fetch_seeing_queries(prometheus, pods, queries=queries)
    assert PER_POD_SAMPLE_TIME in sent
    assert usage.pods["shop/web-1"].timestamp == prometheus.now
    assert usage.pods["shop/recent-1"].timestamp == seconds_ago(prometheus, 30)
    assert usage.pods["shop/old-1"].timestamp == seconds_ago(prometheus, 240)
    assert usage.pods["shop/web-1"].cpu_cores == pytest.approx(0.45, rel=0.01)
