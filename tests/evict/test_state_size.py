"""The state ConfigMap's size, on the simulated API through the official client
(StateStore alone, no round).

The budgets refuse exactly the same reservations whether the history was written
in the format before (a JSON list of objects: an upgrade in the middle of a
window), in the compact one, or folded. A history at the state's limit still
takes a reservation: the records no budget needs go first, then settled
evictions are folded, and the window and cooldown count as before. A reservation
that cannot fit even so is refused with the limit named, and nothing is written.
"""

from __future__ import annotations

import datetime
import json
import pathlib
from typing import Any

import pytest

from loadaware import evict, kube, sim
from loadaware.evict import _history, _state
from tests.evict import history_records
from tests.lib.live import metrics_server_policy
from tests.lib.sim import NOW, call, sim_server

MINUTE = datetime.timedelta(minutes=1)
STATE = ("configmaps", "loadaware", "loadaware-state")


@pytest.fixture
def server():
    with sim_server("small") as running:
        status, body = call(
            running, "POST", "/api/v1/namespaces", {"metadata": {"name": "loadaware"}}
        )
        assert status == 201, body
        yield running


def _kube(server: sim.SimServer, tmp_path: pathlib.Path) -> evict.Kube:
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    return evict.Kube(kube.api_client(kube.ClientSettings(kubeconfig=str(kubeconfig))))


def _write_history(kube_: evict.Kube, text: str) -> None:
    kube_.create_config_map(
        "loadaware",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "loadaware-state", "namespace": "loadaware"},
            "data": {"evictions.json": text},
        },
    )


def _data_size(server: sim.SimServer) -> int:
    data = server.find(*STATE)["data"]
    return sum(len(k.encode()) + len(v.encode()) for k, v in data.items())


def _stored(server: sim.SimServer) -> tuple[evict.EvictionRecord, ...]:
    text = server.find(*STATE)["data"]["evictions.json"]
    return _history.History(evict.EvictionRecord).decode(text)


def _record(
    pod: str, workload: str, *, round_id: str = "now", at: datetime.datetime = NOW, **fields: Any
) -> evict.EvictionRecord:
    namespace, _, name = pod.partition("/")
    return evict.EvictionRecord(
        at=evict.rfc3339(at),
        round=round_id,
        pod=pod,
        uid=f"uid-{name}",
        namespace=namespace,
        workload=f"Deployment/{namespace}/{workload}",
        node="node-1",
        **fields,
    )


# -- budgets across the formats ---------------------------------------------------------

BUDGETS = metrics_server_policy(
    limits={
        "cooldown": "30m",
        "window": {"duration": "1h", "maxEvictions": 6, "maxEvictionsPerNamespace": 3},
    }
)
EARLIER = [
    _record("shop/web-a", "web", round_id="earlier", at=NOW - 50 * MINUTE, outcome="evicted"),
    _record("shop/api-b", "api", round_id="earlier", at=NOW - 10 * MINUTE, outcome="evicted"),
    _record("data/etl-c", "etl", round_id="earlier", at=NOW - 5 * MINUTE),  # reserved
    _record("data/etl-d", "etl", round_id="earlier", at=NOW - 5 * MINUTE, outcome="refused"),
    _record("data/old-e", "old", round_id="earlier", at=NOW - 70 * MINUTE, outcome="evicted"),
]
# What each reservation of this round meets, as the budgets have always answered.
ATTEMPTS = [
    (_record("shop/api-x", "api"), "cooldown"),  # api cools down until NOW + 20m
    (_record("shop/web-y", "web"), "reserved"),  # web's eviction is 50m old; shop: 3
    (_record("shop/cart-z", "cart"), "window.maxEvictionsPerNamespace"),
    (_record("data/etl-w", "etl"), "cooldown"),  # a reservation counts
    (_record("data/db-v", "db"), "reserved"),  # 5 in the window
    (_record("data/db-u", "db"), "reserved"),  # its own round's evictions do not cool it
    (_record("other/x-t", "x"), "window.maxEvictions"),
]


def _folded(records: list[evict.EvictionRecord]) -> list[evict.EvictionRecord]:
    settled = {i for i, r in enumerate(records) if r.outcome == "evicted"}
    return _history.fold(records, settled, forget_workload_before=NOW - 31 * MINUTE)


