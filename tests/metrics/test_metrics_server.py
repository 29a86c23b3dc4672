"""MetricsServerProvider, and kubernetes_secret_reader, through the official client
against a loopback stub serving real metrics.k8s.io/v1beta1 and v1 Secret JSON.

Covers: NodeMetrics and PodMetrics parsed (quantities in n, u, m, Ki, Mi; pods
summed over containers), `timestamp` as the sample time, only the asked-for
nodes and pods; a missing node refused by judgement with a note; a stale node;
duplicates; malformed objects and windows; the API answering 404 (metrics-server
not installed), 503 and 403, or not at all; the Secret reader decoding a key,
reporting a missing key and an HTTP error without the Secret's content.
"""

from __future__ import annotations

import base64
import datetime
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import kubernetes.client
import pytest

from bench.prometheus import GiB, free_port
from loadaware import quantity
from loadaware.errors import RefusedError
from loadaware.metrics import (
    MetricsServerProvider,
    NodeScope,
    assess_usage,
    kubernetes_secret_reader,
)
from loadaware.metrics._metrics_server import parse_quantity
from loadaware.policy import MetricsSettings

NOW = datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)
MiB = 1024**2


def node_metrics(name: str, cpu: str, memory: str, stamp: str = "2026-11-29T07:59:45Z") -> dict:
    return {
        "kind": "NodeMetrics",
        "apiVersion": "metrics.k8s.io/v1beta1",
        "metadata": {"name": name, "creationTimestamp": "2026-11-29T08:00:00Z"},
        "timestamp": stamp,
        "window": "20.047s",
        "usage": {"cpu": cpu, "memory": memory},
    }


def pod_metrics(namespace: str, name: str, containers: dict[str, tuple[str, str]]) -> dict:
    return {
        "kind": "PodMetrics",
        "apiVersion": "metrics.k8s.io/v1beta1",
        "metadata": {"name": name, "namespace": namespace},
        "timestamp": "2026-11-29T07:59:50Z",
        "window": "15s",
        "containers": [
            {"name": c, "usage": {"cpu": cpu, "memory": memory}}
            for c, (cpu, memory) in containers.items()
        ],
    }


