"""Reading Prometheus' answers into series (by node name or pod key, only the keys a
round asked for, a second series of one key refused as duplicate-series) and
assembling them into usage samples, each as old as its stalest input.

The pod readers are the hot loops of a round at 150,000 pods: one pass, no per-series
calls beyond what identifies the series.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from loadaware.errors import RefusedError
from loadaware.metrics import _prometheus_client, _promql
from loadaware.metrics._types import UsageSample

log = logging.getLogger(__name__)

DUPLICATE = "duplicate-series"


@dataclass(slots=True, kw_only=True)
class Series:
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
        return duplicate_error(key, kind, self.owners[key], metric, f"{self.what} `{self.text}`")

    def describe_missing(self, kind: str) -> str:
        lacking = (
            f" ({self.unlabelled} series lacked the identity labels)" if self.unlabelled else ""
        )
        return f"no {kind} from {self.what} `{self.text}`{lacking}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Resource:
    query: _promql.ResourceQuery
    values: Series
    stamps: Series


def duplicate_error(
    key: str, kind: str, first: Mapping[str, str], second: Mapping[str, str], where: str
) -> RefusedError:
    def labels(metric: Mapping[str, str]) -> str:
        shown = {k: v for k, v in sorted(metric.items()) if k != _promql.PART_LABEL}
        return "{" + ", ".join(f'{k}="{v}"' for k, v in shown.items()) + "}"

    return RefusedError(
        f"{kind} {key} has more than one series from {where}: {labels(first)} and {labels(second)}",
        reference=DUPLICATE,
        hint="two exporters or scrape jobs report for it; aggregate or filter them in the query",
    )


def assemble(
    wanted: frozenset[str], resources: list[Resource]
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
            moment = moments[stamp] = from_unix(stamp)
        samples[key] = UsageSample(cpu_cores=cpu_value, memory_bytes=memory_value, timestamp=moment)
        notes[key] = oldest.stamps.note
    return samples, notes, missing


def assemble_pods(
    cpu: Series, memory: Series, cpu_stamps: Series, memory_stamps: Series
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
            moment = moments[stamp] = from_unix(stamp)
        samples[key] = UsageSample(cpu_cores=cpu_value, memory_bytes=memory_value, timestamp=moment)
    return samples


def join(
    samples: dict[str, UsageSample], name: str, values: Series, stamps: Series
) -> dict[str, UsageSample]:
    joined = dict(samples)
    for key, sample in samples.items():
        value, stamp = values.values.get(key), stamps.values.get(key)
        if value is None or stamp is None:
            continue
        joined[key] = dataclasses.replace(
            sample,
            named={**sample.named, name: value},
            timestamp=min(sample.timestamp, from_unix(stamp)),
        )
    return joined


def read_node_series(
    client: _prometheus_client.QueryClient,
    text: str,
    what: str,
    wanted: frozenset[str],
    now: datetime.datetime,
    label: str,
) -> Series:
    series = Series(what=what, text=text, note=f"sample time from {what} `{text}`")
    values, owners = series.values, series.owners
    try:
        for item in client.instant(text, now, what):
            metric = item["metric"]
            raw = metric.get(label)
            if raw is None:
                series.unlabelled += 1
                continue
            key = _promql.node_name_from_label(raw)
            if key in wanted:
                if key in values:
                    raise series.duplicate(key, metric)
                owners[key] = metric
                values[key] = float(item["value"][1])
    except (KeyError, IndexError, TypeError, ValueError):
        raise client.bad_shape(text, what, "a sample without metric or value") from None
    return series


def read_pod_series(
    client: _prometheus_client.QueryClient,
    text: str,
    what: str,
    wanted: Collection[str],
    now: datetime.datetime,
    *,
    is_value: bool = False,
) -> Series:
    """A pod query's answer; for values, also the node of each pod, and the
    series of a pod on several nodes summed (as `sum by (namespace, pod)` would)."""
    series = Series(what=what, text=text, note=f"sample time from {what} `{text}`")
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
            node = metric.get(_promql.CADVISOR_NODE_LABEL)
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


def read_scrape_times(
    client: _prometheus_client.QueryClient, text: str, what: str, now: datetime.datetime
) -> Series:
    """The newest cAdvisor sample time by the value of the cAdvisor node label."""
    series = Series(what=what, text=text)
    times = series.values
    try:
        for item in client.instant(text, now, what):
            node = item["metric"].get(_promql.CADVISOR_NODE_LABEL)
            if node is None:
                series.unlabelled += 1
            else:
                times[node] = float(item["value"][1])
    except (KeyError, IndexError, TypeError, ValueError):
        raise client.bad_shape(text, what, "a sample without metric or value") from None
    return series


def date_pods(
    client: _prometheus_client.QueryClient,
    values: list[Series],
    scrape_times: Mapping[str, float],
    own: Series,
    now: datetime.datetime,
) -> Series:
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
    stamps = Series(
        what="podTimestamp",
        text=f"{_promql.NODE_SCRAPE_TIME}, {own.text}",
        note=f"sample time from the cAdvisor scrape of its node `{_promql.NODE_SCRAPE_TIME}`",
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
            extra={"pods": len(undated), "query": _promql.POD_SAMPLE_TIME},
        )
        fallback = read_pod_series(client, _promql.POD_SAMPLE_TIME, "podTimestamp", undated, now)
        times.update(fallback.values)
        stamps.unlabelled = fallback.unlabelled
    return stamps


def number(pair: Any) -> float:
    """The value of a [time, "text"] pair; NaN when it is not one."""
    try:
        return float(pair[1])
    except (IndexError, TypeError, ValueError):
        return math.nan


def from_unix(seconds: float) -> datetime.datetime:
    if not math.isfinite(seconds):
        # A NaN sample time cannot be judged; the epoch makes it plainly stale.
        return datetime.datetime.fromtimestamp(0, datetime.UTC)
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)
