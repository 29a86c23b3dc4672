"""A round interrupted part way has carried out the hottest nodes' moves, on the
simulated Kubernetes API through the official client.

Covers: a round told to stop after k evictions (stop_requested, as lost
leadership or SIGTERM) evicted the plan's first k pods, which are the hottest
hot nodes' moves; its audit record has, for each hot node whose planned
evictions were all carried out, when the last was (its replacement bound), and
none for the other hot nodes.
"""

from __future__ import annotations

import datetime

import pytest

from loadaware import report
from loadaware import round as rounds
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import sim_server

# Evictions carried out before the round is told to stop.
STOP_AFTER = 3


@pytest.fixture
def server():
    with sim_server("peak-hour", ready_delay=2.0) as running:
        yield running


def _excess(node: dict) -> float:
    targets = node.get("targetThresholds") or {}
    return max(node["before"][r] - limit for r, limit in targets.items())


def _hot_ranked(audit: dict) -> list[str]:
    """The plan's hot nodes, the furthest above their targets first."""
    hot = [n for n in audit["plan"]["nodes"] if n["class"] == "hot"]
    return [n["name"] for n in sorted(hot, key=lambda n: (-_excess(n), n["name"]))]


def test_a_round_stopped_after_k_evictions_has_relieved_the_hottest_nodes(server, tmp_path) -> None:
    def evicted_so_far() -> int:
        return sum(1 for e in server.list("events") if e.get("reason") == "LoadawareEvicted")

    def stop_requested() -> str | None:
        return "lost-leadership" if evicted_so_far() >= STOP_AFTER else None

    settings = metrics_server_policy()
    context = live_context(server, tmp_path, settings)
    record = rounds.run_round(
        settings, context, rounds.RoundOptions(stop_requested=stop_requested)
    ).record
    audit = report.round_to_json(record)
    planned = audit["plan"]["evictions"]
    assert len(planned) > STOP_AFTER
    assert audit["status"] == "partial"
    assert audit["completion"]["stopped"] == "lost-leadership"

    evicted = [e["pod"] for e in audit["evictions"] if e["result"] == "evicted"]
    # The plan's first k, in its order: the evictor walks the plan as it is.
    assert evicted == [e["pod"] for e in planned[:STOP_AFTER]]
    sources = list(dict.fromkeys(e["node"] for e in planned))
    ranked = _hot_ranked(audit)
    assert sources == [name for name in ranked if name in sources]

    nodes = {n["node"]: n for n in audit["completion"]["nodes"]}
    done = [name for name in sources if nodes[name]["carriedOutAt"] is not None]
    # The hottest nodes' moves were carried out, and only theirs.
    assert done
    assert done == sources[: len(done)]
    moves = {name: [e["pod"] for e in planned if e["node"] == name] for name in sources}
    last = planned[STOP_AFTER - 1]["node"]
    for name in sources:
        all_done = all(pod in evicted for pod in moves[name])
        if name == last and all_done:
            # Its last replacement may bind after the stop ended the wait for it:
            # then when is not known.
            continue
        assert (nodes[name]["carriedOutAt"] is not None) == all_done, name
    started = datetime.datetime.fromisoformat(audit["startedAt"])
    finished = datetime.datetime.fromisoformat(audit["finishedAt"])
    sent = {e["pod"]: datetime.datetime.fromisoformat(e["at"]) for e in audit["evictions"]}
    for name in done:
        at = datetime.datetime.fromisoformat(nodes[name]["carriedOutAt"])
        # After its last eviction was sent (its replacement bound then), within the round.
        assert started <= max(sent[pod] for pod in moves[name]) <= at <= finished
    for name in set(ranked) - set(done):
        assert nodes.get(name, {}).get("carriedOutAt") is None
