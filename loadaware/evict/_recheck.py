"""What the re-check just before an eviction answers, as data: go on (Proceed),
leave this pod (Skip, with the reason the outcome records), or end the round's
evictions (Stop, with the error that says why)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from loadaware import plan
from loadaware.errors import LoadawareError


@dataclass(frozen=True, slots=True)
class Proceed:
    """Nothing against the eviction: send it."""


@dataclass(frozen=True, slots=True)
class Skip:
    """Not this pod (its source is no longer hot, say); the round goes on."""

    reason: str


@dataclass(frozen=True, slots=True)
class Stop:
    """No further eviction this round: a stop was asked for, or the data can no
    longer be vouched for (a RefusedError: the round ends refused)."""

    error: LoadawareError


PROCEED = Proceed()

RecheckOutcome = Proceed | Skip | Stop
# Asked just before each eviction, against fresh data.
Recheck = Callable[[plan.Eviction], RecheckOutcome]
