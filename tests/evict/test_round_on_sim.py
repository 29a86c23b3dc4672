"""A live round end to end on the simulated Kubernetes API, through the official
client: read, plan, evict, verify, report.

Covers: hot nodes relieved with replacements Ready elsewhere (and Events
posted); dry-run evicts nothing; a PodDisruptionBudget at 0 gives 429s that
are counted, nothing evicted and the round partial; window budgets held
across consecutive rounds and across concurrent rounds; cooldown keeps a
moved workload from moving again; metrics going away mid-round stops evicting
(partial, exit 3); API 500s mid-round stop the round (partial, exit 1) with
the uncertain eviction still counted; a replacement that stays Pending opens
the breaker, the round ends partial (exit 1) with what it carried out of its
plan, and the next round refuses; the same round started by `serve` shows as
partial, with its counts, on /status and in loadaware_rounds_total. Steering
is covered in test_steering_on_sim.
"""

from __future__ import annotations

import http.client as http_client
import json
import threading
from typing import Any

import kubernetes.client
import pytest
from prometheus_client import REGISTRY

from loadaware import evict, report, runtime
from loadaware import round as rounds
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import call, sim_server


@pytest.fixture
def server():
    # Replacements become Ready 5 simulated seconds after they are bound.
    with sim_server("small", ready_delay=5.0) as running:
        yield running


def _uids(server) -> dict[str, str]:
    return {
        f"{p['metadata']['namespace']}/{p['metadata']['name']}": p["metadata"]["uid"]
        for p in server.list("pods")
    }


def _round(server, tmp_path, policy=None, **options: Any):
    policy = policy or metrics_server_policy()
    context = live_context(server, tmp_path, policy)
    return rounds.run_round(policy, context, rounds.RoundOptions(**options)).record


def test_hot_nodes_are_relieved_with_replacements_ready_elsewhere(server, tmp_path) -> None:
    before = _uids(server)
    record = _round(server, tmp_path)
    audit = report.round_to_json(record)
    assert record.exit_code == 0
    assert audit["status"] == "executed"
    evicted = [e for e in audit["evictions"] if e["result"] == "evicted"]
    assert evicted
    # Evicted pods terminate for their grace period (30s) after the round ends.
    server.advance(60)
    after = _uids(server)
    for e in evicted:
        # The evicted pod is gone (or, for a StatefulSet, back under a new UID).
        assert after.get(e["pod"]) != before[e["pod"]]
    hot = {n["name"] for n in audit["plan"]["nodes"] if n["class"] == "hot"}
    replacements = audit["verification"]["replacements"]
    assert len(replacements) == len(evicted)
    for r in replacements:
        assert r["ready"] is True
        assert r["node"] not in hot
        assert r["landing"] in ("expected", "cool")
    # The round waited for samples covering only the time after its moves
    # (test_relief_on_sim has the details).
    assert audit["verification"]["verdict"] == "relieved"
    for relief in audit["verification"]["relief"]:
        assert relief["observed"]["cpu"] <= relief["before"]["cpu"]
    events = [e for e in server.list("events") if e.get("reason") == "LoadawareEvicted"]
    assert {
        f"{e['involvedObject']['namespace']}/{e['involvedObject']['name']}" for e in events
    } == {e["pod"] for e in evicted}
    # A second round, once metrics-server's samples cover only the time after the
    # evictions, finds nothing hot.
    again = report.round_to_json(_round(server, tmp_path))
    assert again["status"] == "noop"


def test_dry_run_evicts_nothing(server, tmp_path) -> None:
    before = _uids(server)
    audit = report.round_to_json(_round(server, tmp_path, dry_run=True))
    assert audit["evictions"]
    assert {e["result"] for e in audit["evictions"]} == {"dry-run"}
    assert _uids(server) == before
    # A dry run uses no budget: no eviction history is written.
    assert server.list("configmaps", "loadaware") == []


