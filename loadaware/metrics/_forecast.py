"""The usage to come, from the same hours of past weeks (Prometheus only).

A round planned ahead of a peak (a schedule with `forecast: {horizon}`) needs
what each node and pod will use over [now, now + horizon], not what they use at
the moment. Load that follows the week (office hours, batch windows) repeats at
the same time of week, so the forecast of a node is read from the same window of
each of the last `weeks` weeks:

    max_over_time((<usage expr>)[horizon:step] offset (k*7d - horizon))

evaluated at `now` covers [now - k*7d, now - k*7d + horizon]: that week's peak
over the window. The weeks of one resource are one query (a union, each part
marked with a `loadaware_week` label), so a forecast costs one query per
resource (node cpu and memory, pod cpu and memory, and each named resource's
node and pod query), run side by side. The forecast is the `quantile` of the
weekly peaks, taken here over the weeks that have data (linear interpolation,
as PromQL's quantile()).

Usage expressions are the round's own (`queries_for`: the policy's overrides
included), so a forecast and the current usage it replaces are in one unit.

Pods follow their workload, not their name: a Deployment's pods get new names
with every rollout and every eviction, so no pod has last week's history. A
pod's forecast is the per-replica usage of its workload: at each step the mean
over the workload's pods (sum / count, so that a workload scaled out at its
peak is not counted as one big pod), its peak over the window, the quantile
across weeks. The workload is read from the pod name (workload_of), in PromQL
(label_replace) as in Python: the ReplicaSet's pod-template-hash and the pod's
random suffix are dropped (`web-7d9f8c6b5-x2k4p` -> `web`); a name with a
suffix alone drops it (a bare ReplicaSet's or Job's); any other name is kept
(a StatefulSet's `db-0` is its own history). Both use Kubernetes' suffix
alphabet, which has no vowels, so `node-exporter-x7k2p` keeps `node-exporter`.
No kube-state-metrics is needed.

Coverage fails closed, as staleness does: a node or workload with fewer than
`minWeeks` weeks of data has no forecast (Forecast.uncovered says why), and
forecast_usage leaves it without a sample, so judging excludes the node or
refuses the round (metrics.onStaleNode) and the workload's pods are not
candidates. The `pods` resource (a node's pod count) is not forecast: it is
the placement itself, known from the cluster, which the plan's moves change.

Node history is the node's own: where earlier rounds moved pods off it before
its peak, its past weeks show the relieved peak (see docs/planning-ahead.md).
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime
import math
import re
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

import numpy as np

from loadaware import gc_freeze
from loadaware.metrics import _auth, _prometheus, _prometheus_client, _promql
from loadaware.metrics._types import ForecastInfo, Usage, UsageSample
from loadaware.policy import MetricsSettings

WEEK = datetime.timedelta(days=7)
# The label marking each week's part of a forecast query, and the workload's.
WEEK_LABEL = "loadaware_week"
WORKLOAD_LABEL = "loadaware_workload"
# Kubernetes' suffix alphabet (k8s.io/apimachinery/pkg/util/rand: no vowels, no
# 0, 1, 3), which names ReplicaSets (pod-template-hash) and generated pods.
_SAFE = "[bcdfghjklmnpqrstvwxz2456789]"
_REPLICASET_POD = rf"(.+)-{_SAFE}{{1,10}}-{_SAFE}{{5}}"
_GENERATED_POD = rf"(.+)-{_SAFE}{{5}}"
_REPLICASET_RE = re.compile(_REPLICASET_POD)
_GENERATED_RE = re.compile(_GENERATED_POD)


def workload_of(pod_key: str) -> str:
    """The workload key ("namespace/name") whose history a pod's forecast follows."""
    namespace, _, name = pod_key.partition("/")
    for pattern in (_REPLICASET_RE, _GENERATED_RE):
        match = pattern.fullmatch(name)
        if match is not None:
            return f"{namespace}/{match.group(1)}"
    return pod_key


def _with_workload(expr: str) -> str:
    """`expr` (by namespace, pod) with WORKLOAD_LABEL as workload_of gives it: the pod
    name, then the generated suffix dropped, then the ReplicaSet's (the last match wins)."""
    marked = f'label_replace(({expr}), "{WORKLOAD_LABEL}", "$1", "pod", "(.*)")'
    for pattern in (_GENERATED_POD, _REPLICASET_POD):
        marked = f'label_replace({marked}, "{WORKLOAD_LABEL}", "$1", "pod", "{pattern}")'
    return marked


