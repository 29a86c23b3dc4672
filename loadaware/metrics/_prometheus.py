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
with their exact times. See _date_pods for what that guarantees. Python's
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
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime
import json
import logging
import math
import re
import time
import urllib.parse
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import requests
import requests.adapters
import urllib3
import urllib3.util

from loadaware import gc_freeze
from loadaware.errors import RefusedError
from loadaware.metrics import _auth, _hotspot
from loadaware.metrics._types import NodeHistory, Usage, UsageHistory, UsageSample
from loadaware.policy import MetricsSettings, PrometheusSource

log = logging.getLogger(__name__)

UNREACHABLE = "metrics-unreachable"
QUERY_FAILED = "metrics-query-failed"
DUPLICATE = "duplicate-series"

# A label the queries add to tell the parts of a combined query apart.
PART_LABEL = "loadaware_part"
# How far back the last-seen query looks for a node with no current value.
LAST_SEEN_HORIZON = "1h"
# Its subquery step; at most the lookback delta, so no sample falls between steps.
LAST_SEEN_STEP = "1m"
# Error bodies are cut to this length before they reach a message.
MAX_ERROR_TEXT = 300
# Queries in flight at once in a round; each is one whole-cluster query.
QUERY_THREADS = 4
# How an instant query's answer is read: node values or times by nodeLabel, pod
# sample times, pod values (with their cAdvisor node), cAdvisor scrape times by node.
_NODE, _POD, _POD_VALUE, _SCRAPE = "node", "pod", "pod value", "scrape"
NODE_RESOURCES = ("nodeCpu", "nodeMemory")
POD_RESOURCES = ("podCpu", "podMemory")


@dataclass(frozen=True, slots=True)
class ResourceQuery:
    """The PromQL for one resource: its value, and the unix time of its newest raw sample."""

    name: str  # the policy's key: nodeCpu, nodeMemory, podCpu, podMemory
    value: str
    timestamp: str


# The label of cAdvisor series naming the kubelet's node (kube-prometheus-stack
# sets it; it is not nodeLabel, which names the node on node-exporter series).
CADVISOR_NODE_LABEL = "node"
# Pods whose own newest sample is older than this fraction of maxSampleAge are
# dated by their own series, the others by their node's cAdvisor scrape.
OWN_TIME_AGE_FRACTION = 0.5

# cAdvisor reports a container's cpu and memory in the same kubelet scrape, so
# one sample time dates both pod resources. A pod is only as fresh as its
# stalest container, hence min().
_CADVISOR_TIMES = 'timestamp(container_memory_working_set_bytes{container!=""})'
_POD_SAMPLE_TIME = f"min by (namespace, pod) ({_CADVISOR_TIMES})"
# The newest cAdvisor scrape of each node: the time of every current pod series on it.
_NODE_SCRAPE_TIME = f"max by ({CADVISOR_NODE_LABEL}) ({_CADVISOR_TIMES})"

# kube-prometheus-stack names. Node queries aggregate *without* the per-cpu and
# per-mode labels, not *by* the node label, so that two exporters reporting for
# one node stay two series (duplicate-series) instead of being silently summed.
# A sum is only as fresh as its stalest input, hence min() over timestamps.
DEFAULT_QUERIES: Mapping[str, ResourceQuery] = {
    "nodeCpu": ResourceQuery(
        "nodeCpu",
        'sum without (cpu, mode) (rate(node_cpu_seconds_total{mode!="idle"}[$window]))',
        # Every mode of a cpu comes from the same scrape: idle alone dates them all.
        'min without (cpu, mode) (timestamp(node_cpu_seconds_total{mode="idle"}))',
    ),
    "nodeMemory": ResourceQuery(
        "nodeMemory",
        "node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes",
        # Both come from one read of /proc/meminfo in the same scrape.
        "timestamp(node_memory_MemAvailable_bytes)",
    ),
    "podCpu": ResourceQuery(
        "podCpu",
        "sum by (namespace, pod, node) "
        '(rate(container_cpu_usage_seconds_total{container!=""}[$window]))',
        _POD_SAMPLE_TIME,
    ),
    "podMemory": ResourceQuery(
        "podMemory",
        'sum by (namespace, pod, node) (container_memory_working_set_bytes{container!=""})',
        _POD_SAMPLE_TIME,
    ),
}

_PORT = re.compile(r"(?P<host>[^:]+|\[[^\]]*\]):[0-9]+")


