"""The whole chain with real parts: the simulated cluster's /metrics scraped by a
real Prometheus evaluating a hotspot rule, a real Alertmanager routing the alert
with a bearer token from `credentials_file` to a `loadaware serve` process
(leader election on, Prometheus as its metrics source), which relieves the hot
nodes through the official client against the simulated API.

Asserted: exactly one round ran, started by Alertmanager and scoped to the
alerting nodes; the hot nodes were relieved in the simulated cluster; the alert
resolved in Prometheus; Alertmanager's repeats while it fired and its resolved
notification started no second round; /metrics says the same; every Grafana
dashboard query runs on what this Prometheus scraped from the simulated cluster
and loadaware, and returns data except on panels about things that never
happened in this round.
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import signal
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from bench.prometheus import free_port
from loadaware import sim
from tests.lib import alertmanager as lib
from tests.lib.serve import ServeClient
from tests.lib.sim import sim_server
from tests.lib.wait import poll

pytestmark = pytest.mark.slow

HOT_NODES = {"default-a-002", "default-c-002"}  # the "small" scenario's hot nodes
MEMORY_HOT_RATIO = 0.8
TOKEN = "e2e-webhook-token"
RATE_WINDOW_SECONDS = 10  # the policy's rateWindow
RATE_WINDOW = datetime.timedelta(seconds=RATE_WINDOW_SECONDS)

RULES = f"""\
groups:
- name: loadaware
  interval: 1s
  rules:
  - alert: NodeHotspot
    expr: 1 - node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes > {MEMORY_HOT_RATIO}
    # Until Prometheus has scraped a whole rateWindow, rate() sees only part of
    # it and cpu reads low: the round must not plan on that.
    for: {RATE_WINDOW_SECONDS + 2}s
    labels:
      loadaware_action: rebalance
    annotations:
      summary: memory of {{{{ $labels.node }}}} is over {MEMORY_HOT_RATIO:.0%}
"""


# Panels that only show data once something went wrong or a trigger of another
# kind ran; a single successful Alertmanager-triggered round leaves them empty.
QUIET_PANELS = {
    ("loadaware.json", "Refused rounds by reason"),  # nothing was refused
    ("loadaware.json", "Next scheduled round"),  # this policy has no schedules
    # Per-node and per-round forecast errors exist once a round planned ahead is proved.
    ("loadaware.json", "Forecast error by node"),
    ("loadaware.json", "Forecast mean absolute error"),
}


def dashboard_queries() -> list[tuple[str, str, str]]:
    """(dashboard, panel, expr) for every query, with the dashboard macros filled in."""
    found = []
    for path in sorted((pathlib.Path(__file__).parents[2] / "dashboards").glob("*.json")):
        board = json.loads(path.read_text())
        for panel in board["panels"]:
            for target in panel.get("targets") or []:
                expr = target["expr"]
                for macro, value in (
                    ("$__rate_interval", "1m"),
                    ("$__interval", "15s"),
                    ("$__range", "10m"),
                    ("$resource", ".*"),
                ):
                    expr = expr.replace(macro, value)
                found.append((path.name, panel["title"], expr))
    return found


def prometheus_query(url: str, expr: str) -> list[Any]:
    query = urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(f"{url}/api/v1/query?{query}", timeout=10) as response:
        body = json.load(response)
    assert body["status"] == "success", (expr, body)
    return body["data"]["result"]


def alertmanager_config(webhook: str, token_file: pathlib.Path) -> str:
    return f"""\
route:
  receiver: loadaware
  group_by: [alertname]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1s
receivers:
- name: loadaware
  webhook_configs:
  - url: {webhook}
    send_resolved: true
    http_config:
      authorization:
        credentials_file: {token_file}
"""


def serve_policy(prometheus_url: str, port: int, token_file: pathlib.Path) -> str:
    return f"""\
metrics:
  maxSampleAge: 2m
  prometheus:
    url: {prometheus_url}
    rateWindow: {RATE_WINDOW_SECONDS}s
    scrapeInterval: 1s
  hotspotConfirmation:
    consecutive: 1
evictor:
  gracePeriodSeconds: 1
limits:
  maxNoOfPodsToEvictTotal: 10
verify:
  timeout: 60s
state:
  namespace: default
serve:
  listen: 127.0.0.1:{port}
  webhook:
    tokenFile: {token_file}
    cooldown: 10m
  leaderElection:
    leaseNamespace: default
    leaseDuration: 4s
    renewDeadline: 3s
    retryPeriod: 0.5s
