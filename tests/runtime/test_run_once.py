"""`loadaware run --once` against the simulated API (official client, metrics.k8s.io).

Covered: a real round relieving the peak-hour scenario within the policy's
budget (exit 0, audit JSON on stdout or in --audit-file, the round counted on
the service metrics), --dry-run evicting nothing, stale metrics refused with
exit 3, a bad policy and an unreachable kubeconfig as exit 2, the Pushgateway
flag; a round the breaker stops mid-way is partial, exit 1, with the hot
nodes relieved and the evictions carried out of those planned in the audit
record, the table (-o table), stderr and the rounds counter.
"""

from __future__ import annotations

import datetime
import json
import pathlib
from collections.abc import Iterator

import kubernetes.client
import pytest
from prometheus_client import REGISTRY

from loadaware import cli, cluster, kube, sim
from tests.lib.sim import sim_server

POLICY = """\
metrics:
  metricsServer: {}
  maxSampleAge: 2m
limits:
  maxNoOfPodsToEvictTotal: 3
verify:
  timeout: 30s
state:
  namespace: default
"""


@pytest.fixture
def policy_file(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY)
    return path


@pytest.fixture
def live_sim(tmp_path: pathlib.Path) -> Iterator[tuple[sim.SimServer, pathlib.Path]]:
    # Real time: `run --once` judges sample ages by the wall clock, as in production.
    with sim_server("peak-hour", wall_clock=True, ready_delay=0.5) as server:
        yield server, server.write_kubeconfig(tmp_path / "kubeconfig")


def evicted_total() -> float:
    return sum(
        s.value
        for m in REGISTRY.collect()
        if m.name == "loadaware_evictions"
        for s in m.samples
        if s.name == "loadaware_evictions_total" and s.labels["result"] == "evicted"
    )


def test_one_round_relieves_hot_nodes_within_budget(
    live_sim: tuple[sim.SimServer, pathlib.Path],
    policy_file: pathlib.Path,
    tmp_path: pathlib.Path,
) -> None:
    server, kubeconfig = live_sim
    rounds = (
        REGISTRY.get_sample_value(
            "loadaware_rounds_total", {"trigger": "once", "result": "executed"}
        )
        or 0
    )
    evicted_before = evicted_total()
    audit = tmp_path / "audit.json"
    page = tmp_path / "round.html"
    code = cli.main(
        [
            "run", "--once", "--policy", str(policy_file),
            "--kubeconfig", str(kubeconfig), "--audit-file", str(audit),
            "--report", str(page),
        ]
    )  # fmt: skip
    record = json.loads(audit.read_text())
    assert code == 0, record["reason"]
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert all(e["pod"].split("/")[1] in html for e in record["evictions"])
    assert record["status"] == "executed"
    evicted = [e for e in record["evictions"] if e["result"] == "evicted"]
    assert 1 <= len(evicted) <= 3
    # Gone, or terminating within their grace period.
    running = {
        f"{p['metadata']['namespace']}/{p['metadata']['name']}"
        for p in server.list("pods")
        if not p["metadata"].get("deletionTimestamp")
    }
    assert not {e["pod"] for e in evicted} & running
    for replacement in record["verification"]["replacements"]:
        assert replacement["ready"]
        assert replacement["landing"] not in ("source", "hot")
    assert (
        REGISTRY.get_sample_value(
            "loadaware_rounds_total", {"trigger": "once", "result": "executed"}
        )
        == rounds + 1
    )
    assert evicted_total() == evicted_before + len(evicted)


