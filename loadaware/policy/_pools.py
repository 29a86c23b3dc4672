"""Node pools and their thresholds (`nodePools`), and consolidation (`consolidation`),
which judges nodes by the same kind of thresholds.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import ConfigDict, Field, model_validator

from loadaware.policy import _metrics, _strict


class ResourcePercents(_strict.StrictModel):
    """Percent of node allocatable per resource. An unset resource is not judged.

    `pods` is the node's pod count against its allocatable pods, as the
    descheduler has it: it needs no metrics source. Any other key names a
    resource of metrics.prometheus.resources (checked by LoadAwarePolicy)."""

    model_config = ConfigDict(**{**_strict.StrictModel.model_config, "extra": "allow"})

    cpu: _strict.Percent | None = Field(
        default=None,
        description="CPU usage, percent of the node's allocatable CPU.",
    )
    memory: _strict.Percent | None = Field(
        default=None,
        description="Memory usage, percent of the node's allocatable memory.",
    )
    pods: _strict.Percent | None = Field(
        default=None,
        description=(
            "Bound, unfinished pods, percent of the node's allocatable pods (needs no metrics)."
        ),
    )

    @model_validator(mode="after")
    def _named_are_percents(self) -> ResourcePercents:
        for name, value in (self.model_extra or {}).items():
            if re.fullmatch(_metrics.RESOURCE_NAME, name) is None:
                raise ValueError(f"{name!r} is not a resource name")
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name}: expected a percentage, got {value!r}")
            if not 0 <= value <= 100:
                raise ValueError(f"{name}: {value:g} is not a percentage (0-100)")
        return self

    def as_dict(self) -> dict[str, float]:
        pairs = (("cpu", self.cpu), ("memory", self.memory), ("pods", self.pods))
        named = {k: float(v) for k, v in sorted((self.model_extra or {}).items())}
        return {k: v for k, v in pairs if v is not None} | named


class NodePool(_strict.StrictModel):
    name: str = Field(
        min_length=1,
        description="Name of the pool, unique in the policy.",
    )
    node_selector: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Labels a node must have to be in the pool (matchLabels); empty matches "
            "every node. The first matching pool wins; a node in no pool is excluded."
        ),
    )
    thresholds: ResourcePercents = Field(
        default=ResourcePercents(cpu=40, memory=50),
        description="A node under all of these is cold: a landing for evicted pods.",
    )
    target_thresholds: ResourcePercents = Field(
        default=ResourcePercents(cpu=70, memory=80),
        description=(
            "A node over any of these is hot: pods are moved off it. A landing must "
            "stay at or under them with the pod's usage added."
        ),
    )
    use_deviation_thresholds: bool = Field(
        default=False,
        description=(
            "As descheduler's useDeviationThresholds: read the thresholds as "
            "distances below and above the pool's mean utilisation rather than "
            "absolute percentages."
        ),
    )

    @model_validator(mode="after")
    def _thresholds_consistent(self) -> NodePool:
        low, high = self.thresholds.as_dict(), self.target_thresholds.as_dict()
        if not high:
            raise ValueError("targetThresholds must set at least one of cpu, memory, pods")
        if set(low) != set(high):
            raise ValueError(
                "thresholds and targetThresholds must name the same resources "
                f"(thresholds: {sorted(low)}, targetThresholds: {sorted(high)})"
            )
        if not self.use_deviation_thresholds:
            for resource in high:
                if low[resource] > high[resource]:
                    raise ValueError(
                        f"thresholds.{resource} ({low[resource]:g}) must not exceed "
                        f"targetThresholds.{resource} ({high[resource]:g})"
                    )
        return self


class ConsolidationSettings(_strict.StrictModel):
    """descheduler's HighNodeUtilization: empty the least-used nodes so that a cluster
    autoscaler can remove them."""

    enabled: bool = Field(
        default=False,
        description=(
            "Empty the least-used nodes, after the rest of the plan and on what is "
            "left of its budgets."
        ),
    )
    max_nodes_per_round: Annotated[int, Field(ge=1)] = Field(
        default=1,
        description="Nodes emptied per round at most.",
    )
    thresholds: ResourcePercents = Field(
        default=ResourcePercents(cpu=20, memory=20),
        description="A node under every one of these (percent of allocatable) may be emptied.",
    )

    @model_validator(mode="after")
    def _some_threshold(self) -> ConsolidationSettings:
        if not self.thresholds.as_dict():
            raise ValueError("thresholds must set at least one of cpu, memory, pods")
        return self