@dataclass(frozen=True, slots=True, kw_only=True)
class ForecastValue:
    """The usage expected of a node, or of one replica of a workload."""

    cpu_cores: float
    memory_bytes: float
    named: Mapping[str, float] = field(default_factory=dict)
    weeks: int  # weeks with data behind it (the fewest of its resources)


@dataclass(frozen=True, kw_only=True)
class Forecast:
    """Usage expected over [at, at + horizon], from the same window of past weeks.

    nodes by node name, workloads by workload key (workload_of); a node or
    workload asked for but missing is in `uncovered`, with why."""

    at: datetime.datetime
    horizon: datetime.timedelta
    weeks: int
    min_weeks: int
    quantile: float
    nodes: Mapping[str, ForecastValue] = field(default_factory=dict)
    workloads: Mapping[str, ForecastValue] = field(default_factory=dict)
    uncovered_nodes: Mapping[str, str] = field(default_factory=dict)
    uncovered_workloads: Mapping[str, str] = field(default_factory=dict)
    queries: int = 0
    seconds: float = 0.0


def _offset(horizon: datetime.timedelta, week: int) -> str:
    """The offset that ends the subquery of week k at now - k*7d + horizon."""
    seconds = (week * WEEK - horizon).total_seconds()
    return f"{int(seconds)}s" if float(seconds).is_integer() else f"{round(seconds * 1000)}ms"


def forecast_query(
    expr: str, horizon: datetime.timedelta, step: datetime.timedelta, weeks: int
) -> str:
    """Each week's peak of `expr` over the window, as one union marked by WEEK_LABEL."""
    window = _promql.promql_duration(horizon)
    resolution = _promql.promql_duration(step)
    parts = [
        f"label_replace(max_over_time(({expr})[{window}:{resolution}] offset "
        f'{_offset(horizon, k)}), "{WEEK_LABEL}", "{k}", "", "")'
        for k in range(1, weeks + 1)
    ]
    return " or ".join(parts)


def per_replica(expr: str) -> str:
    """A pod usage expression as its workload's mean per pod, by (namespace, workload)."""
    pods = _with_workload(f"sum by (namespace, pod) ({expr})")
    return f"avg by (namespace, {WORKLOAD_LABEL}) ({pods})"


def peak_query(expr: str, horizon: datetime.timedelta, step: datetime.timedelta) -> str:
    """The peak of `expr` over the horizon that ends at the evaluation time."""
    window = _promql.promql_duration(horizon)
    return f"max_over_time(({expr})[{window}:{_promql.promql_duration(step)}])"


