"""Usage from metrics-server: the metrics.k8s.io/v1beta1 API, read through the
official client's CustomObjectsApi (two lists per round: nodes and pods).

Each list is read raw and decoded typed (_metrics_server_lists), and only the
objects asked for are converted; an answer the typed decode cannot type is read
by the client's own deserializer and converted generically, so that both give
the same samples and the same refusals.

Each NodeMetrics and PodMetrics covers the interval [timestamp - window,
timestamp] (the API's documented meaning), so `timestamp` is the time of its
newest sample; `window` must be a positive duration or the object is malformed.
metrics-server keeps no history, so Usage.history is None.
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

from loadaware import kube, quantity
from loadaware.errors import (
    ClusterError,
    ForbiddenError,
    RefusedError,
    UnauthorizedError,
    UnreachableError,
)
from loadaware.metrics import _file
from loadaware.metrics import _metrics_server_lists as _lists
from loadaware.metrics._types import Usage, UsageSample
from loadaware.policy import MetricsSettings

GROUP, VERSION = "metrics.k8s.io", "v1beta1"
_JSON = "application/json"  # what the API server answers a list with
_TypedList = TypeVar("_TypedList", _lists.NodeMetricsList, _lists.PodMetricsList)

# A Go duration as metav1.Duration serialises it ("15s", "1m0.5s", "20.003s").
_DURATION = re.compile(r"(?:([0-9.]+)(h|m|s|ms|us|µs|ns))+")
_DURATION_PART = re.compile(r"([0-9.]+)(h|ms|us|µs|ns|m|s)")
_DURATION_UNITS = {
    "h": 3600.0,
    "m": 60.0,
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
    "ns": 1e-9,
}


# metrics-server writes cpu in nanocores and memory in kibibytes, as plain integers
# with a suffix: those are read without the general parser, to the same float (an
# integer division in Python is correctly rounded, as Fraction's float is). A read at
# 5,000 nodes has 150,000 pods, and the general parser was half its time.
_PLAIN_DIVISORS = {"n": 10**9, "u": 10**6, "m": 10**3}
_PLAIN_FACTORS = {"Ki": 1024, "Mi": 1024**2}


def parse_quantity(text: str) -> float:
    """A Kubernetes quantity as a float (cores for cpu, bytes for memory)."""
    if not isinstance(text, str):
        raise ValueError(f"not a quantity: {text!r}")
    digits, suffix = text[:-1], text[-1:]
    if suffix in _PLAIN_DIVISORS and digits.isascii() and digits.isdigit():
        return int(digits) / _PLAIN_DIVISORS[suffix]
    digits, suffix = text[:-2], text[-2:]
    if suffix in _PLAIN_FACTORS and digits.isascii() and digits.isdigit():
        return float(int(digits) * _PLAIN_FACTORS[suffix])
    try:
        return float(quantity.parse_quantity(text.strip()))
    except ValueError:
        raise ValueError(f"not a quantity: {text!r}") from None


def _parse_window(text: Any) -> float:
    if not isinstance(text, str):
        raise ValueError(f"not a duration: {text!r}")
    return _window_seconds(text)


# Every item of a list has the window and, mostly, the timestamp of the others.
@functools.lru_cache(maxsize=256)
def _window_seconds(text: str) -> float:
    if _DURATION.fullmatch(text) is None:
        raise ValueError(f"not a duration: {text!r}")
    return sum(float(n) * _DURATION_UNITS[u] for n, u in _DURATION_PART.findall(text))


@functools.lru_cache(maxsize=256)
def _moment(stamp: str) -> datetime.datetime | None:
    return _file._parse_timestamp(stamp)


class MetricsServerProvider:
    """MetricsProvider reading metrics.k8s.io through a kubernetes ApiClient."""

    def __init__(self, settings: MetricsSettings, api_client: object) -> None:
        if settings.metrics_server is None:
            raise ValueError("the metrics settings have no metricsServer source")
        self._timeout = settings.metrics_server.timeout.total_seconds()
        self._api_client = api_client
        self.description = f"metrics-server ({GROUP}/{VERSION})"

    def __repr__(self) -> str:
        return "MetricsServerProvider()"

    def fetch_usage(
        self,
        node_names: Collection[str],
        pod_keys: Collection[str],
        *,
        now: datetime.datetime,
    ) -> Usage:
        wanted_nodes, wanted_pods = frozenset(node_names), frozenset(pod_keys)
        node_list = self._list("nodes", _lists.read_nodes)
        if isinstance(node_list, _lists.NodeMetricsList):
            nodes = _typed_node_samples(node_list.items, wanted_nodes)
        else:
            nodes = _node_samples(node_list, wanted_nodes)
        pods: dict[str, UsageSample] = {}
        if wanted_pods:
            pod_list = self._list("pods", _lists.read_pods)
            if isinstance(pod_list, _lists.PodMetricsList):
                pods = _typed_pod_samples(pod_list.items, wanted_pods)
            else:
                pods = _pod_samples(pod_list, wanted_pods)
        notes = {
            name: f"{self.description} has no NodeMetrics for it"
            for name in wanted_nodes
            if name not in nodes
        }
        return Usage(collected_at=now, nodes=nodes, pods=pods, notes=notes)

    def _list(
        self, plural: str, read_typed: Callable[[bytes], _TypedList | None]
    ) -> _TypedList | list[Mapping[str, Any]]:
        """The list typed, or as generic JSON where read_typed cannot type it."""
        from kubernetes import client

        api = client.CustomObjectsApi(self._api_client)  # type: ignore[arg-type]
        try:
            with kube.translated(f"{GROUP}/{VERSION} {plural}", kube.server_of(self._api_client)):
                response = api.list_cluster_custom_object(
                    GROUP, VERSION, plural, _preload_content=False, _request_timeout=self._timeout
                )
                try:
                    data = response.data
                finally:
                    response.release_conn()
                # The client reads other content types, and a 2xx other than 200, its
                # own way: those answers are left to it.
                if response.status == 200 and response.headers.get("content-type") == _JSON:
                    typed = read_typed(data)
                    if typed is not None:
                        return typed
                body = self._deserialized(response)
        except UnreachableError as exc:
            raise RefusedError(str(exc), reference="metrics-unreachable") from exc
        except ClusterError as exc:
            reference = "metrics-query-failed"
            if isinstance(exc, UnauthorizedError | ForbiddenError):
                reference = "metrics-auth-failed"
            elif exc.status_code in (404, 502, 503, 504):
                reference = "metrics-unreachable"  # the APIService is missing or down
            raise RefusedError(
                str(exc),
                reference=reference,
                hint="is metrics-server installed and its APIService Available?"
                if reference == "metrics-unreachable"
                else None,
            ) from exc
        items = body.get("items") if isinstance(body, Mapping) else None
        if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
            raise RefusedError(
                f"{GROUP}/{VERSION} {plural}: the answer is not a list of objects",
                reference="metrics-query-failed",
            )
        return items

    def _deserialized(self, response: Any) -> Any:
        """The read answer as the generated method reads it when it loads the content
        itself: the response types are list_cluster_custom_object's own (an object
        for 200), so that another 2xx reads as nothing, as it did."""
        from kubernetes.client import rest

        answer = rest.RESTResponse(response)
        answer.read()
        return self._api_client.response_deserialize(  # type: ignore[attr-defined]
            answer, {"200": "object", "401": None}
        ).data


def _node_samples(items: list[Mapping[str, Any]], wanted: frozenset[str]) -> dict[str, UsageSample]:
    nodes: dict[str, UsageSample] = {}
    for item in items:
        name = _name(item, "nodes")
        if name in wanted:
            _put(nodes, name, _sample(item.get("usage"), item, "nodes", name), "node")
    return nodes


def _typed_node_samples(
    items: list[_lists.NodeMetrics], wanted: frozenset[str]
) -> dict[str, UsageSample]:
    """As _node_samples, on the typed list."""
    nodes: dict[str, UsageSample] = {}
    for item in items:
        metadata = item.metadata
        name = metadata.name if metadata is not None else ""
        if not name:
            raise _malformed("nodes", "?", "metadata.name is missing")
        if name in wanted:
            _put(nodes, name, _typed_sample(item.usage, item, "nodes", name), "node")
    return nodes


def _pod_samples(items: list[Mapping[str, Any]], wanted: frozenset[str]) -> dict[str, UsageSample]:
    pods: dict[str, UsageSample] = {}
    for item in items:
        metadata = item.get("metadata") or {}
        key = f"{metadata.get('namespace')}/{_name(item, 'pods')}"
        if key not in wanted:
            continue
        containers = item.get("containers")
        if not isinstance(containers, list):
            raise _malformed("pods", key, "containers is not a list")
        if not containers:
            continue  # nothing measured yet: the pod simply has no sample
        usages = [c.get("usage") if isinstance(c, Mapping) else None for c in containers]
        _put(pods, key, _pod_total([_sample(u, item, "pods", key) for u in usages]), "pod")
    return pods


def _typed_pod_samples(
    items: list[_lists.PodMetrics], wanted: frozenset[str]
) -> dict[str, UsageSample]:
    """As _pod_samples, on the typed list."""
    pods: dict[str, UsageSample] = {}
    for item in items:
        metadata = item.metadata
        name = metadata.name if metadata is not None else ""
        if not name:
            raise _malformed("pods", "?", "metadata.name is missing")
        key = f"{metadata.namespace if metadata is not None else None}/{name}"
        if key not in wanted:
            continue
        containers = item.containers
        if containers is None:
            raise _malformed("pods", key, "containers is not a list")
        if not containers:
            continue
        samples = [_typed_sample(c.usage, item, "pods", key) for c in containers]
        _put(pods, key, _pod_total(samples), "pod")
    return pods


def _pod_total(samples: list[UsageSample]) -> UsageSample:
    return UsageSample(
        cpu_cores=sum(s.cpu_cores for s in samples),
        memory_bytes=sum(s.memory_bytes for s in samples),
        timestamp=samples[0].timestamp,
        window_seconds=samples[0].window_seconds,
    )


def _name(item: Mapping[str, Any], plural: str) -> str:
    metadata = item.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if not isinstance(name, str) or not name:
        raise _malformed(plural, "?", "metadata.name is missing")
    return name


def _sample(usage: Any, item: Mapping[str, Any], plural: str, key: str) -> UsageSample:
    if not isinstance(usage, Mapping):
        raise _malformed(plural, key, "usage is missing")
    return _checked_sample(
        usage.get("cpu"),
        usage.get("memory"),
        item.get("timestamp"),
        item.get("window"),
        plural,
        key,
    )


def _typed_sample(
    usage: _lists.ResourceUsage | None,
    item: _lists.NodeMetrics | _lists.PodMetrics,
    plural: str,
    key: str,
) -> UsageSample:
    if usage is None:
        raise _malformed(plural, key, "usage is missing")
    return _checked_sample(usage.cpu, usage.memory, item.timestamp, item.window, plural, key)


def _checked_sample(
    cpu_text: Any, memory_text: Any, stamp: Any, window_text: Any, plural: str, key: str
) -> UsageSample:
    try:
        cpu = parse_quantity(cpu_text)
        memory = parse_quantity(memory_text)
    except ValueError as exc:
        raise _malformed(plural, key, str(exc)) from None
    moment = _moment(stamp) if isinstance(stamp, str) else None
    if moment is None:
        raise _malformed(plural, key, f"timestamp {stamp!r} is not an RFC 3339 time")
    try:
        window = _parse_window(window_text)
    except ValueError as exc:
        raise _malformed(plural, key, str(exc)) from None
    if window <= 0:
        raise _malformed(plural, key, f"window {window_text!r} is not positive")
    return UsageSample(cpu_cores=cpu, memory_bytes=memory, timestamp=moment, window_seconds=window)


def _put(samples: dict[str, UsageSample], key: str, sample: UsageSample, kind: str) -> None:
    if key in samples:
        raise RefusedError(
            f"{GROUP}/{VERSION} lists {kind} {key} more than once", reference="duplicate-series"
        )
    samples[key] = sample


def _malformed(plural: str, key: str, problem: str) -> RefusedError:
    return RefusedError(
        f"{GROUP}/{VERSION} {plural} {key}: {problem}", reference="metrics-query-failed"
    )
