"""Usage: what nodes and pods really use, with the time of the newest sample behind each value."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageSample:
    cpu_cores: float
    memory_bytes: float
    # Time of the newest underlying sample, never a query's evaluation time:
    # staleness is judged from this.
    timestamp: datetime.datetime
    # The value reflects [timestamp - window, timestamp] (metrics-server's window);
    # 0 where the source says nothing (see round/_relief for Prometheus' rate window).
    window_seconds: float = 0.0
    # Named resources (metrics.prometheus.resources) with a value and a sample time;
    # `timestamp` is then the oldest of all.
    named: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeHistory:
    """One node's usage at each of UsageHistory.times; NaN where there was no value."""

    cpu_cores: tuple[float, ...]
    memory_bytes: tuple[float, ...]


@dataclass(frozen=True, kw_only=True)
class UsageHistory:
    """Node usage at evenly spaced times ending at the round's time (oldest first).

    Read in one range query, so that hotspot confirmation needs no state kept
    between rounds (one-shot Jobs work). See confirm_hotspots."""

    times: tuple[datetime.datetime, ...]
    nodes: Mapping[str, NodeHistory] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ForecastInfo:
    """What a round planned on a forecast says of it (plan JSON `forecast`, the audit
    record): the window, and the nodes and workloads that had none, with why."""

    at: datetime.datetime
    horizon: datetime.timedelta
    weeks: int
    min_weeks: int
    quantile: float
    nodes: int
    workloads: int
    uncovered_nodes: Mapping[str, str] = field(default_factory=dict)
    uncovered_workloads: Mapping[str, str] = field(default_factory=dict)
    # node -> the forecast values (cpu cores, memory bytes, named) the plan used:
    # what the proof after the peak compares with.
    node_values: Mapping[str, Mapping[str, float]] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Usage:
    collected_at: datetime.datetime
    nodes: Mapping[str, UsageSample] = field(default_factory=dict)
    pods: Mapping[str, UsageSample] = field(default_factory=dict)  # key "namespace/name"
    # None when the source keeps no history (metrics-server, older files).
    history: UsageHistory | None = None
    # For refusal reasons only. last_seen: nodes without a current value whose
    # newest sample the source still knows; notes: node -> where its sample time
    # came from (the query), or why it has none.
    last_seen: Mapping[str, datetime.datetime] = field(default_factory=dict)
    notes: Mapping[str, str] = field(default_factory=dict)
    # node -> named resource -> capacity, where a query gives it (see NamedResource).
    capacity: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    # Planned on a forecast (see metrics._forecast): what it was, and the nodes
    # left without a sample for want of one (node -> why; judged as stale).
    forecast: ForecastInfo | None = None
    unforecast: Mapping[str, str] = field(default_factory=dict)


# The slots' own setters, which a frozen dataclass's __init__ reaches through
# object.__setattr__ once per field.
_set_cpu_cores = vars(UsageSample)["cpu_cores"].__set__
_set_memory_bytes = vars(UsageSample)["memory_bytes"].__set__
_set_timestamp = vars(UsageSample)["timestamp"].__set__
_set_window_seconds = vars(UsageSample)["window_seconds"].__set__
_set_named = vars(UsageSample)["named"].__set__


def plain_sample(
    cpu_cores: float, memory_bytes: float, timestamp: datetime.datetime
) -> UsageSample:
    """UsageSample(cpu_cores=..., memory_bytes=..., timestamp=...) in a third of the
    time, for readers of many samples (a metrics file of 150,000 pods).

    Sets every field, as __init__ does; a field added to UsageSample must be set here."""
    sample = object.__new__(UsageSample)
    _set_cpu_cores(sample, cpu_cores)
    _set_memory_bytes(sample, memory_bytes)
    _set_timestamp(sample, timestamp)
    _set_window_seconds(sample, 0.0)
    _set_named(sample, {})
    return sample
