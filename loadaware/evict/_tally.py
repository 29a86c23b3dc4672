"""What the budgets spanning rounds count of an eviction history, kept in step with
it as a store's writes change it a few records at a time (StateStore's reservations).

Every reservation is checked against the whole history: the cooldown (a counting
record of the same workload, of an earlier round, younger than limits.cooldown)
and the window (counting records younger than its duration, in all and in the
namespace). Summed anew, that is a pass over every record at every eviction, in a
history that grows with the round. A Tally holds the counting records by workload,
and by time with the window's sums over those still in it. From one reservation to
the next it takes in only the records that changed: the history is mostly the very
objects of the last write, in the same places, and those are matched by identity
(as History matches them). Records that leave the window as the clock moves on are
taken off its sums, oldest first. Anything else (records pruned, another writer's
history read, a clock set back) and it is summed anew, once.
"""

from __future__ import annotations

import bisect
import datetime
from collections.abc import Sequence
from itertools import compress
from operator import is_not
from typing import Protocol


class Counted(Protocol):
    """The fields of an eviction record the budgets read."""

    @property
    def round(self) -> str: ...
    @property
    def namespace(self) -> str: ...
    @property
    def workload(self) -> str: ...
    @property
    def outcome(self) -> str: ...
    @property
    def count(self) -> int: ...
    @property
    def time(self) -> datetime.datetime: ...


class Tally:
    """The counting records of the history last followed, for the cooldown and the
    window (`counting`: the outcomes that count)."""

    def __init__(self, counting: frozenset[str]) -> None:
        self._counting = counting
        self._records: list[Counted] = []  # the history as last followed
        self._by_workload: dict[str, list[Counted]] = {}
        # Counting records by time; those from _start on are in the window, summed.
        self._times: list[datetime.datetime] = []
        self._timed: list[Counted] = []
        self._start = 0
        self._after: datetime.datetime | None = None  # the window's last cut-off
        self._in_window = 0
        self._in_namespace: dict[str, int] = {}

    def follow(self, records: Sequence[Counted]) -> None:
        """Take the history as it is now."""
        last = self._records
        pruned = _pruned_from_front(last, records)
        if pruned is None:
            self._rebuild(records)
            return
        aligned = last[pruned:]
        common = min(len(records), len(aligned))
        changed = list(compress(range(common), map(is_not, records, aligned)))
        if len(changed) > common // 4 + 8:
            self._rebuild(records)
            return
        for r in last[:pruned]:
            self._remove(r)
        for i in changed:
            self._remove(aligned[i])
            self._add(records[i])
        for r in aligned[common:]:
            self._remove(r)
        for r in records[common:]:
            self._add(r)
        self._records = list(records)

    def cooling(self, workload: str, round_id: str, after: datetime.datetime) -> bool:
        """Whether a counting record of `workload` from a round other than `round_id`
        is stamped after `after` (now less the cooldown)."""
        return any(
            r.round != round_id and r.time > after for r in self._by_workload.get(workload, ())
        )

    def in_window(self, namespace: str, after: datetime.datetime) -> tuple[int, int]:
        """Evictions counted after `after` (now less the window's duration), in all and
        in `namespace`."""
        if self._after is not None and after < self._after:
            self._resum(after)  # the clock was set back: records come back into it
        self._after = after
        times, timed = self._times, self._timed
        while self._start < len(times) and times[self._start] <= after:
            self._unsum(timed[self._start])
            self._start += 1
        return self._in_window, self._in_namespace.get(namespace, 0)

    def _rebuild(self, records: Sequence[Counted]) -> None:
        self._records = list(records)
        self._by_workload = {}
        counting = sorted((r for r in records if r.outcome in self._counting), key=lambda r: r.time)
        for r in counting:
            self._by_workload.setdefault(r.workload, []).append(r)
        self._times = [r.time for r in counting]
        self._timed = counting
        self._resum(self._after)

    def _resum(self, after: datetime.datetime | None) -> None:
        self._start = 0 if after is None else bisect.bisect_right(self._times, after)
        self._in_window = 0
        self._in_namespace = {}
        for r in self._timed[self._start :]:
            self._sum(r)

    def _add(self, r: Counted) -> None:
        if r.outcome not in self._counting:
            return
        self._by_workload.setdefault(r.workload, []).append(r)
        at = r.time
        position = bisect.bisect_right(self._times, at)
        self._times.insert(position, at)
        self._timed.insert(position, r)
        if self._after is not None and at <= self._after:
            self._start += 1  # already out of the window
        else:
            self._sum(r)

    def _remove(self, r: Counted) -> None:
        if r.outcome not in self._counting:
            return
        same = self._by_workload[r.workload]
        del same[next(i for i, other in enumerate(same) if other is r)]
        at = r.time
        position = bisect.bisect_left(self._times, at)
        while self._timed[position] is not r:
            position += 1
        del self._times[position]
        del self._timed[position]
        if position < self._start:
            self._start -= 1
        else:
            self._unsum(r)

    def _sum(self, r: Counted) -> None:
        self._in_window += r.count
        self._in_namespace[r.namespace] = self._in_namespace.get(r.namespace, 0) + r.count

    def _unsum(self, r: Counted) -> None:
        self._in_window -= r.count
        self._in_namespace[r.namespace] -= r.count


# How many records may leave the front of the history between two reservations
# (pruned) and the rest still be matched in place.
_PRUNED_IN_PLACE = 64


def _pruned_from_front(last: Sequence[Counted], records: Sequence[Counted]) -> int | None:
    """How many of `last` were dropped from its front where `records` starts with what
    follows them; None when it does not (or either is empty)."""
    if not last or not records:
        return None
    first = records[0]
    for pruned in range(min(len(last), _PRUNED_IN_PLACE + 1)):
        if last[pruned] is first:
            return pruned
    return None