def queries_for(source: PrometheusSource) -> dict[str, ResourceQuery]:
    """The effective queries: defaults, overridden by the policy, `$window` filled in."""
    window = _promql_duration(source.rate_window)
    overrides = source.queries
    result = {}
    for name, default in DEFAULT_QUERIES.items():
        field = re.sub(r"([A-Z])", r"_\1", name).lower()
        value = getattr(overrides, field) or default.value
        stamp = getattr(overrides, f"{field}_timestamp") or default.timestamp
        result[name] = ResourceQuery(
            name, value.replace("$window", window), stamp.replace("$window", window)
        )
    return result


def node_name_from_label(value: str) -> str:
    """The node name in a node label value: `instance` usually carries `host:port`."""
    match = _PORT.fullmatch(value)
    return match.group("host") if match else value


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
        self._queries = queries_for(self._source)
        # The path prefix (Thanos, Mimir's /prometheus) is kept; userinfo never is.
        parts = urllib.parse.urlsplit(str(self._source.url))
        netloc = parts.netloc.rpartition("@")[2]
        self._base = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))
        self.description = f"Prometheus {self._base}"

    def __repr__(self) -> str:
        return f"PrometheusProvider({self._base!r})"

    @property
    def queries(self) -> Mapping[str, ResourceQuery]:
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
            parse: dict[str, Callable[[str, str], _Series]] = {
                _NODE: lambda text, what: self._node_series(client, text, what, wanted_nodes, now),
                _POD: lambda text, what: self._pod_series(client, text, what, wanted_pods, now),
                _POD_VALUE: lambda text, what: self._pod_series(
                    client, text, what, wanted_pods, now, is_value=True
                ),
                _SCRAPE: lambda text, what: self._scrape_times(client, text, what, now),
            }
            jobs: dict[tuple[str, str], concurrent.futures.Future[_Series]] = {}
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
            nodes, notes, missing = _assemble(
                wanted_nodes,
                [
                    _Resource(
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
        client: _Client,
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
        jobs: dict[tuple[str, str], concurrent.futures.Future[_Series]] = {}
        for name, resource in sorted(self._source.resources.items()):
            label = resource.node_label
            node_parts = [("node", resource.node), ("nodeTimestamp", resource.node_timestamp)]
            if resource.capacity_is_query:
                node_parts.append(("capacity", resource.capacity))
            for part, text in node_parts:
                what = f"resources.{name}.{part}"
                jobs[(name, part)] = pool.submit(
                    self._node_series, client, text, what, wanted_nodes, now, label
                )
            if wanted_pods:
                for part, text in (("pod", resource.pod), ("podTimestamp", resource.pod_timestamp)):
                    what = f"resources.{name}.{part}"
                    jobs[(name, part)] = pool.submit(
                        self._pod_series, client, text, what, wanted_pods, now
                    )
        answers = {key: job.result() for key, job in jobs.items()}
        capacity: dict[str, dict[str, float]] = {}
        for name in sorted(self._source.resources):
            nodes = _join(nodes, name, answers[(name, "node")], answers[(name, "nodeTimestamp")])
            if (name, "pod") in answers:
                pods = _join(pods, name, answers[(name, "pod")], answers[(name, "podTimestamp")])
            if (name, "capacity") in answers:
                for node, value in answers[(name, "capacity")].values.items():
                    capacity.setdefault(node, {})[name] = value
        return nodes, pods, capacity

    def _pods(
        self,
        client: _Client,
        results: Mapping[tuple[str, str], _Series],
        now: datetime.datetime,
    ) -> dict[str, UsageSample]:
        """The pod samples from the pod value and sample-time answers."""
        pod_values = [results[(_POD_VALUE, self._queries[n].value)] for n in POD_RESOURCES]
        stamps: dict[str, _Series] = {}
        dated = None
        for name in POD_RESOURCES:
            text = self._queries[name].timestamp
            if text != _POD_SAMPLE_TIME:
                stamps[name] = results[(_POD, text)]
                continue
            if dated is None:
                dated = self._date_pods(
                    client,
                    pod_values,
                    results[(_SCRAPE, _NODE_SCRAPE_TIME)].values,
                    results[(_POD, self._own_time_query())],
                    now,
                )
            stamps[name] = dated
        return _assemble_pods(*pod_values, stamps["podCpu"], stamps["podMemory"])

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
            if stamp != _POD_SAMPLE_TIME:
                queries.setdefault((_POD, stamp), f"{name}Timestamp")
            else:
                queries.setdefault((_SCRAPE, _NODE_SCRAPE_TIME), "cAdvisor scrape time")
                queries.setdefault((_POD, self._own_time_query()), "pods with old samples")
        for name in NODE_RESOURCES:
            queries.setdefault((_NODE, self._queries[name].timestamp), f"{name}Timestamp")
        return queries

    # -- the queries -------------------------------------------------------

    def _own_time_query(self) -> str:
        """The pods dated by their own series, with their time as _POD_SAMPLE_TIME
        gives it: those with a series older than OWN_TIME_AGE_FRACTION of
        maxSampleAge at the round's time (PromQL's time()).

        Filtered before min(), not after: the same answer (the oldest series of a
        pod is among the old ones), and Prometheus aggregates only the old series."""
        age = self._settings.max_sample_age.total_seconds() * OWN_TIME_AGE_FRACTION
        return f"min by (namespace, pod) ({_CADVISOR_TIMES} < (time() - {age:g}))"

    def _date_pods(
        self,
        client: _Client,
        values: list[_Series],
        scrape_times: Mapping[str, float],
        own: _Series,
        now: datetime.datetime,
    ) -> _Series:
        """The sample time of every pod with a value, without a per-pod answer if it can.

        A pod's time is its own (the newest sample of its stalest container) when
        that is older than OWN_TIME_AGE_FRACTION of maxSampleAge, else the newest
        cAdvisor scrape of its node, which is no older than its own. So judging
        the times against maxSampleAge gives the verdict the pods' own times would,
        also when judged up to maxSampleAge * OWN_TIME_AGE_FRACTION after `now`;
        a fresh pod's time is its own exactly when, as with Prometheus' scrape
        timestamps, all series of a scrape share one time. A pod on two nodes (a
        StatefulSet pod recreated elsewhere within the lookback) takes the older
        node's time. Pods without a node time (value queries overridden without
        the node label, or a node absent from the scrape times) are dated by the
        per-pod query, asked only then."""
        stamps = _Series(
            what="podTimestamp",
            text=f"{_NODE_SCRAPE_TIME}, {own.text}",
            note=f"sample time from the cAdvisor scrape of its node `{_NODE_SCRAPE_TIME}`",
        )
        times, own_times = stamps.values, own.values
        for series in values:
            spread = series.spread
            for key, node in series.nodes.items():
                if key in times:
                    continue
                stamp = own_times.get(key)
                if stamp is None and node is not None:
                    stamp = scrape_times.get(node)
                    for other in spread.get(key, ()):
                        other_stamp = scrape_times.get(other)
                        if stamp is None or other_stamp is None:
                            stamp = None
                        else:
                            stamp = min(stamp, other_stamp)
                if stamp is not None:
                    times[key] = stamp
        undated = {key for series in values for key in series.nodes if key not in times}
        if undated:
            log.info(
                "pods without a node sample time, dated per pod",
                extra={"pods": len(undated), "query": _POD_SAMPLE_TIME},
            )
            fallback = self._pod_series(client, _POD_SAMPLE_TIME, "podTimestamp", undated, now)
            times.update(fallback.values)
            stamps.unlabelled = fallback.unlabelled
        return stamps

    def _node_series(
        self,
        client: _Client,
        text: str,
        what: str,
        wanted: frozenset[str],
        now: datetime.datetime,
        label: str | None = None,
    ) -> _Series:
        label = label or self._source.node_label
        series = _Series(what=what, text=text, note=f"sample time from {what} `{text}`")
        values, owners = series.values, series.owners
        try:
            for item in client.instant(text, now, what):
                metric = item["metric"]
                raw = metric.get(label)
                if raw is None:
                    series.unlabelled += 1
                    continue
                key = node_name_from_label(raw)
                if key in wanted:
                    if key in values:
                        raise series.duplicate(key, metric)
                    owners[key] = metric
                    values[key] = float(item["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            raise client.bad_shape(text, what, "a sample without metric or value") from None
        return series

    def _pod_series(
        self,
        client: _Client,
        text: str,
        what: str,
        wanted: Collection[str],
        now: datetime.datetime,
        *,
        is_value: bool = False,
    ) -> _Series:
        """A pod query's answer; for values, also the node of each pod, and the
        series of a pod on several nodes summed (as `sum by (namespace, pod)` would)."""
        series = _Series(what=what, text=text, note=f"sample time from {what} `{text}`")
        values, owners, nodes, spread = series.values, series.owners, series.nodes, series.spread
        # The hot loop of a round (150,000 pods): one pass, no per-series calls
        # beyond what identifies the series.
        try:
            for item in client.instant(text, now, what):
                metric = item["metric"]
                namespace, pod = metric.get("namespace"), metric.get("pod")
                if namespace is None or pod is None:
                    series.unlabelled += 1
                    continue
                key = f"{namespace}/{pod}"
                if key not in wanted:
                    continue
                node = metric.get(CADVISOR_NODE_LABEL)
                if key in values:
                    seen, others = nodes[key], spread.setdefault(key, [])
                    if not is_value or None in (node, seen) or node == seen or node in others:
                        raise series.duplicate(key, metric)
                    others.append(node)
                    values[key] += float(item["value"][1])
                    continue
                owners[key] = metric
                nodes[key] = node
                values[key] = float(item["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            raise client.bad_shape(text, what, "a sample without metric or value") from None
        return series

    def _scrape_times(
        self, client: _Client, text: str, what: str, now: datetime.datetime
    ) -> _Series:
        """The newest cAdvisor sample time by the value of the cAdvisor node label."""
        series = _Series(what=what, text=text)
        times = series.values
        try:
            for item in client.instant(text, now, what):
                node = item["metric"].get(CADVISOR_NODE_LABEL)
                if node is None:
                    series.unlabelled += 1
                else:
                    times[node] = float(item["value"][1])
        except (KeyError, IndexError, TypeError, ValueError):
            raise client.bad_shape(text, what, "a sample without metric or value") from None
        return series

    def _last_seen(
        self, client: _Client, missing: Mapping[str, tuple[str, ...]], now: datetime.datetime
    ) -> dict[str, datetime.datetime]:
        names = ("nodeCpu", "nodeMemory")
        text = " or ".join(
            _marked(
                f"max_over_time(({self._queries[n].timestamp})"
                f"[{LAST_SEEN_HORIZON}:{LAST_SEEN_STEP}])",
                n,
            )
            for n in names
        )
        seen: dict[str, dict[str, float]] = {n: {} for n in names}
        for item in client.instant(text, now, "last seen"):
            metric, value = item.get("metric") or {}, _number(item.get("value"))
            part, raw = metric.get(PART_LABEL), metric.get(self._source.node_label)
            if part in seen and raw is not None and math.isfinite(value):
                node = node_name_from_label(raw)
                # Two exporters for a node: the older one bounds how fresh it is.
                seen[part][node] = min(value, seen[part].get(node, math.inf))
        result = {}
        for node, lacking in missing.items():
            times = [seen[part].get(node) for part in lacking]
            if times and all(t is not None for t in times):
                result[node] = _from_unix(min(t for t in times if t is not None))
        return result

    def _history(
        self, client: _Client, wanted: frozenset[str], now: datetime.datetime
    ) -> tuple[UsageHistory, dict[str, _Series]]:
        """Node usage over the confirmation range, and its last point (at `now`) as the
        current node values: the instant value queries would evaluate the same
        expressions at the same time again."""
        confirmation = self._settings.hotspot_confirmation
        points = _hotspot.history_points(confirmation.consecutive)
        step = confirmation.interval.total_seconds()
        start = now - datetime.timedelta(seconds=step * (points - 1))
        times = tuple(start + datetime.timedelta(seconds=step * i) for i in range(points))
        text = " or ".join(
            _marked(self._queries[name].value, resource)
            for name, resource in (("nodeCpu", "cpu"), ("nodeMemory", "memory"))
        )
        columns: dict[str, dict[str, list[float]]] = {}
        owners: dict[tuple[str, str], Mapping[str, str]] = {}
        last: dict[tuple[str, str], float] = {}
        for metric, values in client.range(text, start, now, step, "hotspot confirmation"):
            raw, resource = metric.get(self._source.node_label), metric.get(PART_LABEL)
            if raw is None or resource not in ("cpu", "memory"):
                continue
            node = node_name_from_label(raw)
            if node not in wanted:
                continue
            if (node, resource) in owners:
                raise _duplicate(node, "node", owners[(node, resource)], metric, "range query")
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
            series = _Series(what=name, text=self._queries[name].value)
            for (node, part), value in last.items():
                # A node without a point at `now` (its series ended within the
                # range) has no current value.
                if part == resource:
                    series.values[node] = value
                    series.owners[node] = owners[(node, resource)]
            current[name] = series
        return history, current

    @contextmanager
    def _session(self, credentials: _auth.Credentials) -> Iterator[_Client]:
        session = requests.Session()
        retry = urllib3.util.Retry(
            total=1, connect=1, read=0, status=0, other=0, redirect=0, backoff_factor=0
        )
        adapter = requests.adapters.HTTPAdapter(max_retries=retry)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        session.headers.update(self._source.headers)
        session.auth = credentials.requests_auth()
        # Given per request, not on the session: requests lets REQUESTS_CA_BUNDLE
        # override a session's verify, which would silently drop caFile.
        verify: bool | str = True
        if self._source.insecure_skip_verify:
            verify = False
        elif self._source.ca_file is not None:
            verify = self._source.ca_file
        if self._source.cert_file is not None and self._source.key_file is not None:
            session.cert = (self._source.cert_file, self._source.key_file)
        try:
            with warnings.catch_warnings():
                if self._source.insecure_skip_verify:
                    # The policy asked for it; say so once per round rather than per request.
                    warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
                    log.warning(
                        "TLS certificate verification of the metrics source is disabled",
                        extra={"source": self._base},
                    )
                yield _Client(session, self._base, self._source.timeout, credentials, verify)
        finally:
            session.close()


def _marked(query: str, part: str) -> str:
    return f'label_replace(({query}), "{PART_LABEL}", "{part}", "", "")'


@dataclass(slots=True, kw_only=True)
class _Series:
    """One query's answer, by node name or pod key (only the keys a round asked for)."""

    what: str
    text: str
    note: str = ""
    values: dict[str, float] = field(default_factory=dict)
    owners: dict[str, Mapping[str, str]] = field(default_factory=dict)
    unlabelled: int = 0  # series without the identity labels
    # Pod values only: the cAdvisor node of each pod (None: no node label), and
    # the further nodes of a pod whose series on several nodes were summed.
    nodes: dict[str, str | None] = field(default_factory=dict)
    spread: dict[str, list[str]] = field(default_factory=dict)

    def duplicate(self, key: str, metric: Mapping[str, str]) -> RefusedError:
        kind = "pod" if "/" in key else "node"
        return _duplicate(key, kind, self.owners[key], metric, f"{self.what} `{self.text}`")

    def describe_missing(self, kind: str) -> str:
        lacking = (
            f" ({self.unlabelled} series lacked the identity labels)" if self.unlabelled else ""
        )
        return f"no {kind} from {self.what} `{self.text}`{lacking}"


@dataclass(frozen=True, slots=True, kw_only=True)
class _Resource:
    query: ResourceQuery
    values: _Series
    stamps: _Series


def _duplicate(
    key: str, kind: str, first: Mapping[str, str], second: Mapping[str, str], where: str
) -> RefusedError:
    def labels(metric: Mapping[str, str]) -> str:
        shown = {k: v for k, v in sorted(metric.items()) if k != PART_LABEL}
        return "{" + ", ".join(f'{k}="{v}"' for k, v in shown.items()) + "}"

    return RefusedError(
        f"{kind} {key} has more than one series from {where}: {labels(first)} and {labels(second)}",
        reference=DUPLICATE,
        hint="two exporters or scrape jobs report for it; aggregate or filter them in the query",
    )


def _assemble(
    wanted: frozenset[str], resources: list[_Resource]
) -> tuple[dict[str, UsageSample], dict[str, str], dict[str, tuple[str, ...]]]:
    """Samples for keys with both resources dated; notes and the lacking resources for the rest.

    A sample's time is the oldest of its resources' sample times: a value is only as
    fresh as its stalest input."""
    cpu, memory = resources
    samples: dict[str, UsageSample] = {}
    notes: dict[str, str] = {}
    missing: dict[str, tuple[str, ...]] = {}
    moments: dict[float, datetime.datetime] = {}
    for key in wanted:
        cpu_value, memory_value = cpu.values.values.get(key), memory.values.values.get(key)
        cpu_stamp, memory_stamp = cpu.stamps.values.get(key), memory.stamps.values.get(key)
        if cpu_value is None or memory_value is None or cpu_stamp is None or memory_stamp is None:
            lacking = [
                r
                for r, v, t in (
                    (cpu, cpu_value, cpu_stamp),
                    (memory, memory_value, memory_stamp),
                )
                if v is None or t is None
            ]
            missing[key] = tuple(r.query.name for r in lacking)
            notes[key] = "; ".join(
                r.values.describe_missing("value")
                if r.values.values.get(key) is None
                else r.stamps.describe_missing("sample time")
                for r in lacking
            )
            continue
        oldest = cpu if cpu_stamp <= memory_stamp else memory
        stamp = min(cpu_stamp, memory_stamp)
        # Pods scraped together share a time: one datetime per distinct time.
        moment = moments.get(stamp)
        if moment is None:
            moment = moments[stamp] = _from_unix(stamp)
        samples[key] = UsageSample(cpu_cores=cpu_value, memory_bytes=memory_value, timestamp=moment)
        notes[key] = oldest.stamps.note
    return samples, notes, missing


def _assemble_pods(
    cpu: _Series, memory: _Series, cpu_stamps: _Series, memory_stamps: _Series
) -> dict[str, UsageSample]:
    """Samples for pods with both values and both sample times, as _assemble, without
    notes: judging names no pod's query. The hot loop of a round at 150,000 pods."""
    memory_values, cpu_times, memory_times = memory.values, cpu_stamps.values, memory_stamps.values
    shared = cpu_stamps is memory_stamps
    samples: dict[str, UsageSample] = {}
    moments: dict[float, datetime.datetime] = {}
    for key, cpu_value in cpu.values.items():
        memory_value = memory_values.get(key)
        stamp = cpu_times.get(key)
        if memory_value is None or stamp is None:
            continue
        if not shared:
            memory_stamp = memory_times.get(key)
            if memory_stamp is None:
                continue
            stamp = min(stamp, memory_stamp)
        # Pods scraped together share a time: one datetime per distinct time.
        moment = moments.get(stamp)
        if moment is None:
            moment = moments[stamp] = _from_unix(stamp)
        samples[key] = UsageSample(cpu_cores=cpu_value, memory_bytes=memory_value, timestamp=moment)
    return samples


def _join(
    samples: dict[str, UsageSample], name: str, values: _Series, stamps: _Series
) -> dict[str, UsageSample]:
    joined = dict(samples)
    for key, sample in samples.items():
        value, stamp = values.values.get(key), stamps.values.get(key)
        if value is None or stamp is None:
            continue
        joined[key] = dataclasses.replace(
            sample,
            named={**sample.named, name: value},
            timestamp=min(sample.timestamp, _from_unix(stamp)),
        )
    return joined


def _number(pair: Any) -> float:
    """The value of a [time, "text"] pair; NaN when it is not one."""
    try:
        return float(pair[1])
    except (IndexError, TypeError, ValueError):
        return math.nan


def _from_unix(seconds: float) -> datetime.datetime:
    if not math.isfinite(seconds):
        # A NaN sample time cannot be judged; the epoch makes it plainly stale.
        return datetime.datetime.fromtimestamp(0, datetime.UTC)
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


def _promql_duration(value: datetime.timedelta) -> str:
    seconds = value.total_seconds()
    if seconds.is_integer():
        return f"{int(seconds)}s"
    return f"{round(seconds * 1000)}ms"


class _Client:
    """POSTs to the query API and checks the answer's shape. One per round."""

    def __init__(
        self,
        session: requests.Session,
        base: str,
        timeout: datetime.timedelta,
        credentials: _auth.Credentials,
        verify: bool | str,
    ) -> None:
        self._verify = verify
        self._session = session
        self._base = base
        self._timeout = timeout.total_seconds()
        self._credentials = credentials

    def instant(self, query: str, now: datetime.datetime, what: str) -> list[Any]:
        """The raw vector: a list of {"metric": {...}, "value": [time, "text"]}."""
        data = self._post("query", {"query": query, "time": _unix(now)}, query, what)
        return self._result(data, "vector", query, what)

    def range(
        self,
        query: str,
        start: datetime.datetime,
        end: datetime.datetime,
        step: float,
        what: str,
    ) -> list[tuple[Mapping[str, str], list[tuple[float, float]]]]:
        form = {"query": query, "start": _unix(start), "end": _unix(end), "step": f"{step:g}"}
        data = self._post("query_range", form, query, what)
        result = self._result(data, "matrix", query, what)
        parsed = []
        for series in result:
            try:
                points = [(float(t), float(v)) for t, v in series["values"]]
                parsed.append((series["metric"], points))
            except (KeyError, TypeError, ValueError):
                raise self.bad_shape(query, what, "a series without metric or values") from None
        return parsed

    def _post(self, endpoint: str, form: dict[str, str], query: str, what: str) -> Any:
        url = f"{self._base}/api/v1/{endpoint}"
        # Prometheus stops evaluating at its own timeout too, so a slow query is not
        # left running after the client gave up.
        form = {**form, "timeout": f"{self._timeout:g}s"}
        started = time.perf_counter()
        try:
            response = self._session.post(
                url, data=form, timeout=self._timeout, allow_redirects=False, verify=self._verify
            )
        except requests.Timeout:
            raise RefusedError(
                f"{self._base} did not answer within {self._timeout:g}s ({what})",
                reference=UNREACHABLE,
            ) from None
        except requests.exceptions.SSLError as exc:
            raise RefusedError(
                f"TLS with {self._base} failed: {self._reason(exc)}", reference=UNREACHABLE
            ) from None
        except requests.RequestException as exc:
            # `from None`: the chained exception holds the prepared request, headers included.
            raise RefusedError(
                f"cannot reach {self._base}: {self._reason(exc)}", reference=UNREACHABLE
            ) from None
        log.debug(
            "metrics query answered",
            extra={
                "query_name": what,
                "status": response.status_code,
                "bytes": len(response.content),
                "seconds": round(time.perf_counter() - started, 3),
            },
        )
        status = response.status_code
        if status != 200:
            raise self._http_error(response, query, what)
        try:
            return json.loads(response.content)
        except ValueError:
            raise self.bad_shape(query, what, "a body that is not JSON") from None

    def _result(self, data: Any, expected: str, query: str, what: str) -> list[Any]:
        if not isinstance(data, dict) or data.get("status") != "success":
            raise self.bad_shape(query, what, "no success status")
        body = data.get("data")
        if not isinstance(body, dict):
            raise self.bad_shape(query, what, "no data")
        kind = body.get("resultType")
        if kind != expected:
            raise RefusedError(
                f"{what} query returned a {kind} where a {expected} was expected: {query}",
                reference=QUERY_FAILED,
            )
        result = body.get("result")
        if not isinstance(result, list):
            raise self.bad_shape(query, what, "no result list")
        return result

    def _http_error(self, response: requests.Response, query: str, what: str) -> RefusedError:
        status = response.status_code
        detail = response.reason or ""
        try:
            body = response.json()
            if isinstance(body, dict) and isinstance(body.get("error"), str):
                detail = body["error"]
        except ValueError:
            detail = response.text[:MAX_ERROR_TEXT].strip() or detail
        detail = self._clean(detail)
        if status in (401, 403):
            return RefusedError(
                f"{self._base} refused the credentials: HTTP {status} {detail}".rstrip(),
                reference=_auth.AUTH_FAILED,
                hint="check the policy's authToken, tokenFile or basicAuth",
            )
        if 300 <= status < 400:
            target = urllib.parse.urlsplit(response.headers.get("Location", ""))
            return RefusedError(
                f"{self._base} redirected the query (HTTP {status} to "
                f"{target.scheme}://{target.netloc}{target.path}); "
                "is the URL that of an auth proxy's login page?",
                reference=QUERY_FAILED,
            )
        reference = UNREACHABLE if status in (502, 503, 504) else QUERY_FAILED
        return RefusedError(
            f"{self._base} answered HTTP {status} to the {what} query: {detail}; query: {query}",
            reference=reference,
        )

    def bad_shape(self, query: str, what: str, problem: str) -> RefusedError:
        return RefusedError(
            f"{self._base} answered the {what} query with {problem}; query: {query}",
            reference=QUERY_FAILED,
        )

    def _reason(self, exc: Exception) -> str:
        # requests wraps urllib3's MaxRetryError, whose `reason` is the useful part
        # ("Connection refused", "certificate verify failed").
        inner: BaseException = exc
        if exc.args and isinstance(exc.args[0], BaseException):
            inner = exc.args[0]
        reason = getattr(inner, "reason", None)
        if isinstance(reason, BaseException):
            inner = reason
        return self._clean(str(inner) or type(inner).__name__)

    def _clean(self, text: str) -> str:
        return _auth.redact(" ".join(text.split())[:MAX_ERROR_TEXT], self._credentials)


def _unix(moment: datetime.datetime) -> str:
    return f"{moment.timestamp():.3f}"
