"""The Grafana dashboards: generated, complete, and every query works.

Covered: the committed JSON is what dashboards/generate.py makes now, and the
operations page (docs/operations.md) describes each panel; both dashboards
carry a `datasource` template variable and every panel and every query uses
it; the panels the issue lists are there; every PromQL expression parses
(promql-parser); and every expression returns data from a real Prometheus whose
TSDB is backfilled (promtool) with node-exporter and cAdvisor series under
kube-prometheus-stack names and with every loadaware_* series as loadaware serve
exports them (two replicas, one leader).
"""

from __future__ import annotations

import importlib.util
import io
import json
import pathlib
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import promql_parser
import pytest

from bench import prometheus as lib
from bench.prometheus import Family, GiB, NodeTruth, PodTruth

ROOT = pathlib.Path(__file__).resolve().parents[2]
DASHBOARDS = ROOT / "dashboards"
# What Grafana would put in for its macros at a 6h range and 30s scrapes.
MACROS = {"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h", "$resource": ".*"}
STEP_SECONDS = 30.0
HISTORY_SECONDS = 2 * 3600.0

REQUIRED_PANELS = {
    "cluster-hotspots.json": {
        "Node CPU utilisation",
        "Node memory utilisation",
        "Nodes by class",
        "Top 10 nodes by CPU",
        "Top 10 nodes by memory",
        "Metrics sample age",
    },
    "loadaware.json": {
        "Rounds by trigger and result",
        "Evictions by result",
        "Evictions by reason",
        "Evictions by namespace",
        "Evictions by node",
        "Refused rounds by reason",
        "Budget remaining",
        "Breaker",
        "Solver time",
        "Solver gap",
        "Eviction to Ready latency",
        "Bounced replacements",
        "Landings by where",
        "Landings off plan",
        "Relief verdicts",
        "Model error",
        "Forecast hot calls",
        "Forecast error by node",
        "Forecast mean absolute error",
    },
}


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dashboards_generate", DASHBOARDS / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Dataclasses look their module up while the class is being made.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _dashboards() -> dict[str, dict[str, Any]]:
    return {name: json.loads((DASHBOARDS / name).read_text()) for name in REQUIRED_PANELS}


def _panels(board: dict[str, Any]) -> list[dict[str, Any]]:
    return [panel for panel in board["panels"] if panel["type"] != "row"]


def _expressions() -> list[tuple[str, str, str]]:
    """(dashboard, panel title, expr) for every query."""
    return [
        (name, panel["title"], target["expr"])
        for name, board in _dashboards().items()
        for panel in _panels(board)
        for target in panel["targets"]
    ]


def _substituted(expr: str) -> str:
    for macro, value in MACROS.items():
        expr = expr.replace(macro, value)
    return expr


def test_committed_json_is_current() -> None:
    generator = _generator()
    for name, spec in generator.DASHBOARDS.items():
        assert (DASHBOARDS / name).read_text() == generator.render(spec), "run `make dashboards`"


def test_every_panel_and_query_uses_the_datasource_variable() -> None:
    for name, board in _dashboards().items():
        variables = {v["name"]: v for v in board["templating"]["list"]}
        assert variables["datasource"]["type"] == "datasource", name
        assert variables["datasource"]["query"] == "prometheus", name
        for panel in _panels(board):
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel
            assert panel["targets"], panel["title"]
            for target in panel["targets"]:
                assert target["datasource"]["uid"] == "${datasource}", panel["title"]


def test_dashboards_have_the_listed_panels_each_described() -> None:
    for name, board in _dashboards().items():
        titles = {panel["title"] for panel in _panels(board)}
        assert titles >= REQUIRED_PANELS[name]
        assert all(panel.get("description") for panel in _panels(board))
        ids = [panel["id"] for panel in board["panels"]]
        assert len(ids) == len(set(ids)), "panel ids must be unique"


@pytest.mark.parametrize(("board", "title", "expr"), _expressions())
def test_every_query_parses(board: str, title: str, expr: str) -> None:
    promql_parser.parse(_substituted(expr))


# ---- a real Prometheus holding the series the dashboards read ----------------------------


def _histogram(
    name: str,
    series: list[tuple[dict[str, str], list[tuple[float, list[tuple[str, float]], float]]]],
) -> str:
    """OpenMetrics text of one histogram family: per labels, (time, [(le, count)], sum)."""
    out = io.StringIO()
    out.write(f"# TYPE {name} histogram\n")
    for labels, points in series:
        for moment, buckets, total in points:
            for le, count in buckets:
                out.write(f"{name}_bucket{_labels({**labels, 'le': le})} {count} {moment:.3f}\n")
            out.write(f"{name}_count{_labels(labels)} {buckets[-1][1]} {moment:.3f}\n")
            out.write(f"{name}_sum{_labels(labels)} {total} {moment:.3f}\n")
    return out.getvalue()


