"""The taint footprint of a live round against the simulated API (the "warm-idle"
scenario: 4 hot nodes, cold nodes that request much and use little, warm nodes that
request almost nothing and are steered), with the official client.

Covers: when each eviction is sent only its own steer set carries the taint (those
of earlier moves were taken off once their replacements were bound), never more
nodes than the cap; the gauge loadaware_tainted_nodes follows the count and is 0
after the round; the audit's verification.taintedNodes holds the most and the
median; an eviction whose steer set is over the cap is not sent (taint-cap) and the
others are; no taint is left when the round ends early on a failed eviction.
"""

from __future__ import annotations

import dataclasses
import statistics

import prometheus_client
import pytest

from loadaware import evict, plan, report
from loadaware import round as rounds
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import call, sim_server


@pytest.fixture
def server():
    with sim_server("warm-idle", ready_delay=5.0) as running:
        yield running


def _tainted(server) -> set[str]:
    return {
        n["metadata"]["name"]
        for n in server.list("nodes")
        if any(t["key"] == evict.HOTSPOT_TAINT_KEY for t in n["spec"].get("taints") or [])
    }


def _gauge() -> float | None:
    return prometheus_client.REGISTRY.get_sample_value("loadaware_tainted_nodes")


def test_only_the_current_moves_taints_are_held_and_counted(server, tmp_path) -> None:
    policy = metrics_server_policy()
    context = live_context(server, tmp_path, policy)
    seen: dict[str, set[str]] = {}
    gauge_seen: dict[str, float | None] = {}
    send = context.kube.evict_pod

    def spying(namespace, name, **kwargs):
        seen[f"{namespace}/{name}"] = _tainted(server)
        gauge_seen[f"{namespace}/{name}"] = _gauge()
        return send(namespace, name, **kwargs)

    context.kube.evict_pod = spying  # type: ignore[method-assign]
    record = rounds.run_round(policy, context).record
    audit = report.round_to_json(record)
    assert record.exit_code == 0, audit["reason"]
    sent = {e["pod"]: e for e in audit["evictions"] if e["result"] == "evicted"}
    assert len(sent) == 8
    cap = plan.taint_cap(policy.steering.max_tainted_fraction, len(audit["plan"]["nodes"]))
    counts = []
    for pod, eviction in sent.items():
        # Nothing kept from an earlier move: exactly this move's rivals.
        assert seen[pod] == set(eviction["steer"]), pod
        assert len(seen[pod]) <= cap
        assert gauge_seen[pod] == len(seen[pod])
        counts.append(len(seen[pod]))
    assert max(counts) > 0
    assert audit["verification"]["taintedNodes"] == {
        "max": max(counts),
        "median": statistics.median(counts),
    }
    assert audit["verification"]["taintsLeft"] == []
    assert _tainted(server) == set()
    assert _gauge() == 0


def test_an_eviction_over_the_cap_is_not_sent(server, tmp_path) -> None:
    policy = metrics_server_policy()
    context = live_context(server, tmp_path, policy)
    snapshot = context.read_cluster()
    usage = context.read_usage(snapshot)
    planned = rounds.timed_plan(snapshot, usage, policy, context.clock())
    cap = plan.taint_cap(policy.steering.max_tainted_fraction, len(snapshot.nodes))
    names = sorted(n.name for n in snapshot.nodes)
    *rest, last = planned.evictions
    # The last move, as a plan made with a wider cap would have it: every node but
    # its source and landing steered, more than this round's cap. (Last, so that
    # skipping it changes no landing the plan predicted.)
    wide = tuple(n for n in names if n not in (last.node, last.expected_node))
    assert len(wide) > cap
    planned = dataclasses.replace(planned, evictions=(*rest, dataclasses.replace(last, steer=wide)))
    executor = evict.Executor(
        kube=context.kube,
        state=evict.StateStore(context.kube, policy, context.clock),
        policy=policy,
        clock=context.clock,
        sleep=context.sleep,
        round_id="cap",
        dry_run=False,
    )
    seen: list[int] = []
    send = context.kube.evict_pod

    def spying(namespace, name, **kwargs):
        seen.append(len(_tainted(server)))
        return send(namespace, name, **kwargs)

    context.kube.evict_pod = spying  # type: ignore[method-assign]
    execution = executor.run(planned, snapshot, lambda _eviction: evict.PROCEED)
    outcomes = {o.pod: o for o in execution.outcomes}
    assert outcomes[last.pod].result == "skipped"
    assert outcomes[last.pod].reason.startswith(
        f"taint-cap: {len(wide)} nodes would carry the taint, at most {cap}"
    )
    assert [outcomes[e.pod].result for e in rest] == ["evicted"] * len(rest)
    assert seen
    assert max(seen) <= cap
    assert execution.tainted_most == max(seen)
    # Every node tainted was written at least once, and every removal once.
    assert execution.taint_writes >= len(execution.tainted) + len(execution.untainted) > 0
    assert execution.taints_left == []
    assert _tainted(server) == set()
    assert _gauge() == 0


def test_no_taint_is_left_when_an_eviction_fails(server, tmp_path) -> None:
    policy = metrics_server_policy()
    context = live_context(server, tmp_path, policy)
    call(
        server,
        "POST",
        "/_sim/faults",
        {"path": "/eviction$", "method": "POST", "status": 500},
    )
    record = rounds.run_round(policy, context).record
    audit = report.round_to_json(record)
    failed = [e for e in audit["evictions"] if e["result"] == "failed"]
    assert failed, audit["evictions"]
    assert failed[0]["steer"], "the failed eviction was sent under its taints"
    assert audit["verification"]["taintsLeft"] == []
    assert set(audit["verification"]["taintsRemoved"]) >= set(failed[0]["steer"])
    assert _tainted(server) == set()
    assert _gauge() == 0
