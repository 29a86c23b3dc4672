"""Usage from Prometheus (or Thanos Querier, Grafana Mimir: the same HTTP API).

Whole-cluster instant queries, never one per node or pod: a value query per
resource (node cpu, node memory, pod cpu, pod memory) and sample-time queries
giving the time of the newest raw sample behind each value. An instant query
answers with samples up to the lookback delta (5m) old, stamped with the
evaluation time, so a node-exporter that died 4 minutes ago still "has a
value"; `timestamp()` of the raw series is the scrape time instead. Value and
sample time are separate queries, not one joined with `or`, because the join
costs Prometheus more than the two queries together. They run concurrently.

Pods are dated without a per-pod sample-time answer (at 150,000 pods that
answer alone was a third of a round's parsing): cAdvisor reports every pod of
a node in one kubelet scrape, so a pod whose series are current shares its
node's newest cAdvisor sample time, asked per node. Only the pods whose own
series are older than half of maxSampleAge (the lookback trap: series that
stopped up to 5 minutes ago still answer) come back from a second query,
with their exact times. See date_pods for what that guarantees. Python's
cyclic garbage collector is paused while the answers are parsed (see
loadaware.gc_freeze): at 150,000 pods it cost as much CPU as the parsing.

With hotspot confirmation on, one range query reads node cpu and memory over
the last points for confirm_hotspots; its last point, at the round's time, is
then the current node value (no instant node value queries). When a node of the
cluster has no current value, one more query asks when its series were last
seen (over LAST_SEEN_HORIZON), so that the refusal says how old its data is.

Why requests rather than prometheus-api-client's custom_query: that client sends
the query in the URL even for POST (long queries hit proxies' URL limits), drops
the resultType (a matrix cannot be told from a vector) and puts the whole
response body into its exception text. The session here carries its own urllib3
Retry (one connection retry, no retries on 5xx or reads, no backoff), always a
timeout, and no redirects (a redirect is an auth proxy's login page, not data).

Its parts: `_promql` holds the queries, `_prometheus_client` the HTTP API,
`_prometheus_series` reads the answers and assembles samples (`date_pods`); the
provider here decides what a round asks and puts the answers together.
"""

from __future__ import annotations

import concurrent.futures
import datetime
import math
import urllib.parse
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager

from loadaware import gc_freeze
from loadaware.metrics import _auth, _hotspot, _prometheus_client, _prometheus_series, _promql
from loadaware.metrics._types import NodeHistory, Usage, UsageHistory, UsageSample
from loadaware.policy import MetricsSettings

# Queries in flight at once in a round; each is one whole-cluster query.
QUERY_THREADS = 4
# How an instant query's answer is read: node values or times by nodeLabel, pod
# sample times, pod values (with their cAdvisor node), cAdvisor scrape times by node.
_NODE, _POD, _POD_VALUE, _SCRAPE = "node", "pod", "pod value", "scrape"
NODE_RESOURCES = ("nodeCpu", "nodeMemory")
POD_RESOURCES = ("podCpu", "podMemory")


