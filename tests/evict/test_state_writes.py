"""How often the state ConfigMap is written, and what each write costs, on the
simulated API through the official client.

Covers: a round of N evictions writes its state about N times (each reservation
carries the settlement of the eviction before it), not twice per eviction; the
settlement still pending when the round's evicting ends is written then, so the
history shows every eviction settled after the round; a settlement is seen by
the store's own reads before it is written; a process that stops between a
reservation and the write of its settlement leaves the reservation, which counts
against the budgets exactly as the settlement would, and which a later round
settles as evicted; a settlement that frees budget (refused) is written at once,
with the pending ones; a reservation on a long history does not parse every
record's time again; and an update the API refuses (403, 500, 409 every time) is
the same error as through CoreV1Api, writes nothing and keeps the pending
settlement for the next write.
"""

from __future__ import annotations

import dataclasses
import datetime
import pathlib
from typing import Any

import pytest

from loadaware import errors, evict, kube, report, sim
from loadaware import round as rounds
from loadaware.evict import _history
from tests.evict import history_records
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import NOW, call, sim_server

STATE = ("configmaps", "loadaware", "loadaware-state")
MINUTE = datetime.timedelta(minutes=1)


@pytest.fixture
def server():
    # Replacements become Ready 5 simulated seconds after they are bound.
    with sim_server("small", ready_delay=5.0) as running:
        yield running


def _kube(server: sim.SimServer, tmp_path: pathlib.Path) -> evict.Kube:
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    return evict.Kube(kube.api_client(kube.ClientSettings(kubeconfig=str(kubeconfig))))


def _create_namespace(server: sim.SimServer) -> None:
    status, body = call(server, "POST", "/api/v1/namespaces", {"metadata": {"name": "loadaware"}})
    assert status == 201, body


def _stored(server: sim.SimServer) -> tuple[evict.EvictionRecord, ...]:
    found = server.find(*STATE)
    if found is None:
        return ()
    return _history.History(evict.EvictionRecord).decode(found["data"]["evictions.json"])


def _writes(server: sim.SimServer) -> int:
    counts = server.sim.requests.counts()
    return counts.get(("create", "configmaps"), 0) + counts.get(("update", "configmaps"), 0)


def _record(i: int, *, round_id: str = "r", namespace: str = "shop") -> evict.EvictionRecord:
    return evict.EvictionRecord(
        at="1970-01-01T00:00:00Z",  # stamped by reserve()
        round=round_id,
        pod=f"{namespace}/web-{i}",
        uid=f"00000000-0000-4000-8000-{i:012d}",
        namespace=namespace,
        workload=f"Deployment/{namespace}/web-{i}",
        node="node-1",
    )


# -- a round ------------------------------------------------------------------------------


def test_a_round_writes_its_state_once_per_eviction_and_settles_every_one(server, tmp_path) -> None:
    policy = metrics_server_policy()
    context = live_context(server, tmp_path, policy)
    server.sim.requests.clear()
    record = rounds.run_round(policy, context, rounds.RoundOptions()).record
    audit = report.round_to_json(record)
    evicted = [e["pod"] for e in audit["evictions"] if e["result"] == "evicted"]
    assert len(evicted) >= 3, "too few evictions to tell once from twice per eviction"
    # One write per reservation, the one after the last eviction to settle it, and the
    # check before the round (a dry-run create).
    assert len(evicted) <= _writes(server) <= len(evicted) + 2
    # The last eviction's settlement was pending when the round's evicting ended.
    stored = _stored(server)
    assert [r.pod for r in stored] == evicted
    assert {r.outcome for r in stored} == {"evicted"}


# -- the store ------------------------------------------------------------------------------


def test_a_settlement_is_read_at_once_and_written_with_the_next_write(server, tmp_path) -> None:
    _create_namespace(server)
    kube_ = _kube(server, tmp_path)
    store = evict.StateStore(kube_, metrics_server_policy(), lambda: NOW)
    first, second = _record(1), _record(2)
    store.reserve(first)
    store.note_evicted(first)
    assert [r.outcome for r in _stored(server)] == ["reserved"]
    # The store's own reads see it settled.
    assert [r.outcome for r in store.records()] == ["evicted"]
    assert store.carried_budget().cooling_workloads == {first.workload}
    writes = _writes(server)
    store.reserve(second)
    assert _writes(server) == writes + 1
    assert [(r.pod, r.outcome) for r in _stored(server)] == [
        (first.pod, "evicted"),
        (second.pod, "reserved"),
    ]
    store.note_evicted(second)
    store.flush()
    assert [r.outcome for r in _stored(server)] == ["evicted", "evicted"]
    # Nothing pending: no write.
    writes = _writes(server)
    store.flush()
    assert _writes(server) == writes


def test_a_settlement_that_frees_budget_is_written_at_once_with_the_pending_ones(
    server, tmp_path
) -> None:
    _create_namespace(server)
    store = evict.StateStore(_kube(server, tmp_path), metrics_server_policy(), lambda: NOW)
    first, second = _record(1), _record(2)
    store.reserve(first)
    store.note_evicted(first)
    store.reserve(second)
    store.settle(second, "refused")
    assert [r.outcome for r in _stored(server)] == ["evicted", "refused"]
    # A pending settlement goes with a refusal's write too.
    third = _record(3)
    store.reserve(third)
    store.note_evicted(third)
    store.settle(_record(4), "gone")  # no such record: only the pending one changes
    assert [r.outcome for r in _stored(server)] == ["evicted", "refused", "evicted"]