class Stub:
    """Serves path -> (status, body) as JSON on 127.0.0.1; records the paths asked for."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, Any]] = {}
        self.paths: list[str] = []
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                path = self.path.split("?")[0]
                stub.paths.append(path)
                status, body = stub.routes.get(
                    path, (404, {"kind": "Status", "status": "Failure", "code": 404})
                )
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def client(self) -> kubernetes.client.ApiClient:
        configuration = kubernetes.client.Configuration()
        configuration.host = self.url
        return kubernetes.client.ApiClient(configuration)


@pytest.fixture
def stub() -> Iterator[Stub]:
    server = Stub()
    thread = threading.Thread(target=server.server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.server.shutdown()
    server.server.server_close()
    thread.join(timeout=10)


NODES_PATH = "/apis/metrics.k8s.io/v1beta1/nodes"
PODS_PATH = "/apis/metrics.k8s.io/v1beta1/pods"
SETTINGS = MetricsSettings.model_validate({"metricsServer": {}})


def serve(stub: Stub, nodes: list[dict], pods: list[dict]) -> None:
    stub.routes[NODES_PATH] = (200, {"kind": "NodeMetricsList", "items": nodes})
    stub.routes[PODS_PATH] = (200, {"kind": "PodMetricsList", "items": pods})


def fetch(stub: Stub, nodes: list[str], pods: tuple[str, ...] | list[str] = ()):
    return MetricsServerProvider(SETTINGS, stub.client()).fetch_usage(nodes, pods, now=NOW)


def test_node_and_pod_metrics(stub: Stub) -> None:
    serve(
        stub,
        [
            node_metrics("node-a", "1523456789n", "6291456Ki"),
            node_metrics("node-b", "250m", "9Gi"),
            node_metrics("node-other", "1", "1Gi"),
        ],
        [
            pod_metrics("shop", "web-1", {"app": ("400m", "512Mi"), "proxy": ("50000u", "64Mi")}),
            pod_metrics("kube-system", "dns", {"dns": ("1m", "20Mi")}),
        ],
    )
    usage = fetch(stub, ["node-a", "node-b"], ["shop/web-1"])
    assert set(usage.nodes) == {"node-a", "node-b"}
    assert usage.nodes["node-a"].cpu_cores == pytest.approx(1.523456789)
    assert usage.nodes["node-a"].memory_bytes == 6 * GiB
    assert usage.nodes["node-b"].cpu_cores == pytest.approx(0.25)
    # The interval is [timestamp - window, timestamp]: timestamp is the newest sample.
    assert usage.nodes["node-a"].timestamp == NOW - datetime.timedelta(seconds=15)
    assert set(usage.pods) == {"shop/web-1"}
    assert usage.pods["shop/web-1"].cpu_cores == pytest.approx(0.45)
    assert usage.pods["shop/web-1"].memory_bytes == 576 * MiB
    assert usage.history is None
    assert stub.paths == [NODES_PATH, PODS_PATH]


def test_missing_and_stale_nodes_refuse(stub: Stub) -> None:
    serve(stub, [node_metrics("node-a", "1", "1Gi", stamp="2026-11-29T07:50:00Z")], [])
    usage = fetch(stub, ["node-a", "node-b"])
    scopes = {
        n: NodeScope(allocatable_cpu_cores=4, allocatable_memory_bytes=16 * GiB)
        for n in ("node-a", "node-b")
    }
    with pytest.raises(RefusedError) as info:
        assess_usage(usage, scopes, MetricsSettings(), NOW)
    assert info.value.reference == "stale-metrics"
    assert "node node-a sample is 600s old (max 120s) (and 1 more nodes)" in str(info.value)
    assert "has no NodeMetrics" in usage.notes["node-b"]


def test_duplicates_refuse(stub: Stub) -> None:
    serve(stub, [node_metrics("node-a", "1", "1Gi"), node_metrics("node-a", "2", "1Gi")], [])
    with pytest.raises(RefusedError) as info:
        fetch(stub, ["node-a"])
    assert info.value.reference == "duplicate-series"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"usage": {"cpu": "lots", "memory": "1Gi"}}, "not a quantity: 'lots'"),
        ({"timestamp": "yesterday"}, "timestamp 'yesterday' is not an RFC 3339 time"),
        ({"window": "0s"}, "window '0s' is not positive"),
        ({"window": None}, "not a duration: None"),
    ],
)
def test_malformed_objects_refuse(stub: Stub, change: dict, problem: str) -> None:
    serve(stub, [{**node_metrics("node-a", "1", "1Gi"), **change}], [])
    with pytest.raises(RefusedError) as info:
        fetch(stub, ["node-a"])
    assert info.value.reference == "metrics-query-failed"
    assert problem in str(info.value)


@pytest.mark.parametrize(
    ("status", "reference"),
    [(404, "metrics-unreachable"), (503, "metrics-unreachable"), (403, "metrics-auth-failed")],
)
def test_api_errors_refuse(stub: Stub, status: int, reference: str) -> None:
    stub.routes[NODES_PATH] = (status, {"kind": "Status", "code": status})
    with pytest.raises(RefusedError) as info:
        fetch(stub, ["node-a"])
    assert info.value.reference == reference
    assert f": {status} " in str(info.value)


def test_api_down_refuses() -> None:
    configuration = kubernetes.client.Configuration()
    configuration.host = f"http://127.0.0.1:{free_port()}"
    configuration.retries = 0
    provider = MetricsServerProvider(SETTINGS, kubernetes.client.ApiClient(configuration))
    with pytest.raises(RefusedError) as info:
        provider.fetch_usage(["node-a"], [], now=NOW)
    assert info.value.reference == "metrics-unreachable"


@pytest.mark.parametrize(
    ("text", "value"),
    [("1523456789n", 1.523456789), ("250m", 0.25), ("2", 2.0), ("1Ki", 1024.0), ("1e3", 1000.0)],
)
def test_parse_quantity(text: str, value: float) -> None:
    assert parse_quantity(text) == pytest.approx(value)


@pytest.mark.parametrize(
    "text",
    [
        "0n",
        "1n",
        "20000000n",
        "123456789012345678n",
        "7u",
        "999m",
        "1000m",
        "47996Ki",
        "9007199254740993Ki",
        "3Mi",
        "0012n",
    ],
)
def test_metrics_servers_own_forms_read_exactly_as_any_quantity(text: str) -> None:
    assert parse_quantity(text) == float(quantity.parse_quantity(text))


@pytest.mark.parametrize("text", ["n", "Ki", "-5n", "1.5Ki", "١٢n", "12 n", "+3m", ""])
def test_other_spellings_take_the_general_reading(text: str) -> None:
    try:
        expected: float | None = float(quantity.parse_quantity(text.strip()))
    except ValueError:
        expected = None
    if expected is None:
        with pytest.raises(ValueError, match="not a quantity"):
            parse_quantity(text)
    else:
        assert parse_quantity(text) == expected


SECRET_PATH = "/api/v1/namespaces/loadaware/secrets/prometheus-token"


def test_secret_reader(stub: Stub) -> None:
    token = "tok-from-secret"
    encoded = base64.b64encode(token.encode()).decode()
    stub.routes[SECRET_PATH] = (
        200,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "prometheus-token", "namespace": "loadaware"},
            "data": {"token": encoded},
        },
    )
    read = kubernetes_secret_reader(stub.client())
    assert read("loadaware", "prometheus-token", "token") == token
    with pytest.raises(RefusedError) as info:
        read("loadaware", "prometheus-token", "other")
    assert "has no such key (keys: token)" in str(info.value)
    assert encoded not in str(info.value)
    with pytest.raises(RefusedError) as info:
        read("loadaware", "absent", "token")
    assert info.value.reference == "metrics-auth-failed"
    assert "404 Not Found" in str(info.value)
