"""Eviction records as a round on a generated 5,000-node cluster writes them, for
the tests of the history's size: pods of Deployments named
`<workload>-<hash>-<suffix>` in 15 namespaces, random UIDs, 5,000 nodes, a new
round id every `per_round` records, times with microseconds spread evenly from
`start` over `span`."""

from __future__ import annotations

import dataclasses
import datetime
import json
import random
import uuid
from typing import Any

from loadaware import evict

NAMESPACES = [f"team-{name}" for name in ("media", "payments", "batch", "identity")] + [
    f"analytics-{i}" for i in range(11)
]
_WORDS = ["route", "price", "video", "token", "profile", "mail", "etl", "search"]
_KINDS = ["gateway", "worker", "scorer", "exporter", "shard", "api"]
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' suffixes: no vowels


def round_evictions(
    count: int,
    *,
    start: datetime.datetime,
    span: datetime.timedelta = datetime.timedelta(hours=1),
    seed: int = 1,
    per_round: int = 1400,
    outcome: str = "evicted",
) -> list[evict.EvictionRecord]:
    rng = random.Random(seed)
    records = []
    round_id = ""
    for i in range(count):
        if i % per_round == 0:
            round_id = "".join(rng.choices("0123456789abcdef", k=8))
        namespace = rng.choice(NAMESPACES)
        workload = f"{rng.choice(_WORDS)}-{rng.choice(_KINDS)}-{rng.randrange(10)}"
        pod_hash = "".join(rng.choices(_ALPHABET, k=10))
        suffix = "".join(rng.choices(_ALPHABET, k=5))
        at = start + span * (i / count) + datetime.timedelta(microseconds=rng.randrange(10**6))
        records.append(
            evict.EvictionRecord(
                at=evict.rfc3339(at),
                round=round_id,
                pod=f"{namespace}/{workload}-{pod_hash}-{suffix}",
                uid=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                namespace=namespace,
                workload=f"Deployment/{namespace}/{workload}",
                node=f"default-{rng.choice('abc')}-{rng.randrange(5000 // 3):04d}",
                outcome=outcome,  # type: ignore[arg-type]
            )
        )
    return records


def old_format(records: list[Any]) -> str:
    """The text loadaware wrote before: a JSON list of the records' fields by name."""
    items = [{k: v for k, v in dataclasses.asdict(r).items() if k != "count"} for r in records]
    return json.dumps(items, separators=(",", ":"))
