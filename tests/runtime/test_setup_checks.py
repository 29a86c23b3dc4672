"""A cluster not set up as the policy says, against the simulated API (official client).

Covers `run --once` with no state namespace: exit 2, the fix in one line on
stderr (and in the audit record), before anything is changed: no eviction, no
taint, no ConfigMap; the same round evicts once the namespace exists, so the
check is what held it. A dry run needs nothing in the namespace and goes on. A
403 on the state ConfigMap is exit 2 too, naming what to grant. `serve` with
neither the lease nor the state namespace: the lease failure logged once with
its cause (not at every retry), under `leader.error` in /status and as
not-ready on /readyz with the reason of each failing check, the webhook
answering 503; ready and leading again, without a restart, once the namespace
is created; a 403 on the Lease the same way, with what to grant.
"""

from __future__ import annotations

import json
import logging
import pathlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from loadaware import cli, sim
from loadaware.runtime import _service_status
from tests.lib.serve import SimService
from tests.lib.sim import call, sim_server
from tests.lib.wait import poll
from tests.runtime.conftest import notification

FIX = (
    'namespace "loadaware" not found: '
    "create it (kubectl create namespace loadaware) or set state.namespace"
)
POLICY = """\
metrics:
  metricsServer: {}
  maxSampleAge: 2m
limits:
  maxNoOfPodsToEvictTotal: 2
verify:
  timeout: 30s
state:
  namespace: loadaware
"""


@pytest.fixture
def live_sim(tmp_path: pathlib.Path) -> Iterator[tuple[sim.SimServer, pathlib.Path]]:
    # Real time: `run --once` judges sample ages by the wall clock, as in production.
    # No `loadaware` namespace: the small scenario has only its workloads' and the system's.
    with sim_server("small", wall_clock=True, ready_delay=0.5) as server:
        assert server.find("namespaces", None, "loadaware") is None
        yield server, server.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def policy_file(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY)
    return path


def _create_namespace(server: sim.SimServer) -> None:
    status, body = call(server, "POST", "/api/v1/namespaces", {"metadata": {"name": "loadaware"}})
    assert status == 201, body


def _uids(server: sim.SimServer) -> set[str]:
    return {p["metadata"]["uid"] for p in server.list("pods")}


def _tainted(server: sim.SimServer) -> list[str]:
    return [
        n["metadata"]["name"]
        for n in server.list("nodes")
        if any(t["key"].startswith("loadaware.io/") for t in n["spec"].get("taints") or [])
    ]


def _run_once(
    capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, dict[str, Any], list[str]]:
    code = cli.main(["run", "--once", *args])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err.splitlines()


