"""The first hour against a broken cluster: what a new user sees when the API server
is not there, refuses the credentials, or is slow to list.

Covered, with the real CLI in a process of its own where the user's view is the point:
- `run --once` with a kubeconfig pointing at a closed port exits 3 within 15 s,
  stderr naming the address and "connection refused", and the text log line of
  the cache's failure carrying its reason;
- `run --once` against `loadaware sim serve --token-file` with a wrong token exits 3
  naming the 401 and the server;
- `serve` against the closed port logs where it listens at INFO, and its /readyz
  answers within 1 s, 503 naming the cause;
- /readyz against the simulated API answers within 1 s before the first list (a slow
  one) and after it, ready once listed;
- `run --once` at INFO logs each step, each eviction with its progress (n/planned)
  and one round result line; on a terminal it logs at INFO without being asked.
"""

from __future__ import annotations

import http.client
import json
import os
import pathlib
import pty
import queue
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import IO, Any

import pytest
import yaml

from loadaware import kube, policy, runtime, sim
from tests.lib.live import poll
from tests.lib.sim import sim_server

REPO = pathlib.Path(__file__).resolve().parents[2]
RUN_ONCE = (sys.executable, "-m", "loadaware", "run", "--once")
POLICY: dict[str, Any] = {
    "metrics": {"metricsServer": {}, "onStaleNode": "Exclude"},
    "state": {"namespace": "default"},
    "dryRun": True,
    "serve": {
        "listen": "127.0.0.1:0",
        "webhook": {"allowUnauthenticated": True},
        "leaderElection": {"enabled": False},
    },
}


@pytest.fixture
def closed_port() -> Iterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


@pytest.fixture
def policy_file(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(POLICY))
    return path


def _kubeconfig(path: pathlib.Path, server: str) -> pathlib.Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": "t0ken"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    return path


def _loadaware(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "loadaware", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "HOME": str(REPO)},
    )


def test_run_once_against_a_closed_port_exits_3_naming_the_address_and_the_cause(
    tmp_path: pathlib.Path, closed_port: int, policy_file: pathlib.Path
) -> None:
    address = f"http://127.0.0.1:{closed_port}"
    config = _kubeconfig(tmp_path / "config", address)
    started = time.monotonic()
    result = _loadaware("run", "--once", "--policy", str(policy_file), "--kubeconfig", str(config))
    took = time.monotonic() - started
    assert result.returncode == 3, result.stderr
    assert took < 15
    refusal = [line for line in result.stderr.splitlines() if line.startswith("refused: ")]
    assert len(refusal) == 1, result.stderr
    assert refusal[0].startswith("refused: cluster-unreachable: ")
    assert f"cannot reach the Kubernetes API at {address}: connection refused" in refusal[0]
    # The default text log says why the cache cannot list, not only that it cannot.
    # Said once, not once per kind.
    (warning,) = [line for line in result.stderr.splitlines() if " WARNING " in line]
    assert "cluster cache cannot list" in warning
    assert "reason=" in warning
    assert "connection refused" in warning
    assert json.loads(result.stdout)["status"] == "refused"


