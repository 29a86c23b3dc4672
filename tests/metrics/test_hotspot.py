"""confirm_hotspots: hot only after N consecutive points over the limits.

Covers: a run of N confirms, N-1 does not; any judged resource over counts;
a point at or under every limit ends a hotspot; a missing point neither extends
a run nor ends a confirmed hotspot; unjudged resources and nodes without
history or limits; how many points a round reads; the package's public names.
"""

from __future__ import annotations

import datetime
import math

import pytest

from loadaware import metrics
from loadaware.metrics import HotLimits, NodeHistory, UsageHistory, confirm_hotspots
from tests.lib.builders import NOW

NAN = math.nan
LIMITS = HotLimits(cpu_cores=3.0, memory_bytes=100.0)


def history(**nodes: tuple[list[float], list[float]]) -> UsageHistory:
    length = max(len(cpu) for cpu, _ in nodes.values())
    return UsageHistory(
        times=tuple(NOW - datetime.timedelta(minutes=length - 1 - i) for i in range(length)),
        nodes={
            name: NodeHistory(cpu_cores=tuple(cpu), memory_bytes=tuple(memory))
            for name, (cpu, memory) in nodes.items()
        },
    )


@pytest.mark.parametrize(
    ("cpu", "memory", "hot"),
    [
        ([1, 4, 4, 4], [50, 50, 50, 50], True),
        ([1, 1, 4, 4], [50, 50, 50, 50], False),
        ([4, 1, 1, 1], [50, 150, 150, 150], True),  # any resource over counts
        ([4, 4, 4, 1], [50, 50, 50, 50], False),  # fell under the target
        ([4, 4, 4, 3], [50, 50, 50, 100], False),  # at the limit is not over
        ([4, 4, 4, NAN], [50, 50, 50, NAN], True),  # a gap does not end it
        ([4, NAN, 4, 4], [50, NAN, 50, 50], False),  # nor does it extend a run
    ],
    ids=[
        "three-over",
        "two-over",
        "memory-over",
        "fell-under",
        "at-limit",
        "gap-after-confirmed",
        "gap-inside-run",
    ],
)
def test_confirmation(cpu: list[float], memory: list[float], hot: bool) -> None:
    result = confirm_hotspots(history(n1=(cpu, memory)), {"n1": LIMITS}, 3)
    assert (result == {"n1"}) is hot


def test_unjudged_resources_and_unknown_nodes() -> None:
    data = history(n1=([9, 9, 9], [1, 1, 1]), n2=([9, 9, 9], [1, 1, 1]))
    limits = {"n1": HotLimits(memory_bytes=100.0), "n2": HotLimits(), "n3": LIMITS}
    assert confirm_hotspots(data, limits, 3) == frozenset()
    assert confirm_hotspots(data, {"n1": LIMITS}, 1) == {"n1"}
    with pytest.raises(ValueError, match="at least 1"):
        confirm_hotspots(data, limits, 0)


def test_history_points() -> None:
    assert [metrics.history_points(n) for n in (1, 2, 3)] == [1, 3, 5]
