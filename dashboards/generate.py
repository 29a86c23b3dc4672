"""The Grafana dashboards of loadaware, as code (grafana-foundation-sdk, Grafana 11 build).

    python dashboards/generate.py          # (re)write dashboards/*.json
    python dashboards/generate.py --check  # exit 1 if a committed file is out of date

Two dashboards:
- cluster-hotspots.json: where the load is, from node-exporter and cAdvisor
  (kube-prometheus-stack names), and how loadaware classifies the nodes;
- loadaware.json: what loadaware did: rounds, evictions, refusals, budgets,
  breaker, solver, and whether the moves worked (eviction to Ready, bounces,
  landings against the plan).

Every panel and every query uses the `datasource` template variable, so the
dashboards import into any Grafana with any Prometheus data source. Queries
use Grafana's $__rate_interval and $__range; tests substitute them to run the
queries against a real Prometheus.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from grafana_foundation_sdk.builders import (
    bargauge,
    common,
    heatmap,
    prometheus,
    stat,
    timeseries,
)
from grafana_foundation_sdk.builders import dashboard as grafana
from grafana_foundation_sdk.cog.builder import Builder
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as model

DASHBOARDS_DIR = pathlib.Path(__file__).resolve().parent
DATASOURCE = model.DataSourceRef(type_val="prometheus", uid="${datasource}")
TAGS = ["loadaware", "kubernetes"]

# The same shapes as alerts/loadaware.rules.yml, so a panel shows what the alert saw.
NODE_CPU = '1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[$__rate_interval]))'
NODE_MEMORY = (
    "1 - max by (instance) (node_memory_MemAvailable_bytes)"
    " / max by (instance) (node_memory_MemTotal_bytes)"
)
# A standby replica exports budgets of its own that nobody uses: keep the leader's.
LEADER_BUDGETS = (
    "min by (budget) (loadaware_budget_remaining"
    " * on (job, instance) group_left () (loadaware_leader == 1))"
)


@dataclass(frozen=True)
class Query:
    expr: str
    legend: str = ""
    instant: bool = False


@dataclass(frozen=True)
class PanelSpec:
    """A panel as data: what docs/operations.md describes and the builder turns into JSON."""

    title: str
    kind: str  # timeseries | stat | heatmap | bargauge
    queries: Sequence[Query]
    description: str
    unit: str = "short"
    width: int = 12
    height: int = 8
    max_value: float | None = None
    mappings: dict[str, str] = field(default_factory=dict)  # value -> text


@dataclass(frozen=True)
class RowSpec:
    title: str
    panels: Sequence[PanelSpec]


@dataclass(frozen=True)
class DashboardSpec:
    uid: str
    title: str
    description: str
    rows: Sequence[RowSpec]
    # Query variables: name -> (label, PromQL label_values(...) query); multi-select, All.
    variables: Mapping[str, tuple[str, str]] = field(default_factory=dict)


CLUSTER_HOTSPOTS = DashboardSpec(
    uid="loadaware-cluster-hotspots",
    title="Cluster hotspots",
    description="Where the load is: node utilisation from node-exporter, and loadaware's classes.",
    # cpu, memory, pods and the resources named in metrics.prometheus.resources.
    variables={
        "resource": ("Resource", "label_values(loadaware_node_utilisation_ratio, resource)")
    },
    rows=[
        RowSpec(
            "Utilisation",
            [
                PanelSpec(
                    "Node CPU utilisation",
                    "heatmap",
                    [Query(NODE_CPU, "{{instance}}")],
                    "Share of each node's CPU time not idle (node-exporter), one row per node. "
                    "A row that stays dark is a hotspot; compare with the policy's "
                    "targetThresholds.cpu.",
                    unit="percentunit",
                ),
                PanelSpec(
                    "Node memory utilisation",
                    "heatmap",
                    [Query(NODE_MEMORY, "{{instance}}")],
                    "1 - MemAvailable / MemTotal per node (node-exporter), one row per node.",
                    unit="percentunit",
                ),
            ],
        ),
        RowSpec(
            "Hot and cold",
            [
                PanelSpec(
                    "Nodes by class",
                    "stat",
                    [Query("max by (class) (loadaware_nodes)", "{{class}}", instant=True)],
                    "How loadaware's last round classified the nodes: hot (over "
                    "targetThresholds), cold (under thresholds), normal, excluded "
                    "(not Ready, stale metrics or in no pool).",
                    width=8,
                ),
                PanelSpec(
                    "Top 10 nodes by CPU",
                    "bargauge",
                    [Query(f"topk(10, {NODE_CPU})", "{{instance}}", instant=True)],
                    "The busiest nodes now by CPU (node-exporter).",
                    unit="percentunit",
                    width=8,
                    max_value=1,
                ),
                PanelSpec(
                    "Top 10 nodes by memory",
                    "bargauge",
                    [Query(f"topk(10, {NODE_MEMORY})", "{{instance}}", instant=True)],
                    "The fullest nodes now by memory (node-exporter).",
                    unit="percentunit",
                    width=8,
                    max_value=1,
                ),
                PanelSpec(
                    "Nodes by class over time",
                    "timeseries",
                    [Query("max by (class) (loadaware_nodes)", "{{class}}")],
                    "Hot, cold, normal and excluded node counts after each round.",
                ),
                PanelSpec(
                    "Utilisation as loadaware sees it",
                    "timeseries",
                    [
                        Query(
                            "max by (node, resource) "
                            '(loadaware_node_utilisation_ratio{resource=~"$resource"})',
                            "{{node}} {{resource}}",
                        )
                    ],
                    "Per-node utilisation (fraction of allocatable) as the last round "
                    "computed it from its metrics source: what the planner acted on.",
                    unit="percentunit",
                ),
            ],
        ),
        RowSpec(
            "Freshness",
            [
                PanelSpec(
                    "Metrics sample age",
                    "timeseries",
                    [
                        Query("max(loadaware_metrics_sample_age_seconds)", "loadaware's oldest"),
                        Query(
                            "max by (instance) "
                            "(time() - timestamp(node_memory_MemAvailable_bytes))",
                            "node-exporter {{instance}}",
                        ),
                    ],
                    "Age of the oldest sample a round used, and of each node-exporter's "
                    "newest sample. Over metrics.maxSampleAge, loadaware refuses the round "
                    "(or excludes the node).",
                    unit="s",
                    width=24,
                ),
            ],
        ),
    ],
)

LOADAWARE = DashboardSpec(
    uid="loadaware-overview",
    title="loadaware",
    description="What loadaware did and whether it worked.",
    rows=[
        RowSpec(
            "Rounds",
            [
                PanelSpec(
                    "Rounds by trigger and result",
                    "timeseries",
                    [
                        Query(
                            "sum by (trigger, result) "
                            "(increase(loadaware_rounds_total[$__rate_interval]))",
                            "{{trigger}} {{result}}",
                        )
                    ],
                    "Rounds started by once, schedule or alertmanager, by result: planned, "
                    "noop (nothing hot), refused (fail-closed), executed, partial (stopped "
                    "evicting early or left hot nodes it planned to relieve), aborted.",
                ),
                PanelSpec(
                    "Refused rounds by reason",
                    "timeseries",
                    [
                        Query(
                            "sum by (reason) "
                            "(increase(loadaware_refused_rounds_total[$__rate_interval]))",
                            "{{reason}}",
                        )
                    ],
                    "Why rounds were refused: stale-metrics, implausible-metrics, "
                    "metrics-unreachable, breaker-open. Refusing is loadaware failing "
                    "closed; a steady stream means its inputs need fixing.",
                ),
                PanelSpec(
                    "Time since last successful round",
                    "stat",
                    [
                        Query(
                            "time() - max(loadaware_last_successful_round_timestamp_seconds)",
                            instant=True,
                        )
                    ],
                    "Since the last round that ended planned, noop or executed.",
                    unit="s",
                    width=6,
                ),
                PanelSpec(
                    "Round duration",
                    "timeseries",
                    [
                        Query(
                            "histogram_quantile(0.95, sum by (le, trigger) "
                            "(rate(loadaware_round_duration_seconds_bucket[$__rate_interval])))",
                            "p95 {{trigger}}",
                        ),
                        Query(
                            "histogram_quantile(0.5, sum by (le, trigger) "
                            "(rate(loadaware_round_duration_seconds_bucket[$__rate_interval])))",
                            "p50 {{trigger}}",
                        ),
                    ],
                    "Wall time of a round from reading the cluster to verifying relief.",
                    unit="s",
                    width=12,
                ),
                PanelSpec(
                    "Next scheduled round",
                    "stat",
                    [
                        Query(
                            "max by (schedule) "
                            "(loadaware_schedule_next_run_timestamp_seconds) * 1000",
                            "{{schedule}}",
                            instant=True,
                        )
                    ],
                    "When each schedule of the policy fires next.",
                    unit="dateTimeFromNow",
                    width=6,
                ),
            ],
        ),
        RowSpec(
            "Evictions",
            [
                PanelSpec(
                    "Evictions by result",
                    "timeseries",
                    [
                        Query(
                            "sum by (result) "
                            "(increase(loadaware_evictions_total[$__rate_interval]))",
                            "{{result}}",
                        )
                    ],
                    "evicted, dry-run, refused-pdb (a PodDisruptionBudget said no), gone "
                    "(the pod left first), skipped (a budget or re-check stopped it), failed.",
                ),
                PanelSpec(
                    "Evictions by reason",
                    "timeseries",
                    [
                        Query(
                            "sum by (reason) "
                            "(increase(loadaware_evictions_total[$__rate_interval]))",
                            "{{reason}}",
                        )
                    ],
                    "The rule that chose each eviction (hotspot, ...).",
                ),
                PanelSpec(
                    "Evictions by namespace",
                    "bargauge",
                    [
                        Query(
                            "topk(10, sum by (namespace) "
                            '(increase(loadaware_evictions_total{result="evicted"}[$__range])))',
                            "{{namespace}}",
                            instant=True,
                        )
                    ],
                    "Pods evicted per namespace over the dashboard's time range (top 10).",
                ),
                PanelSpec(
                    "Evictions by node",
                    "bargauge",
                    [
                        Query(
                            "topk(10, sum by (node) "
                            '(increase(loadaware_evictions_total{result="evicted"}[$__range])))',
                            "{{node}}",
                            instant=True,
                        )
                    ],
                    "Pods evicted per source node over the time range (top 10): the hotspots "
                    "loadaware relieved most.",
                ),
                PanelSpec(
                    "Eviction to Ready latency",
                    "timeseries",
                    [
                        Query(
                            "histogram_quantile(0.95, sum by (le) "
                            "(rate(loadaware_eviction_to_ready_seconds_bucket[$__rate_interval])))",
                            "p95",
                        ),
                        Query(
                            "histogram_quantile(0.5, sum by (le) "
                            "(rate(loadaware_eviction_to_ready_seconds_bucket[$__rate_interval])))",
                            "p50",
                        ),
                    ],
                    "From an eviction to its replacement pod Ready: how long a move costs "
                    "the workload a replica.",
                    unit="s",
                ),
                PanelSpec(
                    "Bounced replacements",
                    "timeseries",
                    [
                        Query(
                            "sum(increase(loadaware_bounced_replacements_total[$__rate_interval]))",
                            "bounced",
                        )
                    ],
                    "Replacements that kube-scheduler put back on the node they were evicted "
                    "from: moves that achieved nothing. Should stay at zero.",
                ),
            ],
        ),
        RowSpec(
            "Landings",
            [
                PanelSpec(
                    "Landings by where",
                    "timeseries",
                    [
                        Query(
                            "sum by (where) (increase(loadaware_landings_total[$__rate_interval]))",
                            "{{where}}",
                        )
                    ],
                    "Verified replacements of live rounds by where they landed: planned (in "
                    "the eviction's landing set), off-set (a good node outside it), bad (its "
                    "source, a hot or excluded node, or a node it took over its targets: the "
                    "breaker opens), pending (not scheduled or not found). Off-plan landings "
                    "mean the planner's model of the scheduler is off.",
                ),
                PanelSpec(
                    "Landings off plan",
                    "timeseries",
                    [
                        Query(
                            'sum(increase(loadaware_landings_total{where!="planned"}[1h]))'
                            " / sum(increase(loadaware_landings_total[1h]))",
                            "off plan",
                        )
                    ],
                    "Share of the last hour's verified replacements that did not land where "
                    "planned, as alert LoadawareLandingsOffPlan sees it (it fires above 5%). "
                    "No value while no replacement was verified in the hour.",
                    unit="percentunit",
                    max_value=1,
                ),
                PanelSpec(
                    "Scheduler model agreement",
                    "timeseries",
                    [
                        Query(
                            "min by (scheduler_name) (loadaware_scheduler_model_agreement_ratio)",
                            "{{scheduler_name}}",
                        )
                    ],
                    "Share of the recent bindings of each schedulerName (every pod the "
                    "cluster's scheduler bound, not only replacements) that loadaware's "
                    "kube-scheduler model agrees with, over the observer's sliding window; "
                    "alert LoadawareSchedulerModelDisagrees fires under 95% over 50 "
                    "bindings or more. No value before the first binding.",
                    unit="percentunit",
                    max_value=1,
                    width=24,
                ),
            ],
        ),
        RowSpec(
            "Relief proof",
            [
                PanelSpec(
                    "Relief verdicts",
                    "timeseries",
                    [
                        Query(
                            "sum by (role, verdict) "
                            "(increase(loadaware_relief_nodes_total[$__rate_interval]))",
                            "{{role}} {{verdict}}",
                        )
                    ],
                    "Nodes judged after live rounds on samples that cover only the time after "
                    "the moves. relieved: at or under its targets; improved: lower, still "
                    "over; not-improved and turned-hot (a landing node now over its targets) "
                    "open the breaker; unverified: no such sample within verify.reliefTimeout.",
                ),
                PanelSpec(
                    "Model error",
                    "timeseries",
                    [
                        Query(
                            "histogram_quantile(0.9, sum by (le, role) "
                            "(increase(loadaware_model_error_ratio_bucket[$__rate_interval])))",
                            "p90 {{role}}",
                        ),
                        Query(
                            "sum by (role) (increase(loadaware_model_error_ratio_sum"
                            "[$__rate_interval])) / sum by (role) "
                            "(increase(loadaware_model_error_ratio_count[$__rate_interval]))",
                            "mean {{role}}",
                        ),
                    ],
                    "How far the utilisation observed after the moves was from what the plan "
                    "expected, per judged node and resource (absolute, as a fraction of "
                    "allocatable). Growing errors mean pods use something else on their new "
                    "nodes than they did on the old.",
                    unit="percentunit",
                ),
            ],
        ),
        RowSpec(
            "Safety",
            [
                PanelSpec(
                    "Budget remaining",
                    "timeseries",
                    [Query(LEADER_BUDGETS, "{{budget}}")],
                    "Evictions still allowed by each budget (per round, window, namespace), "
                    "as the leader sees them. At zero no further eviction is made.",
                    width=12,
                ),
                PanelSpec(
                    "Breaker",
                    "stat",
                    [Query("max(loadaware_breaker_open)", instant=True)],
                    "Open after a round whose evictions did not bring relief: no eviction "
                    "until verify.breakerCooldown has passed.",
                    width=4,
                    mappings={"0": "closed", "1": "open"},
                ),
                PanelSpec(
                    "Leaders",
                    "stat",
                    [Query("sum(loadaware_leader)", instant=True)],
                    "Replicas holding the leader Lease: 1 is right; 0 means no round starts.",
                    width=4,
                ),
                PanelSpec(
                    "Webhook notifications",
                    "stat",
                    [
                        Query(
                            "sum by (result) "
                            "(increase(loadaware_webhook_notifications_total[$__range]))",
                            "{{result}}",
                            instant=True,
                        )
                    ],
                    "Alertmanager notifications over the time range, by what loadaware did "
                    "with them.",
                    width=4,
                ),
            ],
        ),
        RowSpec(
            "Forecast proof",
            [
                PanelSpec(
                    "Forecast hot calls",
                    "timeseries",
                    [
                        Query(
                            "sum by (outcome) "
                            "(increase(loadaware_forecast_nodes_total[$__rate_interval]))",
                            "{{outcome}}",
                        )
                    ],
                    "Rounds planned ahead (schedules with forecast), proved once their horizon "
                    "has passed: nodes expected hot that were (hit) or were not (false_alarm), "
                    "nodes expected fine that turned hot (miss), and nodes hot in the forecast "
                    "that the round's moves kept under their targets (relieved).",
                    width=8,
                ),
                PanelSpec(
                    "Forecast error by node",
                    "bargauge",
                    [
                        Query(
                            "topk(10, max by (node, resource) "
                            "(abs(loadaware_forecast_error_ratio)))",
                            "{{node}} {{resource}}",
                            instant=True,
                        )
                    ],
                    "The nodes the last proved forecast was furthest off for: |real peak - "
                    "expected| utilisation over its horizon, as a fraction of allocatable.",
                    unit="percentunit",
                    width=8,
                ),
                PanelSpec(
                    "Forecast mean absolute error",
                    "timeseries",
                    [
                        Query(
                            "max by (resource) (loadaware_forecast_mean_absolute_error_ratio)",
                            "{{resource}}",
                        )
                    ],
                    "Mean over the nodes of each proved forecast round of |real peak - "
                    "expected| utilisation; LoadawareForecastPersistentlyWrong fires when most "
                    "hot calls of the last days were wrong.",
                    unit="percentunit",
                    width=8,
                ),
            ],
        ),
        RowSpec(
            "Solver",
            [
                PanelSpec(
                    "Solver time",
                    "timeseries",
                    [Query("max by (method) (loadaware_solver_seconds)", "{{method}}")],
                    "Seconds the planner spent choosing evictions in the last round (milp or "
                    "greedy); compare with optimizer.timeLimit.",
                    unit="s",
                ),
                PanelSpec(
                    "Solver gap",
                    "timeseries",
                    [Query("max(loadaware_solver_gap_ratio)", "gap")],
                    "Relative distance between the plan's objective and the lower bound: 0 "
                    "means the plan is proven optimal.",
                    unit="percentunit",
                ),
            ],
        ),
    ],
)

DASHBOARDS = {"cluster-hotspots.json": CLUSTER_HOTSPOTS, "loadaware.json": LOADAWARE}


def _target(query: Query, ref_id: str) -> prometheus.Dataquery:
    target = (
        prometheus.Dataquery()
        .expr(query.expr)
        .ref_id(ref_id)
        .datasource(DATASOURCE)
        .legend_format(query.legend or "__auto")
    )
    return target.instant() if query.instant else target.range()


def _panel(spec: PanelSpec, panel_id: int) -> Builder[model.Panel]:
    builder: Any
    if spec.kind == "timeseries":
        builder = timeseries.Panel().fill_opacity(10).line_width(1)
    elif spec.kind == "stat":
        builder = stat.Panel().reduce_options(
            common.ReduceDataOptions().calcs(["lastNotNull"]).values(False)
        )
    elif spec.kind == "heatmap":
        # One row per series (node), coloured by value: no bucketing by Grafana.
        builder = (
            heatmap.Panel()
            .calculate(False)
            .color(heatmap.HeatmapColorOptions().scheme("Oranges").min(0).max(1))
        )
    elif spec.kind == "bargauge":
        builder = bargauge.Panel().reduce_options(
            common.ReduceDataOptions().calcs(["lastNotNull"]).values(False)
        )
    else:
        raise ValueError(f"unknown panel kind {spec.kind}")
    builder = (
        builder.id(panel_id)
        .title(spec.title)
        .description(spec.description)
        .datasource(DATASOURCE)
        .unit(spec.unit)
        .height(spec.height)
        .span(spec.width)
    )
    if spec.max_value is not None:
        builder = builder.min(0).max(spec.max_value)
    if spec.mappings:
        builder = builder.mappings(
            [
                model.ValueMap(
                    options={
                        value: model.ValueMappingResult(text=text, index=index)
                        for index, (value, text) in enumerate(spec.mappings.items())
                    }
                )
            ]
        )
    for index, query in enumerate(spec.queries):
        builder = builder.with_target(_target(query, chr(ord("A") + index)))
    return builder


def build_dashboard(spec: DashboardSpec) -> dict[str, Any]:
    builder = (
        grafana.Dashboard(spec.title)
        .uid(spec.uid)
        .description(spec.description)
        .tags(TAGS)
        .editable()
        .refresh("1m")
        .time("now-6h", "now")
        .timezone("browser")
        .tooltip(model.DashboardCursorSync.CROSSHAIR)
        .with_variable(
            grafana.DatasourceVariable("datasource").label("Data source").type("prometheus")
        )
    )
    for name, (label, query) in spec.variables.items():
        builder = builder.with_variable(
            grafana.QueryVariable(name)
            .label(label)
            .datasource(DATASOURCE)
            .query(query)
            .multi(True)
            .include_all(True)
            .all_value(".*")
            .refresh(model.VariableRefresh.ON_TIME_RANGE_CHANGED)
        )
    panel_id = 1
    for row in spec.rows:
        builder = builder.with_row(grafana.Row(row.title).id(panel_id))
        panel_id += 1
        for panel in row.panels:
            builder = builder.with_panel(_panel(panel, panel_id))
            panel_id += 1
    # A round trip through JSON gives plain dicts, which tests and diffs read easily.
    return json.loads(json.dumps(builder.build(), cls=JSONEncoder))


def render(spec: DashboardSpec) -> str:
    return json.dumps(build_dashboard(spec), indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a file is stale")
    args = parser.parse_args(argv)
    stale = []
    for name, spec in DASHBOARDS.items():
        path = DASHBOARDS_DIR / name
        text = render(spec)
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
    if stale:
        sys.stderr.write(f"out of date: {', '.join(stale)}; run `make dashboards`\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
