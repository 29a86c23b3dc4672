"""Where replacements land: evictions replayed the way a cluster applies them.

loadaware does not bind pods. An evicted pod's controller creates a replacement
and kube-scheduler places it by requests, not usage — so it can land back on
the node it left or on another hot node (the bounce-back the descheduler's
users report). Every planned eviction is therefore checked against the
kube-scheduler model: the replacement must be predicted to land on a node that
is neither hot, excluded nor the source, and that stays at or below its
targetThresholds with the pod's usage added.

Must-move pods (named by a deschedule strategy) are held to the same landing
rules, except that their source need not be hot, and two more: a replacement
that fits nowhere is never allowed (even with nodeFit off), and it must land
where the strategy's rule holds (`Candidate.landing_check`). Failed pods
(RemoveFailedPods) hold nothing and need no landing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from loadaware.cluster import Taint
from loadaware.plan._fit import Occupancy
from loadaware.plan._problem import AppliedMove, Candidate, Problem
from loadaware.plan._scheduler import predict_node

# The soft taint steering puts on the round's hot nodes (when enabled).
HOTSPOT_TAINT = Taint(key="loadaware.io/hotspot", value="true", effect="PreferNoSchedule")

# Why a candidate's replacement may not land where it is predicted to.
BOUNCE_BACK = "bounce-back"  # predicted back on its source or on another hot/excluded node
TARGET_OVER_THRESHOLD = "target-over-threshold"  # the landing node would end above its targets
NO_FIT = "no-fit"  # no node fits: the replacement would stay Pending
STILL_VIOLATES = "still-violates"  # a must-move's replacement would break its rule again


class Placement:
    """A working copy of the cluster that evictions are applied to, in order.

    Building the occupancy of a large cluster costs more than solving, so one
    Placement serves every replay of a round: reset() undoes the moves applied.
    """

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.occupancy = Occupancy.from_cluster(problem.cluster)
        self.usage = problem.table.usage.copy()
        self._applied: list[tuple[Candidate, int | None]] = []
        table = problem.table
        self._names = table.names
        self._node_names = tuple(n.name for n in problem.cluster.nodes)
        self._allowed = np.zeros(len(table.names), dtype=bool)
        self._allowed[problem.target_indexes] = True
        self._node_fit = problem.policy.evictor.node_fit
        self.extra_taints: Mapping[str, Sequence[Taint]] = (
            {table.names[i]: (HOTSPOT_TAINT,) for i in problem.hot_indexes}
            if problem.policy.steering.soft_taint
            else {}
        )

    def landing(self, candidate: Candidate) -> tuple[int | None, str | None]:
        """(node index, None) where the replacement would land if evicted now, or
        (None, reason) when it must not be evicted. With nodeFit off, a replacement
        that fits nowhere is allowed, as in the descheduler: (None, None)."""
        if candidate.terminal:
            return None, None
        pod = candidate.pod
        source = self._names[candidate.node_index]
        self.occupancy.remove(pod)
        try:
            landed = predict_node(
                pod, self.occupancy, self._node_names, extra_taints=self.extra_taints
            )
        finally:
            self.occupancy.add(pod, source)
        if landed is None:
            return (None, None) if not (self._node_fit or candidate.must_move) else (None, NO_FIT)
        target = self.problem.table.index[landed]
        if target == candidate.node_index or not self._allowed[target]:
            return None, BOUNCE_BACK
        if not self.fits_under_targets(candidate, target):
            return None, TARGET_OVER_THRESHOLD
        if candidate.landing_check is not None and not candidate.landing_check(
            landed, self.applied_moves()
        ):
            return None, STILL_VIOLATES
        return target, None

    def close(self, index: int) -> None:
        """Take a node out of the scheduler's choice and of the allowed targets: a node
        being emptied, which kube-scheduler is expected not to use (see _consolidate)."""
        self._allowed[index] = False
        name = self._names[index]
        self._node_names = tuple(n for n in self._node_names if n != name)

    def undo_last(self) -> None:
        """Undo the most recently applied move."""
        candidate, target = self._applied.pop()
        if candidate.terminal:
            return
        if target is not None:
            self.occupancy.remove(candidate.pod)
            self.usage[target] -= candidate.usage
        self.occupancy.add(candidate.pod, self._names[candidate.node_index])
        self.usage[candidate.node_index] += candidate.usage

    def applied_moves(self) -> list[AppliedMove]:
        """The moves applied so far, in order, as (pod, source, landing node)."""
        names = self._names
        return [
            (c.pod, names[c.node_index], None if t is None else names[t]) for c, t in self._applied
        ]

    def fits_under_targets(self, candidate: Candidate, target: int) -> bool:
        table = self.problem.table
        after = (self.usage[target] + candidate.usage) / np.where(
            table.allocatable[target] > 0, table.allocatable[target], 1.0
        )
        high = table.high[target]
        judged = ~np.isnan(high)
        return bool(np.all(after[judged] <= high[judged] + 1e-12))

    def apply(self, candidate: Candidate, target: int | None) -> None:
        if candidate.terminal:
            # Not in the occupancy and without usage: nothing to take away.
            self._applied.append((candidate, None))
            return
        self.occupancy.remove(candidate.pod)
        self.usage[candidate.node_index] -= candidate.usage
        if target is not None:
            self.occupancy.add(candidate.pod, self._names[target])
            self.usage[target] += candidate.usage
        self._applied.append((candidate, target))

    def reset(self) -> None:
        """Undo every applied move, newest first."""
        while self._applied:
            candidate, target = self._applied.pop()
            if candidate.terminal:
                continue
            if target is not None:
                self.occupancy.remove(candidate.pod)
            self.occupancy.add(candidate.pod, self._names[candidate.node_index])
        self.usage = self.problem.table.usage.copy()
