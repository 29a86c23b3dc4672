"""Usage that follows the pods, and fault injection.

Covered: metrics.k8s.io NodeMetrics and PodMetrics equal the scenario's
metrics document (container usage summing to the pod's), with a fresh
timestamp and window; /metrics in Prometheus text format with cAdvisor and
node-exporter names and kube-prometheus-stack labels, the cpu counter growing at
the pod's usage rate on the simulated clock, and the text accepted by
Prometheus' own parser and `promtool check metrics`; a pod's usage moving to
the node its replacement lands on; faults: 500 and 429 Status bodies (429
with Retry-After), latency, dropped connections, `times`, and the Python API.
"""

from __future__ import annotations

import http.client
import re
import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest

from loadaware import sim
from loadaware.sim import scenarios
from tests.lib.sim import NOW, call, eviction, pods_of, sim_server


@pytest.fixture
def server() -> Iterator[sim.SimServer]:
    with sim_server() as running:
        yield running


def _cores(text: str) -> float:
    return int(text.rstrip("n")) / 1e9


def _bytes(text: str) -> float:
    return int(text.rstrip("Ki")) * 1024


def test_metrics_api_matches_the_scenario(server: sim.SimServer) -> None:
    document = scenarios.builtin_scenario("small", now=NOW).metrics
    code, nodes = call(server, "GET", "/apis/metrics.k8s.io/v1beta1/nodes")
    assert code == 200
    assert nodes["kind"] == "NodeMetricsList"
    for item in nodes["items"]:
        truth = document["nodes"][item["metadata"]["name"]]
        assert _cores(item["usage"]["cpu"]) == pytest.approx(truth["cpu"], rel=1e-6)
        assert _bytes(item["usage"]["memory"]) == pytest.approx(truth["memory"], abs=1024)
        assert item["timestamp"] == "2026-11-29T08:00:00Z"
        assert item["window"] == "15s"
    code, pods = call(server, "GET", "/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods")
    assert pods["items"]
    for item in pods["items"]:
        key = f"shop/{item['metadata']['name']}"
        total = sum(_cores(c["usage"]["cpu"]) for c in item["containers"])
        assert total == pytest.approx(document["pods"][key]["cpu"], abs=1e-6)
    name = pods["items"][0]["metadata"]["name"]
    code, one = call(server, "GET", f"/apis/metrics.k8s.io/v1beta1/namespaces/shop/pods/{name}")
    assert code == 200
    assert one["kind"] == "PodMetrics"


def test_prometheus_exposition(server: sim.SimServer) -> None:
    code, text = call(server, "GET", "/metrics")
    assert code == 200
    assert "# TYPE container_cpu_usage_seconds_total counter" in text
    assert "# TYPE node_cpu_seconds_total counter" in text
    pod = pods_of(server, "shop", "frontend")[0]
    name = pod["metadata"]["name"]
    pattern = re.compile(
        r'container_cpu_usage_seconds_total\{container="frontend",cpu="total",[^}]*'
        rf'namespace="shop",node="([^"]+)",pod="{name}"[^}}]*\}} (\S+)'
    )
    match = pattern.search(text)
    assert match is not None, text[:2000]
    assert match.group(1) == pod["spec"]["nodeName"]
    first = float(match.group(2))
    assert re.search(r'node_memory_MemAvailable_bytes\{[^}]*instance="default-a-001"', text)
    assert re.search(r'node_cpu_seconds_total\{[^}]*cpu="0"[^}]*mode="idle"', text)
    assert 'container=""' in text  # the pod cgroup, which queries filter out
    server.advance(100)
    match = pattern.search(call(server, "GET", "/metrics")[1])
    assert match is not None
    usage = server.sim.usage.pods[f"shop/{name}"][0]
    containers = {c["name"] for c in pod["spec"]["containers"]}
    if containers == {"frontend"}:
        assert float(match.group(2)) - first == pytest.approx(usage * 100, rel=1e-6)
    else:
        assert float(match.group(2)) > first


def test_usage_moves_with_the_pod(server: sim.SimServer) -> None:
    victim = pods_of(server, "ads", "rank-indexer")[0]
    name, node = victim["metadata"]["name"], victim["spec"]["nodeName"]
    cpu = server.sim.usage.pods[f"ads/{name}"][0]
    before = server.node_usage()
    known = {p["metadata"]["uid"] for p in server.sim.list("pods", "ads")}
    assert (
        call(server, "POST", f"/api/v1/namespaces/ads/pods/{name}/eviction", eviction("ads", name))[
            0
        ]
        == 201
    )
    replacement = server.wait_for(
        lambda: [
            p
            for p in server.sim.list("pods", "ads")
            if p["metadata"]["uid"] not in known and p["status"].get("phase") == "Running"
        ]
    )[0]
    target = replacement["spec"]["nodeName"]
    assert server.sim.usage.pods[f"ads/{replacement['metadata']['name']}"][0] == cpu
    server.advance(31)
    server.wait_for(lambda: server.sim.find("pods", "ads", name) is None)
    after = server.node_usage()
    assert after[node][0] == pytest.approx(before[node][0] - cpu)
    assert after[target][0] == pytest.approx(before[target][0] + cpu)


def test_injected_errors(server: sim.SimServer) -> None:
    server.faults.add("/api/v1/nodes$", status=500, times=1)
    code, body = call(server, "GET", "/api/v1/nodes")
    assert code == 500
    assert body["reason"] == "InternalError"
    assert call(server, "GET", "/api/v1/nodes")[0] == 200
    server.faults.add("/pods", method="GET", status=429)
    connection = http.client.HTTPConnection(server.host, server.port, timeout=5)
    connection.request("GET", "/api/v1/pods")
    response = connection.getresponse()
    assert response.status == 429
    assert response.getheader("Retry-After") == "1"
    response.read()
    connection.close()
    assert call(server, "GET", "/api/v1/nodes")[0] == 200
    server.faults.clear()
    assert call(server, "GET", "/api/v1/pods")[0] == 200


def test_latency_and_dropped_connections(server: sim.SimServer) -> None:
    server.faults.add("/api/v1/namespaces$", latency=0.3, times=1)
    started = time.monotonic()
    assert call(server, "GET", "/api/v1/namespaces")[0] == 200
    assert time.monotonic() - started >= 0.3
    server.faults.add("/api/v1/namespaces$", drop=True, times=1)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        call(server, "GET", "/api/v1/namespaces")
    assert call(server, "GET", "/api/v1/namespaces")[0] == 200


def test_exposition_parses_as_prometheus_text(server: sim.SimServer) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    families = {f.name: f for f in text_string_to_metric_families(server.exposition())}
    # The parser drops a counter's _total suffix from the family name.
    assert families["container_cpu_usage_seconds"].type == "counter"
    assert families["node_cpu_seconds"].type == "counter"
    assert families["node_memory_MemAvailable_bytes"].type == "gauge"
    pods = {
        (s.labels["namespace"], s.labels["pod"])
        for s in families["container_memory_working_set_bytes"].samples
        if s.labels["container"]
    }
    assert len(pods) == len(server.sim.list("pods"))
    nodes = {s.labels["instance"] for s in families["node_memory_MemTotal_bytes"].samples}
    assert nodes == {n["metadata"]["name"] for n in server.sim.list("nodes")}


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_promtool_accepts_the_exposition(server: sim.SimServer) -> None:
    result = subprocess.run(
        ["promtool", "check", "metrics"],
        input=server.exposition(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    # promtool exits 3 for lint warnings only (names, help texts), 1 for parse errors.
    assert result.returncode in (0, 3), result.stderr
    assert "error" not in result.stderr.lower()