def test_a_process_stopped_before_its_settlement_is_written_leaves_a_counted_reservation(
    server, tmp_path
) -> None:
    _create_namespace(server)
    kube_ = _kube(server, tmp_path)
    budgets = metrics_server_policy(limits={"window": {"duration": "1h", "maxEvictions": 2}})
    stopped = evict.StateStore(kube_, budgets, lambda: NOW)
    first, second = _record(1), _record(2)
    for record in (first, second):
        stopped.reserve(record)
        stopped.note_evicted(record)
    # The process stops here: no flush.
    assert [r.outcome for r in _stored(server)] == ["evicted", "reserved"]
    later = evict.StateStore(kube_, budgets, lambda: NOW + MINUTE)
    assert later.carried_budget().window_total_left == 0
    with pytest.raises(evict.BudgetExhaustedError) as info:
        later.reserve(_record(3, round_id="next", namespace="data"))
    assert info.value.budget == "window.maxEvictions"
    # Once its Eviction must have been decided, a later round settles it: its pod is
    # gone, so it stays counted.
    settler = evict.StateStore(kube_, budgets, lambda: NOW + 10 * MINUTE)
    assert [(s.record.pod, s.outcome) for s in settler.settle_pending()] == [
        (second.pod, "evicted")
    ]
    assert [r.outcome for r in _stored(server)] == ["evicted", "evicted"]
    with pytest.raises(evict.BudgetExhaustedError):
        settler.reserve(_record(3, round_id="next", namespace="data"))


class _ParsedTimes:
    """Calls of the parse of a record's time (cached or not) while inside."""

    def __enter__(self) -> _ParsedTimes:
        self._before = _history.parsed_time.cache_info()
        return self

    def __exit__(self, *_exc: Any) -> None:
        after = _history.parsed_time.cache_info()
        self.calls = after.hits + after.misses - self._before.hits - self._before.misses


def test_a_reservation_on_a_long_history_does_not_read_every_record_s_time(
    server, tmp_path
) -> None:
    _create_namespace(server)
    kube_ = _kube(server, tmp_path)
    earlier = history_records.round_evictions(1500, start=NOW - 50 * MINUTE, span=40 * MINUTE)
    wide = metrics_server_policy(
        limits={"cooldown": "30m", "window": {"duration": "1h", "maxEvictions": 100_000}}
    )
    kube_.create_config_map(
        "loadaware",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "loadaware-state", "namespace": "loadaware"},
            "data": {"evictions.json": _history.History(evict.EvictionRecord).encode(earlier)},
        },
    )
    store = evict.StateStore(kube_, wide, lambda: NOW)
    # The first write reads the history: it prunes and sums all of it.
    with _ParsedTimes() as first:
        store.reserve(_record(1))
        store.note_evicted(_record(1))
    assert first.calls >= len(earlier)
    with _ParsedTimes() as next_ones:
        for i in range(2, 12):
            store.reserve(_record(i))
            store.note_evicted(_record(i))
        store.flush()
    assert next_ones.calls < 100
    # And the budgets counted every record all the same.
    stored = _stored(server)
    assert len(stored) == len(earlier) + 11
    assert {r.outcome for r in stored} == {"evicted"}
    assert store.carried_budget().window_total_left == 100_000 - len(earlier) - 11
    assert dataclasses.replace(stored[-1], at="") == dataclasses.replace(
        _record(11), at="", outcome="evicted"
    )


@pytest.mark.parametrize(
    ("status", "error", "message"),
    [
        (403, errors.ForbiddenError, "update configmap loadaware/loadaware-state: 403 "),
        (500, errors.ClusterError, "update configmap loadaware/loadaware-state: 500 "),
        # Re-read and tried again, each time refused.
        (409, errors.ConflictError, "kept changing; gave up after 8 attempts"),
    ],
    ids=["forbidden", "server-error", "conflict"],
)
def test_an_update_refused_by_the_api_is_translated_and_changes_nothing(
    server, tmp_path, status: int, error: type[Exception], message: str
) -> None:
    _create_namespace(server)
    store = evict.StateStore(_kube(server, tmp_path), metrics_server_policy(), lambda: NOW)
    first = _record(1)
    store.reserve(first)
    written = server.find(*STATE)
    rule = {"path": "/configmaps/loadaware-state$", "method": "PUT", "status": status}
    assert call(server, "POST", "/_sim/faults", rule)[0] == 201
    store.note_evicted(first)
    with pytest.raises(error) as info:
        store.reserve(_record(2))
    assert message in str(info.value)
    assert server.find(*STATE) == written
    # The settlement is still pending, and written once the API takes writes again.
    assert [r.outcome for r in store.records()] == ["evicted"]
    call(server, "DELETE", "/_sim/faults")
    store.flush()
    assert [r.outcome for r in _stored(server)] == ["evicted"]