def test_run_once_without_the_state_namespace_exits_2_with_the_fix_and_evicts_nothing(
    live_sim: tuple[sim.SimServer, pathlib.Path],
    policy_file: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server, kubeconfig = live_sim
    before = _uids(server)
    flags = ("--policy", str(policy_file), "--kubeconfig", str(kubeconfig))
    code, record, err = _run_once(capsys, *flags)
    assert code == 2
    assert err == [f"refused: missing-namespace: {FIX}"]
    assert record["status"] == "refused"
    assert record["reason"] == f"missing-namespace: {FIX}"
    assert record["exitCode"] == 2
    assert record["evictions"] == []
    assert _uids(server) == before
    assert _tainted(server) == []
    assert [
        c for c in server.list("configmaps") if c["metadata"]["name"] == "loadaware-state"
    ] == []

    # A dry run reads no state there and writes none: it goes on.
    code, record, _ = _run_once(capsys, "--dry-run", *flags)
    assert code == 0, record["reason"]
    assert record["evictions"]
    assert {e["result"] for e in record["evictions"]} <= {"dry-run", "skipped"}
    assert _uids(server) == before

    # Created, the same round evicts: the check was all that held it back.
    _create_namespace(server)
    code, record, _ = _run_once(capsys, *flags)
    assert code == 0, record["reason"]
    assert any(e["result"] == "evicted" for e in record["evictions"])


def test_run_once_forbidden_to_write_its_state_exits_2_naming_the_grant(
    live_sim: tuple[sim.SimServer, pathlib.Path],
    policy_file: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server, kubeconfig = live_sim
    _create_namespace(server)
    server.faults.add(path="^/api/v1/namespaces/loadaware/configmaps$", method="POST", status=403)
    before = _uids(server)
    code, record, err = _run_once(
        capsys, "--policy", str(policy_file), "--kubeconfig", str(kubeconfig)
    )
    assert code == 2
    (line,) = err
    assert line.startswith("refused: missing-permission: create configmap loadaware/")
    assert ": 403 " in line
    assert "grant create on configmaps in namespace loadaware" in line
    assert record["evictions"] == []
    assert _uids(server) == before
    assert _tainted(server) == []


# -- serve --------------------------------------------------------------------------------


SERVE_POLICY: dict[str, Any] = {
    "metrics": {"metricsServer": {}},
    "state": {"namespace": "loadaware"},
    "serve": {
        "listen": "127.0.0.1:0",
        "webhook": {"allowUnauthenticated": True},
        "leaderElection": {
            "leaseNamespace": "loadaware",
            "leaseDuration": "3s",
            "renewDeadline": "2s",
            "retryPeriod": "0.2s",
        },
    },
}


@pytest.fixture
def served(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[sim.SimServer, Callable[[], SimService]]]:
    # Readiness answers are cached for a few seconds; here a change must show at once.
    monkeypatch.setattr(_service_status, "READY_CACHE_SECONDS", 0.0)
    # An earlier `cli.main` may have left its handler on a stream pytest has closed.
    monkeypatch.setattr(logging.getLogger("loadaware"), "handlers", [])
    started: list[SimService] = []
    with sim_server("small", wall_clock=True, ready_delay=2.0) as server:

        def start() -> SimService:
            started.append(SimService(server, tmp_path, SERVE_POLICY, identity="replica-0"))
            return started[-1]

        try:
            yield server, start
        finally:
            for one in started:
                one.stop()


def _lease_calls(server: sim.SimServer) -> Callable[[], int]:
    """Counts the requests on Leases: a rule that delays them by nothing, used up one a call."""
    rule = server.faults.add(path="/leases", times=10_000)
    return lambda: 10_000 - (rule.times or 0)


def _said(caplog: pytest.LogCaptureFixture, message: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage() == message]


def test_serve_without_the_namespace_says_why_and_recovers_once_it_exists(
    served: tuple[sim.SimServer, Callable[[], SimService]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="loadaware")
    server, start = served
    calls = _lease_calls(server)
    run = start()
    lease_fix = (
        'missing-namespace: namespace "loadaware" not found: create it '
        "(kubectl create namespace loadaware) or set serve.leaderElection.leaseNamespace"
    )
    poll(lambda: run.leader().get("error") == lease_fix, "the lease failure under /status")
    status, checks = run.readyz()
    assert status == 503
    assert checks["leaderElection"] == lease_fix
    assert checks["state"] == f"missing-namespace: {FIX}"
    assert checks["api"] == "ok"
    assert run.leader()["isLeader"] is False
    # The webhook is answered 503, so that Alertmanager retries; the reason is above.
    assert run.request("POST", "/alertmanager", json.dumps(notification()).encode())[0] == 503

    # Many retries later, the cause has been said once, not at every retry.
    seen = calls()
    poll(lambda: calls() >= seen + 10, "ten more lease calls")
    failures = _said(caplog, "leader election: lease call failed")
    assert [r.reason for r in failures] == [lease_fix]  # type: ignore[attr-defined]
    said = [r.reason.partition(":")[0] for r in _said(caplog, "readiness check failed")]  # type: ignore[attr-defined]
    # The state check, once; the cluster cache's at most once, before its first list.
    assert said.count("state") == 1
    assert said.count("clusterCache") <= 1
    assert set(said) <= {"state", "clusterCache"}

    _create_namespace(server)
    poll(lambda: run.readyz()[0] == 200, "ready once the namespace exists")
    assert run.readyz()[1] == {
        "clusterCache": "ok",
        "api": "ok",
        "metrics": "ok",
        "state": "ok",
        "leaderElection": "ok",
    }
    leader = poll(lambda: (s := run.leader())["isLeader"] and s, "leading")
    assert leader["error"] is None
    assert len(_said(caplog, "leader election: lease calls succeed again")) == 1
    passes = [r.reason for r in _said(caplog, "readiness check passes again")]  # type: ignore[attr-defined]
    assert passes.count("state") == 1


def test_serve_forbidden_to_use_its_lease_says_what_to_grant(
    served: tuple[sim.SimServer, Callable[[], SimService]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="loadaware")
    server, start = served
    _create_namespace(server)
    rule = server.faults.add(path="/namespaces/loadaware/leases", status=403)
    run = start()
    error = poll(lambda: run.leader().get("error"), "the lease failure under /status")
    assert error.startswith("missing-permission: read lease loadaware/loadaware: 403 ")
    assert "grant get, create and update on coordination.k8s.io leases in namespace" in error
    status, checks = run.readyz()
    assert status == 503
    assert checks["leaderElection"] == error
    assert checks["state"] == "ok"
    server.faults.remove(rule.id)
    poll(lambda: run.readyz()[0] == 200, "ready once the Lease may be used")
    assert poll(lambda: run.leader()["isLeader"], "leading")
    assert len(_said(caplog, "leader election: lease call failed")) == 1
