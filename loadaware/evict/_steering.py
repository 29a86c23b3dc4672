"""Steering during a round: before each eviction exactly the nodes of its `steer` set
carry loadaware's soft taint (only the changes are patched), and every taint set is
removed when the round ends, however it ends."""

from __future__ import annotations

from loadaware import plan
from loadaware.evict import _taint
from loadaware.evict._execution_report import ExecutionReport
from loadaware.kube import Kube


class SteeringTaints:
    """The nodes carrying the steering taint in one round."""

    def __init__(self, kube: Kube) -> None:
        self._kube = kube
        self._carrying: set[str] = set()  # nodes carrying the steering taint now

    def check_allowed(self, planned: plan.Plan) -> None:
        """Whether loadaware may set the taint (a server-side dry run on the first node
        to be tainted), before anything is evicted."""
        first = next((e.steer[0] for e in planned.evictions if e.steer), None)
        if first is not None:
            _taint.check_steering_allowed(self._kube, first)

    def steer(self, eviction: plan.Eviction, report: ExecutionReport) -> None:
        """Exactly the eviction's steer set carries the taint from now on."""
        wanted = set(eviction.steer)
        for name in sorted(self._carrying - wanted):
            _taint.remove_hotspot_taint(self._kube, name)
            self._carrying.discard(name)
            report.untainted.append(name)
        for name in sorted(wanted - self._carrying):
            _taint.add_hotspot_taint(self._kube, name)
            self._carrying.add(name)
            if name not in report.tainted:
                report.tainted.append(name)

    def remove_all(self, report: ExecutionReport) -> None:
        """Every taint still set removed; those that could not be go to taints_left."""
        if self._carrying:
            left = sorted(self._carrying)
            report.taints_left = _taint.remove_taints_quietly(self._kube, left)
            report.untainted.extend(n for n in left if n not in report.taints_left)
            self._carrying.clear()
