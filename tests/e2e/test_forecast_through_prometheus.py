"""Planning ahead of a weekday peak on a forecast read from a real Prometheus.

The TSDB is backfilled (promtool) with five weeks of node-exporter and cAdvisor
history of a small cluster (bench.weekly): on weekdays from 09:00 to 10:00
UTC the `api` and `web` workloads use several times their usual cpu, which
makes node-1 and node-2 hot; their pods are recreated under new names every
week. The round runs on Monday 08:30 UTC, when every node is cold.

Covered:
- the forecast (one query per resource) gives each node its weekly peak over
  [08:30, 09:30] and each workload its per-replica peak, whatever its pods'
  names were in past weeks;
- a round on the forecast (horizon 1h) plans evictions off node-1 and node-2
  while their current usage is low; replaying the peak on the resulting
  placement leaves at most one of them hot; the same round on the moment's
  usage is a noop; the same through run_round, as a forecast schedule starts it
  (dry run), with the forecast and what lacked one in the audit record;
- a workload with two weeks of history (minWeeks 3) has no forecast: its pods
  do not move, and the plan names it; a node with two weeks is excluded with
  the reason (onStaleNode Exclude) or refuses the round (Refuse);
- stale current metrics still refuse a forecast round;
- the proof after the peak reads what the nodes really used over the horizon
  and compares it with the forecast: the hot nodes predicted, and node-6 whose
  surprise peak on the day nobody could predict.
"""

from __future__ import annotations

import datetime
import pathlib
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from bench import prometheus as lib
from bench.weekly import GiB, MiB, WeeklyCluster, WorkloadTruth
from loadaware import cluster, evict, kube, metrics, plan, policy, report
from loadaware import round as rounds
from tests.lib import builders
from tests.lib.sim import sim_server

NOW = datetime.datetime(2026, 11, 30, 8, 30, tzinfo=datetime.UTC)  # a Monday
HORIZON = datetime.timedelta(hours=1)
CORES = 4
HOT_AT_PEAK = ("node-1", "node-2")


def _weekly() -> WeeklyCluster:
    now = NOW.timestamp()
    return WeeklyCluster(
        now=now,
        nodes={f"node-{i}": (0.2, 1 * GiB) for i in range(1, 7)} | {"node-new": (0.2, 1 * GiB)},
        node_age={"node-new": 15 * 86400.0},
        workloads=[
            WorkloadTruth(
                "shop", "api", ["node-1", "node-1", "node-2"], (0.2, 256 * MiB), (1.2, 512 * MiB)
            ),
            WorkloadTruth(
                "shop", "web", ["node-1", "node-2", "node-2"], (0.2, 256 * MiB), (0.9, 384 * MiB)
            ),
            WorkloadTruth("shop", "cache", ["node-3", "node-4"], (0.3, GiB), (0.3, GiB)),
            WorkloadTruth("batch", "etl", ["node-5", "node-6"], (0.4, 512 * MiB), (0.4, 512 * MiB)),
            # Two weeks (and a day) old: two weekly windows of history.
            WorkloadTruth(
                "shop", "newapp", ["node-3"], (0.2, 128 * MiB), (0.2, 128 * MiB), age=15 * 86400.0
            ),
            # On the round's day only, 2.5 cores more at the peak: node-6 turns hot.
            WorkloadTruth(
                "batch",
                "report",
                ["node-6"],
                (0.3, 256 * MiB),
                (0.3, 256 * MiB),
                surprise=(now - 8.5 * 3600, 2.5),
            ),
        ],
    )


@dataclass
class Backfilled:
    url: str
    weekly: WeeklyCluster
    state: cluster.ClusterState


def _state(weekly: WeeklyCluster) -> cluster.ClusterState:
    nodes = [
        builders.make_node(name, cpu_millicores=CORES * 1000, memory_bytes=16 * GiB)
        for name in weekly.nodes
    ]
    pods = []
    for key, (workload, node) in sorted(weekly.current_pods().items()):
        namespace, name = key.split("/")
        replicaset = name.rsplit("-", 1)[0]
        owner, owned_by = builders.replicaset(replicaset, workload.name)
        pods.append(
            builders.make_pod(
                name,
                node=node,
                namespace=namespace,
                cpu_millicores=500,
                memory_bytes=256 * MiB,
                labels={"app": workload.name},
                owner=owner,
                workload=owned_by,
            )
        )
    return builders.make_cluster(nodes, pods)


@pytest.fixture(scope="module")
def backfilled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backfilled]:
    if not lib.tools_available():
        pytest.fail("prometheus and promtool are needed: run `make system-deps`")
    workdir = tmp_path_factory.mktemp("weekly")
    weekly = _weekly()
    tsdb = weekly.backfill(workdir)
    with lib.PrometheusServer(tsdb, workdir) as server:
        yield Backfilled(url=server.url, weekly=weekly, state=_state(weekly))


