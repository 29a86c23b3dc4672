"""The PromQL a round asks Prometheus: the usage queries (kube-prometheus-stack's
names by default, the policy's overrides), the sample-time queries that date them, and
the pieces the provider composes its queries from.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass

from loadaware.policy import PrometheusSource

# A label the queries add to tell the parts of a combined query apart.
PART_LABEL = "loadaware_part"
# How far back the last-seen query looks for a node with no current value.
LAST_SEEN_HORIZON = "1h"
# Its subquery step; at most the lookback delta, so no sample falls between steps.
LAST_SEEN_STEP = "1m"


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
CADVISOR_TIMES = 'timestamp(container_memory_working_set_bytes{container!=""})'
POD_SAMPLE_TIME = f"min by (namespace, pod) ({CADVISOR_TIMES})"
# The newest cAdvisor scrape of each node: the time of every current pod series on it.
NODE_SCRAPE_TIME = f"max by ({CADVISOR_NODE_LABEL}) ({CADVISOR_TIMES})"

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
        POD_SAMPLE_TIME,
    ),
    "podMemory": ResourceQuery(
        "podMemory",
        'sum by (namespace, pod, node) (container_memory_working_set_bytes{container!=""})',
        POD_SAMPLE_TIME,
    ),
}


_PORT = re.compile(r"(?P<host>[^:]+|\[[^\]]*\]):[0-9]+")


def queries_for(source: PrometheusSource) -> dict[str, ResourceQuery]:
    """The effective queries: defaults, overridden by the policy, `$window` filled in."""
    window = promql_duration(source.rate_window)
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


def marked(query: str, part: str) -> str:
    return f'label_replace(({query}), "{PART_LABEL}", "{part}", "", "")'


def promql_duration(value: datetime.timedelta) -> str:
    seconds = value.total_seconds()
    if seconds.is_integer():
        return f"{int(seconds)}s"
    return f"{round(seconds * 1000)}ms"
