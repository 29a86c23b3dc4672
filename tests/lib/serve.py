"""Talking to `loadaware serve` over HTTP, in process or as a child process.

- `ServeClient`: requests to a serve HTTP endpoint on 127.0.0.1 (status and raw
  body), and `answer`/`status` for polling one that may not listen yet;
- `SimService`: the real service built by `runtime.build_service` against a
  simulated cluster, its HTTP server on a free port, started in the background.
"""

from __future__ import annotations

import http.client
import json
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from loadaware import cluster, kube, policy, runtime, sim
from tests.lib.wait import poll


@dataclass(frozen=True)
class ServeClient:
    port: int
    host: str = "127.0.0.1"
    timeout: float = 30.0

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[int, bytes]:
        """The status and body of one request; connection errors propagate."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            connection.request(method, path, body=body, headers=dict(headers or {}))
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def get(self, path: str) -> tuple[int, bytes]:
        return self.request("GET", path)

    def answer(self, path: str) -> bytes | None:
        """A GET's body, or None while nothing answers or the answer is an error status."""
        try:
            status, body = self.get(path)
        except (OSError, http.client.HTTPException):
            return None
        return body if status < 400 else None

    def status(self) -> dict[str, Any] | None:
        """The /status document, or None while nothing answers."""
        body = self.answer("/status")
        return json.loads(body) if body else None


class SimService:
    """`serve`'s service on a simulated cluster, as `loadaware serve` builds it.

    settings: the policy document; build: build_service's keyword arguments."""

    def __init__(
        self,
        server: sim.SimServer,
        tmp_path: pathlib.Path,
        settings: Mapping[str, Any],
        **build: Any,
    ) -> None:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        self.api = kube.api_client(kube.ClientSettings(kubeconfig=str(kubeconfig)))
        self.service = runtime.build_service(policy.parse_policy(settings), self.api, **build)
        self.http = runtime.HttpServer(self.service, "127.0.0.1:0").start()
        self.client = ServeClient(self.http.port)
        self.service.start_background()

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, Any]:
        """The status and the JSON body (None when empty)."""
        headers = {"Content-Type": "application/json"} if body is not None else {}
        status, data = self.client.request(method, path, body, headers)
        return status, json.loads(data or b"null")

    def get(self, path: str) -> tuple[int, bytes]:
        return self.client.get(path)

    def readyz(self) -> tuple[int, dict[str, str]]:
        status, body = self.request("GET", "/readyz")
        return status, body["checks"]

    def leader(self) -> dict[str, Any]:
        return self.request("GET", "/status")[1]["leader"]

    def ready(self) -> cluster.ClusterCache:
        """The service's cache, once /readyz says ready."""
        poll(lambda: self.readyz()[0] == 200, "ready")
        assert self.service.cache is not None
        return self.service.cache

    def stop(self) -> None:
        self.service.stop(round_timeout=10)
        self.http.stop()
