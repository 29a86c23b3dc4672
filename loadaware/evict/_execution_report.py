"""What carrying out a plan did: each eviction's outcome, where each replacement
landed, which nodes carried the steering taint, and why the round stopped early."""

from __future__ import annotations

import datetime
import statistics
from dataclasses import dataclass, field
from typing import Literal

from loadaware.errors import LoadawareError
from loadaware.evict._outcome import EvictionOutcome, Result

# expected: on the plan's expectedNode; in-set: elsewhere in its landing set; off-set: a
# good landing outside it; cool: another node, where no landing control judged it; the
# rest are bad landings (source, hot, excluded, over-targets) or none (pending, not-found).
Landing = Literal[
    "expected",
    "in-set",
    "off-set",
    "cool",
    "hot",
    "source",
    "excluded",
    "over-targets",
    "pending",
    "not-found",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplacementReport:
    pod: str  # the evicted pod, namespace/name
    replacement: str | None  # name of the pod the controller created
    node: str | None  # where it was scheduled
    ready: bool
    seconds_to_ready: float | None
    landing: Landing
    ready_at: datetime.datetime | None = None  # when it was first seen Ready
    # By when the evicted pod had stopped using its node: its deletionTimestamp (the
    # kubelet's deadline), or when it was first seen gone; None: never seen either.
    predecessor_stopped_by: datetime.datetime | None = None


@dataclass(kw_only=True)
class ExecutionReport:
    round_id: str
    dry_run: bool
    outcomes: list[EvictionOutcome] = field(default_factory=list)
    replacements: list[ReplacementReport] = field(default_factory=list)
    # Why the round stopped evicting early: a refusal (stale data, the suspend switch,
    # the breaker found open) or another stop (see _stops); its summary() says it.
    stopped: LoadawareError | None = None
    breaker: str | None = None  # why the breaker is open (opened now, or found open)
    tainted: list[str] = field(default_factory=list)  # every node that carried the taint
    untainted: list[str] = field(default_factory=list)  # taints removed, in order
    cordoned: list[str] = field(default_factory=list)  # nodes being emptied (consolidation)
    taints_left: list[str] = field(default_factory=list)  # could not be removed
    # Evicted pod (namespace/name) -> when its replacement was seen bound to a node.
    bound_at: dict[str, datetime.datetime] = field(default_factory=dict)
    # Nodes carrying the steering taint as each eviction was sent, in order.
    tainted_counts: list[int] = field(default_factory=list)
    taint_writes: int = 0  # steering taints set or removed, one node update each

    def count(self, result: Result) -> int:
        return sum(1 for o in self.outcomes if o.result == result)

    @property
    def tainted_most(self) -> int:
        """The most nodes that carried the steering taint at once in the round."""
        return max(self.tainted_counts, default=0)

    @property
    def tainted_median(self) -> float:
        """The median of the nodes carrying the steering taint as evictions were sent."""
        return float(statistics.median(self.tainted_counts)) if self.tainted_counts else 0.0

    @property
    def stop_reason(self) -> str | None:
        """Why the round stopped evicting early, in words; None: it did not."""
        return self.stopped.summary() if self.stopped is not None else None
