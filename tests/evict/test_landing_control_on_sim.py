"""Landing control in a live round on a cluster kube-scheduler samples.

A generated 150-node cluster whose usage is independent of requests, served by
the simulated API with its scheduler's default node sampling (from 100 nodes it
scores only the feasible nodes its walk finds first). Covers: every planned
eviction is carried out (or skipped because its source was relieved already),
each sent with a landing set of several good nodes, and every replacement lands
in its set or on another good node: no bad landing, nothing Pending, the
breaker closed, no taint left. With percentageOfNodesToScore 100 on both sides
the set is the expected node alone and the replacement lands there.
"""

from __future__ import annotations

import contextlib

import pytest

from loadaware import report, sim
from loadaware import round as rounds
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import NOW, sim_server

pytestmark = pytest.mark.slow


def _server(percentage: int) -> contextlib.AbstractContextManager[sim.SimServer]:
    generated = sim.generate_cluster(
        nodes=150, family="usage-independent", seed=3, hot_fraction=0.1, now=NOW
    )
    return sim_server(
        None,
        objects=generated.objects,
        metrics=generated.metrics,
        ready_delay=5.0,
        percentage_of_nodes_to_score=percentage,
    )


def _round(server: sim.SimServer, tmp_path, **steering: object) -> dict:
    policy = metrics_server_policy(
        metrics={"metricsServer": {}, "onStaleNode": "Exclude"}, steering=steering
    )
    record = rounds.run_round(policy, live_context(server, tmp_path, policy)).record
    return report.round_to_json(record)


def _tainted(server: sim.SimServer) -> list[str]:
    return [
        n["metadata"]["name"]
        for n in server.list("nodes")
        if any(t["key"].startswith("loadaware.io/") for t in n["spec"].get("taints") or [])
    ]


def test_sampled_scheduler_lands_every_replacement_in_a_good_place(tmp_path) -> None:
    with _server(0) as server:
        audit = _round(server, tmp_path)
        tainted = _tainted(server)
    assert audit["exitCode"] == 0, audit["reason"]
    assert audit["status"] == "executed"
    planned = audit["plan"]["evictions"]
    assert len(planned) >= 10
    evicted = [e for e in audit["evictions"] if e["result"] == "evicted"]
    skipped = [e for e in audit["evictions"] if e["result"] != "evicted"]
    assert all(e["reason"] == "source-no-longer-hot" for e in skipped), skipped
    assert len(evicted) >= 0.95 * len(planned)
    # Sampling is on: most moves have several nodes to land on.
    assert sum(len(e["landingSet"]) > 1 for e in evicted) > len(evicted) / 2
    verification = audit["verification"]
    assert verification["landings"]["bad"] == 0
    assert verification["landings"]["pending"] == 0
    assert verification["breaker"] is None
    sets = {e["pod"]: set(e["landingSet"]) for e in evicted}
    in_set = [r for r in verification["replacements"] if r["node"] in sets[r["pod"]]]
    assert len(in_set) + verification["landings"]["off-set"] == len(evicted)
    assert verification["taintsLeft"] == []
    assert tainted == []
    assert audit["completion"]["hotNodes"]["leftHot"] == []


def test_scoring_every_node_lands_each_replacement_on_its_expected_node(tmp_path) -> None:
    with _server(100) as server:
        audit = _round(server, tmp_path, percentageOfNodesToScore=100)
    assert audit["exitCode"] == 0, audit["reason"]
    evicted = [e for e in audit["evictions"] if e["result"] == "evicted"]
    assert evicted
    assert all(e["landingSet"] == [e["expectedNode"]] for e in evicted)
    landings = {r["pod"]: r["node"] for r in audit["verification"]["replacements"]}
    assert all(landings[e["pod"]] == e["expectedNode"] for e in evicted)
    assert audit["verification"]["breaker"] is None
