"""A `loadaware run --once` process killed in the middle of a round.

Covers: the eviction in flight was reserved before the Eviction API call, so
the next run (a new process) counts it and does not exceed the window budget;
the steering taints the killed run had set for that eviction are removed at the
next start. A SIGTERM mid-round stops evicting and waiting at once, removes the
round's taints and still prints the audit record, of a partial round (exit 1).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import pathlib
import signal
import subprocess
import sys

import pytest

from loadaware import evict, sim
from loadaware.evict import _history
from tests.lib.sim import call, sim_server
from tests.lib.wait import poll

LOADAWARE = [sys.executable, "-m", "loadaware"]
POLICY = """\
metrics: {metricsServer: {}}
limits:
  window: {duration: 1h, maxEvictions: 2}
state: {namespace: loadaware}
"""


def _run(kubeconfig: pathlib.Path, policy: pathlib.Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            *LOADAWARE,
            "run",
            "--once",
            "--policy",
            str(policy),
            "--kubeconfig",
            str(kubeconfig),
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _records(server: sim.SimServer) -> list[dict]:
    for item in server.list("configmaps", "loadaware"):
        if item["metadata"]["name"] == "loadaware-state":
            history = _history.History(evict.EvictionRecord)
            return [dataclasses.asdict(r) for r in history.decode(item["data"]["evictions.json"])]
    return []


def fail_if_exited(process: subprocess.Popen[str]) -> bool:
    """False while the process runs, so a poll goes on; fails the test with the
    process's stderr once it has exited."""
    assert process.poll() is None, process.communicate()[1]
    return False


@pytest.mark.slow
def test_killed_run_leaves_no_budget_overrun_and_no_taint(tmp_path: pathlib.Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    now = datetime.datetime.now(datetime.UTC)
    with sim_server("warm-idle", now=now, wall_clock=True, ready_delay=1.0) as server:
        call(server, "POST", "/api/v1/namespaces", {"metadata": {"name": "loadaware"}})
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")

        dry = _run(kubeconfig, policy, "--dry-run")
        out, err = dry.communicate(timeout=120)
        assert dry.returncode == 0, err
        planned = json.loads(out)["plan"]["evictions"]
        order = [e["pod"] for e in planned]
        assert len(order) == 2  # the plan already honours the window of 2
        assert planned[1]["steer"], "the second eviction needs steering in this scenario"
        # Hold the second eviction on the wire so the process can be killed mid-round.
        namespace, name = order[1].split("/")
        call(
            server,
            "POST",
            "/_sim/faults",
            {"path": f"/namespaces/{namespace}/pods/{name}/eviction", "latency": 60},
        )

        killed = _run(kubeconfig, policy)
        poll(
            lambda: len(_records(server)) >= 2 or fail_if_exited(killed),
            "the run to reach its second eviction",
            60,
        )
        tainted = [
            n["metadata"]["name"]
            for n in server.list("nodes")
            if any(t["key"] == "loadaware.io/hotspot" for t in n["spec"].get("taints") or [])
        ]
        killed.kill()
        killed.communicate(timeout=30)
        assert set(tainted) == set(planned[1]["steer"]), "the eviction in flight was steered"
        records = _records(server)
        assert [r["outcome"] for r in records] == ["evicted", "reserved"]

        call(server, "DELETE", "/_sim/faults")
        after = _run(kubeconfig, policy)
        out, err = after.communicate(timeout=120)
        assert after.returncode == 0, err
        audit = json.loads(out)
        assert [e for e in audit["evictions"] if e["result"] == "evicted"] == []
        assert audit["budgets"]["windowLeft"] == 0
        assert set(audit["verification"]["leftoverTaintsRemoved"]) == set(tainted)
        assert all(
            not any(t["key"] == "loadaware.io/hotspot" for t in n["spec"].get("taints") or [])
            for n in server.list("nodes")
        )


@pytest.mark.slow
def test_sigterm_mid_round_stops_it_and_removes_its_taints(tmp_path: pathlib.Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text("metrics: {metricsServer: {}}\nstate: {namespace: loadaware}\n")
    now = datetime.datetime.now(datetime.UTC)
    with sim_server("warm-idle", now=now, wall_clock=True, ready_delay=1.0) as server:
        call(server, "POST", "/api/v1/namespaces", {"metadata": {"name": "loadaware"}})
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        # Every eviction is slow on the wire, so the signal arrives mid-round.
        call(server, "POST", "/_sim/faults", {"path": "/eviction", "latency": 3})
        running = _run(kubeconfig, policy)
        poll(
            lambda: (
                any(
                    t["key"] == "loadaware.io/hotspot"
                    for n in server.list("nodes")
                    for t in n["spec"].get("taints") or []
                )
                or fail_if_exited(running)
            ),
            "the round to steer an eviction",
            60,
        )
        running.send_signal(signal.SIGTERM)
        out, err = running.communicate(timeout=60)
        audit = json.loads(out)
        results = [e["result"] for e in audit["evictions"]]
        assert results.count("evicted") == 1, err
        assert all(r == "skipped" for r in results[1:])
        assert audit["verification"]["stopped"] == "SIGTERM received"
        # Stopped before the end of its plan: partial, and the Job's pod fails.
        assert audit["status"] == "partial"
        assert running.returncode == 1
        assert audit["verification"]["taintsLeft"] == []
        assert all(
            not any(t["key"] == "loadaware.io/hotspot" for t in n["spec"].get("taints") or [])
            for n in server.list("nodes")
        )