def _policy(url: str, **metrics_fields: object) -> policy.LoadAwarePolicy:
    return policy.parse_policy(
        {
            "metrics": {
                "maxSampleAge": "2m",
                "onStaleNode": "Exclude",
                "maxExcludedFraction": 0.5,
                "hotspotConfirmation": {"consecutive": 1},
                "prometheus": {
                    "url": url,
                    # Samples are 15 minutes apart: rate() needs two in its window.
                    "rateWindow": "30m",
                    "forecast": {"weeks": 4, "minWeeks": 3, "quantile": 0.9, "step": "15m"},
                },
                **metrics_fields,
            },
            "nodePools": [
                {
                    "name": "default",
                    "thresholds": {"cpu": 40, "memory": 50},
                    "targetThresholds": {"cpu": 70, "memory": 80},
                }
            ],
            "schedules": [
                {"name": "before-peak", "cron": "30 8 * * mon-fri", "forecast": {"horizon": "1h"}}
            ],
        }
    )


def _current(settings: policy.LoadAwarePolicy, state: cluster.ClusterState) -> metrics.Usage:
    provider = metrics.PrometheusProvider(settings.metrics)
    scopes = plan.node_scopes(state, settings.node_pools)
    pod_keys = [key for scope in scopes.values() for key in scope.pod_keys]
    return provider.fetch_usage(list(scopes), pod_keys, now=NOW)


def _forecast(settings: policy.LoadAwarePolicy, state: cluster.ClusterState) -> metrics.Forecast:
    forecaster = metrics.PrometheusForecaster(settings.metrics)
    return rounds.forecast_reader(settings, forecaster)(state, NOW, HORIZON)


def _peak_cpu(weekly: WeeklyCluster, placement: dict[str, str]) -> dict[str, float]:
    """Node -> cpu cores at the peak (09:15) with the pods where `placement` puts them."""
    peak = NOW.timestamp() + 45 * 60
    cores = {name: base for name, (base, _) in weekly.nodes.items()}
    pods = weekly.current_pods()
    for key, node in placement.items():
        workload, _ = pods[key]
        cores[node] += workload.usage(peak)[0]
    return cores


def test_forecast_follows_workloads_and_weeks(backfilled: Backfilled) -> None:
    settings = _policy(backfilled.url)
    forecast = _forecast(settings, backfilled.state)
    assert forecast.queries == 4  # node cpu, node memory, pod cpu, pod memory
    node_1 = forecast.nodes["node-1"]
    assert node_1.cpu_cores == pytest.approx(0.2 + 2 * 1.2 + 0.9, rel=0.02)
    assert node_1.weeks == 4
    assert forecast.nodes["node-4"].cpu_cores == pytest.approx(0.5, rel=0.02)
    api = forecast.workloads["shop/api"]
    assert api.cpu_cores == pytest.approx(1.2, rel=0.02)
    assert api.memory_bytes == pytest.approx(512 * MiB, rel=0.01)
    assert forecast.workloads["shop/web"].cpu_cores == pytest.approx(0.9, rel=0.02)
    # The surprise is on the round's day: no past week shows it.
    assert forecast.workloads["batch/report"].cpu_cores == pytest.approx(0.3, rel=0.02)
    assert "shop/newapp" not in forecast.workloads
    assert forecast.uncovered_workloads["shop/newapp"] == (
        "no forecast: 2 of the last 4 weeks have data (minWeeks 3)"
    )
    assert "node-new" in forecast.uncovered_nodes


def test_round_relieves_the_coming_hot_nodes_in_advance(backfilled: Backfilled) -> None:
    settings = _policy(backfilled.url)
    state = backfilled.state
    current = _current(settings, state)
    # Now, every node is cold: a round on the moment's usage has nothing to do.
    for name in HOT_AT_PEAK:
        assert current.nodes[name].cpu_cores < 0.4 * CORES
    now_plan = rounds.timed_plan(state, current, settings, NOW)
    assert now_plan.status == "noop", now_plan.reason

    usage = metrics.forecast_usage(current, _forecast(settings, state))
    ahead = rounds.timed_plan(state, usage, settings, NOW)
    assert ahead.status == "planned", ahead.reason
    classes = {n.name: n.node_class for n in ahead.nodes}
    assert {n for n, c in classes.items() if c == "hot"} == set(HOT_AT_PEAK)
    assert {e.node for e in ahead.evictions} <= set(HOT_AT_PEAK)
    assert {e.node for e in ahead.evictions} == set(HOT_AT_PEAK)
    # No pod of the workload without history moves; the plan names it.
    assert not any("newapp" in e.pod for e in ahead.evictions)
    assert "workload shop/newapp" in ahead.reason
    assert "node node-new" in ahead.reason
    assert ahead.forecast is not None
    assert "shop/newapp" in ahead.forecast.uncovered_workloads
    document = plan.plan_to_json(ahead)
    assert document["forecast"]["horizon"] == "1h"
    assert "shop/newapp" in document["forecast"]["uncoveredWorkloads"]
    assert classes["node-new"] == "excluded"
    node_new = next(n for n in ahead.nodes if n.name == "node-new")
    assert "no forecast: 2 of the last 4 weeks" in node_new.note

    # Replaying the peak on the placement the plan leads to.
    now_placement = {pod.key: pod.node_name for pod in state.pods if pod.node_name is not None}
    placement = dict(now_placement)
    for eviction in ahead.evictions:
        assert eviction.expected_node is not None
        assert eviction.expected_node not in HOT_AT_PEAK
        placement[eviction.pod] = eviction.expected_node
    before = _peak_cpu(backfilled.weekly, now_placement)
    after = _peak_cpu(backfilled.weekly, placement)
    assert all(before[n] > 0.7 * CORES for n in HOT_AT_PEAK)
    still_hot = [n for n in HOT_AT_PEAK if after[n] > 0.7 * CORES]
    assert len(still_hot) <= 1, after


