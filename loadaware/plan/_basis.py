"""What a plan was made on, handed on to the landing control that carries it out."""

from __future__ import annotations

from dataclasses import dataclass

from loadaware.plan._placement import Placement
from loadaware.plan._problem import Candidate, Problem


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class LandingBasis:
    """What the planner built for a plan, for the round's LandingControl to start
    from (LandingControl.from_basis): assessing the usage, classifying the nodes and
    building the occupancy of 150,000 pods again would cost as much as planning.

    `problem` holds the node table the plan was made on; `placement` is the one the
    solvers replayed their moves on, still holding them (the control restores it
    and takes it over, so one basis serves one control); `candidates` are the
    planned evictions' candidates, in the plan's order."""

    problem: Problem
    placement: Placement
    candidates: tuple[Candidate, ...]