def test_run_once_with_a_wrong_token_exits_3_naming_the_401(
    tmp_path: pathlib.Path, policy_file: pathlib.Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret\n")
    config = tmp_path / "config"
    command = [sys.executable, "-m", "loadaware", "sim", "serve", "--scenario", "small"]
    command += ["--port", "0", "--kubeconfig-out", str(config), "--token-file", str(token_file)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert server.stdout is not None
        assert server.stdout.readline().startswith("kubeconfig written to")
        document = yaml.safe_load(config.read_text())
        address = document["clusters"][0]["cluster"]["server"]
        assert document["users"][0]["user"]["token"] == "s3cret"  # right, then made wrong
        document["users"][0]["user"]["token"] = "wr0ng"
        config.write_text(yaml.safe_dump(document))
        started = time.monotonic()
        result = _loadaware(
            "run", "--once", "--policy", str(policy_file), "--kubeconfig", str(config)
        )
        took = time.monotonic() - started
    finally:
        server.terminate()
        server.wait(timeout=10)
        if server.stdout is not None:
            server.stdout.close()
    assert result.returncode == 3, result.stderr
    assert took < 15
    (refusal,) = [line for line in result.stderr.splitlines() if line.startswith("refused: ")]
    assert refusal.startswith("refused: cluster-unauthorized: ")
    assert f"({address}): 401 " in refusal
    assert "wr0ng" not in result.stderr
    assert "s3cret" not in result.stderr


def _lines(stream: IO[str], into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line)


def _get(port: int, path: str) -> tuple[int, dict[str, Any], float]:
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = json.loads(response.read())
    finally:
        connection.close()
    return response.status, body, time.monotonic() - started


def test_serve_against_a_closed_port_says_where_it_listens_and_readyz_answers_at_once(
    tmp_path: pathlib.Path, closed_port: int, policy_file: pathlib.Path
) -> None:
    config = _kubeconfig(tmp_path / "config", f"http://127.0.0.1:{closed_port}")
    command = [sys.executable, "-m", "loadaware", "serve", "--policy", str(policy_file)]
    process = subprocess.Popen(
        [*command, "--kubeconfig", str(config)],
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    logged: queue.Queue[str] = queue.Queue()
    assert process.stderr is not None
    threading.Thread(target=_lines, args=(process.stderr, logged), daemon=True).start()
    try:
        deadline = time.monotonic() + 30
        listening = None
        while listening is None:
            line = logged.get(timeout=max(0.1, deadline - time.monotonic()))
            if " listening " in line:
                listening = line
        # A normal event: INFO, naming the address.
        assert " INFO " in listening
        port = int(re.search(r"address=http://127\.0\.0\.1:(\d+)", listening).group(1))  # type: ignore[union-attr]
        answers = []
        end = time.monotonic() + 8  # past the cache's first lists and their retries
        while time.monotonic() < end:
            answers.append(_get(port, "/readyz"))
        assert max(took for _, _, took in answers) < 1.0
        assert all(status == 503 for status, _, _ in answers)
        checks = answers[-1][1]["checks"]
        assert checks["clusterCache"].startswith("cluster-unreachable: ")
        assert "connection refused" in checks["clusterCache"]
        assert "connection refused" in checks["api"]
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stderr.close()


def test_readyz_answers_at_once_before_and_after_the_first_list(tmp_path: pathlib.Path) -> None:
    with sim_server(watch_bookmark_seconds=0.2) as server:
        # The namespaces are slow to list: the state check, which reads them, waits.
        slow = server.faults.add(path="^/api/v1/namespaces$", method="GET", latency=3.0, times=1)
        client = kube.api_client(kubeconfig=server.write_kubeconfig(tmp_path / "config"))
        service = runtime.build_service(policy.parse_policy(POLICY), client)
        http_server = runtime.HttpServer(service, "127.0.0.1:0").start()
        service.start_background()
        try:
            status, body, took = _get(http_server.port, "/readyz")
            assert took < 1.0
            assert status == 503
            assert "namespaces never listed" in body["checks"]["clusterCache"]

            def ready() -> bool:
                status, _, took = _get(http_server.port, "/readyz")
                assert took < 1.0
                return status == 200

            poll(ready, "ready once listed", timeout=30)
            assert slow.times is None or slow.times <= 0
        finally:
            service.stop(round_timeout=10)
            http_server.stop()


def test_run_once_at_info_shows_each_step_eviction_and_the_result(tmp_path: pathlib.Path) -> None:
    # Real time: `run --once` judges sample ages by the wall clock, as in production.
    server = sim.start_server(scenario="small", ready_delay=0.5)
    try:
        config = server.write_kubeconfig(tmp_path / "config")
        path = tmp_path / "policy.yaml"
        path.write_text("metrics: {metricsServer: {}}\nstate: {namespace: default}\n")
        flags = ("--policy", str(path), "--kubeconfig", str(config), "--dry-run")
        result = _loadaware("--log-level", "INFO", "run", "--once", *flags)
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    steps = [line.rpartition("step=")[2] for line in lines if " round step " in line]
    assert steps[:2] == ["planning", "evicting"]
    record = json.loads(result.stdout)
    planned = len(record["evictions"])
    assert planned > 0
    outcomes = [line for line in lines if " eviction outcome " in line]
    assert all(" INFO " in line for line in outcomes)
    assert [re.search(r"progress=(\d+)/(\d+)", line).groups() for line in outcomes] == [  # type: ignore[union-attr]
        (str(n), str(planned)) for n in range(1, planned + 1)
    ]
    (finished,) = [line for line in lines if " round result " in line]
    assert " INFO " in finished
    assert f"status={record['status']}" in finished
    assert f"planned={planned}" in finished


def test_run_once_on_a_terminal_logs_at_info(
    tmp_path: pathlib.Path, closed_port: int, policy_file: pathlib.Path
) -> None:
    config = _kubeconfig(tmp_path / "config", f"http://127.0.0.1:{closed_port}")
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen(
            [*RUN_ONCE, "--policy", str(policy_file), "--kubeconfig", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=follower,
            cwd=REPO,
        )
        os.close(follower)
        follower = -1
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end closed: the process is gone
                break
            if not chunk:
                break
            seen += chunk
        assert process.wait(timeout=30) == 3
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    text = seen.decode()
    (result,) = [line for line in text.splitlines() if " round result " in line]
    assert " INFO " in result
    assert "status=refused" in result
    assert "connection refused" in result
