"""The eviction history's JSON text, as the state ConfigMap keeps it: written as
json.dumps of each record's fields, read back to the same records, and read anew
whenever the text changed (another writer), though the text last seen is not
parsed again."""

from __future__ import annotations

import dataclasses
import json

from loadaware import evict
from loadaware.evict import _history


def _record(i: int, outcome: str = "reserved") -> evict.EvictionRecord:
    return evict.EvictionRecord(
        at=f"2026-11-29T08:00:{i:02d}Z",
        round="r1",
        pod=f"shop/web-{i}",
        uid=f"uid-{i}",
        namespace="shop",
        workload="shop/ReplicaSet/web",
        node=f"node-{i % 3}",
        outcome=outcome,  # type: ignore[arg-type]
    )


def test_the_text_is_the_records_fields_as_compact_json() -> None:
    records = [_record(i) for i in range(5)]
    history = _history.History(evict.EvictionRecord)
    text = history.encode(records)
    assert text == json.dumps([dataclasses.asdict(r) for r in records], separators=(",", ":"))
    assert history.encode([]) == "[]"


def test_a_text_reads_back_to_its_records_whoever_wrote_it() -> None:
    records = [_record(i) for i in range(5)]
    text = _history.History(evict.EvictionRecord).encode(records)
    reader = _history.History(evict.EvictionRecord)
    assert reader.decode(text) == tuple(records)
    # Another writer settles one and adds one: the new text is what is read.
    changed = [*records[:2], dataclasses.replace(records[2], outcome="evicted"), *records[3:]]
    changed.append(_record(9))
    other = json.dumps([dataclasses.asdict(r) for r in changed], separators=(",", ":"))
    assert reader.decode(other) == tuple(changed)
    assert reader.decode(text) == tuple(records)


def test_a_record_changed_after_it_was_written_is_written_as_it_is_now() -> None:
    history = _history.History(evict.EvictionRecord)
    first = [_record(0), _record(1)]
    history.encode(first)
    settled = [first[0], dataclasses.replace(first[1], outcome="evicted")]
    assert json.loads(history.encode(settled))[1]["outcome"] == "evicted"
    assert history.decode(history.encode(settled)) == tuple(settled)