def test_pdb_at_zero_refuses_every_eviction_and_is_counted(server, tmp_path) -> None:
    policy = metrics_server_policy()
    context = live_context(server, tmp_path, policy)
    core = kubernetes.client.CoreV1Api(context.kube._core.api_client)
    policy_api = kubernetes.client.PolicyV1Api(core.api_client)
    read = context.read_cluster

    def read_then_protect():
        snapshot = read()
        # After the plan was made, every namespace gets one PDB (several would make the
        # API answer 500) covering all its pods, none of which may go.
        for namespace in {p.namespace for p in snapshot.pods}:
            for pdb in server.list("poddisruptionbudgets", namespace, group="policy"):
                policy_api.delete_namespaced_pod_disruption_budget(
                    pdb["metadata"]["name"], namespace, _preload_content=False
                )
            policy_api.create_namespaced_pod_disruption_budget(
                namespace,
                {
                    "apiVersion": "policy/v1",
                    "kind": "PodDisruptionBudget",
                    "metadata": {"name": "freeze"},
                    "spec": {"maxUnavailable": 0, "selector": {}},
                },
                _preload_content=False,
            )
        server.reconcile()
        return snapshot

    before = _uids(server)
    record = rounds.run_round(
        policy, rounds.RoundContext(**{**context.__dict__, "read_cluster": read_then_protect})
    ).record
    audit = report.round_to_json(record)
    assert audit["evictions"]
    assert {e["result"] for e in audit["evictions"]} == {"refused-pdb"}
    assert _uids(server) == before
    # Nothing it planned was done: the hot nodes stay hot, and the round says so.
    assert audit["status"] == "partial"
    assert record.exit_code == 1
    assert audit["completion"]["hotNodes"]["relieved"] == 0
    assert "refused by PDBs" in audit["reason"]
    # Refused evictions do not use up budgets.
    records = evict.StateStore(context.kube, policy, context.clock).records()
    assert {r.outcome for r in records} == {"refused"}


def _window_policy(max_evictions: int):
    return metrics_server_policy(
        limits={"window": {"duration": "1h", "maxEvictions": max_evictions}}
    )


def test_window_budget_holds_across_consecutive_rounds(server, tmp_path) -> None:
    policy = _window_policy(2)
    first = report.round_to_json(_round(server, tmp_path, policy))
    second = report.round_to_json(_round(server, tmp_path, policy))
    evicted = [
        e for audit in (first, second) for e in audit["evictions"] if e["result"] == "evicted"
    ]
    assert len(evicted) == 2
    assert second["budgets"]["windowLeft"] == 0


def test_window_budget_holds_across_concurrent_rounds(server, tmp_path) -> None:
    policy = _window_policy(1)
    audits: list[dict[str, Any]] = []
    contexts = []
    for index in range(3):
        directory = tmp_path / str(index)
        directory.mkdir()
        contexts.append(live_context(server, directory, policy))

    def one(index: int) -> None:
        audits.append(report.round_to_json(rounds.run_round(policy, contexts[index]).record))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    evicted = [e for audit in audits for e in audit["evictions"] if e["result"] == "evicted"]
    assert len(audits) == 3
    assert len(evicted) <= 1


def test_cooldown_keeps_a_moved_workload_from_moving_again(server, tmp_path) -> None:
    policy = metrics_server_policy(limits={"maxNoOfPodsToEvictPerNode": 1, "cooldown": "30m"})
    first = report.round_to_json(_round(server, tmp_path, policy))
    moved = {e["workload"] for e in first["evictions"] if e["result"] == "evicted"}
    assert moved
    second = report.round_to_json(_round(server, tmp_path, policy))
    again = {e["workload"] for e in second["evictions"]}
    assert not (moved & again)
    # The store itself refuses a reservation for a cooling workload from another round.
    context = live_context(server, tmp_path, policy)
    store = evict.StateStore(context.kube, policy, context.clock)
    workload = sorted(moved)[0]
    with pytest.raises(evict.BudgetExhaustedError) as info:
        store.reserve(
            evict.EvictionRecord(
                at=evict.rfc3339(context.clock()),
                round="later",
                pod="x/y",
                uid="u",
                namespace=workload.split("/")[1],
                workload=workload,
                node="n",
            )
        )
    assert info.value.budget == "cooldown"


def test_metrics_going_away_mid_round_stops_evicting(server, tmp_path) -> None:
    policy = metrics_server_policy()
    context = live_context(server, tmp_path, policy)
    reads = {"count": 0}
    read_usage = context.read_usage

    def failing_after_first_eviction(state):
        reads["count"] += 1
        if reads["count"] == 3:  # plan, re-check before the 1st eviction, then before the 2nd
            call(server, "POST", "/_sim/faults", {"path": "/apis/metrics.k8s.io", "status": 500})
        return read_usage(state)

    record = rounds.run_round(
        policy,
        rounds.RoundContext(**{**context.__dict__, "read_usage": failing_after_first_eviction}),
    ).record
    audit = report.round_to_json(record)
    results = [e["result"] for e in audit["evictions"]]
    assert results[0] == "evicted"
    assert set(results[1:]) == {"skipped"}
    # Partial, with the exit code of the fail-closed refusal that stopped it.
    assert record.exit_code == 3
    assert audit["status"] == "partial"
    assert audit["verification"]["stopped"].startswith("metrics-query-failed")
    assert audit["completion"]["stopped"] == audit["verification"]["stopped"]