class PrometheusForecaster:
    """Reads forecasts (and, for the proof after the peak, what nodes really used
    over a past horizon) from the policy's Prometheus source."""

    def __init__(
        self, settings: MetricsSettings, *, read_secret: _auth.SecretReader | None = None
    ) -> None:
        if settings.prometheus is None:
            raise ValueError("a forecast needs metrics.prometheus")
        self._settings = settings
        self._source = settings.prometheus
        self._provider = _prometheus.PrometheusProvider(settings, read_secret=read_secret)
        self._read_secret = read_secret
        self.description = self._provider.description

    def __repr__(self) -> str:
        return f"PrometheusForecaster({self._provider.description!r})"

    def _parts(self) -> list[tuple[str, str, str, str | None]]:
        """(kind, resource, expression, node label) per forecast query: kind is node or pod."""
        queries = self._provider.queries
        parts: list[tuple[str, str, str, str | None]] = [
            ("node", "cpu", queries["nodeCpu"].value, None),
            ("node", "memory", queries["nodeMemory"].value, None),
            ("pod", "cpu", queries["podCpu"].value, None),
            ("pod", "memory", queries["podMemory"].value, None),
        ]
        for name, resource in sorted(self._source.resources.items()):
            parts.append(("node", name, resource.node, resource.node_label))
            parts.append(("pod", name, resource.pod, None))
        return parts

    def fetch_forecast(
        self,
        node_names: Collection[str],
        pod_keys: Collection[str],
        *,
        now: datetime.datetime,
        horizon: datetime.timedelta,
    ) -> Forecast:
        """The forecast for these nodes and the workloads of these pods."""
        config = self._source.forecast
        wanted_nodes = frozenset(node_names)
        wanted_workloads = frozenset(workload_of(key) for key in pod_keys)
        parts = [p for p in self._parts() if p[0] == "node" or wanted_workloads]
        credentials = _auth.resolve_credentials(self._source, self._read_secret)
        started = time.perf_counter()
        with (
            gc_freeze.paused(),
            self._provider._session(credentials) as client,
            concurrent.futures.ThreadPoolExecutor(_prometheus.QUERY_THREADS) as pool,
        ):
            jobs = {}
            for kind, resource, expr, label in parts:
                body = per_replica(expr) if kind == "pod" else expr
                text = forecast_query(body, horizon, config.step, config.weeks)
                what = f"forecast {kind} {resource}"
                jobs[(kind, resource)] = pool.submit(
                    self._weekly, client, text, what, kind, label, now
                )
            answers = {key: job.result() for key, job in jobs.items()}
        seconds = time.perf_counter() - started
        resources = [r for kind, r, _, _ in parts if kind == "node"]
        nodes, uncovered_nodes = _combine(
            {r: answers[("node", r)] for r in resources},
            wanted_nodes,
            config.quantile,
            config.min_weeks,
            config.weeks,
        )
        workloads: dict[str, ForecastValue] = {}
        uncovered_workloads: dict[str, str] = {}
        if wanted_workloads:
            workloads, uncovered_workloads = _combine(
                {r: answers[("pod", r)] for r in resources},
                wanted_workloads,
                config.quantile,
                config.min_weeks,
                config.weeks,
            )
        return Forecast(
            at=now,
            horizon=horizon,
            weeks=config.weeks,
            min_weeks=config.min_weeks,
            quantile=config.quantile,
            nodes=nodes,
            workloads=workloads,
            uncovered_nodes=uncovered_nodes,
            uncovered_workloads=uncovered_workloads,
            queries=len(parts),
            seconds=seconds,
        )

    def _weekly(
        self,
        client: _prometheus_client.QueryClient,
        text: str,
        what: str,
        kind: str,
        label: str | None,
        now: datetime.datetime,
    ) -> dict[str, dict[int, float]]:
        """key -> week -> peak. Two series of one key and week (an exporter restarted
        under new labels within the window) give their higher peak."""
        label = label or self._source.node_label
        result: dict[str, dict[int, float]] = {}
        try:
            for item in client.instant(text, now, what):
                metric = item["metric"]
                week = int(metric.get(WEEK_LABEL, "0"))
                if kind == "node":
                    raw = metric.get(label)
                    key = None if raw is None else _promql.node_name_from_label(raw)
                else:
                    namespace, workload = metric.get("namespace"), metric.get(WORKLOAD_LABEL)
                    key = (
                        None if namespace is None or workload is None else f"{namespace}/{workload}"
                    )
                value = float(item["value"][1])
                if key is None or week < 0 or not math.isfinite(value):
                    continue
                weeks = result.setdefault(key, {})
                weeks[week] = max(value, weeks.get(week, -math.inf))
        except (KeyError, IndexError, TypeError, ValueError):
            raise client.bad_shape(text, what, "a sample without metric or value") from None
        return result

    def fetch_peak(
        self,
        node_names: Collection[str],
        *,
        start: datetime.datetime,
        horizon: datetime.timedelta,
    ) -> dict[str, dict[str, float]]:
        """What each node really used at its peak over [start, start + horizon]:
        node -> resource (cpu, memory, named) -> value, read at the horizon's end."""
        config = self._source.forecast
        wanted = frozenset(node_names)
        end = start + horizon
        credentials = _auth.resolve_credentials(self._source, self._read_secret)
        peaks: dict[str, dict[str, float]] = {}
        with self._provider._session(credentials) as client:
            for kind, resource, expr, label in self._parts():
                if kind != "node":
                    continue
                text = peak_query(expr, horizon, config.step)
                answer = self._weekly(client, text, f"peak {resource}", "node", label, end)
                for node, weeks in answer.items():
                    if node in wanted and 0 in weeks:
                        peaks.setdefault(node, {})[resource] = weeks[0]
        return peaks


def _combine(
    answers: Mapping[str, Mapping[str, Mapping[int, float]]],
    wanted: frozenset[str],
    quantile: float,
    min_weeks: int,
    weeks: int,
) -> tuple[dict[str, ForecastValue], dict[str, str]]:
    """The quantile across weeks per key and resource; keys with too few weeks apart.

    cpu and memory must have minWeeks. A named resource (a GPU) counts only where
    the key has any of it: a node or workload without GPU series has no GPU use,
    while one with GPU series in fewer than minWeeks weeks has no forecast."""
    values: dict[str, ForecastValue] = {}
    uncovered: dict[str, str] = {}
    for key in sorted(wanted):
        per_resource: dict[str, float] = {}
        fewest = weeks
        for resource, answer in answers.items():
            weekly = answer.get(key, {})
            if not weekly and resource not in ("cpu", "memory"):
                continue
            fewest = min(fewest, len(weekly))
            if len(weekly) >= min_weeks:
                per_resource[resource] = float(
                    np.quantile(np.fromiter(weekly.values(), float), quantile)
                )
        if fewest < min_weeks:
            uncovered[key] = (
                f"no forecast: {fewest} of the last {weeks} weeks have data (minWeeks {min_weeks})"
            )
            continue
        values[key] = ForecastValue(
            cpu_cores=per_resource["cpu"],
            memory_bytes=per_resource["memory"],
            named={r: v for r, v in per_resource.items() if r not in ("cpu", "memory")},
            weeks=fewest,
        )
    return values, uncovered


