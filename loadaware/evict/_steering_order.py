"""The order the evictor takes a plan's evictions in while it steers.

The plan comes in the order of relief (the hottest node's moves first), and
without steering the evictor follows it exactly. With steering, every eviction
sets the taints of its steer set and takes off the rest, one node update per
change, and each update reaches every watcher of nodes in the cluster (the
kubelet's, the autoscaler's, every controller's cache, loadaware's own). Steer
sets follow the pod's shape rather than its node, and consecutive moves of the
relief order share about a third of their nodes, so at 5,000 nodes a round wrote
some 65 taints per eviction.

So the evictor may take one of the next `lookahead` evictions first when its
planned steer set is fewer writes away from the taints set now. The relief order
holds at that scale: an eviction is passed over at most `lookahead` times, after
which it is taken next; only evictions of the same reason as the first one left
are taken ahead of it (a deschedule strategy's must-moves stay first); and a
workload with a replacement still awaited is not taken ahead, as its eviction
would wait for that replacement first. Only with landing control: it derives
each move's landing from the cluster as observed whatever the order, so taking a
move earlier changes where it is predicted from, not whether it is checked;
without it, the plan's landings hold only in the plan's order.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence

from loadaware import plan


class SteeringOrder:
    """The plan's evictions, taken one at a time (see the module)."""

    def __init__(self, evictions: Sequence[plan.Eviction], lookahead: int) -> None:
        self._evictions = evictions
        self._lookahead = max(lookahead, 1)
        self._left = list(range(len(evictions)))  # positions not taken, in plan order
        self._passed = [0] * len(evictions)  # times each was passed over

    def __bool__(self) -> bool:
        return bool(self._left)

    def take(
        self, writes: Callable[[tuple[str, ...]], int] | None, awaited: Container[str]
    ) -> plan.Eviction:
        """The next eviction. `writes` counts the taint changes a steer set needs from
        the taints set now (None: take the plan's order); `awaited` holds the
        workloads whose last replacement is still awaited."""
        left, evictions = self._left, self._evictions
        first = left[0]
        chosen = first
        if writes is not None and self._lookahead > 1 and self._passed[first] < self._lookahead:
            reason = evictions[first].reason
            fewest = writes(evictions[first].steer)
            for position in left[1 : self._lookahead]:
                eviction = evictions[position]
                if eviction.reason != reason or (eviction.workload or eviction.pod) in awaited:
                    continue
                count = writes(eviction.steer)
                if count < fewest:
                    chosen, fewest = position, count
        at = left.index(chosen)
        for position in left[:at]:
            self._passed[position] += 1
        del left[at]
        return evictions[chosen]
