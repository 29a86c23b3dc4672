"""Whether usage can be trusted for a round: fresh, complete and plausible.

Pure: the clock is passed in. A node without a sample is stale, never idle.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from loadaware.errors import RefusedError
from loadaware.metrics._types import Usage, UsageSample
from loadaware.policy import MetricsSettings

# A node using more than this multiple of its allocatable is a broken query
# (wrong label join, double counting), not a hot node.
IMPLAUSIBLE_USAGE_FACTOR = 2.0
# Samples from the future by more than this mean clocks disagree.
MAX_CLOCK_SKEW = datetime.timedelta(seconds=60)


@dataclass(frozen=True, kw_only=True)
class UsageAssessment:
    excluded_nodes: Mapping[str, str] = field(default_factory=dict)  # node -> why
    stale_pods: frozenset[str] = frozenset()  # keys of pods without a fresh sample


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeScope:
    """What assessing usage needs of one node: its allocatable and the keys of its pods.

    Kept apart from the cluster types so that metrics does not depend on cluster."""

    allocatable_cpu_cores: float
    allocatable_memory_bytes: float
    pod_keys: tuple[str, ...] = ()
    # Named resources its pool judges: a sample without one of them is no sample.
    named: tuple[str, ...] = ()
    # Capacity per named resource, where known (implausible above 2x, as cpu).
    capacity: Mapping[str, float] = field(default_factory=dict)


def assess_usage(
    usage: Usage,
    nodes: Mapping[str, NodeScope],
    settings: MetricsSettings,
    now: datetime.datetime,
) -> UsageAssessment:
    """Check usage for the given nodes and their pods.

    Raises RefusedError (`implausible-metrics`, `stale-metrics`) when the round
    must not act; returns which nodes to exclude and which pods are stale.
    """
    names = sorted(nodes)
    max_age = settings.max_sample_age
    _refuse_implausible_nodes(usage, nodes, names, now)
    # Before any staleness refusal, as an implausible pod sample must win over it.
    stale_pods = _assess_pods(usage, nodes, names, now, max_age)

    stale: dict[str, str] = {}
    for name in names:
        sample = usage.nodes.get(name)
        # A node with no current value may still have an older sample the source
        # knows about: its age tells the operator more than "no sample".
        newest = sample.timestamp if sample is not None else usage.last_seen.get(name)
        lacking = [r for r in nodes[name].named if sample is not None and r not in sample.named]
        if name in usage.unforecast:
            why = usage.unforecast[name]
        elif lacking:
            why = f"no {lacking[0]} value (metrics.prometheus.resources.{lacking[0]})"
        elif newest is None:
            why = "no sample"
        elif (age := now - newest) > max_age or sample is None:
            why = f"sample is {age.total_seconds():.0f}s old (max {max_age.total_seconds():.0f}s)"
        else:
            continue
        note = usage.notes.get(name)
        stale[name] = f"{why}; {note}" if note else why

    if stale and settings.on_stale_node == "Refuse":
        first = next(iter(stale))
        more = f" (and {len(stale) - 1} more nodes)" if len(stale) > 1 else ""
        raise RefusedError(f"node {first} {stale[first]}{more}", reference="stale-metrics")
    if stale:
        # Excluding at least one node is always allowed, otherwise Exclude would
        # be unusable on clusters of fewer than 1/maxExcludedFraction nodes.
        allowed = max(1, math.floor(settings.max_excluded_fraction * len(names)))
        if settings.max_excluded_fraction == 0:
            allowed = 0
        if len(stale) > allowed:
            raise RefusedError(
                f"{len(stale)} of {len(names)} nodes have stale or missing samples, more than "
                f"maxExcludedFraction {settings.max_excluded_fraction:g} allows ({allowed}); "
                f"first: {next(iter(stale))} {stale[next(iter(stale))]}",
                reference="stale-metrics",
            )

    return UsageAssessment(
        excluded_nodes={n: f"stale metrics: {why}" for n, why in stale.items()},
        stale_pods=frozenset(stale_pods),
    )


def _refuse_implausible_nodes(
    usage: Usage, nodes: Mapping[str, NodeScope], names: list[str], now: datetime.datetime
) -> None:
    for name in names:
        sample = usage.nodes.get(name)
        if sample is None:
            continue
        node = nodes[name]
        problem = _sample_problem(sample, now)
        if problem is None:
            cpu_limit = IMPLAUSIBLE_USAGE_FACTOR * node.allocatable_cpu_cores
            mem_limit = IMPLAUSIBLE_USAGE_FACTOR * node.allocatable_memory_bytes
            if sample.cpu_cores > cpu_limit:
                problem = (
                    f"cpu {sample.cpu_cores:g} cores is over "
                    f"{IMPLAUSIBLE_USAGE_FACTOR:g}x allocatable"
                )
            elif sample.memory_bytes > mem_limit:
                problem = (
                    f"memory {sample.memory_bytes:.0f} bytes is over "
                    f"{IMPLAUSIBLE_USAGE_FACTOR:g}x allocatable"
                )
            for resource, capacity in {**node.capacity, **usage.capacity.get(name, {})}.items():
                value = sample.named.get(resource)
                if problem is None and value is not None and value > 2 * capacity:
                    problem = (
                        f"{resource} {value:g} is over {IMPLAUSIBLE_USAGE_FACTOR:g}x "
                        f"its capacity {capacity:g}"
                    )
        if problem is not None:
            raise RefusedError(f"node {name} {problem}", reference="implausible-metrics")


def _assess_pods(
    usage: Usage,
    nodes: Mapping[str, NodeScope],
    names: list[str],
    now: datetime.datetime,
    max_age: datetime.timedelta,
) -> set[str]:
    """Refuse the round at the first implausible pod sample (by node name, then the
    node's pod order); else the keys of the pods without a fresh sample.

    One pass and one lookup per pod, and _sample_problem only for a sample the cheap
    test cannot clear: a round judges every pod of the cluster (150,000 and more)."""
    pods = usage.pods
    stale: set[str] = set()
    for name in names:
        node = nodes[name]
        named = node.named
        for key in node.pod_keys:
            sample = pods.get(key)
            if sample is None:
                stale.add(key)
                continue
            # 0 <= v < inf is exactly "not NaN, not infinite, not negative".
            if (
                not (
                    0.0 <= sample.cpu_cores < math.inf
                    and 0.0 <= sample.memory_bytes < math.inf
                    and not sample.named
                    and sample.timestamp - now <= MAX_CLOCK_SKEW
                )
                and (problem := _sample_problem(sample, now)) is not None
            ):
                raise RefusedError(f"pod {key} {problem}", reference="implausible-metrics")
            if now - sample.timestamp > max_age or (
                named and any(r not in sample.named for r in named)
            ):
                # Without a value for a resource its node is judged by, the relief
                # of moving it is unknown: not a candidate.
                stale.add(key)
    return stale


def _sample_problem(sample: UsageSample, now: datetime.datetime) -> str | None:
    values = (("cpu", sample.cpu_cores), ("memory", sample.memory_bytes), *sample.named.items())
    for resource, value in values:
        if math.isnan(value) or math.isinf(value):
            return f"{resource} value is {value}"
        if value < 0:
            return f"{resource} value {value:g} is negative"
    if sample.timestamp - now > MAX_CLOCK_SKEW:
        ahead = (sample.timestamp - now).total_seconds()
        return f"sample timestamp is {ahead:.0f}s in the future (clock skew)"
    return None
