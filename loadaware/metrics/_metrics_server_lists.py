"""metrics.k8s.io/v1beta1 lists decoded typed: only the fields MetricsServerProvider
reads (metadata.name and namespace, timestamp, window, usage.cpu and usage.memory,
and each container's usage).

A round's re-check reads the 5,000-node NodeMetrics list every 15 s while it
evicts, to learn about its few hundred source nodes, and a plan reads the
150,000-pod PodMetrics list: read as generic JSON, every object became dicts,
most of them for nodes and pods nobody asked about. Typed, only these fields are
built, and _metrics_server converts only the objects asked for. An answer of
another shape (a field of another JSON type, an item that is not an object, no
`items`) or with anything not ASCII is not read here (None): the generic path
reads it and reports it as before.
"""

from __future__ import annotations

import msgspec


class _Struct(msgspec.Struct, gc=False):
    """Every field optional or defaulted: a missing one is judged by the caller, as
    the generic path judges it, not refused by the decoder."""


class Metadata(_Struct):
    name: str = ""
    namespace: str | None = None


class ResourceUsage(_Struct):
    cpu: str | None = None
    memory: str | None = None


class NodeMetrics(_Struct):
    metadata: Metadata | None = None
    timestamp: str | None = None
    window: str | None = None
    usage: ResourceUsage | None = None


class ContainerMetrics(_Struct):
    usage: ResourceUsage | None = None


class PodMetrics(_Struct):
    metadata: Metadata | None = None
    timestamp: str | None = None
    window: str | None = None
    containers: list[ContainerMetrics] | None = None


class NodeMetricsList(_Struct):
    items: list[NodeMetrics]


class PodMetricsList(_Struct):
    items: list[PodMetrics]


_NODES = msgspec.json.Decoder(NodeMetricsList)
_PODS = msgspec.json.Decoder(PodMetricsList)


def read_nodes(data: bytes) -> NodeMetricsList | None:
    """The NodeMetricsList in `data`, or None for one the generic path must read."""
    if not data.isascii():
        return None
    try:
        return _NODES.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def read_pods(data: bytes) -> PodMetricsList | None:
    """The PodMetricsList in `data`, or None for one the generic path must read."""
    if not data.isascii():
        return None
    try:
        return _PODS.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
