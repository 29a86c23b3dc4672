"""Steering during a round: a node carries loadaware's soft taint only while a move
needs it. Before each eviction the nodes of its `steer` set carry the taint, with
those still held for evictions whose replacement is not bound yet (a taint taken
off before kube-scheduler binds the replacement could change where it lands), and
no other node does; only the changes are patched. Once a replacement is bound its
move's taints go as soon as no other move needs them, and every taint set is
removed when the round ends, however it ends.

The taints at once are capped by steering.maxTaintedFraction of the nodes, as the
planner caps them: an eviction whose steer set, with those held, would exceed it
is not sent. The count is the gauge loadaware_tainted_nodes, and the round's report
keeps it as each eviction is sent.
"""

from __future__ import annotations

from prometheus_client import Gauge

from loadaware import plan
from loadaware.evict import _taint
from loadaware.evict._execution_report import ExecutionReport
from loadaware.kube import Kube

TAINTED_NODES = Gauge(
    "loadaware_tainted_nodes",
    "Nodes carrying loadaware's steering taint (loadaware.io/hotspot:PreferNoSchedule) now.",
)


class SteeringTaints:
    """The nodes carrying the steering taint in one round, and the moves that need them."""

    def __init__(self, kube: Kube, cap: int) -> None:
        self._kube = kube
        self.cap = cap  # the most nodes that may carry the taint at once
        self._carrying: set[str] = set()  # nodes carrying the steering taint now
        # Evicted pod -> its steer set, until its replacement is bound.
        self._unbound: dict[str, frozenset[str]] = {}

    @property
    def held(self) -> frozenset[str]:
        """The nodes that stay tainted for replacements not bound yet."""
        return frozenset().union(*self._unbound.values())

    def check_allowed(self, planned: plan.Plan) -> None:
        """Whether loadaware may set the taint (a server-side dry run on the first node
        to be tainted), before anything is evicted."""
        first = next((e.steer[0] for e in planned.evictions if e.steer), None)
        if first is not None:
            _taint.check_steering_allowed(self._kube, first)

    def over_cap(self, eviction: plan.Eviction) -> str | None:
        """Why the eviction may not be sent under the cap, or None when it may."""
        wanted = set(eviction.steer) - self.held
        if not wanted:
            return None
        count = len(wanted) + len(self.held)
        if count <= self.cap:
            return None
        return f"{plan.TAINT_CAP}: {count} nodes would carry the taint, at most {self.cap}"

    def writes(self, steer: tuple[str, ...]) -> int:
        """The taint changes a move with this steer set would make now."""
        return len(self._carrying ^ (set(steer) | self.held))

    def steer(self, eviction: plan.Eviction, report: ExecutionReport) -> None:
        """Exactly the eviction's steer set and the held nodes carry the taint from now
        on; the count is recorded for the round."""
        self._set(set(eviction.steer) | self.held, report)
        report.tainted_counts.append(len(self._carrying))

    def sent(self, eviction: plan.Eviction) -> None:
        """The eviction was sent: its taints stay until its replacement is bound."""
        self._unbound[eviction.pod] = frozenset(eviction.steer)

    def bound(self, pod: str) -> None:
        """The replacement of `pod` is bound: its move needs its taints no more."""
        self._unbound.pop(pod, None)

    @property
    def unbound(self) -> frozenset[str]:
        """The evicted pods whose replacements are not known to be bound."""
        return frozenset(self._unbound)

    def release(self, report: ExecutionReport) -> None:
        """Taints no move still needs are removed now."""
        self._set(set(self.held), report)

    def remove_all(self, report: ExecutionReport) -> None:
        """Every taint still set removed; those that could not be go to taints_left."""
        self._unbound.clear()
        if self._carrying:
            left = sorted(self._carrying)
            report.taint_writes += len(left)
            report.taints_left = _taint.remove_taints_quietly(self._kube, left)
            report.untainted.extend(n for n in left if n not in report.taints_left)
            self._carrying = set(report.taints_left)
        TAINTED_NODES.set(len(self._carrying))

    def _set(self, wanted: set[str], report: ExecutionReport) -> None:
        try:
            for name in sorted(self._carrying - wanted):
                report.taint_writes += 1
                _taint.remove_hotspot_taint(self._kube, name)
                self._carrying.discard(name)
                report.untainted.append(name)
            for name in sorted(wanted - self._carrying):
                report.taint_writes += 1
                _taint.add_hotspot_taint(self._kube, name)
                self._carrying.add(name)
                if name not in report.tainted:
                    report.tainted.append(name)
        finally:
            TAINTED_NODES.set(len(self._carrying))
