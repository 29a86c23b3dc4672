"""The budgets' sums kept in step with a history (Tally) against the same sums made
anew over every record, through a history changed as a store changes it:
reservations appended, settled as evicted, refused or released, records pruned
from the front, another writer's history read (new objects), folded records that
count several evictions, the clock moving on and set back."""

from __future__ import annotations

import dataclasses
import datetime
import random

import pytest

from loadaware import evict
from loadaware.evict import _state, _tally

BASE = datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)
COOLDOWN = datetime.timedelta(minutes=10)
WINDOW = datetime.timedelta(minutes=30)
NAMESPACES = ("shop", "data", "media")
WORKLOADS = ("web", "api", "etl", "db")


def _anew(
    records: list[evict.EvictionRecord], new: evict.EvictionRecord, now: datetime.datetime
) -> tuple[bool, int, int]:
    counting = [r for r in records if r.outcome in _state.COUNTING]
    cooling = any(
        r.workload == new.workload and r.round != new.round and now - r.time < COOLDOWN
        for r in counting
    )
    recent = [r for r in counting if now - r.time < WINDOW]
    return (
        cooling,
        sum(r.count for r in recent),
        sum(r.count for r in recent if r.namespace == new.namespace),
    )


def _kept(tally: _tally.Tally, new: evict.EvictionRecord, now: datetime.datetime):
    window, in_namespace = tally.in_window(new.namespace, now - WINDOW)
    return tally.cooling(new.workload, new.round, now - COOLDOWN), window, in_namespace


@pytest.mark.parametrize("seed", range(8))
def test_the_sums_kept_in_step_are_the_sums_made_anew(seed: int) -> None:
    rng = random.Random(seed)
    tally = _tally.Tally(_state.COUNTING)
    records: list[evict.EvictionRecord] = []
    now = BASE
    for step in range(600):
        action = rng.random()
        if action < 0.45:
            namespace = rng.choice(NAMESPACES)
            records.append(
                evict.EvictionRecord(
                    at=evict.rfc3339(now),
                    round=f"r{step // 50}",
                    pod=f"{namespace}/pod-{step}",
                    uid=f"uid-{step}",
                    namespace=namespace,
                    workload=f"Deployment/{namespace}/{rng.choice(WORKLOADS)}",
                    node="node-1",
                    count=rng.choice((1, 1, 1, 3)),
                )
            )
        elif action < 0.7 and records:
            i = rng.randrange(len(records))
            outcome = rng.choice(("evicted", "evicted", "refused", "gone", "released"))
            records[i] = dataclasses.replace(records[i], outcome=outcome)
        elif action < 0.75 and records:
            del records[: rng.randrange(1, 4)]  # pruned
        elif action < 0.78:
            records = [dataclasses.replace(r) for r in records]  # another writer's, read
        elif action < 0.8:
            now -= datetime.timedelta(seconds=rng.randrange(1, 120))  # set back
        else:
            now += datetime.timedelta(seconds=rng.randrange(1, 90))
        new = evict.EvictionRecord(
            at=evict.rfc3339(now),
            round=f"r{step // 50}",
            pod="",
            uid="",
            namespace=rng.choice(NAMESPACES),
            workload=f"Deployment/shop/{rng.choice(WORKLOADS)}",
            node="",
        )
        tally.follow(records)
        assert _kept(tally, new, now) == _anew(records, new, now), step