def _labels(labels: dict[str, str]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def _loadaware_history(start: float, end: float) -> tuple[list[Family], str]:
    """loadaware serve's own series: replica a leads and runs a round every 10 minutes."""
    moments = [start + k * STEP_SECONDS for k in range(int((end - start) // STEP_SECONDS) + 1)]
    leader = {"job": "loadaware", "instance": "10.0.0.1:8080"}
    standby = {"job": "loadaware", "instance": "10.0.0.2:8080"}

    def rounds(t: float) -> float:
        return (t - start) / 600.0

    def counter(name: str, label_sets: list[dict[str, str]], per_round: float) -> Family:
        family = Family(name, "counter")
        for labels in label_sets:
            family.add({**leader, **labels}, ((t, per_round * rounds(t)) for t in moments))
        return family

    def gauge(name: str, label_sets: list[tuple[dict[str, str], float]]) -> Family:
        family = Family(name, "gauge")
        for labels, value in label_sets:
            family.add({**leader, **labels}, ((t, value) for t in moments))
        return family

    last_round = Family("loadaware_last_round_timestamp_seconds", "gauge")
    last_round.add({**leader, "result": "executed"}, ((t, t - 60) for t in moments))
    last_success = Family("loadaware_last_successful_round_timestamp_seconds", "gauge")
    last_success.add(leader, ((t, t - 60) for t in moments))
    next_run = Family("loadaware_schedule_next_run_timestamp_seconds", "gauge")
    next_run.add({**leader, "schedule": "peak"}, ((t, t + 300) for t in moments))
    leaders = Family("loadaware_leader", "gauge")
    leaders.add(leader, ((t, 1.0) for t in moments))
    leaders.add(standby, ((t, 0.0) for t in moments))
    budgets = gauge(
        "loadaware_budget_remaining", [({"budget": "total"}, 4.0), ({"budget": "window"}, 10.0)]
    )
    budgets.add({**standby, "budget": "window"}, ((t, 20.0) for t in moments))
    # Per round: 1.8 replacements on plan, 0.15 elsewhere, 0.05 pending (10% off plan).
    landings = Family("loadaware_landings", "counter")
    for where, per_round in (("planned", 1.8), ("off-set", 0.15), ("pending", 0.05)):
        landings.add({**leader, "where": where}, ((t, per_round * rounds(t)) for t in moments))

    families = [
        counter(
            "loadaware_rounds",
            [
                {"trigger": "schedule", "result": "executed"},
                {"trigger": "alertmanager", "result": "noop"},
                {"trigger": "schedule", "result": "refused"},
            ],
            1.0,
        ),
        counter("loadaware_refused_rounds", [{"reason": "stale-metrics"}], 0.5),
        counter(
            "loadaware_evictions",
            [
                {"result": "evicted", "reason": "hotspot", "namespace": "shop", "node": "node-a"},
                {"result": "evicted", "reason": "hotspot", "namespace": "batch", "node": "node-d"},
                {"result": "refused-pdb", "reason": "hotspot", "namespace": "shop", "node": "a"},
            ],
            2.0,
        ),
        counter("loadaware_bounced_replacements", [{}], 0.1),
        counter(
            "loadaware_relief_nodes",
            [
                {"role": "relieved", "verdict": "relieved"},
                {"role": "relieved", "verdict": "improved"},
                {"role": "landing", "verdict": "within-targets"},
            ],
            1.0,
        ),
        landings,
        counter(
            "loadaware_webhook_notifications",
            [{"result": "accepted"}, {"result": "coalesced"}],
            1.0,
        ),
        last_round,
        last_success,
        next_run,
        leaders,
        budgets,
        gauge(
            "loadaware_nodes",
            [
                ({"class": "hot"}, 2.0),
                ({"class": "cold"}, 3.0),
                ({"class": "normal"}, 5.0),
                ({"class": "excluded"}, 0.0),
            ],
        ),
        gauge(
            "loadaware_node_utilisation_ratio",
            [
                ({"node": "node-a", "resource": "cpu"}, 0.81),
                ({"node": "node-a", "resource": "memory"}, 0.55),
                ({"node": "node-c", "resource": "cpu"}, 0.2),
            ],
        ),
        gauge("loadaware_metrics_sample_age_seconds", [({}, 31.0)]),
        gauge("loadaware_solver_seconds", [({"method": "milp"}, 0.12)]),
        gauge("loadaware_solver_gap_ratio", [({}, 0.004)]),
        gauge("loadaware_breaker_open", [({}, 0.0)]),
        gauge(
            "loadaware_scheduler_model_agreement_ratio",
            [({"scheduler_name": "default-scheduler"}, 0.97), ({"scheduler_name": "batch"}, 0.6)],
        ),
        counter(
            "loadaware_forecast_nodes",
            [{"outcome": o} for o in ("hit", "false_alarm", "miss", "relieved")],
            0.5,
        ),
        counter("loadaware_forecast_proofs", [{}], 0.1),
        gauge(
            "loadaware_forecast_error_ratio",
            [
                ({"node": "node-a", "resource": "cpu"}, 0.04),
                ({"node": "node-c", "resource": "cpu"}, -0.12),
            ],
        ),
        gauge("loadaware_forecast_mean_absolute_error_ratio", [({"resource": "cpu"}, 0.08)]),
        gauge("loadaware_forecast_last_proof_timestamp_seconds", [({}, start)]),
    ]

    def histogram_points(scale: float) -> list[tuple[float, list[tuple[str, float]], float]]:
        points = []
        for t in moments:
            n = rounds(t)
            buckets = [("1", 0.2 * n), ("5", 0.7 * n), ("30", 0.95 * n), ("+Inf", n)]
            points.append((t, [(le, round(c * scale, 6)) for le, c in buckets], 4.0 * n * scale))
        return points

    histograms = _histogram(
        "loadaware_round_duration_seconds",
        [({**leader, "trigger": "schedule"}, histogram_points(1.0))],
    ) + _histogram("loadaware_eviction_to_ready_seconds", [(leader, histogram_points(2.0))])
    histograms += _histogram(
        "loadaware_model_error_ratio",
        [
            ({**leader, "role": role, "resource": resource}, histogram_points(1.0))
            for role in ("relieved", "landing")
            for resource in ("cpu", "memory")
        ],
    )
    return families, histograms


@pytest.fixture(scope="module")
def prometheus_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, float]]:
    if not lib.tools_available():
        pytest.fail("prometheus and promtool are needed: run `make system-deps`")
    workdir = tmp_path_factory.mktemp("dashboards-prometheus")
    now = float(int(time.time()))
    # Series run on past now, so they look live to queries made during the test.
    start, end = now - HISTORY_SECONDS, now + 600.0
    nodes = [
        NodeTruth("node-a", cpu_cores=3.4, memory_used_bytes=13 * GiB, instance="node-a"),
        NodeTruth("node-b", cpu_cores=1.0, memory_used_bytes=4 * GiB, instance="node-b"),
        NodeTruth("node-c", cpu_cores=0.4, memory_used_bytes=2 * GiB, instance="node-c"),
    ]
    pods = [PodTruth("shop", "web-1", "node-a", {"app": (0.9, 2 * GiB)})]
    families = lib.kube_prometheus_history(nodes, pods, start=start, end=end, step=STEP_SECONDS)
    own, histograms = _loadaware_history(start, end)
    text = io.StringIO()
    lib.write_openmetrics([*families, *own], text)
    body = text.getvalue().removesuffix("# EOF\n") + histograms + "# EOF\n"
    openmetrics = workdir / "history.om"
    openmetrics.write_text(body)
    lib.backfill(openmetrics, workdir / "tsdb")
    with lib.PrometheusServer(workdir / "tsdb", workdir) as server:
        yield server.url, now


def _query(url: str, expr: str, at: float) -> list[dict[str, Any]]:
    params = urllib.parse.urlencode({"query": expr, "time": f"{at:.3f}"})
    with urllib.request.urlopen(f"{url}/api/v1/query?{params}", timeout=30) as response:
        body = json.load(response)
    assert body["status"] == "success", body
    return body["data"]["result"]


@pytest.mark.parametrize(("board", "title", "expr"), _expressions())
def test_every_query_returns_data(
    prometheus_url: tuple[str, float], board: str, title: str, expr: str
) -> None:
    url, now = prometheus_url
    result = _query(url, _substituted(expr), now)
    assert result, f"{board} / {title}: no data for {expr}"


def test_heatmaps_have_one_row_per_node(prometheus_url: tuple[str, float]) -> None:
    url, now = prometheus_url
    board = _dashboards()["cluster-hotspots.json"]
    (cpu,) = [p for p in board["panels"] if p["title"] == "Node CPU utilisation"]
    result = _query(url, _substituted(cpu["targets"][0]["expr"]), now)
    by_node = {series["metric"]["instance"]: float(series["value"][1]) for series in result}
    assert set(by_node) == {"node-a", "node-b", "node-c"}
    assert by_node["node-a"] == pytest.approx(3.4 / 4, abs=1e-3)


def test_operations_page_describes_every_panel() -> None:
    page = (ROOT / "docs" / "operations.md").read_text()
    for name, board in _dashboards().items():
        for panel in _panels(board):
            assert f"| {panel['title']} |" in page, f"{name}: {panel['title']}"