@pytest.mark.parametrize(
    "text",
    [
        history_records.old_format(EARLIER),
        _history.History(evict.EvictionRecord).encode(EARLIER),
        _history.History(evict.EvictionRecord).encode(_folded(EARLIER)),
    ],
    ids=["format-before", "compact", "folded"],
)
def test_budgets_refuse_exactly_as_before_whatever_the_history_s_form(
    server, tmp_path, text: str
) -> None:
    kube_ = _kube(server, tmp_path)
    _write_history(kube_, text)
    store = evict.StateStore(kube_, BUDGETS, lambda: NOW)
    carried = store.carried_budget()
    assert carried.cooling_workloads == {"Deployment/shop/api", "Deployment/data/etl"}
    assert carried.window_total_left == 3
    assert carried.window_namespace_left == {"shop": 1, "data": 2}
    answers = []
    for record, _expected in ATTEMPTS:
        try:
            store.reserve(record)
            answers.append("reserved")
        except evict.BudgetExhaustedError as exc:
            answers.append(exc.budget)
    assert answers == [expected for _record, expected in ATTEMPTS]
    # Written in the compact form, and read back by another store to the same budgets.
    assert json.loads(server.find(*STATE)["data"]["evictions.json"])["format"] == 2
    again = evict.StateStore(kube_, BUDGETS, lambda: NOW).carried_budget()
    assert again.window_total_left == 0
    assert again.window_namespace_left == {"shop": 0, "data": 0}
    assert again.cooling_workloads == {
        f"Deployment/{w}" for w in ("shop/api", "data/etl", "shop/web", "data/db")
    }


def test_an_upgrade_mid_window_settles_and_prunes_what_the_format_before_holds(
    server, tmp_path
) -> None:
    kube_ = _kube(server, tmp_path)
    _write_history(kube_, history_records.old_format(EARLIER))
    store = evict.StateStore(kube_, BUDGETS, lambda: NOW)
    assert store.records() == tuple(EARLIER)
    store.settle(EARLIER[2], "evicted")
    assert [(r.pod, r.outcome) for r in _stored(server)] == [
        (r.pod, "evicted" if r is EARLIER[2] else r.outcome) for r in EARLIER[:4]
    ]  # data/old-e, past every budget, pruned


# -- the bound --------------------------------------------------------------------------


def _room(limit: int) -> int:
    """What the history may take of a state whose breaker is closed."""
    return limit - len("evictions.json") - len("breaker.json") - len("{}")


def _filling(records: list[evict.EvictionRecord], room: int) -> list[evict.EvictionRecord]:
    """The longest start of records whose text fits room."""
    low, high = 0, len(records)
    while low < high:
        middle = (low + high + 1) // 2
        if len(_history.History(evict.EvictionRecord).encode(records[:middle])) <= room:
            low = middle
        else:
            high = middle - 1
    assert low < len(records), "not enough records to fill the room"
    return records[:low]


def _used(carried: Any) -> dict[str, int]:
    return {ns: 10_000 - left for ns, left in carried.window_namespace_left.items()}


WIDE = metrics_server_policy(
    limits={
        "cooldown": "30m",
        "window": {"duration": "1h", "maxEvictions": 100_000, "maxEvictionsPerNamespace": 10_000},
    }
)


