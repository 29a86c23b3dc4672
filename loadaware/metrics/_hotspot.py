"""Hotspot confirmation: hot for N consecutive samples, from one range of history.

Pure: the history and the per-node limits are passed in. The limits are the
planner's business (a pool's targetThresholds times the node's allocatable), so
they come in as plain numbers and this module knows nothing about pools.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from loadaware.metrics._types import UsageHistory


@dataclass(frozen=True, slots=True, kw_only=True)
class HotLimits:
    """Usage above which a node is over its target. None: the resource is not judged."""

    cpu_cores: float | None = None
    memory_bytes: float | None = None


def history_points(consecutive: int) -> int:
    """How many points a round reads for `consecutive`.

    Twice the run less one: a node confirmed earlier in the range stays hot across a
    gap in its data (a sample missing is not a sample under the target)."""
    return max(1, 2 * consecutive - 1)


def confirm_hotspots(
    history: UsageHistory, limits: Mapping[str, HotLimits], consecutive: int
) -> frozenset[str]:
    """Nodes that count as hot at the last point of `history`.

    A node becomes hot after `consecutive` points in a row over its limits (any
    judged resource above its limit), and stops being hot only at a point where
    every judged resource is at or under its limit. A point where a judged resource
    has no value neither extends the run nor ends a confirmed hotspot. Nodes
    without limits or history are not hot.
    """
    if consecutive < 1:
        raise ValueError(f"consecutive must be at least 1, got {consecutive}")
    confirmed = set()
    for name, node_limits in limits.items():
        node = history.nodes.get(name)
        if node is None:
            continue
        judged = [
            (values, limit)
            for values, limit in (
                (node.cpu_cores, node_limits.cpu_cores),
                (node.memory_bytes, node_limits.memory_bytes),
            )
            if limit is not None
        ]
        if not judged:
            continue
        run, hot = 0, False
        for index in range(len(history.times)):
            points = [values[index] if index < len(values) else math.nan for values, _ in judged]
            if any(math.isnan(v) for v in points):
                run = 0
                continue
            if any(v > limit for v, (_, limit) in zip(points, judged, strict=True)):
                run += 1
                hot = hot or run >= consecutive
            else:
                run, hot = 0, False
        if hot:
            confirmed.add(name)
    return frozenset(confirmed)
