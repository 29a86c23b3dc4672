"""PrometheusProvider against a real Prometheus holding a known history.

Covers: node and pod values equal to the truth (rates within 1%, memory exact,
cAdvisor's pod-level series not double counted, `instance` with and without a
port, nodeLabel: node); sample times are the scrape times; a fresh cluster
passes judgement; a node stale for 10 minutes refuses the round (naming node,
age and query) or is excluded; the lookback trap (an instant query still
returns a series that stopped 4 minutes ago, which must be stale at
maxSampleAge 2m); a missing node; a stale pod; duplicate series; NaN and
negative values; query overrides with $window; a bad query; Prometheus down;
5xx answers; one POST per resource and one range query; hotspot confirmation
over a range.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from bench.prometheus import AuthProxy, GiB, free_port
from loadaware.errors import RefusedError
from loadaware.metrics import (
    HotLimits,
    NodeScope,
    PrometheusProvider,
    assess_usage,
    confirm_hotspots,
)
from loadaware.policy import MetricsSettings
from tests.metrics.conftest import FRESH_NODES, PrometheusWithHistory

FRESH_PODS = ("shop/web-1", "shop/web-2", "batch/job-1", "shop/cache-1", "shop/hot-1")


def settings(url: str, metrics: dict[str, Any] | None = None, **source: Any) -> MetricsSettings:
    return MetricsSettings.model_validate(
        {"prometheus": {"url": url, "timeout": "5s", **source}, **(metrics or {})}
    )


def scopes(names: tuple[str, ...] | list[str], pods: tuple[str, ...] = ()) -> dict[str, NodeScope]:
    return {
        name: NodeScope(
            allocatable_cpu_cores=8.0,
            allocatable_memory_bytes=16 * GiB,
            pod_keys=tuple(p for p in pods if p.startswith("shop/") and name == "node-a"),
        )
        for name in names
    }


def fetch(prom: PrometheusWithHistory, nodes, pods=(), url: str | None = None, **kwargs: Any):
    provider = PrometheusProvider(settings(url or prom.url, **kwargs))
    return provider.fetch_usage(nodes, pods, now=prom.now)


def test_values_equal_the_truth(prometheus: PrometheusWithHistory) -> None:
    usage = fetch(prometheus, FRESH_NODES, FRESH_PODS)
    assert set(usage.nodes) == set(FRESH_NODES)
    for name in FRESH_NODES:
        truth, sample = prometheus.nodes[name], usage.nodes[name]
        assert sample.cpu_cores == pytest.approx(truth.cpu_cores, rel=0.01), name
        assert sample.memory_bytes == truth.memory_at(prometheus.now.timestamp()), name
        # The newest scrape is at NOW exactly: the time of the sample, not of the query.
        assert sample.timestamp == prometheus.now
    assert set(usage.pods) == set(FRESH_PODS)
    for key in FRESH_PODS:
        truth, sample = prometheus.pods[key], usage.pods[key]
        # cAdvisor's pod-level series (container="") holds the total again: left out.
        assert sample.cpu_cores == pytest.approx(truth.cpu_cores, rel=0.01), key
        assert sample.memory_bytes == truth.memory_bytes, key
    assert usage.collected_at == prometheus.now


def test_node_label_option(prometheus: PrometheusWithHistory) -> None:
    usage = fetch(prometheus, FRESH_NODES, nodeLabel="node")
    assert usage.nodes["node-a"].cpu_cores == pytest.approx(1.5, rel=0.01)
    assert set(usage.nodes) == set(FRESH_NODES)


def test_fresh_cluster_passes_judgement(prometheus: PrometheusWithHistory) -> None:
    usage = fetch(prometheus, FRESH_NODES, FRESH_PODS)
    verdict = assess_usage(
        usage, scopes(FRESH_NODES, FRESH_PODS), MetricsSettings(), prometheus.now
    )
    assert verdict.excluded_nodes == {}
    assert verdict.stale_pods == frozenset()


def test_stale_node_refuses_the_round(prometheus: PrometheusWithHistory) -> None:
    names = [*FRESH_NODES, "node-stale"]
    usage = fetch(prometheus, names)
    # Gone for longer than the lookback: no value, but its last sample time is known.
    assert "node-stale" not in usage.nodes
    assert usage.last_seen["node-stale"] == prometheus.now - datetime.timedelta(minutes=10)
    with pytest.raises(RefusedError) as info:
        assess_usage(usage, scopes(names), MetricsSettings(), prometheus.now)
    assert info.value.reference == "stale-metrics"
    text = str(info.value)
    assert "node node-stale sample is 600s old (max 120s)" in text
    assert "node_cpu_seconds_total" in text  # the query behind it


def test_stale_node_excluded(prometheus: PrometheusWithHistory) -> None:
    names = [*FRESH_NODES, "node-stale"]
    rules = MetricsSettings(on_stale_node="Exclude", max_excluded_fraction=0.2)
    usage = fetch(prometheus, names)
    verdict = assess_usage(usage, scopes(names), rules, prometheus.now)
    assert set(verdict.excluded_nodes) == {"node-stale"}
    assert "600s old" in verdict.excluded_nodes["node-stale"]


def test_lookback_trap(prometheus: PrometheusWithHistory) -> None:
    names = [*FRESH_NODES, "node-lookback"]
    usage = fetch(prometheus, names)
    # The instant query does return values for a series that stopped 4 minutes ago
    # (and rate() over the last minute of data in a 5m window understates cpu)...
    sample = usage.nodes["node-lookback"]
    assert 0 < sample.cpu_cores < 1.0
    assert sample.memory_bytes == 4 * GiB
    # ...but with the time of its last scrape, so it is stale at maxSampleAge 2m.
    assert sample.timestamp == prometheus.now - datetime.timedelta(minutes=4)
    with pytest.raises(RefusedError, match=r"node-lookback sample is 240s old \(max 120s\)"):
        assess_usage(usage, scopes(names), MetricsSettings(), prometheus.now)
    # Still fresh enough at maxSampleAge 5m.
    lenient = MetricsSettings(max_sample_age=datetime.timedelta(minutes=5))
    assert assess_usage(usage, scopes(names), lenient, prometheus.now).excluded_nodes == {}


def test_missing_node(prometheus: PrometheusWithHistory) -> None:
    names = [*FRESH_NODES, "node-ghost"]
    usage = fetch(prometheus, names)
    assert "node-ghost" not in usage.nodes
    assert "node-ghost" not in usage.last_seen
    with pytest.raises(RefusedError) as info:
        assess_usage(usage, scopes(names), MetricsSettings(), prometheus.now)
    assert info.value.reference == "stale-metrics"
    assert "node node-ghost no sample; no value from nodeCpu" in str(info.value)


def test_stale_pod_is_not_fresh(prometheus: PrometheusWithHistory) -> None:
    pods = (*FRESH_PODS, "shop/old-1")
    usage = fetch(prometheus, FRESH_NODES, pods)
    assert usage.pods["shop/old-1"].timestamp == prometheus.now - datetime.timedelta(minutes=4)
    verdict = assess_usage(usage, scopes(FRESH_NODES, pods), MetricsSettings(), prometheus.now)
    assert verdict.stale_pods == frozenset({"shop/old-1"})


def test_duplicate_series_refuse(prometheus: PrometheusWithHistory) -> None:
    with pytest.raises(RefusedError) as info:
        fetch(prometheus, [*FRESH_NODES, "node-dup"])
    assert info.value.reference == "duplicate-series"
    assert "node node-dup has more than one series" in str(info.value)
    assert 'job="node-exporter-2"' in str(info.value)
    # A duplicate on a node the round does not ask about is no concern of it.
    assert set(fetch(prometheus, FRESH_NODES).nodes) == set(FRESH_NODES)


@pytest.mark.parametrize(
    ("override", "problem"),
    [
        ("-1 * node_memory_MemTotal_bytes", "memory value -1.71799e+10 is negative"),
        ("NaN * node_memory_MemTotal_bytes", "memory value is nan"),
    ],
    ids=["negative", "nan"],
)
def test_implausible_values_refuse(
    prometheus: PrometheusWithHistory, override: str, problem: str
) -> None:
    usage = fetch(prometheus, FRESH_NODES, queries={"nodeMemory": override})
    with pytest.raises(RefusedError) as info:
        assess_usage(usage, scopes(FRESH_NODES), MetricsSettings(), prometheus.now)
    assert info.value.reference == "implausible-metrics"
    assert problem in str(info.value)


def test_query_overrides_and_window(prometheus: PrometheusWithHistory) -> None:
    usage = fetch(
        prometheus,
        FRESH_NODES,
        FRESH_PODS,
        rateWindow="2m",
        queries={
            "nodeMemory": "node_memory_MemTotal_bytes",
            "podCpu": "sum by (namespace, pod) "
            '(irate(container_cpu_usage_seconds_total{container!=""}[$window]))',
        },
    )
    assert usage.nodes["node-a"].memory_bytes == 16 * GiB
    assert usage.pods["shop/web-1"].cpu_cores == pytest.approx(0.45, rel=0.01)
    # The default sample-time query still dates the overridden value.
    assert usage.notes["node-a"].startswith("sample time from")


def test_bad_query_refuses_with_prometheus_error(prometheus: PrometheusWithHistory) -> None:
    with pytest.raises(RefusedError) as info:
        fetch(prometheus, FRESH_NODES, queries={"nodeCpu": "sum(("})
    assert info.value.reference == "metrics-query-failed"
    assert "HTTP 400" in str(info.value)
    assert "parse error" in str(info.value)


def test_prometheus_down() -> None:
    provider = PrometheusProvider(settings(f"http://127.0.0.1:{free_port()}"))
    now = datetime.datetime.now(datetime.UTC)
    with pytest.raises(RefusedError) as info:
        provider.fetch_usage(["node-a"], [], now=now)
    assert info.value.reference == "metrics-unreachable"
    assert "cannot reach http://127.0.0.1:" in str(info.value)


@pytest.mark.parametrize(
    ("status", "reference"),
    [(503, "metrics-unreachable"), (500, "metrics-query-failed"), (404, "metrics-query-failed")],
)
def test_error_status_refuses(
    prometheus: PrometheusWithHistory, status: int, reference: str
) -> None:
    with AuthProxy(prometheus.server.url, status=status) as proxy:
        with pytest.raises(RefusedError) as info:
            fetch(prometheus, FRESH_NODES, url=proxy.url)
        # No retry storm: each query asked at most once, none retried on 5xx.
        bodies = [r.body for r in proxy.seen]
        assert len(bodies) == len(set(bodies))
    assert info.value.reference == reference
    assert f"HTTP {status}" in str(info.value)


def test_whole_cluster_queries_posted_once(prometheus: PrometheusWithHistory) -> None:
    with AuthProxy(prometheus.server.url) as proxy:
        fetch(prometheus, FRESH_NODES, FRESH_PODS, url=proxy.url)
    # Pod values, a sample-time query per node resource, the pods' dating (cAdvisor
    # scrape time per node, and the pods with old samples), and the range query for
    # hotspot confirmation, whose last point gives the node values.
    assert [r.method for r in proxy.seen] == ["POST"] * 7
    assert sorted(r.path for r in proxy.seen) == ["/api/v1/query"] * 6 + ["/api/v1/query_range"]
    # The query travels in the body, not the URL, and none is asked twice.
    assert all(b"query=" in r.body for r in proxy.seen)
    assert all("?" not in r.path for r in proxy.seen)
    assert len({r.body for r in proxy.seen}) == 7


def test_instant_node_values_without_confirmation(prometheus: PrometheusWithHistory) -> None:
    rules = {"hotspotConfirmation": {"consecutive": 1}}
    with AuthProxy(prometheus.server.url) as proxy:
        usage = fetch(prometheus, FRESH_NODES, FRESH_PODS, url=proxy.url, metrics=rules)
    assert sorted(r.path for r in proxy.seen) == ["/api/v1/query"] * 8
    assert usage.history is None
    assert usage.nodes["node-d"].cpu_cores == pytest.approx(3.1, rel=0.01)


def test_nodes_alone_ask_no_pod_query(prometheus: PrometheusWithHistory) -> None:
    """The relief check after a round reads only the nodes it judges: no pod
    answer (150,000 series in a large cluster) is asked for."""
    rules = {"hotspotConfirmation": {"consecutive": 1}}
    with AuthProxy(prometheus.server.url) as proxy:
        usage = fetch(prometheus, FRESH_NODES, (), url=proxy.url, metrics=rules)
    # A value and a sample-time query per node resource.
    assert sorted(r.path for r in proxy.seen) == ["/api/v1/query"] * 4
    assert not any(b"container_" in r.body for r in proxy.seen)
    assert usage.pods == {}
    assert usage.nodes["node-d"].cpu_cores == pytest.approx(3.1, rel=0.01)


def test_thanos_or_mimir_prefix_and_tenant_header(prometheus: PrometheusWithHistory) -> None:
    with AuthProxy(
        prometheus.server.url, prefix="/prometheus", headers={"X-Scope-OrgID": "team-a"}
    ) as proxy:
        usage = fetch(prometheus, FRESH_NODES, url=proxy.url, headers={"X-Scope-OrgID": "team-a"})
        assert usage.nodes["node-a"].cpu_cores == pytest.approx(1.5, rel=0.01)
        assert all(r.path.startswith("/prometheus/api/v1/query") for r in proxy.seen)
        with pytest.raises(RefusedError) as info:
            fetch(prometheus, FRESH_NODES, url=proxy.url)
    assert info.value.reference == "metrics-auth-failed"


def test_hotspot_confirmation_over_a_range(prometheus: PrometheusWithHistory) -> None:
    rules = {"hotspotConfirmation": {"consecutive": 3, "interval": "1m"}}
    usage = fetch(prometheus, FRESH_NODES, metrics=rules)
    history = usage.history
    assert history is not None
    assert len(history.times) == 5
    assert history.times[-1] == prometheus.now
    assert history.times[0] == prometheus.now - datetime.timedelta(minutes=4)
    hot = history.nodes["node-hot"].memory_bytes
    assert hot == (4 * GiB, 14 * GiB, 14 * GiB, 14 * GiB, 14 * GiB)
    limits = {name: HotLimits(cpu_cores=7.0, memory_bytes=12 * GiB) for name in FRESH_NODES}
    # node-brief has been over 12 GiB for two points only.
    assert confirm_hotspots(history, limits, 3) == frozenset({"node-hot"})
    assert confirm_hotspots(history, limits, 2) == frozenset({"node-hot", "node-brief"})
    assert history.nodes["node-a"].cpu_cores == pytest.approx((1.5,) * 5, rel=0.01)