def test_dry_run_evicts_nothing(
    live_sim: tuple[sim.SimServer, pathlib.Path],
    policy_file: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server, kubeconfig = live_sim
    pods_before = {p["metadata"]["uid"] for p in server.list("pods")}
    code = cli.main(
        [
            "run",
            "--once",
            "--dry-run",
            "--policy",
            str(policy_file),
            "--kubeconfig",
            str(kubeconfig),
        ]
    )
    record = json.loads(capsys.readouterr().out)
    assert code == 0
    assert record["dryRun"] is True
    assert {e["result"] for e in record["evictions"]} <= {"dry-run", "skipped"}
    assert {p["metadata"]["uid"] for p in server.list("pods")} == pods_before


def test_stale_metrics_refuse_with_exit_3(
    policy_file: pathlib.Path, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The simulated cluster lives an hour in the past: every sample is an hour old.
    past = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=1)
    with sim_server("small", clock=sim.SimClock(past, speed=1.0), ready_delay=2.0) as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        code = cli.main(
            ["run", "--once", "--policy", str(policy_file), "--kubeconfig", str(kubeconfig)]
        )
    out = capsys.readouterr()
    record = json.loads(out.out)
    assert code == 3
    assert record["status"] == "refused"
    assert record["reason"].startswith("stale-metrics")
    assert record["evictions"] == []


def test_bad_input_is_exit_2(tmp_path: pathlib.Path, policy_file: pathlib.Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("limits: {maxNoOfPodsToEvictTotal: -1}\n")
    assert cli.main(["run", "--once", "--policy", str(bad)]) == 2
    missing = tmp_path / "nope.kubeconfig"
    assert (
        cli.main(["run", "--once", "--policy", str(policy_file), "--kubeconfig", str(missing)]) == 2
    )
    assert cli.main(["run", "--policy", str(policy_file)]) == 2  # --once is required


PARTIAL_POLICY = """\
metrics:
  metricsServer: {}
  maxSampleAge: 2m
evictor:
  gracePeriodSeconds: 0
verify:
  timeout: 20s
  reliefTimeout: 1s
state:
  namespace: default
"""


def test_a_round_the_breaker_stops_is_partial_and_exits_1(
    live_sim: tuple[sim.SimServer, pathlib.Path],
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, kubeconfig = live_sim
    policy_file = tmp_path / "partial.yaml"
    policy_file.write_text(PARTIAL_POLICY)
    read = cluster.ClusterCache.snapshot
    cordoned: list[str] = []

    def read_then_cordon(cache: cluster.ClusterCache) -> cluster.ClusterState:
        snapshot = read(cache)
        if cordoned:
            return snapshot
        # Once planned, nowhere is left to schedule a replacement: the first one
        # stays Pending and opens the breaker before the second eviction.
        client = kube.api_client(kube.ClientSettings(kubeconfig=str(kubeconfig)))
        core = kubernetes.client.CoreV1Api(client)
        for node in snapshot.nodes:
            core.patch_node(node.name, {"spec": {"unschedulable": True}}, _preload_content=False)
            cordoned.append(node.name)
        return snapshot

    monkeypatch.setattr(cluster.ClusterCache, "snapshot", read_then_cordon)
    partial = (
        REGISTRY.get_sample_value(
            "loadaware_rounds_total", {"trigger": "once", "result": "partial"}
        )
        or 0
    )
    audit_file = tmp_path / "audit.json"
    code = cli.main(
        [
            "run", "--once", "--policy", str(policy_file), "--kubeconfig", str(kubeconfig),
            "--audit-file", str(audit_file), "-o", "table",
        ]
    )  # fmt: skip
    out = capsys.readouterr()
    audit = json.loads(audit_file.read_text())
    assert code == 1, audit["reason"]
    assert audit["status"] == "partial"
    assert audit["exitCode"] == 1
    planned = len(audit["plan"]["evictions"])
    hot = {e["node"] for e in audit["plan"]["evictions"]}
    assert planned >= 2
    assert len(hot) >= 2
    results = [e["result"] for e in audit["evictions"]]
    assert results[0] == "evicted"
    assert set(results[1:]) == {"skipped"}
    completion = audit["completion"]
    assert completion["result"] == "partial"
    assert completion["stopped"].startswith("breaker opened: replacement of ")
    assert completion["evictions"] == {
        "planned": planned,
        "carriedOut": 1,
        "byResult": {"evicted": 1, "skipped": planned - 1},
    }
    assert completion["hotNodes"]["planned"] == len(hot)
    assert completion["hotNodes"]["relieved"] == 0
    untouched = sorted(hot - {audit["evictions"][0]["node"]})
    assert set(untouched) <= set(completion["hotNodes"]["leftHot"])
    counts = f"0/{len(hot)} hot nodes relieved, 1/{planned} evictions carried out"
    assert audit["reason"].startswith(counts)
    assert audit["verification"]["verdict"].startswith(f"partial: {counts}")
    assert audit["verification"]["verdict"] != "relieved"
    # The table a person reads, and the line on stderr, say the same.
    assert "\nstatus: partial\n" in out.out
    assert f"hot nodes relieved: 0/{len(hot)}" in out.out
    assert f"evictions carried out: 1/{planned}" in out.out
    assert "stopped: breaker opened: " in out.out
    assert f"partial: {counts}" in out.err
    assert (
        REGISTRY.get_sample_value(
            "loadaware_rounds_total", {"trigger": "once", "result": "partial"}
        )
        == partial + 1
    )
