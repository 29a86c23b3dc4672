"""`loadaware sim serve`: a simulated cluster behind a Kubernetes-compatible HTTP API.

`SimCluster` (`_cluster`) is the cluster: storage, controllers, usage, faults and
the simulated clock. `SimServer` serves it on 127.0.0.1 (a free port by default)
from a thread, with its controllers running, so tests start one in-process:

    with start_server(scenario="small") as server:
        server.write_kubeconfig(path)          # for kubectl and the official client
        server.evict("shop", "web-abcde")      # or any client against server.url
        server.wait_for(lambda: ...)           # poll with a deadline

and `serve()` runs one in the foreground for the CLI. The admin API under
/_sim/ (`_admin`: faults, clock, node readiness, a node's GPU exporter, pod
usage, reconcile) does over HTTP what the Python methods do.

Limits: one API version per group; no authorization (an optional bearer token
is the only authentication); no server-side apply; watches replay from a
bounded change log; see the modules for each part's own limits.
"""

from __future__ import annotations

import datetime
import logging
import os
import pathlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from http.server import ThreadingHTTPServer
from typing import Any

import yaml

from loadaware import errors
from loadaware.sim import _clock, _cluster, _handlers, _settings, controllers

log = logging.getLogger(__name__)


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], sim: _cluster.SimCluster) -> None:
        self.sim = sim
        super().__init__(address, _handlers.ApiHandler)


class SimServer:
    """A SimCluster served over HTTP from a thread, with its controllers running."""

    def __init__(self, sim: _cluster.SimCluster, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.sim = sim
        try:
            self._http = _HttpServer((host, port), sim)
        except OSError as exc:
            raise errors.InputError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}"
            ) from exc
        self._runner = controllers.Runner(sim.controllers)
        self._thread = threading.Thread(
            target=self._http.serve_forever,
            kwargs={"poll_interval": 0.05},  # shutdown() waits up to one interval
            name="sim-http",
            daemon=True,
        )
        self._started = False

    @property
    def host(self) -> str:
        return str(self._http.server_address[0])

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> SimServer:
        if not self._started:
            self._started = True
            self._runner.start()
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._started:
            self._http.shutdown()
            self._runner.stop()
            self._started = False
        self._http.server_close()
        # A stopped server streams no more: its watches end with it.
        self.sim.close_connections()

    def restart(self) -> None:
        """Stop serving, cut every open connection's watch, and serve the same cluster
        on the same port again: an API server restart, its storage kept."""
        host, port = self.host, self.port
        self._http.shutdown()
        self._http.server_close()
        self.sim.close_connections()
        self._http = _HttpServer((host, port), self.sim)
        self._thread = threading.Thread(
            target=self._http.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="sim-http",
            daemon=True,
        )
        self._thread.start()

    def __enter__(self) -> SimServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __getattr__(self, name: str) -> Any:
        # The cluster's Python API (evict, advance, set_node_ready, ...) on the server too.
        return getattr(self.sim, name)

    def kubeconfig(
        self, *, name: str = "loadaware-sim", namespace: str = "default"
    ) -> dict[str, Any]:
        token = self.sim.settings.token
        user: dict[str, Any] = {"token": token} if token else {}
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": name, "cluster": {"server": self.url}}],
            "users": [{"name": name, "user": user}],
            "contexts": [
                {"name": name, "context": {"cluster": name, "user": name, "namespace": namespace}}
            ],
            "current-context": name,
            "preferences": {},
        }

    def write_kubeconfig(
        self, path: str | os.PathLike[str], *, name: str = "loadaware-sim"
    ) -> pathlib.Path:
        target = pathlib.Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        # The file may hold a token: readable by its owner only.
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            yaml.safe_dump(self.kubeconfig(name=name), stream, sort_keys=False)
        return target

    def wait_for(
        self, condition: Callable[[], Any], *, timeout: float = 10.0, interval: float = 0.02
    ) -> Any:
        """Poll `condition` until it returns something truthy (returned), or TimeoutError."""
        deadline = time.monotonic() + timeout
        while True:
            result = condition()
            if result:
                return result
            if time.monotonic() >= deadline:
                raise TimeoutError(f"condition not met within {timeout} s")
            time.sleep(interval)


def start_server(
    *,
    scenario: str | None = None,
    objects: Iterable[Mapping[str, Any]] | None = None,
    metrics: Mapping[str, Any] | None = None,
    port: int = 0,
    now: datetime.datetime | None = None,
    clock: _clock.SimClock | None = None,
    settings: _settings.SimSettings | None = None,
    **changes: Any,
) -> SimServer:
    """Build a simulated cluster and serve it on 127.0.0.1 (`port` 0: a free one), started.
    `changes` name SimSettings fields to change from `settings`, as in `build_cluster`."""
    sim = _cluster.build_cluster(
        scenario=scenario,
        objects=objects,
        metrics=metrics,
        now=now,
        clock=clock,
        settings=_cluster.with_changes(settings, changes),
    )
    return SimServer(sim, port=port).start()


def serve(
    server: SimServer,
    *,
    kubeconfig_out: str | os.PathLike[str] | None = None,
    announce: Callable[[str], None] = print,
    stop: threading.Event | None = None,
) -> None:
    """Serve until interrupted (or `stop` is set), announcing the kubeconfig, the URL and
    then each controller inferred (or not) for a partial dump."""
    # kube-scheduler fills its cache from its first list before it schedules. Left to
    # the first pass, a 5,000-node cluster's cache was built while the store was held,
    # and the API answered nothing for longer than clients wait.
    server.sim.controllers.scheduler.occupancy  # noqa: B018
    server.start()
    if kubeconfig_out is not None:
        path = server.write_kubeconfig(kubeconfig_out)
        announce(f"kubeconfig written to {path}")
    announce(f"simulated Kubernetes API at {server.url} (Ctrl-C to stop)")
    # After the two lines above, which scripts read first.
    for note in server.sim.inferred:
        announce(note.message)
    stop = stop or threading.Event()
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
