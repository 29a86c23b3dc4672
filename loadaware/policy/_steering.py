"""How the round's evictions are chosen (`optimizer`) and where the replacements are
expected to land (`steering`).
"""

from __future__ import annotations

import datetime
from typing import Annotated, Literal

from pydantic import Field

from loadaware.policy import _strict
from loadaware.policy._duration import Duration


class OptimizerSettings(_strict.StrictModel):
    """How the round's evictions are chosen."""

    method: Literal["milp", "greedy"] = Field(
        default="milp",
        description=(
            "milp: the whole round at once (HiGHS), with a lower bound, the greedy "
            "plan kept if better and used when HiGHS finds nothing in time; greedy: "
            "hot node by hot node."
        ),
    )
    time_limit: Duration = Field(
        default=datetime.timedelta(seconds=10),
        description="Time limit of the MILP solve.",
    )
    mip_rel_gap: Annotated[float, Field(ge=0, le=1)] = Field(
        default=0.01,
        description=(
            "Relative gap between the plan and the lower bound at which the MILP solve stops."
        ),
    )


class SteeringSettings(_strict.StrictModel):
    """Where replacements are expected to land."""

    soft_taint: bool = Field(
        default=True,
        description=(
            "Steer each replacement to its planned landing: while an eviction is "
            "sent, loadaware.io/hotspot=true:PreferNoSchedule sits on the few nodes "
            "that would otherwise outscore it (plan JSON `steer`). Off: only moves "
            "whose natural landing is good are planned."
        ),
    )
    percentage_of_nodes_to_score: Annotated[int, Field(ge=0, le=100)] = Field(
        default=0,
        description=(
            "kube-scheduler's percentageOfNodesToScore: from 100 nodes it scores only "
            "a sample of the feasible ones. 0 is its adaptive default (50% less 1% "
            "per 125 nodes, at least 5% and 100 nodes), which managed control planes "
            "keep; 100 scores every node. Each eviction's landing set is sized for "
            "that sample."
        ),
    )
    miss_probability: Annotated[float, Field(gt=0, lt=1)] = Field(
        default=0.001,
        description=(
            "The largest chance, without trusting kube-scheduler's node order, that "
            "its sample misses every node of an eviction's landing set."
        ),
    )
