"""The eviction history's JSON text, as the state ConfigMap keeps it: records as
arrays in a fixed column order, repeated strings written once, times in whole
seconds after a base (rounded up, so a record never reads older than it is). Every
record reads back to itself whoever wrote it, fields that do not fit the compact
form included; a text is read anew whenever it changed (another writer); a record
already encoded is not encoded again; and the format before (a JSON list of
objects) is still read. The size: bytes per record of a 5,000-node round's
evictions before and after, and how many fit the state's limit. Folding keeps
every eviction counted, at the latest time of its minute."""

from __future__ import annotations

import dataclasses
import datetime
import json
import random
from typing import Any

import pytest

from loadaware import evict
from loadaware.evict import _history, _state
from tests.evict import history_records

BASE = datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)
MINUTE = datetime.timedelta(minutes=1)


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


def _round_evictions(count: int, *, per_round: int = 1400) -> list[Any]:
    return history_records.round_evictions(count, start=BASE, per_round=per_round)


_old_format = history_records.old_format


def _whole_seconds(record: Any) -> Any:
    moment = record.time
    if moment.microsecond:
        moment = moment.replace(microsecond=0) + datetime.timedelta(seconds=1)
    return dataclasses.replace(record, at=evict.rfc3339(moment))


# -- the format ------------------------------------------------------------------------


def test_records_are_arrays_in_a_fixed_column_order_with_repeated_strings_once() -> None:
    records = [_record(i) for i in range(5)]
    text = _history.History(evict.EvictionRecord).encode(records)
    document = json.loads(text)
    assert document["format"] == 2
    assert document["columns"] == [
        "at",
        "round",
        "namespace",
        "pod",
        "uid",
        "kind",
        "workload",
        "node",
        "outcome",
        "count",
    ]
    assert document["since"] == "2026-11-29T08:00:00Z"
    strings = document["strings"]
    assert sorted(strings) == ["node-0", "node-1", "node-2", "r1", "reserved", "shop"]
    assert len(document["records"]) == 5
    at, round_at, namespace_at, pod, uid, kind, workload, node_at, outcome_at = document["records"][
        3
    ]
    assert at == 3
    assert (strings[round_at], strings[namespace_at], pod) == ("r1", "shop", "web-3")
    assert uid == ["uid-3"]  # no UUID: as written
    # "shop/ReplicaSet/web" is not Kind/namespace/name of this namespace: as written.
    assert (kind, workload) == (None, ["shop/ReplicaSet/web"])
    assert (strings[node_at], strings[outcome_at]) == ("node-0", "reserved")


def test_a_text_reads_back_to_its_records_whoever_wrote_it() -> None:
    records = [_record(i) for i in range(5)]
    text = _history.History(evict.EvictionRecord).encode(records)
    reader = _history.History(evict.EvictionRecord)
    assert reader.decode(text) == tuple(records)
    # Another writer settles one and adds one: the new text is what is read.
    changed = [*records[:2], dataclasses.replace(records[2], outcome="evicted"), *records[3:]]
    changed.append(_record(9))
    other = _history.History(evict.EvictionRecord).encode(changed)
    assert reader.decode(other) == tuple(changed)
    assert reader.decode(text) == tuple(records)


def test_every_field_reads_back_also_where_the_compact_form_does_not_fit() -> None:
    uid = "0b0e4a6e-9c43-4f51-8f43-2a4c3f7c1d2e"
    odd = [
        # A Deployment's pod: the workload's name is the start of the pod's.
        dataclasses.replace(
            _record(0), uid=uid, workload="Deployment/shop/web", pod="shop/web-5d8f-x2k9q"
        ),
        # A StatefulSet's pod, a pod of its own, an owner not in the pod's name.
        dataclasses.replace(_record(1), workload="StatefulSet/shop/db", pod="shop/db-0"),
        dataclasses.replace(_record(2), workload="Pod/shop/web-2"),
        dataclasses.replace(_record(3), workload="ReplicaSet/shop/api-7c9", uid=uid.upper()),
        # Not the pod's namespace, no kind, empty fields, a pod outside its namespace.
        dataclasses.replace(_record(4), workload="Deployment/other/web"),
        dataclasses.replace(_record(5), workload="shop/web-5", uid="", node="", round=""),
        dataclasses.replace(_record(6), pod="elsewhere/web-6", namespace="shop"),
        dataclasses.replace(_record(7), pod="", uid="", node="", workload="", count=12),
        dataclasses.replace(_record(8), pod="shop/", workload="Deployment/shop/"),
        dataclasses.replace(_record(9), namespace="", pod="/x", workload="Pod//x"),
        dataclasses.replace(_record(10), pod='shop/"quoted"\\', workload='Pod/shop/"quoted"\\'),
    ]
    text = _history.History(evict.EvictionRecord).encode(odd)
    assert _history.History(evict.EvictionRecord).decode(text) == tuple(odd)
    rows = json.loads(text)["records"]
    assert rows[0][3] == "web-5d8f-x2k9q"
    assert len(rows[0][4]) == 22  # the UUID's 16 bytes
    assert rows[0][6] == 3  # the workload: "web", the first 3 letters of the pod's name
    assert rows[3][4] == [uid.upper()]
    assert rows[7][9] == 12
    assert all(len(row) == 9 for i, row in enumerate(rows) if i != 7)


