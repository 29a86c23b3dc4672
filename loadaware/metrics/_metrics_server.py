"""Usage from metrics-server: the metrics.k8s.io/v1beta1 API, read through the
official client's CustomObjectsApi (two lists per round: nodes and pods).

Each NodeMetrics and PodMetrics covers the interval [timestamp - window,
timestamp] (the API's documented meaning), so `timestamp` is the time of its
newest sample; `window` must be a positive duration or the object is malformed.
metrics-server keeps no history, so Usage.history is None.
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Collection, Mapping
from typing import Any

from loadaware import kube, quantity
from loadaware.errors import (
    ClusterError,
    ForbiddenError,
    RefusedError,
    UnauthorizedError,
    UnreachableError,
)
from loadaware.metrics import _file
from loadaware.metrics._types import Usage, UsageSample
from loadaware.policy import MetricsSettings

GROUP, VERSION = "metrics.k8s.io", "v1beta1"

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
        nodes: dict[str, UsageSample] = {}
        for item in self._list("nodes"):
            name = _name(item, "nodes")
            if name in wanted_nodes:
                _put(nodes, name, _sample(item.get("usage"), item, "nodes", name), "node")
        pods: dict[str, UsageSample] = {}
        for item in self._list("pods") if wanted_pods else []:
            metadata = item.get("metadata") or {}
            key = f"{metadata.get('namespace')}/{_name(item, 'pods')}"
            if key not in wanted_pods:
                continue
            containers = item.get("containers")
            if not isinstance(containers, list):
                raise _malformed("pods", key, "containers is not a list")
            if not containers:
                continue  # nothing measured yet: the pod simply has no sample
            usages = [c.get("usage") if isinstance(c, Mapping) else None for c in containers]
            samples = [_sample(u, item, "pods", key) for u in usages]
            total = UsageSample(
                cpu_cores=sum(s.cpu_cores for s in samples),
                memory_bytes=sum(s.memory_bytes for s in samples),
                timestamp=samples[0].timestamp,
                window_seconds=samples[0].window_seconds,
            )
            _put(pods, key, total, "pod")
        notes = {
            name: f"{self.description} has no NodeMetrics for it"
            for name in wanted_nodes
            if name not in nodes
        }
        return Usage(collected_at=now, nodes=nodes, pods=pods, notes=notes)

    def _list(self, plural: str) -> list[dict[str, Any]]:
        from kubernetes import client

        api = client.CustomObjectsApi(self._api_client)  # type: ignore[arg-type]
        try:
            with kube.translated(f"{GROUP}/{VERSION} {plural}", kube.server_of(self._api_client)):
                body = api.list_cluster_custom_object(
                    GROUP, VERSION, plural, _request_timeout=self._timeout
                )
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


def _name(item: Mapping[str, Any], plural: str) -> str:
    metadata = item.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if not isinstance(name, str) or not name:
        raise _malformed(plural, "?", "metadata.name is missing")
    return name


def _sample(usage: Any, item: Mapping[str, Any], plural: str, key: str) -> UsageSample:
    if not isinstance(usage, Mapping):
        raise _malformed(plural, key, "usage is missing")
    try:
        cpu = parse_quantity(usage.get("cpu"))
        memory = parse_quantity(usage.get("memory"))
    except ValueError as exc:
        raise _malformed(plural, key, str(exc)) from None
    stamp = item.get("timestamp")
    moment = _moment(stamp) if isinstance(stamp, str) else None
    if moment is None:
        raise _malformed(plural, key, f"timestamp {stamp!r} is not an RFC 3339 time")
    try:
        window = _parse_window(item.get("window"))
    except ValueError as exc:
        raise _malformed(plural, key, str(exc)) from None
    if window <= 0:
        raise _malformed(plural, key, f"window {item.get('window')!r} is not positive")
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