def test_a_history_at_the_state_limit_still_takes_a_reservation(server, tmp_path) -> None:
    kube_ = _kube(server, tmp_path)
    # Settled evictions of the last 55 minutes, as many as the limit holds.
    records = history_records.round_evictions(12_000, start=NOW - 55 * MINUTE, span=54 * MINUTE)
    full = _filling(records, _room(_state.STATE_DATA_LIMIT))
    assert len(full) > 9_000
    _write_history(kube_, _history.History(evict.EvictionRecord).encode(full))
    store = evict.StateStore(kube_, WIDE, lambda: NOW)
    before = store.carried_budget()
    assert before.window_total_left == 100_000 - len(full)

    new = _record("team-media/web-y", "web")
    room = _room(_state.STATE_DATA_LIMIT)
    assert len(_history.History(evict.EvictionRecord).encode([*full, new])) > room
    store.reserve(new)
    assert _data_size(server) <= _state.STATE_DATA_LIMIT
    # Room made for the next evictions too: an eighth of the limit.
    assert _data_size(server) < _state.STATE_DATA_LIMIT * 7 / 8 + 100
    stored = _stored(server)
    assert sum(r.count for r in stored) == len(full) + 1
    folded = [r for r in stored if r.count > 1 or not r.pod]
    assert folded, "settled evictions were folded"
    # Every budget counts as before, the new reservation added.
    after = evict.StateStore(kube_, WIDE, lambda: NOW).carried_budget()
    assert after.window_total_left == before.window_total_left - 1
    expected = _used(before)
    expected["team-media"] = expected.get("team-media", 0) + 1
    assert _used(after) == expected
    assert after.cooling_workloads == before.cooling_workloads | {new.workload}
    # The reservation itself is whole, and settles.
    store.settle(new, "evicted")
    assert [r.outcome for r in _stored(server) if r.pod == new.pod] == ["evicted"]
    # The next reservations write without folding again.
    count = len(_stored(server))
    store.reserve(_record("team-media/web-z", "web"))
    assert len(_stored(server)) == count + 1
    # And the breaker is kept beside it.
    store.open_breaker(NOW + 30 * MINUTE, "replacement landed on a hot node")
    assert evict.StateStore(kube_, WIDE, lambda: NOW).breaker().is_open(NOW)
    assert _data_size(server) <= _state.STATE_DATA_LIMIT


def test_records_no_budget_needs_go_first(server, tmp_path) -> None:
    kube_ = _kube(server, tmp_path)
    limit = 60_000
    store = evict.StateStore(kube_, WIDE, lambda: NOW, data_limit=limit)
    counting = history_records.round_evictions(150, start=NOW - 40 * MINUTE, span=30 * MINUTE)
    refused = history_records.round_evictions(
        1000, start=NOW - 50 * MINUTE, span=45 * MINUTE, seed=2, outcome="refused"
    )
    young = _record("team-batch/etl-q", "etl", at=NOW - MINUTE, outcome="failed")
    records = sorted([*counting, *refused], key=lambda r: r.time)
    full = [*_filling(records, _room(limit) - 60), young]
    new = _record("team-media/web-y", "web")
    assert len(_history.History(evict.EvictionRecord).encode([*full, new])) > _room(limit)
    _write_history(kube_, _history.History(evict.EvictionRecord).encode(full))
    store.reserve(new)
    stored = _stored(server)
    assert _data_size(server) <= limit
    # Not past settle_after, the failed one stays; every counting record stays whole.
    assert [r.pod for r in stored if r.outcome not in ("evicted", "reserved")] == [young.pod]
    assert {r.pod for r in stored if r.outcome == "evicted"} == {
        r.pod for r in full if r.outcome == "evicted"
    }
    assert all(r.count == 1 for r in stored)


def test_a_reservation_that_cannot_fit_is_refused_naming_the_limit(server, tmp_path) -> None:
    kube_ = _kube(server, tmp_path)
    # Reservations still unanswered: settle_pending needs each whole, none can be folded.
    full = history_records.round_evictions(
        200, start=NOW - 5 * MINUTE, span=4 * MINUTE, outcome="reserved"
    )
    text = _history.History(evict.EvictionRecord).encode(full)
    _write_history(kube_, text)
    written = server.find(*STATE)
    # Room for what is there, not for one more.
    limit = len(text) + _state.STATE_DATA_LIMIT - _room(_state.STATE_DATA_LIMIT) + 10
    store = evict.StateStore(kube_, WIDE, lambda: NOW, data_limit=limit)
    with pytest.raises(evict.BudgetExhaustedError) as info:
        store.reserve(_record("team-media/web-y", "web"))
    assert info.value.budget == "state.size"
    message = str(info.value)
    assert "configmap loadaware/loadaware-state" in message
    assert f"state's limit of {limit}" in message
    assert "1048576" in message
    assert server.find(*STATE) == written  # nothing written
    # The store reads afresh afterwards: its view is what the API server holds.
    assert store.records() == _history.History(evict.EvictionRecord).decode(
        written["data"]["evictions.json"]
    )
