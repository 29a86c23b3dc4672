"""Soft-taint steering in a live round against the simulated API (the "warm-idle"
scenario: 4 hot nodes, 8 cold nodes that request much and use little, 4 warm
nodes that request almost nothing — kube-scheduler's requests-based choice).

Covers: each eviction is sent while exactly its `steer` nodes carry the taint,
and the replacement lands on the planned (cold) node; the warm nodes stay under
their targets; no taint outlives the round and the audit lists what was applied
and removed; without steering nothing can move and the notes say why; a
forbidden taint patch refuses the round (steering-forbidden, exit 3) before any
eviction; a taint a killed round left is removed at the next start.
"""

from __future__ import annotations

import pytest

from loadaware import evict, report
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


def _uids(server) -> dict[str, str]:
    return {
        f"{p['metadata']['namespace']}/{p['metadata']['name']}": p["metadata"]["uid"]
        for p in server.list("pods")
    }


def test_replacements_land_where_planned_under_each_evictions_taints(server, tmp_path) -> None:
    policy = metrics_server_policy()
    context = live_context(server, tmp_path, policy)
    seen: dict[str, set[str]] = {}
    send = context.kube.evict_pod

    def spying(namespace, name, **kwargs):
        seen[f"{namespace}/{name}"] = _tainted(server)
        return send(namespace, name, **kwargs)

    context.kube.evict_pod = spying  # type: ignore[method-assign]
    record = rounds.run_round(policy, context).record
    audit = report.round_to_json(record)
    assert record.exit_code == 0, audit["reason"]
    planned = {e["pod"]: e for e in audit["plan"]["evictions"]}
    classes = {n["name"]: n["class"] for n in audit["plan"]["nodes"]}
    evicted = [e for e in audit["evictions"] if e["result"] == "evicted"]
    assert len(evicted) == len(planned) == 8
    assert any(e["steer"] for e in planned.values())
    # Each move's landing and steer set are derived again just before its eviction,
    # from the cluster as observed then: what the evictor records.
    sent = {e["pod"]: e for e in evicted}
    for pod in planned:
        assert seen[pod] == set(sent[pod]["steer"]), pod
        assert sent[pod]["landingSet"] == [sent[pod]["expectedNode"]]
        assert classes[sent[pod]["expectedNode"]] == "cold"
    replacements = audit["verification"]["replacements"]
    assert [r["landing"] for r in replacements] == ["expected"] * 8
    assert {r["pod"]: r["node"] for r in replacements} == {
        pod: e["expectedNode"] for pod, e in sent.items()
    }
    assert audit["verification"]["landingsOffPlan"] == 0
    assert audit["verification"]["breaker"] is None
    applied = set(audit["verification"]["taintsApplied"])
    assert applied == set().union(*(set(e["steer"]) for e in sent.values()))
    assert set(audit["verification"]["taintsRemoved"]) >= applied
    assert audit["verification"]["taintsLeft"] == []
    assert _tainted(server) == set()
    # The warm nodes took nothing; every hot node was relieved.
    warm = {n for n, c in classes.items() if c == "normal"}
    assert warm
    assert not {r["node"] for r in replacements} & warm
    for node in audit["plan"]["nodes"]:
        if node["class"] in ("hot", "normal"):
            assert node["after"]["cpu"] <= 0.70, node


def test_without_steering_nothing_moves_and_the_notes_name_the_landings(server, tmp_path) -> None:
    policy = metrics_server_policy(steering={"softTaint": False})
    before = _uids(server)
    record = rounds.run_round(policy, live_context(server, tmp_path, policy)).record
    audit = report.round_to_json(record)
    assert audit["plan"]["status"] == "noop"
    assert audit["plan"]["skipped"]["target-over-threshold"] > 0
    assert audit["plan"]["steeringWouldRelieve"] == 4
    assert audit["plan"]["reason"].endswith("steering (steering.softTaint) would relieve 4 more")
    hot_notes = [n["note"] for n in audit["plan"]["nodes"] if n["class"] == "hot"]
    assert len(hot_notes) == 4
    assert all("would land badly" in note for note in hot_notes), hot_notes
    assert _uids(server) == before


def test_forbidden_taint_patch_refuses_before_any_eviction(server, tmp_path) -> None:
    policy = metrics_server_policy()
    context = live_context(server, tmp_path, policy)
    before = _uids(server)
    call(
        server, "POST", "/_sim/faults", {"path": "/api/v1/nodes/", "method": "PATCH", "status": 403}
    )
    record = rounds.run_round(policy, context).record
    assert record.exit_code == 3
    assert record.reason.startswith("steering-forbidden: ")
    assert "patch on nodes" in record.reason
    assert _uids(server) == before
    assert _tainted(server) == set()


def test_a_taint_left_by_a_killed_round_is_removed_at_the_next_start(server, tmp_path) -> None:
    policy = metrics_server_policy()
    context = live_context(server, tmp_path, policy)
    evict.add_hotspot_taint(context.kube, "default-a-002")  # as a killed round leaves it
    record = rounds.run_round(policy, context).record
    audit = report.round_to_json(record)
    assert audit["verification"]["leftoverTaintsRemoved"] == ["default-a-002"]
    assert record.exit_code == 0
    assert _tainted(server) == set()