def test_times_are_whole_seconds_rounded_up_so_no_record_reads_older() -> None:
    written = dataclasses.replace(_record(0), at="2026-11-29T08:00:00.000001Z")
    exact = dataclasses.replace(_record(1), at="2026-11-29T08:00:07Z")
    history = _history.History(evict.EvictionRecord)
    text = history.encode([written, exact])
    expected = (dataclasses.replace(written, at="2026-11-29T08:00:01Z"), exact)
    # The writer's records are as any reader reads them.
    assert history.decode(text) == expected
    assert _history.History(evict.EvictionRecord).decode(text) == expected


def test_a_record_from_before_the_base_reads_back() -> None:
    # Another replica's clock a few seconds behind: its record comes after, dated before.
    history = _history.History(evict.EvictionRecord)
    later = _record(30)
    history.encode([later])
    earlier = _record(2)
    text = history.encode([later, earlier])
    assert json.loads(text)["records"][1][0] == -28
    assert _history.History(evict.EvictionRecord).decode(text) == (later, earlier)


def test_a_record_changed_after_it_was_written_is_written_as_it_is_now() -> None:
    history = _history.History(evict.EvictionRecord)
    first = [_record(0), _record(1)]
    history.encode(first)
    settled = [first[0], dataclasses.replace(first[1], outcome="evicted")]
    assert history.decode(history.encode(settled)) == tuple(settled)
    assert _history.History(evict.EvictionRecord).decode(history.encode(settled)) == tuple(settled)


class _Counting(_history.History[Any]):
    """Counts the records encoded."""

    def __init__(self) -> None:
        super().__init__(evict.EvictionRecord)
        self.encoded = 0

    def _encode_one(self, record: Any) -> Any:
        self.encoded += 1
        return super()._encode_one(record)


def test_a_record_is_encoded_once_while_it_stays_in_the_history() -> None:
    records = _round_evictions(300)
    history = _Counting()
    history.encode(records[:200])
    assert history.encoded == 200
    # A round's reservation and settlement, and another writer's record read back.
    written = history.decode(history.encode(records[:201]))
    assert history.encoded == 201
    settled = [*written[:200], dataclasses.replace(written[200], outcome="refused")]
    history.encode(settled)
    assert history.encoded == 202
    other = _history.History(evict.EvictionRecord)
    other.decode(history.encode(settled))
    current = list(history.decode(other.encode([*settled, records[201]])))
    history.encode(current)
    assert history.encoded == 203


def test_strings_of_pruned_records_are_forgotten_and_each_record_still_encoded_about_once() -> None:
    records = _round_evictions(1500)
    history = _Counting()
    current = list(history.decode(history.encode(records[:100])))
    for i in range(100, 1500):
        # A history of 100 records, each eviction pruning the oldest.
        current = list(history.decode(history.encode([*current[1:], records[i]])))
        strings = json.loads(history.encode(current))["strings"]
        assert len(strings) <= 64 + 6 * 100
    # Laid out anew now and then (each node name is new here), each time encoding all
    # 100 records once more.
    assert 1500 + 100 < history.encoded < 1500 + 5 * 100


def test_the_format_before_is_read_and_written_anew() -> None:
    records = [_record(i, "evicted") for i in range(3)]
    records[0] = dataclasses.replace(records[0], at="2026-11-29T08:00:00.250000Z")
    old = _old_format(records)
    history = _history.History(evict.EvictionRecord)
    assert history.decode(old) == tuple(records)
    assert all(r.count == 1 for r in history.decode(old))
    text = history.encode(list(history.decode(old)))
    assert json.loads(text)["format"] == 2
    read = _history.History(evict.EvictionRecord).decode(text)
    assert read == tuple(_whole_seconds(r) for r in records)


def test_a_format_this_version_does_not_know_is_refused_by_name() -> None:
    text = json.dumps({"format": 3, "columns": ["at"], "records": []})
    with pytest.raises(ValueError, match=r"evictions\.json: format 3"):
        _history.History(evict.EvictionRecord).decode(text)


# -- size ------------------------------------------------------------------------------


@pytest.mark.parametrize("count", [1400, 5000])
def test_bytes_per_record_of_a_round_within_the_hour(count: int) -> None:
    records = _round_evictions(count)
    before = len(_old_format(records))
    text = _history.History(evict.EvictionRecord).encode(records)
    after = len(text.encode())
    assert after == len(text)  # ASCII: characters are the bytes the API server counts
    # Measured: about 260 bytes per record as objects, under 100 as arrays; 1,400
    # evictions (a 5,000-node round) took 365 KB and now take about 130 KB.
    assert before / count > 250
    assert after / count < 100
    assert before / after > 2.6