def test_node_without_history_refuses_under_refuse(backfilled: Backfilled) -> None:
    settings = _policy(backfilled.url, onStaleNode="Refuse")
    state = backfilled.state
    usage = metrics.forecast_usage(_current(settings, state), _forecast(settings, state))
    refused = rounds.timed_plan(state, usage, settings, NOW)
    assert refused.status == "refused"
    assert refused.reason.startswith("stale-metrics: node node-new no forecast: 2 of the last 4")


def test_stale_current_metrics_refuse_a_forecast_round(backfilled: Backfilled) -> None:
    settings = _policy(backfilled.url, onStaleNode="Refuse")
    state = backfilled.state
    forecast = _forecast(settings, state)
    current = _current(settings, state)
    later = NOW + datetime.timedelta(minutes=10)  # the newest samples are 10 minutes old
    usage = metrics.forecast_usage(current, forecast)
    refused = rounds.timed_plan(state, usage, settings, later)
    assert refused.status == "refused"
    assert refused.reason.startswith("stale-metrics:")


def test_proof_reads_the_real_peak_back(backfilled: Backfilled) -> None:
    settings = _policy(backfilled.url)
    state = backfilled.state
    usage = metrics.forecast_usage(_current(settings, state), _forecast(settings, state))
    ahead = rounds.timed_plan(state, usage, settings, NOW)
    pending = rounds.PendingProof.for_round("r1", state, settings, ahead, dry_run=True)
    assert pending is not None
    assert pending.due == NOW + HORIZON
    forecaster = metrics.PrometheusForecaster(settings.metrics)
    proof = rounds.prove(pending, forecaster)
    # History repeats: the forecast hits the two hot nodes; node-6's surprise is a miss.
    assert proof.hits == sorted(HOT_AT_PEAK)
    assert proof.misses == ["node-6"]
    assert proof.false_alarms == []
    node_1 = proof.nodes["node-1"]
    assert node_1.actual["cpu"] == pytest.approx((0.2 + 2 * 1.2 + 0.9) / CORES, rel=0.02)
    assert abs(node_1.error["cpu"]) < 0.02
    assert proof.nodes["node-6"].error["cpu"] == pytest.approx(2.5 / CORES, rel=0.05)


def test_scheduled_round_plans_ahead_through_run_round(
    backfilled: Backfilled, tmp_path: pathlib.Path
) -> None:
    """The round a forecast schedule starts (dry run), wired as serve wires it: the
    cluster as read, current usage and forecast from Prometheus, the clock at 08:30."""
    settings = _policy(backfilled.url)
    state = backfilled.state
    with sim_server("small") as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        client = kube.api_client(kube.ClientSettings(kubeconfig=str(kubeconfig)))
        provider = metrics.PrometheusProvider(settings.metrics)
        forecaster = metrics.PrometheusForecaster(settings.metrics)
        context = rounds.RoundContext(
            kube=evict.Kube(client),
            read_cluster=lambda: state,
            read_usage=lambda s: rounds.fetch_cluster_usage(s, settings, provider, NOW),
            clock=lambda: NOW,
            read_forecast=rounds.forecast_reader(settings, forecaster),
        )
        schedule = settings.schedules[0]
        assert schedule.forecast is not None
        options = rounds.RoundOptions(
            trigger="schedule", dry_run=True, forecast_horizon=schedule.forecast.horizon
        )
        result = rounds.run_round(settings, context, options)
        record = result.record
        plain = rounds.run_round(settings, context, rounds.RoundOptions(dry_run=True)).record
    assert plain.status == "noop", plain.reason
    assert record.plan is not None
    assert record.plan.status == "planned", record.plan.reason
    assert {e.node for e in record.plan.evictions} == set(HOT_AT_PEAK)
    audit = report.round_to_json(record)
    assert "shop/newapp" in audit["plan"]["forecast"]["uncoveredWorkloads"]
    assert result.proof is not None
    assert result.proof.forecast_hot == frozenset(HOT_AT_PEAK)
