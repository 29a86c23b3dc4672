"""Leader election on a coordination.k8s.io/v1 Lease in the simulated API.

Covered, with the official client over HTTP: the Lease's fields written as
client-go writes them (holderIdentity, leaseDurationSeconds, acquireTime,
renewTime, leaseTransitions); a second candidate waiting while the lease is
held and never leading at the same time; release on stop and an immediate
takeover; a leader whose renewals fail stepping down within renewDeadline.
With two `loadaware serve` processes: exactly one leads, killing it (SIGKILL,
no release) hands the lease to the other within the lease duration, and
SIGTERM on the survivor releases the lease and exits 0.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest

from bench.prometheus import free_port
from loadaware import kube, policy, runtime, sim
from tests.lib.serve import ServeClient
from tests.lib.sim import sim_server
from tests.lib.wait import hold, poll

FAST = policy.LeaderElectionSettings.model_validate(
    {
        "leaseNamespace": "default",
        "leaseDuration": "3s",
        "renewDeadline": "2s",
        "retryPeriod": "0.3s",
    }
)


@pytest.fixture
def sim_api(tmp_path: pathlib.Path) -> Iterator[tuple[sim.SimServer, pathlib.Path]]:
    with sim_server("small", wall_clock=True, ready_delay=2.0) as server:
        yield server, server.write_kubeconfig(tmp_path / "kubeconfig")


def seconds_until(condition: Callable[[], bool], what: str, timeout: float = 15.0) -> float:
    """How long `condition` took to hold, polled under the deadline."""
    started = time.monotonic()
    poll(condition, what, timeout, interval=0.02)
    return time.monotonic() - started


def lease(server: sim.SimServer) -> dict[str, object]:
    return server.get("leases", "default", "loadaware", group="coordination.k8s.io")["spec"]


def test_two_candidates_one_leader_and_release(
    sim_api: tuple[sim.SimServer, pathlib.Path],
) -> None:
    server, kubeconfig = sim_api
    a = runtime.LeaseElector(kube.api_client(kubeconfig=kubeconfig), FAST, identity="a")
    b = runtime.LeaseElector(kube.api_client(kubeconfig=kubeconfig), FAST, identity="b")
    assert a.try_acquire_or_renew() is True
    assert b.try_acquire_or_renew() is False
    spec = lease(server)
    assert spec["holderIdentity"] == "a"
    assert spec["leaseDurationSeconds"] == 3
    assert spec["leaseTransitions"] == 0
    assert spec["acquireTime"]
    assert spec["renewTime"]
    a.start()
    b.start()
    try:
        hold(
            lambda: a.is_leader() and not b.is_leader(),
            "a alone leading",
            2 * FAST.lease_duration.total_seconds(),
        )
        a.stop()
        assert not a.is_leader()
        assert lease(server)["holderIdentity"] in ("", "b")
        # Released: b need not wait out the lease duration.
        took = seconds_until(b.is_leader, "b to take over")
        assert took < FAST.lease_duration.total_seconds()
        spec = lease(server)
        assert spec["holderIdentity"] == "b"
        assert spec["leaseTransitions"] == 1
    finally:
        a.stop()
        b.stop()
    assert lease(server)["holderIdentity"] == ""


def test_leader_that_cannot_renew_steps_down_within_the_renew_deadline(
    sim_api: tuple[sim.SimServer, pathlib.Path],
) -> None:
    server, kubeconfig = sim_api
    changes: list[bool] = []
    a = runtime.LeaseElector(
        kube.api_client(kubeconfig=kubeconfig), FAST, identity="a", on_change=changes.append
    )
    a.start()
    try:
        poll(a.is_leader, "a to lead", 15)
        server.faults.add(path="/leases", status=500)  # the API server fails every renewal
        took = seconds_until(lambda: not a.is_leader(), "a to step down")
        assert took <= FAST.renew_deadline.total_seconds() + 0.5
        assert changes[0] is True
        poll(lambda: changes[-1] is False, "the change to be reported", 15)
    finally:
        a.stop()


# -- two serve processes ------------------------------------------------------------


def serve_policy(tmp_path: pathlib.Path, port: int) -> pathlib.Path:
    path = tmp_path / f"policy-{port}.yaml"
    path.write_text(
        f"""\
metrics:
  metricsServer: {{}}
state:
  namespace: default
serve:
  listen: 127.0.0.1:{port}
  webhook:
    allowUnauthenticated: true
  leaderElection:
    leaseNamespace: default
    leaseDuration: 3s
    renewDeadline: 2s
    retryPeriod: 0.3s
"""
    )
    return path


def status_of(port: int) -> dict[str, object] | None:
    return ServeClient(port, timeout=2).status()


def is_leading(port: int) -> bool:
    status = status_of(port)
    return bool(status and status["leader"]["isLeader"])  # type: ignore[index]


@pytest.mark.slow
def test_two_serve_processes_fail_over(
    sim_api: tuple[sim.SimServer, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    server, kubeconfig = sim_api
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    ports = [free_port(), free_port()]
    processes: dict[int, subprocess.Popen[bytes]] = {}
    logs = [(tmp_path / f"serve-{index}.log").open("wb") for index in range(len(ports))]
    try:
        for index, port in enumerate(ports):
            processes[port] = subprocess.Popen(
                [
                    sys.executable, "-m", "loadaware", "serve",
                    "--policy", str(serve_policy(tmp_path, port)),
                    "--kubeconfig", str(kubeconfig), "--identity", f"replica-{index}",
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=logs[index],
            )  # fmt: skip
        poll(lambda: all(status_of(p) is not None for p in ports), "both to serve", 30)
        poll(lambda: any(is_leading(p) for p in ports), "a leader", 15)
        hold(lambda: sum(is_leading(p) for p in ports) == 1, "one leader", 2.0, interval=0.0)
        leader = next(p for p in ports if is_leading(p))
        follower = next(p for p in ports if p != leader)
        assert lease(server)["holderIdentity"] == f"replica-{ports.index(leader)}"

        processes[leader].kill()  # no release: the lease must expire
        processes[leader].wait(10)
        took = seconds_until(lambda: is_leading(follower), "the follower to take over", 15)
        assert took <= 3.0 + 2 * 0.3 + 1.0  # leaseDuration, plus retries, plus polling
        assert lease(server)["holderIdentity"] == f"replica-{ports.index(follower)}"

        processes[follower].send_signal(signal.SIGTERM)
        assert processes[follower].wait(20) == 0
        assert lease(server)["holderIdentity"] == ""
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.wait(10)
        for log in logs:
            log.close()
