"""A `loadaware run --once` process killed in the middle of a round.

Covers: the eviction in flight was reserved before the Eviction API call, so
the next run (a new process) counts it and does not exceed the window budget;
the soft taint the killed run left on a hot node is removed at the next start.
"""

from __future__ import annotations

import datetime
import json
import pathlib
import subprocess
import sys
import time

import pytest

from loadaware import sim
from tests.lib.sim import call

LOADAWARE = [sys.executable, "-m", "loadaware"]
POLICY = """\
metrics: {metricsServer: {}}
limits:
  window: {duration: 1h, maxEvictions: 2}
steering: {softTaint: true}
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
            return json.loads(item["data"]["evictions.json"])
    return []


@pytest.mark.slow
def test_killed_run_leaves_no_budget_overrun_and_no_taint(tmp_path: pathlib.Path) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    now = datetime.datetime.now(datetime.UTC)
    with sim.start_server(scenario="small", now=now, ready_delay=1.0) as server:
        call(server, "POST", "/api/v1/namespaces", {"metadata": {"name": "loadaware"}})
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")

        dry = _run(kubeconfig, policy, "--dry-run")
        out, err = dry.communicate(timeout=120)
        assert dry.returncode == 0, err
        order = [e["pod"] for e in json.loads(out)["evictions"]]
        assert len(order) == 2  # the plan already honours the window of 2
        # Hold the second eviction on the wire so the process can be killed mid-round.
        namespace, name = order[1].split("/")
        call(
            server,
            "POST",
            "/_sim/faults",
            {"path": f"/namespaces/{namespace}/pods/{name}/eviction", "latency": 60},
        )

        killed = _run(kubeconfig, policy)
        deadline = time.monotonic() + 60
        while len(_records(server)) < 2:
            assert killed.poll() is None, killed.communicate()[1]
            assert time.monotonic() < deadline, "the run never reached its second eviction"
            time.sleep(0.05)
        tainted = [
            n["metadata"]["name"]
            for n in server.list("nodes")
            if any(t["key"] == "loadaware.io/hotspot" for t in n["spec"].get("taints") or [])
        ]
        killed.kill()
        killed.communicate(timeout=30)
        assert tainted, "the hot nodes carried the soft taint while evicting"
        records = _records(server)
        assert [r["outcome"] for r in records] == ["evicted", "reserved"]

        call(server, "DELETE", "/_sim/faults")
        after = _run(kubeconfig, policy)
        out, err = after.communicate(timeout=120)
        assert after.returncode == 0, err
        audit = json.loads(out)
        assert [e for e in audit["evictions"] if e["result"] == "evicted"] == []
        assert audit["budgets"]["windowLeft"] == 0
        assert all(
            not any(t["key"] == "loadaware.io/hotspot" for t in n["spec"].get("taints") or [])
            for n in server.list("nodes")
        )
