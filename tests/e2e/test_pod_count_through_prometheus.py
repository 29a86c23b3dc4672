"""A node crowded by pod count, relieved by a live round on the simulated API with
a real Prometheus (scraping the simulated cluster) as the metrics source.

Asserted: the pool judging `pods` finds default-a-002 (23 of 110 pod slots) over
its 19% target, the round moves pods off it through Evictions, and the relief
check judges it on the count read back from the API, once a Prometheus sample
covering only the time after the moves is there (its time minus the rate
window is after the evicted pods stopped).
"""

from __future__ import annotations

import datetime
import pathlib
import time
import urllib.parse

import pytest

from loadaware import cluster, evict, metrics, policy, report, runtime, sim
from loadaware.cluster import ClientSettings
from tests.lib import alertmanager as lib
from tests.lib.prometheus import free_port

pytestmark = pytest.mark.slow

RATE_WINDOW_SECONDS = 5


def _poll(condition, what: str, timeout: float):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for {what}"
        time.sleep(0.2)
    return value


def test_pod_count_relieved_and_proven_through_prometheus(tmp_path: pathlib.Path) -> None:
    if not lib.tools_available():
        pytest.fail("prometheus is needed: run `make system-deps`")
    server = sim.start_server(scenario="small", ready_delay=0.5)
    (tmp_path / "prom").mkdir()
    prometheus = lib.ScrapingPrometheus(
        tmp_path / "prom",
        targets=[f"127.0.0.1:{server.port}"],
        rules="groups: []\n",
        alertmanager=f"127.0.0.1:{free_port()}",
    )
    try:
        prometheus.start()
        settings = policy.parse_policy(
            {
                "metrics": {
                    "maxSampleAge": "1m",
                    "prometheus": {
                        "url": prometheus.url,
                        "rateWindow": f"{RATE_WINDOW_SECONDS}s",
                        "scrapeInterval": "1s",
                    },
                    "hotspotConfirmation": {"consecutive": 1},
                },
                "nodePools": [
                    {"name": "default", "thresholds": {"pods": 5}, "targetThresholds": {"pods": 19}}
                ],
                "evictor": {"gracePeriodSeconds": 1},
                "state": {"namespace": "default"},
            }
        )
        client = cluster.api_client(
            ClientSettings(kubeconfig=str(server.write_kubeconfig(tmp_path / "kubeconfig")))
        )
        provider = metrics.PrometheusProvider(settings.metrics)

        def read_usage(state: cluster.ClusterState) -> metrics.Usage:
            return runtime.fetch_cluster_usage(state, settings, provider, server.clock.now())

        context = runtime.RoundContext(
            kube=evict.Kube(client),
            read_cluster=lambda: cluster.read_cluster(client=client),
            read_usage=read_usage,
            clock=server.clock.now,
            poll_seconds=0.5,
        )

        def scraped() -> bool:
            try:
                read_usage(context.read_cluster())
            except Exception:
                return False
            return True

        _poll(scraped, "Prometheus to have every node", 30)
        # Until Prometheus holds a whole rate window, rate() sees only part of it.
        covered = urllib.parse.quote(
            f"min(count_over_time(node_memory_MemAvailable_bytes[{RATE_WINDOW_SECONDS + 2}s]))"
            f" >= {RATE_WINDOW_SECONDS + 1}"
        )
        _poll(
            lambda: prometheus.get_json(f"/api/v1/query?query={covered}")["data"]["result"],
            "a whole rate window of samples",
            30,
        )
        record = runtime.run_round(settings, context)
        audit = report.round_to_json(record)
        assert audit["status"] == "executed", audit["reason"]
        hot = {n["name"] for n in audit["plan"]["nodes"] if n["class"] == "hot"}
        assert hot == {"default-a-002"}
        verification = audit["verification"]
        assert verification["verdict"] == "relieved", verification
        [row] = verification["relief"]
        count = sum(1 for p in server.list("pods") if p["spec"].get("nodeName") == row["node"])
        assert row["observed"]["pods"] == pytest.approx(count / 110, abs=1e-4)
        assert row["observed"]["pods"] <= 0.19
        window = datetime.timedelta(seconds=RATE_WINDOW_SECONDS)
        for judged in verification["relief"] + verification["landingNodes"]:
            changed = evict.parse_rfc3339(judged["changedBy"])
            sample = evict.parse_rfc3339(judged["sampleTime"])
            assert changed is not None
            assert sample is not None
            assert sample - window > changed, judged
    finally:
        prometheus.stop()
        server.stop()