def test_the_state_limit_holds_nine_thousand_settled_evictions_before_folding() -> None:
    # 900 KiB at under 100 bytes a record: no folding below about 9,400 evictions
    # within the retention (max of cooldown, window and an hour), against some 3,500
    # before at 260 bytes, within 1 MiB.
    records = _round_evictions(9000)
    text = _history.History(evict.EvictionRecord).encode(records)
    assert len(text) < _state.STATE_DATA_LIMIT
    assert len(_old_format(records)) > _state.CONFIG_MAP_DATA_LIMIT


# -- fold ------------------------------------------------------------------------------


def _counts(records: Any, at: datetime.datetime, window: datetime.timedelta) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in records:
        if at - r.time < window:
            counts[r.namespace] = counts.get(r.namespace, 0) + r.count
    return counts


def test_folded_evictions_go_on_counting_for_every_budget() -> None:
    records = [_whole_seconds(r) for r in _round_evictions(600, per_round=200)]
    # Pods of few workloads, so that some of a round share a workload and a minute.
    records = [
        dataclasses.replace(r, workload=f"Deployment/{r.namespace}/w{i % 7}")
        for i, r in enumerate(records)
    ]
    now = BASE + datetime.timedelta(minutes=61)
    forget_before = BASE + datetime.timedelta(minutes=20)
    chosen = set(range(400))
    folded = _history.fold(records, chosen, forget_workload_before=forget_before)
    kept, was_folded = folded[-200:], folded[:-200]
    assert kept == records[400:]
    assert len(was_folded) < 400
    assert all((r.pod, r.uid, r.node, r.outcome) == ("", "", "", "evicted") for r in was_folded)
    assert sum(r.count for r in folded) == 600
    # Window counts per namespace never fewer, at any moment: a folded record's time is
    # the latest of its minute.
    for minutes in range(0, 130, 3):
        at = now + datetime.timedelta(minutes=minutes)
        for window in (datetime.timedelta(minutes=10), datetime.timedelta(hours=1)):
            before, after = _counts(records, at, window), _counts(folded, at, window)
            assert all(after.get(ns, 0) >= used for ns, used in before.items()), (at, window)
            # Up to a minute longer, no more.
            late = sum(1 for r in records if window <= at - r.time < window + MINUTE)
            assert sum(after.values()) - sum(before.values()) <= late

    # Cooldown: a workload's latest eviction in each round is kept where it is needed.
    def latest(rs: Any) -> dict[tuple[str, str], datetime.datetime]:
        out: dict[tuple[str, str], datetime.datetime] = {}
        for r in rs:
            if r.workload:
                out[(r.round, r.workload)] = max(out.get((r.round, r.workload), r.time), r.time)
        return out

    expected = {k: t for k, t in latest(records).items() if t >= forget_before}
    assert {k: t for k, t in latest(folded).items() if t >= forget_before} == expected
    # Past the cooldown only namespaces and minutes are kept.
    past = [r for r in was_folded if r.time < forget_before]
    assert past
    assert all(r.workload == "" and r.round == "" for r in past)
    # A fold read back from the ConfigMap's text is the same fold.
    text = _history.History(evict.EvictionRecord).encode(folded)
    assert _history.History(evict.EvictionRecord).decode(text) == tuple(folded)


def test_folding_again_merges_what_was_folded() -> None:
    records = [_whole_seconds(r) for r in _round_evictions(100)]
    forget_before = BASE + datetime.timedelta(hours=2)  # every workload past its cooldown
    once = _history.fold(records, set(range(50)), forget_workload_before=forget_before)
    twice = _history.fold(once, set(range(len(once))), forget_workload_before=forget_before)
    assert sum(r.count for r in twice) == 100
    minutes = {(r.namespace, r.time.replace(second=0)) for r in records}
    assert len(twice) == len(minutes)


@pytest.mark.parametrize("seed", range(4))
def test_a_history_changed_a_few_records_at_a_time_reads_back_to_its_records(seed: int) -> None:
    # As a store changes it from write to write: records appended, settled, pruned from
    # the front, and the history read back from the text it wrote or another wrote.
    rng = random.Random(seed)
    pool = _round_evictions(400, per_round=60)
    history = _Counting()
    records: list[Any] = []
    for step, new in enumerate(pool):
        records.append(new)
        action = rng.random()
        if action < 0.3:
            i = rng.randrange(len(records))
            records[i] = dataclasses.replace(records[i], outcome=rng.choice(["evicted", "gone"]))
        elif action < 0.4:
            del records[: rng.randrange(1, 5)]
        text = history.encode(records)
        assert _history.History(evict.EvictionRecord).decode(text) == tuple(
            _whole_seconds(r) for r in records
        ), step
        if action > 0.95:
            records = list(_history.History(evict.EvictionRecord).decode(text))
        else:
            records = list(history.decode(text))
    # Each record about once: the new one, the one settled, and all after a layout.
    assert history.encoded < 3 * len(pool)