"""


def _parse(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def metric(text: str, name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    prefix = f"{name}{{{wanted}}} " if labels else f"{name} "
    for line in text.splitlines():
        if line.startswith(prefix):
            return float(line.split()[-1])
    return 0.0


def memory_ratio(server: sim.SimServer, node: str) -> float:
    used = server.node_usage()[node][1]
    capacity = server.get("nodes", None, node)["status"]["capacity"]["memory"]
    from loadaware.cluster import to_bytes

    return used / to_bytes(capacity)


@pytest.fixture
def server() -> Iterator[sim.SimServer]:
    # Real time: Prometheus scrapes the simulated cluster while it runs.
    with sim_server("small", wall_clock=True, ready_delay=0.5) as running:
        yield running


def test_alert_to_relief(tmp_path: pathlib.Path, server: sim.SimServer) -> None:
    if not lib.tools_available():
        pytest.fail("prometheus and prometheus-alertmanager are needed: run `make system-deps`")
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    serve_port = free_port()
    processes: list[lib._Process] = []
    loadaware: subprocess.Popen[bytes] | None = None
    serve_log = (tmp_path / "serve.log").open("wb")
    try:
        assert all(memory_ratio(server, n) > MEMORY_HOT_RATIO for n in HOT_NODES)
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        (tmp_path / "am").mkdir()
        alertmanager = lib.AlertmanagerServer(
            tmp_path / "am",
            alertmanager_config(f"http://127.0.0.1:{serve_port}/alertmanager", token_file),
        )
        alertmanager.start()
        processes.append(alertmanager)
        (tmp_path / "prom").mkdir()
        prometheus = lib.ScrapingPrometheus(
            tmp_path / "prom",
            # The simulated cluster and loadaware itself, as the dashboards expect.
            targets=[f"127.0.0.1:{server.port}", f"127.0.0.1:{serve_port}"],
            rules=RULES,
            alertmanager=f"127.0.0.1:{alertmanager.port}",
        )
        policy_file = tmp_path / "policy.yaml"
        policy_file.write_text(serve_policy(prometheus.url, serve_port, token_file))
        prometheus.start()
        processes.append(prometheus)
        env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
        loadaware = subprocess.Popen(
            [
                sys.executable, "-m", "loadaware", "--log-level", "INFO", "serve",
                "--policy", str(policy_file), "--kubeconfig", str(kubeconfig),
            ],
            env=env, stdout=subprocess.DEVNULL, stderr=serve_log,
        )  # fmt: skip
        served = ServeClient(serve_port, timeout=5)
        status = served.status

        poll(lambda: (s := status()) and s["leader"]["isLeader"], "loadaware to lead", 30)

        # Prometheus fires, Alertmanager notifies, loadaware runs one round.
        poll(lambda: prometheus.firing("NodeHotspot"), "the alert to fire", 60)
        finished = poll(
            lambda: (s := status()) and s["rounds"] and s["rounds"][0], "a finished round", 120
        )
        assert finished["trigger"] == "alertmanager"
        assert finished["status"] == "executed", finished
        assert finished["evicted"] >= 1
        assert set(finished["sourceNodes"]) <= HOT_NODES
        # Relief proven on samples that cover only time after the moves: a sample's
        # time minus the rate window is after the node's evicted pods stopped.
        assert finished["verdict"] == "relieved", json.dumps(finished)
        relieved = [r for r in finished["relief"] if r["role"] == "relieved"]
        assert relieved
        assert {r["verdict"] for r in relieved} == {"relieved"}
        landings = [r for r in finished["relief"] if r["role"] == "landing"]
        assert landings
        assert {r["verdict"] for r in landings} == {"within targets"}
        for row in finished["relief"]:
            changed, sample = _parse(row["changedBy"]), _parse(row["sampleTime"])
            assert sample - RATE_WINDOW > changed, row
            assert sample <= _parse(finished["finishedAt"])
            for resource in ("cpu", "memory"):
                assert abs(row["observed"][resource] - row["expected"][resource]) <= 0.05, row

        # The hot nodes relieved in the simulated cluster, and the alert resolved.
        poll(
            lambda: all(memory_ratio(server, n) <= MEMORY_HOT_RATIO for n in HOT_NODES),
            "the hot nodes to cool down",
            120,
        )
        poll(lambda: not prometheus.firing("NodeHotspot"), "the alert to resolve", 60)

        # Alertmanager's repeats while firing and its resolved notification: no new round.
        def page() -> str:
            return (served.answer("/metrics") or b"").decode()

        poll(
            lambda: metric(page(), "loadaware_webhook_notifications_total", result="ignored") >= 1,
            "the resolved notification",
            60,
        )
        text = page()
        assert metric(text, "loadaware_webhook_notifications_total", result="accepted") == 1
        assert metric(text, "loadaware_webhook_notifications_total", result="coalesced") >= 1
        assert metric(text, "loadaware_webhook_notifications_total", result="unauthorized") == 0
        assert (
            metric(text, "loadaware_rounds_total", trigger="alertmanager", result="executed") == 1
        )
        assert metric(text, "loadaware_leader") == 1
        final = status()
        assert final is not None
        assert final["roundsStarted"] == 1
        assert len(final["rounds"]) == 1

        # Every dashboard query runs on what this Prometheus scraped; those about
        # things this calm round never did (failures, refusals) may be empty.
        # Rates need a few scrapes after the round.
        poll(
            lambda: prometheus_query(
                prometheus.url, "count_over_time(loadaware_rounds_total[1m]) >= 5"
            ),
            "Prometheus to scrape loadaware after the round",
            30,
        )
        empty = [
            (board, title)
            for board, title, expr in dashboard_queries()
            if not prometheus_query(prometheus.url, expr)
        ]
        assert not set(empty) - QUIET_PANELS, empty

        loadaware.send_signal(signal.SIGTERM)
        assert loadaware.wait(30) == 0
    finally:
        if loadaware is not None and loadaware.poll() is None:
            loadaware.kill()
            loadaware.wait(10)
        serve_log.close()
        for process in reversed(processes):
            process.stop()