def forecast_from_usage(
    usage: Usage,
    *,
    horizon: datetime.timedelta,
    weeks: int = 0,
    min_weeks: int = 0,
    quantile: float = 1.0,
) -> Forecast:
    """A forecast given as a `--metrics` file (offline what-if: `plan --forecast`).

    Its nodes are the node forecasts; its pods, keyed by pod or by workload
    ("namespace/name" as workload_of gives it), the per-replica forecasts of
    their workloads (the highest where several pods of one workload differ).
    Its collectedAt is when the horizon starts."""
    workloads: dict[str, ForecastValue] = {}
    for key, sample in sorted(usage.pods.items()):
        workload = workload_of(key)
        seen = workloads.get(workload)
        if seen is None or (sample.cpu_cores, sample.memory_bytes) > (
            seen.cpu_cores,
            seen.memory_bytes,
        ):
            workloads[workload] = ForecastValue(
                cpu_cores=sample.cpu_cores,
                memory_bytes=sample.memory_bytes,
                named=dict(sample.named),
                weeks=weeks,
            )
    return Forecast(
        at=usage.collected_at,
        horizon=horizon,
        weeks=weeks,
        min_weeks=min_weeks,
        quantile=quantile,
        nodes={
            name: ForecastValue(
                cpu_cores=s.cpu_cores, memory_bytes=s.memory_bytes, named=dict(s.named), weeks=weeks
            )
            for name, s in usage.nodes.items()
        },
        workloads=workloads,
    )


def forecast_usage(current: Usage, forecast: Forecast) -> Usage:
    """Usage to plan on: the forecast's values with the current samples' times.

    Staleness is still judged on the current samples (a round refuses on stale
    metrics whatever the forecast). A node without a forecast has no sample and
    its note says why, so judging excludes it or refuses the round as for a stale
    node; a pod without one (its workload lacks history) has no sample and is not
    a candidate. Nodes or pods without a current sample stay without one."""
    nodes: dict[str, UsageSample] = {}
    notes = dict(current.notes)
    gaps: dict[str, str] = {}
    for name, sample in current.nodes.items():
        value = forecast.nodes.get(name)
        if value is None:
            gaps[name] = forecast.uncovered_nodes.get(name, "no forecast for the node")
            notes.pop(name, None)
            continue
        nodes[name] = dataclasses.replace(
            sample,
            cpu_cores=value.cpu_cores,
            memory_bytes=value.memory_bytes,
            named=_named(sample, value),
        )
    pods: dict[str, UsageSample] = {}
    for key, sample in current.pods.items():
        value = forecast.workloads.get(workload_of(key))
        if value is None:
            continue
        pods[key] = dataclasses.replace(
            sample,
            cpu_cores=value.cpu_cores,
            memory_bytes=value.memory_bytes,
            named=_named(sample, value),
        )
    info = ForecastInfo(
        at=forecast.at,
        horizon=forecast.horizon,
        weeks=forecast.weeks,
        min_weeks=forecast.min_weeks,
        quantile=forecast.quantile,
        nodes=len(forecast.nodes),
        workloads=len(forecast.workloads),
        uncovered_nodes=dict(forecast.uncovered_nodes),
        uncovered_workloads=dict(forecast.uncovered_workloads),
        node_values={
            name: {"cpu": v.cpu_cores, "memory": v.memory_bytes, **v.named}
            for name, v in forecast.nodes.items()
        },
    )
    return dataclasses.replace(
        current,
        nodes=nodes,
        pods=pods,
        # The history behind hotspot confirmation is the moment's, not the forecast's.
        history=None,
        notes=notes,
        unforecast=gaps,
        forecast=info,
    )


def _named(sample: UsageSample, value: ForecastValue) -> dict[str, float]:
    """The named resources of a sample, forecast. One the forecast has no weeks of at
    all (no series in past weeks: a GPU workload new to its nodes) keeps what it uses
    now: a node without a value its pool judges would have no sample at all."""
    return {r: value.named.get(r, v) for r, v in sample.named.items()}