def test_api_errors_mid_round_stop_it_and_keep_the_reservation(server, tmp_path) -> None:
    planned = report.round_to_json(_round(server, tmp_path, dry_run=True))
    second = planned["evictions"][1]["pod"]
    namespace, name = second.split("/")
    call(
        server,
        "POST",
        "/_sim/faults",
        {"path": f"/namespaces/{namespace}/pods/{name}/eviction", "status": 500},
    )
    record = _round(server, tmp_path)
    audit = report.round_to_json(record)
    results = [e["result"] for e in audit["evictions"]]
    assert results[:2] == ["evicted", "failed"]
    assert set(results[2:]) <= {"skipped"}
    assert record.exit_code == 1
    assert audit["status"] == "partial"
    assert audit["completion"]["stopped"].startswith(f"eviction of {second} failed")
    context = live_context(server, tmp_path, metrics_server_policy())
    outcomes = {
        r.pod: r.outcome
        for r in evict.StateStore(context.kube, metrics_server_policy(), context.clock).records()
    }
    # Whether the failed eviction happened is unknown: it stays counted.
    assert outcomes[second] == "reserved"


def test_replacement_stuck_pending_opens_the_breaker(server, tmp_path) -> None:
    policy = metrics_server_policy(verify={"timeout": "60s", "breakerCooldown": "30m"})
    context = live_context(server, tmp_path, policy)
    core = kubernetes.client.CoreV1Api(context.kube._core.api_client)
    read = context.read_cluster

    def read_then_cordon():
        snapshot = read()
        for node in snapshot.nodes:  # nowhere left to schedule a replacement
            core.patch_node(node.name, {"spec": {"unschedulable": True}}, _preload_content=False)
        return snapshot

    record = rounds.run_round(
        policy, rounds.RoundContext(**{**context.__dict__, "read_cluster": read_then_cordon})
    ).record
    audit = report.round_to_json(record)
    replacements = audit["verification"]["replacements"]
    assert replacements
    assert replacements[0]["ready"] is False
    assert replacements[0]["landing"] == "pending"
    assert audit["verification"]["breaker"]
    evicted = [e for e in audit["evictions"] if e["result"] == "evicted"]
    # Pacing and the breaker: nothing after the failed verification was evicted.
    assert len(evicted) < len(audit["evictions"])
    # Stopped early: partial, not relieved, and not a success.
    planned = len(audit["plan"]["evictions"])
    completion = audit["completion"]
    assert audit["status"] == "partial"
    assert record.exit_code == 1
    assert completion["stopped"].startswith("breaker opened: ")
    assert completion["evictions"]["planned"] == planned
    assert completion["evictions"]["carriedOut"] == len(evicted)
    assert f"{len(evicted)}/{planned} evictions carried out" in audit["reason"]
    assert audit["verification"]["verdict"].startswith("partial: ")
    assert completion["hotNodes"]["relieved"] < completion["hotNodes"]["planned"]
    nxt = _round(server, tmp_path, policy)
    assert nxt.exit_code == 3
    assert nxt.reason.startswith("breaker-open:")


def test_a_serve_round_the_breaker_stops_shows_partial_on_status(server, tmp_path) -> None:
    policy = metrics_server_policy(verify={"timeout": "60s"})
    context = live_context(server, tmp_path, policy)
    core = kubernetes.client.CoreV1Api(context.kube._core.api_client)
    read = context.read_cluster

    def read_then_cordon():
        snapshot = read()
        for node in snapshot.nodes:
            core.patch_node(node.name, {"spec": {"unschedulable": True}}, _preload_content=False)
        return snapshot

    partial = (
        REGISTRY.get_sample_value(
            "loadaware_rounds_total", {"trigger": "schedule", "result": "partial"}
        )
        or 0
    )
    service = runtime.Service(
        policy,
        rounds.RoundContext(**{**context.__dict__, "read_cluster": read_then_cordon}),
        clock=context.clock,
    )
    with runtime.HttpServer(service, "127.0.0.1:0") as http:
        assert service.try_start_round("schedule") == "started"
        assert service.wait_idle(120)
        connection = http_client.HTTPConnection("127.0.0.1", http.port, timeout=30)
        try:
            connection.request("GET", "/status")
            response = connection.getresponse()
            status = json.loads(response.read())
        finally:
            connection.close()
    assert response.status == 200
    [finished] = status["rounds"]
    assert finished["status"] == "partial"
    assert finished["exitCode"] == 1
    assert finished["evicted"] == 1
    planned = finished["planned"]
    assert planned >= 2
    completion = finished["completion"]
    assert completion["evictions"]["carriedOut"] == 1
    assert completion["evictions"]["planned"] == planned
    assert completion["stopped"].startswith("breaker opened: ")
    hot = completion["hotNodes"]
    counts = f"{hot['relieved']}/{hot['planned']} hot nodes relieved, 1/{planned} evictions"
    assert finished["reason"].startswith(counts)
    assert finished["verdict"].startswith(f"partial: {counts}")
    assert (
        REGISTRY.get_sample_value(
            "loadaware_rounds_total", {"trigger": "schedule", "result": "partial"}
        )
        == partial + 1
    )
