"""The built-in scenarios by name: "peak-hour" (what `loadaware simulate` shows),
"small", "warm-idle" and "gpu".
"""

from __future__ import annotations

import datetime

from loadaware import errors
from loadaware.sim.scenarios import _base, _generator, _hand_laid

SCENARIO_NAMES: tuple[str, ...] = ("peak-hour", "small", "warm-idle", "gpu")


DEFAULT_SCENARIO = "peak-hour"


def builtin_scenario(name: str, *, now: datetime.datetime) -> _base.Scenario:
    """A named, fixed scenario. "peak-hour" is what `loadaware simulate` shows."""
    match name:
        case "peak-hour":
            generated = _generator.generate_cluster(
                nodes=40, pods_per_node=24, zones=3, seed=2026, hot_fraction=0.15, now=now
            )
            description = (
                "40 nodes in 3 zones at peak hour; after a node outage the survivors "
                "took the replicas and run hot while the replacements sit idle"
            )
        case "small":
            generated = _generator.generate_cluster(
                nodes=6, pods_per_node=14, zones=3, seed=7, hot_fraction=0.25, now=now
            )
            description = "6 nodes, two of them hot: a quick case for tests"
        case "warm-idle":
            generated = _hand_laid.WarmIdle(now=now).run()
            description = (
                "16 nodes: 4 hot, 8 that request much and use little, 4 that request little "
                "and run warm; replacements placed by requests alone would turn the warm "
                "nodes hot, steered ones land on the idle nodes"
            )
        case "gpu":
            generated = _hand_laid.GpuPool(now=now).run()
            description = (
                "6 nodes: 3 GPU nodes of 4 GPUs (tainted, judged by GPU use) and 3 CPU nodes; "
                "one GPU node is hot by GPU alone, another has 3 free GPUs and little to do"
            )
        case _:
            raise errors.InputError(
                f"unknown scenario {name!r}",
                hint="built-in scenarios: " + ", ".join(SCENARIO_NAMES),
            )
    return _base.Scenario(
        name=name, description=description, objects=generated.objects, metrics=generated.metrics
    )
