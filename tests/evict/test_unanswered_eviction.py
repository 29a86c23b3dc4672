"""Evictions whose answer never came, on the simulated API through the official client.

Covers: a connection dropped before the API server handled the Eviction (the
sim's `drop` fault closes it before any handler runs) leaves the reservation
counted in that round and the next one while it is younger than settle_after;
once older, the next round finds the pod still there with its UID and releases
the reservation (budgets.released in the audit record, "released" in the
ConfigMap), so the window of N ends with N real evictions, not N - 1. An
Eviction the API server did carry out while the client had already given up
(a reply slower than the client's timeout) stays counted: settled as evicted
(budgets.assumedEvicted), and the window still ends at N.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

import kubernetes.client
import pytest

from loadaware import evict, policy, report, sim
from loadaware import round as rounds
from loadaware.evict import _history
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import call, sim_server
from tests.lib.wait import poll

WINDOW = 3  # the small scenario plans 4 moves: the window is what limits them


@pytest.fixture
def server():
    with sim_server("small", ready_delay=5.0) as running:
        yield running


def _policy() -> policy.LoadAwarePolicy:
    return metrics_server_policy(
        limits={"window": {"duration": "1h", "maxEvictions": WINDOW}},
        verify={"timeout": "60s"},
    )


def _round(
    settings: policy.LoadAwarePolicy, context: rounds.RoundContext, **options: Any
) -> dict[str, Any]:
    return report.round_to_json(
        rounds.run_round(settings, context, rounds.RoundOptions(**options)).record
    )


def _pod(server: sim.SimServer, key: str) -> dict[str, Any] | None:
    namespace, name = key.split("/")
    return server.find("pods", namespace, name)


def _records(server: sim.SimServer) -> list[dict[str, Any]]:
    state = server.find("configmaps", "loadaware", "loadaware-state")
    if not state:
        return []
    history = _history.History(evict.EvictionRecord).decode(state["data"]["evictions.json"])
    return [dataclasses.asdict(r) for r in history]


def _outcome(server: sim.SimServer, audit: dict[str, Any], pod: str) -> str:
    """What the ConfigMap says of the reservation this round made for this pod."""
    (record,) = [r for r in _records(server) if r["round"] == audit["round"] and r["pod"] == pod]
    return str(record["outcome"])


def _evicted(audits: list[dict[str, Any]]) -> list[str]:
    return [e["pod"] for a in audits for e in a["evictions"] if e["result"] == "evicted"]


def _first_planned(settings: policy.LoadAwarePolicy, context: rounds.RoundContext) -> str:
    planned = _round(settings, context, dry_run=True)["evictions"]
    assert len(planned) == WINDOW, planned
    return planned[0]["pod"]


def test_a_dropped_eviction_is_released_once_it_must_have_been_decided(
    server: sim.SimServer, tmp_path: pathlib.Path
) -> None:
    settings = _policy()
    context = live_context(server, tmp_path, settings)
    dropped = _first_planned(settings, context)
    uid = _pod(server, dropped)["metadata"]["uid"]  # type: ignore[index]
    namespace, name = dropped.split("/")
    call(
        server,
        "POST",
        "/_sim/faults",
        {"path": f"/namespaces/{namespace}/pods/{name}/eviction", "drop": True, "times": 1},
    )

    first = _round(settings, context)
    assert first["evictions"][0]["result"] == "failed"
    assert first["exitCode"] == 1
    # The API server never handled it: the pod is there, same UID, not terminating.
    live = _pod(server, dropped)
    assert live is not None
    assert live["metadata"]["uid"] == uid
    assert not live["metadata"].get("deletionTimestamp")
    assert [(r["pod"], r["outcome"]) for r in _records(server)] == [(dropped, "reserved")]

    # Too young to settle: the Eviction might still be decided, so it keeps counting
    # (its workload cooling too) and this round gets what is left of the window.
    early = _round(settings, context)
    assert early["budgets"]["released"] == []
    assert early["budgets"]["windowLeft"] == WINDOW - 1
    assert len(_evicted([early])) == WINDOW - 1
    assert _outcome(server, first, dropped) == "reserved"

    store = evict.StateStore(context.kube, settings, context.clock)
    server.advance(store.settle_after.total_seconds() + 1)
    later = _round(settings, context)
    (released,) = later["budgets"]["released"]
    assert released["pod"] == dropped
    assert released["uid"] == uid
    assert released["round"] == first["round"]
    assert released["reservedAt"] == next(
        r["at"] for r in _records(server) if r["round"] == first["round"]
    )
    assert later["budgets"]["assumedEvicted"] == []
    assert _outcome(server, first, dropped) == "released"
    # The window is used by real evictions only: all N of them, not N - 1.
    assert later["budgets"]["windowLeft"] == 1
    evicted = _evicted([first, early, later])
    assert len(evicted) == WINDOW, evicted
    counted = [r for r in _records(server) if r["outcome"] in ("reserved", "evicted")]
    assert sorted(r["pod"] for r in counted) == sorted(evicted)


def test_an_eviction_carried_out_after_the_client_gave_up_stays_counted(
    server: sim.SimServer, tmp_path: pathlib.Path
) -> None:
    settings = _policy()
    base = live_context(server, tmp_path, settings)
    # A client that gives up after 1s; the API server answers after 2s, and carries
    # the Eviction out all the same, as kube-apiserver does with a request it received.
    client: kubernetes.client.ApiClient = base.kube._core.api_client  # type: ignore[attr-defined]
    kube = evict.Kube(client, timeout_seconds=1.0)
    context = rounds.RoundContext(**{**base.__dict__, "kube": kube})
    slow = _first_planned(settings, context)
    uid = _pod(server, slow)["metadata"]["uid"]  # type: ignore[index]
    namespace, name = slow.split("/")
    call(
        server,
        "POST",
        "/_sim/faults",
        {"path": f"/namespaces/{namespace}/pods/{name}/eviction", "latency": 2.0, "times": 1},
    )

    first = _round(settings, context)
    assert first["evictions"][0]["result"] == "failed"
    poll(
        lambda: ((_pod(server, slow) or {}).get("metadata") or {}).get("deletionTimestamp"),
        "the API server to carry the eviction out",
        15,
    )
    assert [(r["pod"], r["outcome"]) for r in _records(server)] == [(slow, "reserved")]

    store = evict.StateStore(kube, settings, context.clock)
    server.advance(store.settle_after.total_seconds() + 1)
    # Past its grace period the pod is gone (a StatefulSet's is back under a new UID).
    assert (_pod(server, slow) or {"metadata": {}})["metadata"].get("uid") != uid
    second = _round(settings, context)
    (kept,) = second["budgets"]["assumedEvicted"]
    assert kept["pod"] == slow
    assert kept["uid"] == uid
    assert kept["why"] in ("pod gone", "pod replaced (new UID)")
    assert second["budgets"]["released"] == []
    assert _outcome(server, first, slow) == "evicted"
    # The one carried out unanswered and the real ones: the window, not one more.
    assert second["budgets"]["windowLeft"] == WINDOW - 1
    assert len(_evicted([first, second])) == WINDOW - 1
    counted = [r for r in _records(server) if r["outcome"] in ("reserved", "evicted")]
    assert len(counted) == WINDOW
