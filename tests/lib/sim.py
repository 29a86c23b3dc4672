"""Helpers for tests against the simulated Kubernetes API.

    with sim_server("small") as server:          # frozen clock at NOW, pods Ready at once
    with sim_server("small", wall_clock=True, ready_delay=0.5) as server:  # real time
        status, body = call(server, "GET", "/api/v1/nodes")
        kubectl(server_kubeconfig, "get", "pods", "-A")

The clock is frozen (speed 0) so that ages, grace periods and sample times only
move when a test calls `server.advance(seconds)`.
"""

from __future__ import annotations

import datetime
import http.client
import json
import pathlib
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from loadaware import sim

NOW = datetime.datetime(2026, 11, 29, 8, 0, 0, tzinfo=datetime.UTC)
KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


@contextmanager
def sim_server(
    scenario: str | None = "small",
    *,
    clock: sim.SimClock | None = None,
    wall_clock: bool = False,
    ready_delay: float = 0.0,
    token: str | None = None,
    percentage_of_nodes_to_score: int = 0,
    watch_bookmark_seconds: float = 60.0,
    **options: Any,
) -> Iterator[sim.SimServer]:
    """`scenario` (or the `objects` in options) served on a free port, stopped at the end.

    The clock is frozen at NOW unless `clock` is given, or `wall_clock` lets the
    cluster keep the current time (for code that judges sample ages by the wall
    clock, as `run --once` does). options: start_server's other arguments
    (objects, metrics, now, SimSettings fields)."""
    if clock is None and not wall_clock:
        clock = sim.SimClock(NOW, speed=0.0)
    server = sim.start_server(
        scenario=scenario,
        clock=clock,
        ready_delay=ready_delay,
        token=token,
        percentage_of_nodes_to_score=percentage_of_nodes_to_score,
        watch_bookmark_seconds=watch_bookmark_seconds,
        **options,
    )
    try:
        yield server
    finally:
        server.stop()


def call(
    server: sim.SimServer,
    method: str,
    path: str,
    body: Any = None,
    *,
    content_type: str = "application/json",
    headers: Mapping[str, str] | None = None,
) -> tuple[int, Any]:
    """One HTTP request; returns the status code and the JSON body (or text)."""
    connection = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        payload = None if body is None else json.dumps(body).encode()
        all_headers = {"Content-Type": content_type, "Accept": "application/json"}
        all_headers.update(headers or {})
        connection.request(method, path, body=payload, headers=all_headers)
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    try:
        return response.status, json.loads(data)
    except ValueError:
        return response.status, data.decode()


def kubectl(
    kubeconfig: pathlib.Path, *args: str, check: bool = True
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [KUBECTL, "--kubeconfig", str(kubeconfig), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed: {result.stderr}")
    return result


def pods_of(server: sim.SimServer, namespace: str, prefix: str) -> list[dict[str, Any]]:
    return [
        p for p in server.sim.list("pods", namespace) if p["metadata"]["name"].startswith(prefix)
    ]


def is_ready(pod: Mapping[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def eviction(namespace: str, name: str, *, dry_run: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": namespace},
    }
    if dry_run:
        body["deleteOptions"] = {"dryRun": ["All"]}
    return body