class PrometheusProvider:
    """MetricsProvider reading a Prometheus-compatible HTTP API.

    read_secret reads Kubernetes Secrets for authToken and basicAuth (see
    kubernetes_secret_reader); it is called at the start of every fetch and its
    result is dropped at the end.
    """

    def __init__(
        self,
        settings: MetricsSettings,
        *,
        read_secret: _auth.SecretReader | None = None,
    ) -> None:
        if settings.prometheus is None:
            raise ValueError("the metrics settings have no prometheus source")
        self._settings = settings
        self._source = settings.prometheus
        self._read_secret = read_secret
        self._queries = _promql.queries_for(self._source)
        # The path prefix (Thanos, Mimir's /prometheus) is kept; userinfo never is.
        parts = urllib.parse.urlsplit(str(self._source.url))
        netloc = parts.netloc.rpartition("@")[2]
        self._base = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
        self.description = f"Prometheus {self._base}"

    def __repr__(self) -> str:
        return f"PrometheusProvider({self._base!r})"

    @property
    def queries(self) -> Mapping[str, _promql.ResourceQuery]:
        return self._queries

    def fetch_usage(
        self,
        node_names: Collection[str],
        pod_keys: Collection[str],
        *,
        now: datetime.datetime,
    ) -> Usage:
        credentials = _auth.resolve_credentials(self._source, self._read_secret)
        wanted_nodes, wanted_pods = frozenset(node_names), frozenset(pod_keys)
        confirmation = self._settings.hotspot_confirmation
        with_history = confirmation.consecutive > 1 and bool(wanted_nodes)
        with (
            gc_freeze.paused(),
            self._session(credentials) as client,
            concurrent.futures.ThreadPoolExecutor(QUERY_THREADS) as pool,
        ):
            # Queries run side by side: Prometheus evaluates one while the JSON of
            # another is parsed here. With confirmation on, the range query also
            # gives the current node values.
            parse: dict[str, Callable[[str, str], _prometheus_series.Series]] = {
                _NODE: lambda text, what: _prometheus_series.read_node_series(
                    client, text, what, wanted_nodes, now, self._source.node_label
                ),
                _POD: lambda text, what: _prometheus_series.read_pod_series(
                    client, text, what, wanted_pods, now
                ),
                _POD_VALUE: lambda text, what: _prometheus_series.read_pod_series(
                    client, text, what, wanted_pods, now, is_value=True
                ),
                _SCRAPE: lambda text, what: _prometheus_series.read_scrape_times(
                    client, text, what, now
                ),
            }
            jobs: dict[tuple[str, str], concurrent.futures.Future[_prometheus_series.Series]] = {}
            history_job = None
            asked = self.instant_queries(with_history=with_history)
            if not wanted_pods:
                # Node values alone (the relief check after a round): no pod answers.
                asked = {key: what for key, what in asked.items() if key[0] == _NODE}
            for (kind, text), what in asked.items():
                jobs[(kind, text)] = pool.submit(parse[kind], text, what)
                if with_history and history_job is None and kind != _POD_VALUE:
                    # After the pod values: the range query is the slowest of the rest.
                    history_job = pool.submit(self._history, client, wanted_nodes, now)
            try:
                results = {key: job.result() for key, job in jobs.items()}
                history = None
                if history_job is not None:
                    history, current = history_job.result()
                    for name in NODE_RESOURCES:
                        results[(_NODE, self._queries[name].value)] = current[name]
            except BaseException:
                pool.shutdown(wait=False, cancel_futures=True)
                raise

            pods = self._pods(client, results, now) if wanted_pods else {}
            nodes, notes, missing = _prometheus_series.assemble(
                wanted_nodes,
                [
                    _prometheus_series.Resource(
                        query=self._queries[n],
                        values=results[(_NODE, self._queries[n].value)],
                        stamps=results[(_NODE, self._queries[n].timestamp)],
                    )
                    for n in NODE_RESOURCES
                ],
            )
            last_seen = self._last_seen(client, missing, now) if missing else {}
            capacity: dict[str, dict[str, float]] = {}
            if self._source.resources:
                nodes, pods, capacity = self._named(
                    client, pool, nodes, pods, wanted_nodes, wanted_pods, now
                )
        return Usage(
            collected_at=now,
            nodes=nodes,
            pods=pods,
            history=history,
            last_seen=last_seen,
            notes=notes,
            capacity=capacity,
        )

    def _named(
        self,
        client: _prometheus_client.QueryClient,
        pool: concurrent.futures.ThreadPoolExecutor,
        nodes: dict[str, UsageSample],
        pods: dict[str, UsageSample],
        wanted_nodes: frozenset[str],
        wanted_pods: frozenset[str],
        now: datetime.datetime,
    ) -> tuple[dict[str, UsageSample], dict[str, UsageSample], dict[str, dict[str, float]]]:
        """The named resources' values folded into the samples: a value with its
        sample time joins a sample, whose time becomes the older of the two. A node
        or pod without one keeps its sample without the resource; whether that
        matters (its pool judges the resource) is for judging to say."""
        jobs: dict[tuple[str, str], concurrent.futures.Future[_prometheus_series.Series]] = {}
        for name, resource in sorted(self._source.resources.items()):
            label = resource.node_label
            node_parts = [("node", resource.node), ("nodeTimestamp", resource.node_timestamp)]
            if resource.capacity_is_query:
                node_parts.append(("capacity", resource.capacity))
            for part, text in node_parts:
                what = f"resources.{name}.{part}"
                jobs[(name, part)] = pool.submit(
                    _prometheus_series.read_node_series,
                    client,
                    text,
                    what,
                    wanted_nodes,
                    now,
                    label or self._source.node_label,
                )
            if wanted_pods:
                for part, text in (("pod", resource.pod), ("podTimestamp", resource.pod_timestamp)):
                    what = f"resources.{name}.{part}"
                    jobs[(name, part)] = pool.submit(
                        _prometheus_series.read_pod_series, client, text, what, wanted_pods, now
                    )
        answers = {key: job.result() for key, job in jobs.items()}
        capacity: dict[str, dict[str, float]] = {}
        for name in sorted(self._source.resources):
            nodes = _prometheus_series.join(
                nodes, name, answers[(name, "node")], answers[(name, "nodeTimestamp")]
            )
            if (name, "pod") in answers:
                pods = _prometheus_series.join(
                    pods, name, answers[(name, "pod")], answers[(name, "podTimestamp")]
                )
            if (name, "capacity") in answers:
                for node, value in answers[(name, "capacity")].values.items():
                    capacity.setdefault(node, {})[name] = value
        return nodes, pods, capacity

    def _pods(
        self,
        client: _prometheus_client.QueryClient,
        results: Mapping[tuple[str, str], _prometheus_series.Series],
        now: datetime.datetime,
    ) -> dict[str, UsageSample]:
        """The pod samples from the pod value and sample-time answers."""
        pod_values = [results[(_POD_VALUE, self._queries[n].value)] for n in POD_RESOURCES]
        stamps: dict[str, _prometheus_series.Series] = {}
        dated = None
        for name in POD_RESOURCES:
            text = self._queries[name].timestamp
            if text != _promql.POD_SAMPLE_TIME:
                stamps[name] = results[(_POD, text)]
                continue
            if dated is None:
                dated = _prometheus_series.date_pods(
                    client,
                    pod_values,
                    results[(_SCRAPE, _promql.NODE_SCRAPE_TIME)].values,
                    results[(_POD, self._own_time_query())],
                    now,
                )
            stamps[name] = dated
        return _prometheus_series.assemble_pods(*pod_values, stamps["podCpu"], stamps["podMemory"])

    def instant_queries(self, *, with_history: bool) -> dict[tuple[str, str], str]:
        """The instant queries of a round, each once, in the order asked: (kind,
        PromQL) -> what it is for. kind tells how the answer is read; with_history:
        the range query gives the node values.

        The two pod value answers (150,000 series at 150,000 pods) come first:
        their JSON is parsed here while Prometheus evaluates the rest."""
        queries: dict[tuple[str, str], str] = {}
        for name in POD_RESOURCES:
            queries.setdefault((_POD_VALUE, self._queries[name].value), name)
        for name in NODE_RESOURCES:
            if not with_history:
                queries.setdefault((_NODE, self._queries[name].value), name)
        for name in POD_RESOURCES:
            stamp = self._queries[name].timestamp
            if stamp != _promql.POD_SAMPLE_TIME:
                queries.setdefault((_POD, stamp), f"{name}Timestamp")
            else:
                queries.setdefault((_SCRAPE, _promql.NODE_SCRAPE_TIME), "cAdvisor scrape time")
                queries.setdefault((_POD, self._own_time_query()), "pods with old samples")
        for name in NODE_RESOURCES:
            queries.setdefault((_NODE, self._queries[name].timestamp), f"{name}Timestamp")
        return queries

    # -- the queries -------------------------------------------------------

    def _own_time_query(self) -> str:
        """The pods dated by their own series, with their time as _promql.POD_SAMPLE_TIME
        gives it: those with a series older than _promql.OWN_TIME_AGE_FRACTION of
        maxSampleAge at the round's time (PromQL's time()).

        Filtered before min(), not after: the same answer (the oldest series of a
        pod is among the old ones), and Prometheus aggregates only the old series."""
        age = self._settings.max_sample_age.total_seconds() * _promql.OWN_TIME_AGE_FRACTION
        return f"min by (namespace, pod) ({_promql.CADVISOR_TIMES} < (time() - {age:g}))"

    def _last_seen(
        self,
        client: _prometheus_client.QueryClient,
        missing: Mapping[str, tuple[str, ...]],
        now: datetime.datetime,
    ) -> dict[str, datetime.datetime]:
        names = ("nodeCpu", "nodeMemory")
        text = " or ".join(
            _promql.marked(
                f"max_over_time(({self._queries[n].timestamp})"
                f"[{_promql.LAST_SEEN_HORIZON}:{_promql.LAST_SEEN_STEP}])",
                n,
            )
            for n in names
        )
        seen: dict[str, dict[str, float]] = {n: {} for n in names}
        for item in client.instant(text, now, "last seen"):
            metric, value = item.get("metric") or {}, _prometheus_series.number(item.get("value"))
            part, raw = metric.get(_promql.PART_LABEL), metric.get(self._source.node_label)
            if part in seen and raw is not None and math.isfinite(value):
                node = _promql.node_name_from_label(raw)
                # Two exporters for a node: the older one bounds how fresh it is.
                seen[part][node] = min(value, seen[part].get(node, math.inf))
        result = {}
        for node, lacking in missing.items():
            times = [seen[part].get(node) for part in lacking]
            if times and all(t is not None for t in times):
                result[node] = _prometheus_series.from_unix(min(t for t in times if t is not None))
        return result

    def _history(
        self, client: _prometheus_client.QueryClient, wanted: frozenset[str], now: datetime.datetime
    ) -> tuple[UsageHistory, dict[str, _prometheus_series.Series]]:
        """Node usage over the confirmation range, and its last point (at `now`) as the
        current node values: the instant value queries would evaluate the same
        expressions at the same time again."""
        confirmation = self._settings.hotspot_confirmation
        points = _hotspot.history_points(confirmation.consecutive)
        step = confirmation.interval.total_seconds()
        start = now - datetime.timedelta(seconds=step * (points - 1))
        times = tuple(start + datetime.timedelta(seconds=step * i) for i in range(points))
        text = " or ".join(
            _promql.marked(self._queries[name].value, resource)
            for name, resource in (("nodeCpu", "cpu"), ("nodeMemory", "memory"))
        )
        columns: dict[str, dict[str, list[float]]] = {}
        owners: dict[tuple[str, str], Mapping[str, str]] = {}
        last: dict[tuple[str, str], float] = {}
        for metric, values in client.range(text, start, now, step, "hotspot confirmation"):
            raw, resource = metric.get(self._source.node_label), metric.get(_promql.PART_LABEL)
            if raw is None or resource not in ("cpu", "memory"):
                continue
            node = _promql.node_name_from_label(raw)
            if node not in wanted:
                continue
            if (node, resource) in owners:
                raise _prometheus_series.duplicate_error(
                    node, "node", owners[(node, resource)], metric, "range query"
                )
            owners[(node, resource)] = metric
            row = columns.setdefault(node, {}).setdefault(resource, [math.nan] * points)
            for moment, value in values:
                index = round((moment - start.timestamp()) / step)
                if 0 <= index < points:
                    row[index] = value
                if index == points - 1:
                    # Kept apart from the row, where NaN means "no point": a NaN
                    # value must reach the plausibility check as NaN.
                    last[(node, resource)] = value
        nan_row = (math.nan,) * points
        history = UsageHistory(
            times=times,
            nodes={
                node: NodeHistory(
                    cpu_cores=tuple(rows.get("cpu", nan_row)),
                    memory_bytes=tuple(rows.get("memory", nan_row)),
                )
                for node, rows in columns.items()
            },
        )
        current = {}
        for name, resource in (("nodeCpu", "cpu"), ("nodeMemory", "memory")):
            series = _prometheus_series.Series(what=name, text=self._queries[name].value)
            for (node, part), value in last.items():
                # A node without a point at `now` (its series ended within the
                # range) has no current value.
                if part == resource:
                    series.values[node] = value
                    series.owners[node] = owners[(node, resource)]
            current[name] = series
        return history, current

    @contextmanager
    def _session(self, credentials: _auth.Credentials) -> Iterator[_prometheus_client.QueryClient]:
        with _prometheus_client.open_session(self._source, self._base, credentials) as client:
            yield client
