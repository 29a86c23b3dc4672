"""A real Prometheus holding a known history, started once per session.

Its TSDB is backfilled with node-exporter and cAdvisor series (kube-prometheus-stack
names and labels) relative to NOW, the moment the fixture starts: fresh series
run on to NOW + 10 minutes, so that queries made at the real time during the
session (the CLI) see them as live; tests that query through the API pass
`now=prometheus.now` and are exact.
"""

from __future__ import annotations

import datetime
import pathlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from bench import prometheus as lib
from bench.prometheus import GiB, NodeTruth, PodTruth

MiB = 1024**2
STEP_SECONDS = 15.0

# Nodes every test may ask for: fresh, complete, one series set each.
FRESH_NODES = ("node-a", "node-b", "node-c", "node-d", "node-hot", "node-brief")


def _nodes(now: float) -> list[NodeTruth]:
    return [
        NodeTruth("node-a", cpu_cores=1.5, memory_used_bytes=6 * GiB),
        # kube-prometheus-stack relabels instance to the bare node name: no port.
        NodeTruth("node-b", cpu_cores=2.25, memory_used_bytes=9 * GiB, instance="node-b"),
        NodeTruth("node-c", cpu_cores=0.8, memory_used_bytes=3 * GiB),
        NodeTruth("node-d", cpu_cores=3.1, memory_used_bytes=12 * GiB, cpus=8),
        # Memory over 12 GiB since NOW-200s (four 1m points) vs since NOW-80s (two).
        NodeTruth(
            "node-hot", cpu_cores=1.0, memory_used_bytes=4 * GiB, memory_step=(now - 200, 14 * GiB)
        ),
        NodeTruth(
            "node-brief", cpu_cores=1.0, memory_used_bytes=4 * GiB, memory_step=(now - 80, 14 * GiB)
        ),
        # node-exporter gone 10 minutes ago: beyond the 5m lookback.
        NodeTruth("node-stale", cpu_cores=1.0, memory_used_bytes=4 * GiB, end=now - 600),
        # Gone 4 minutes ago: an instant query still returns its last values.
        NodeTruth("node-lookback", cpu_cores=1.0, memory_used_bytes=4 * GiB, end=now - 240),
        # Scraped by two jobs: two series for one node.
        NodeTruth("node-dup", cpu_cores=1.0, memory_used_bytes=4 * GiB),
        NodeTruth("node-dup", cpu_cores=1.0, memory_used_bytes=4 * GiB, job="node-exporter-2"),
    ]


def _pods(now: float) -> list[PodTruth]:
    return [
        PodTruth("shop", "web-1", "node-a", {"app": (0.4, 512 * MiB), "proxy": (0.05, 64 * MiB)}),
        PodTruth("shop", "web-2", "node-a", {"app": (0.3, 256 * MiB)}),
        PodTruth("batch", "job-1", "node-b", {"worker": (1.2, 2 * GiB)}),
        PodTruth("shop", "cache-1", "node-c", {"redis": (0.1, 1 * GiB)}),
        PodTruth("shop", "hot-1", "node-hot", {"app": (0.9, 3 * GiB)}),
        PodTruth("shop", "old-1", "node-a", {"app": (0.2, 128 * MiB)}, end=now - 240),
        # Gone 30s ago, under half of maxSampleAge: dated by its node's scrape.
        PodTruth("shop", "recent-1", "node-a", {"app": (0.1, 32 * MiB)}, end=now - 30),
        # Gone 75s ago, over half of maxSampleAge: dated by its own series.
        PodTruth("shop", "gone-1", "node-b", {"app": (0.1, 32 * MiB)}, end=now - 75),
        # A StatefulSet pod recreated on node-d 30s ago: within the lookback its
        # series on node-c still answer too.
        PodTruth("db", "db-0", "node-c", {"postgres": (0.5, 1 * GiB)}, end=now - 30),
        PodTruth("db", "db-0", "node-d", {"postgres": (0.25, 512 * MiB)}),
    ]


@dataclass(frozen=True)
class PrometheusWithHistory:
    url: str
    now: datetime.datetime
    nodes: dict[str, NodeTruth]
    pods: dict[str, PodTruth]
    server: lib.PrometheusServer


@pytest.fixture(scope="session")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusWithHistory]:
    if not lib.tools_available():
        pytest.fail("prometheus and promtool are needed: run `make system-deps`")
    workdir = tmp_path_factory.mktemp("prometheus")
    now = float(int(time.time()))
    nodes, pods = _nodes(now), _pods(now)
    history = lib.kube_prometheus_history(
        nodes, pods, start=now - 40 * 60, end=now + 10 * 60, step=STEP_SECONDS
    )
    openmetrics = workdir / "history.om"
    with openmetrics.open("w") as out:
        lib.write_openmetrics(history, out)
    lib.backfill(openmetrics, workdir / "tsdb")
    with lib.PrometheusServer(workdir / "tsdb", workdir) as server:
        yield PrometheusWithHistory(
            url=server.url,
            now=datetime.datetime.fromtimestamp(now, datetime.UTC),
            nodes={n.name: n for n in nodes},
            pods={p.key: p for p in pods},
            server=server,
        )


@pytest.fixture(scope="session")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> lib.TlsFiles:
    return lib.make_tls_files(pathlib.Path(tmp_path_factory.mktemp("tls")))
