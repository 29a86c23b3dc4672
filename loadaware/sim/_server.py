"""`loadaware sim serve`: a simulated cluster behind a Kubernetes-compatible HTTP API.

`SimCluster` is the cluster: storage, controllers, usage, faults and the
simulated clock. `SimServer` serves it on 127.0.0.1 (a free port by default)
from a thread, with its controllers running, so tests start one in-process:

    with start_server(scenario="small") as server:
        server.write_kubeconfig(path)          # for kubectl and the official client
        server.evict("shop", "web-abcde")      # or any client against server.url
        server.wait_for(lambda: ...)           # poll with a deadline

and `serve()` runs one in the foreground for the CLI. The admin API under
/_sim/ (faults, clock, node readiness, a node's GPU exporter, pod usage,
reconcile) does over HTTP what the Python methods do.

Limits: one API version per group; no authorization (an optional bearer token
is the only authentication); no server-side apply; watches replay from a
bounded change log; see the modules for each part's own limits.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import os
import pathlib
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from http.server import ThreadingHTTPServer
from typing import Any

import yaml

from loadaware import errors
from loadaware.sim import (
    _clock,
    _controllers,
    _eviction,
    _faults,
    _handlers,
    _infer,
    _pod_ips,
    _requests,
    _resources,
    _scenarios,
    _status,
    _store,
    _usage,
)

log = logging.getLogger(__name__)

_SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
_YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class SimCluster:
    """The simulated cluster, without the HTTP server.

    Owners the objects' pods name but the objects lack (a dump of nodes, pods and
    PDBs only) are inferred from the pods; `inferred` says what was decided for each.
    """

    inferred: list[_infer.Inference]

    def __init__(
        self,
        objects: Iterable[Mapping[str, Any]],
        metrics: Mapping[str, Any] | None = None,
        *,
        clock: _clock.SimClock | None = None,
        ready_delay: float = 2.0,
        token: str | None = None,
        scheduler_seed: int = 0,
        percentage_of_nodes_to_score: int = 0,
        watch_bookmark_seconds: float = 60.0,
    ) -> None:
        self.clock = clock or _clock.SimClock()
        self.store = _store.Store(self.clock)
        self.token = token
        self.requests = _requests.RequestLog()
        # Real seconds between a watch's bookmarks; kube-apiserver sends one about a minute.
        self.watch_bookmark_seconds = watch_bookmark_seconds
        # Open watch connections -> False, or True once cut, or "expired" once told 410.
        self._watches: dict[Any, bool | str] = {}
        self._connections: set[Any] = set()
        self._watches_lock = threading.Lock()
        # A dump without the pods' controllers (kubectl get nodes,pods,pdb) gets them
        # inferred, or nothing would replace an evicted pod.
        objects, self.inferred = _infer.infer_controllers(list(objects))
        objects = _infer.with_container_statuses(objects)
        objects = _pod_ips.with_addresses(objects)
        for note in self.inferred:
            log.info(
                "owner inferred" if note.inferred else "owner not inferred",
                extra={
                    "kind": note.kind,
                    "namespace": note.namespace,
                    "owner": note.name,
                    "reason": note.message,
                },
            )
        self.store.load([*objects, *_system_objects(objects, self.clock)])
        self.usage = _usage.UsageModel(self.clock)
        self.usage.seed(self.store, metrics)
        self.store.on_change.append(self.usage.on_change)
        self.controllers = _controllers.Controllers(
            self.store,
            self.usage,
            ready_delay=ready_delay,
            scheduler_seed=scheduler_seed,
            percentage_of_nodes_to_score=percentage_of_nodes_to_score,
        )
        self.faults = _faults.Faults()

    # --- watch streams ---

    def watch_opened(self, connection: Any) -> None:
        with self._watches_lock:
            self._watches[connection] = False

    def watch_ended(self, connection: Any) -> None:
        with self._watches_lock:
            self._watches.pop(connection, None)

    def watch_closed(self, connection: Any) -> bool:
        with self._watches_lock:
            return self._watches.get(connection, False) is True

    def watch_expired(self, connection: Any) -> bool:
        with self._watches_lock:
            return self._watches.get(connection) == "expired"

    def close_watches(self) -> int:
        """Cut every open watch stream mid-flight, as a restarting API server or a
        dropped connection does: no final chunk, the socket shut. Returns how many."""
        with self._watches_lock:
            connections = list(self._watches)
            for connection in connections:
                self._watches[connection] = True
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        with self.store.changed:
            self.store.changed.notify_all()
        return len(connections)

    def expire_watches(self) -> int:
        """Compact the change log and end every open watch with an ERROR event, 410
        Gone, as the API server does to a watcher whose resourceVersion it no longer
        has. Returns how many watches were ended."""
        self.store.compact()
        with self._watches_lock:
            connections = [c for c, state in self._watches.items() if state is False]
            for connection in connections:
                self._watches[connection] = "expired"
        with self.store.changed:
            self.store.changed.notify_all()
        return len(connections)

    def connection_opened(self, connection: Any) -> None:
        with self._watches_lock:
            self._connections.add(connection)

    def connection_ended(self, connection: Any) -> None:
        with self._watches_lock:
            self._connections.discard(connection)

    def close_connections(self) -> None:
        """Cut every open connection, watches and keep-alive ones alike."""
        self.close_watches()
        with self._watches_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def open_watches(self) -> int:
        with self._watches_lock:
            return len(self._watches)

    # --- the Python API of tests ---

    def reconcile(self) -> None:
        """Run the controllers now, until nothing changes."""
        self.controllers.reconcile()

    def advance(self, seconds: float) -> None:
        """Move the simulated clock forward and let the controllers catch up."""
        # What changed before the clock moves happened at the earlier time: an eviction's
        # replacement is created and bound then, so its ready delay counts from then.
        self.reconcile()
        self.clock.advance(seconds)
        self.reconcile()

    def set_node_ready(self, name: str, ready: bool) -> None:
        self.controllers.set_node_ready(name, ready)

    def ensure_namespace(self, name: str) -> None:
        """Create the namespace unless it exists, as an installation creates its own."""
        with self.store.lock:
            if self.store.find(_resources.NAMESPACES, None, name) is None:
                self.store.create(
                    _resources.NAMESPACES,
                    None,
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
                )

    def set_pod_usage(
        self,
        namespace: str,
        name: str,
        cpu_cores: float,
        memory_bytes: float,
        *,
        gpu_percent: float | None = None,
    ) -> None:
        self.usage.set_pod_usage(
            f"{namespace}/{name}", cpu_cores, memory_bytes, gpu_percent=gpu_percent
        )

    def set_gpu_exporter(self, name: str, running: bool) -> None:
        """Start or stop a node's DCGM exporter: stopped, its GPU series vanish from /metrics."""
        self.usage.set_gpu_exporter(name, running)

    def evict(self, namespace: str, name: str, *, dry_run: bool = False) -> dict[str, Any]:
        """POST an Eviction as a client would; raises _status.ApiError on 4xx/5xx."""
        body: dict[str, Any] = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        if dry_run:
            body["deleteOptions"] = {"dryRun": ["All"]}
        return _eviction.evict(self.store, namespace, name, body, {})

    def get(self, plural: str, namespace: str | None, name: str, group: str = "") -> dict[str, Any]:
        resource = _find_stored(group, plural)
        return self.store.get(resource, namespace if resource.namespaced else None, name)

    def find(
        self, plural: str, namespace: str | None, name: str, group: str = ""
    ) -> dict[str, Any] | None:
        resource = _find_stored(group, plural)
        return self.store.find(resource, namespace if resource.namespaced else None, name)

    def list(
        self, plural: str, namespace: str | None = None, group: str = ""
    ) -> list[dict[str, Any]]:
        return self.store.objects(_find_stored(group, plural), namespace)

    def node_usage(self) -> dict[str, tuple[float, float]]:
        return self.usage.node_usage()

    def exposition(self) -> str:
        with self.store.lock:
            nodes = self.store.objects(_resources.NODES)
            pods = self.store.objects(_resources.PODS)
        return self.usage.exposition(nodes, pods)

    # --- discovery ---

    def version_info(self) -> dict[str, Any]:
        version = _resources.KUBE_VERSION
        major, minor, _ = version.lstrip("v").split(".")
        return {
            "major": major,
            "minor": minor,
            "gitVersion": version,
            "gitCommit": "0000000000000000000000000000000000000000",
            "gitTreeState": "clean",
            "buildDate": "2024-10-22T20:28:14Z",
            "goVersion": "go1.22.8",
            "compiler": "gc",
            "platform": "linux/amd64",
        }

    def discovery_versions(self, address: tuple[str, int]) -> dict[str, Any]:
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": f"{address[0]}:{address[1]}"}
            ],
        }

    def discovery_group(self, group: str) -> dict[str, Any]:
        versions = [
            {"groupVersion": f"{group}/{v}", "version": v} for v in _resources.groups()[group]
        ]
        return {
            "kind": "APIGroup",
            "apiVersion": "v1",
            "name": group,
            "versions": versions,
            "preferredVersion": versions[0],
        }

    def discovery_groups(self) -> dict[str, Any]:
        groups = []
        for group in _resources.groups():
            one = self.discovery_group(group)
            del one["kind"], one["apiVersion"]
            groups.append(one)
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def discovery_resources(self, group: str, version: str) -> dict[str, Any]:
        group_version = f"{group}/{version}" if group else version
        entries: list[dict[str, Any]] = []
        if group == _resources.METRICS_GROUP:
            for plural, kind, namespaced in (
                ("nodes", "NodeMetrics", False),
                ("pods", "PodMetrics", True),
            ):
                entries.append(
                    {
                        "name": plural,
                        "singularName": "",
                        "namespaced": namespaced,
                        "kind": kind,
                        "verbs": ["get", "list"],
                    }
                )
        for r in _resources.SERVED:
            if r.group != group or r.version != version:
                continue
            entry: dict[str, Any] = {
                "name": r.plural,
                "singularName": r.singular,
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": list(r.verbs),
            }
            if r.short_names:
                entry["shortNames"] = list(r.short_names)
            if r.categories:
                entry["categories"] = list(r.categories)
            entries.append(entry)
            for sub in r.subresources:
                if sub == "status":
                    entries.append(
                        {
                            "name": f"{r.plural}/status",
                            "singularName": "",
                            "namespaced": r.namespaced,
                            "kind": r.kind,
                            "verbs": ["get", "patch", "update"],
                        }
                    )
                elif sub == "eviction":
                    entries.append(
                        {
                            "name": f"{r.plural}/eviction",
                            "singularName": "",
                            "namespaced": True,
                            "group": "policy",
                            "version": "v1",
                            "kind": "Eviction",
                            "verbs": ["create"],
                        }
                    )
                elif sub == "binding":
                    entries.append(
                        {
                            "name": f"{r.plural}/binding",
                            "singularName": "",
                            "namespaced": True,
                            "kind": "Binding",
                            "verbs": ["create"],
                        }
                    )
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": group_version,
            "resources": entries,
        }

    # --- the admin API (/_sim/...) ---

    def admin(self, method: str, path: str, body: Any) -> _handlers.Response:
        parts = [p for p in path.split("/") if p][1:]
        if parts == ["healthz"]:
            return _handlers.Response(200, "ok", content_type="text/plain; charset=utf-8")
        if parts and parts[0] == "faults":
            if method == "GET" and len(parts) == 1:
                return _handlers.Response(200, [f.to_json() for f in self.faults.list()])
            if method == "POST" and len(parts) == 1:
                fault = self.faults.add(
                    str(body.get("path", "")),
                    method=body.get("method"),
                    latency=float(body.get("latency", 0)),
                    status=body.get("status"),
                    drop=bool(body.get("drop", False)),
                    times=body.get("times"),
                )
                return _handlers.Response(201, fault.to_json())
            if method == "DELETE" and len(parts) == 1:
                self.faults.clear()
                return _handlers.Response(200, [])
            if method == "DELETE" and len(parts) == 2:
                found = self.faults.remove(int(parts[1]))
                return _handlers.Response(200 if found else 404, {"removed": found})
        if parts == ["clock"]:
            if method == "POST":
                self.advance(float(body.get("advanceSeconds", 0)))
            return _handlers.Response(200, {"now": _clock.rfc3339(self.clock.time())})
        if len(parts) == 3 and parts[0] == "nodes" and parts[2] == "ready" and method == "POST":
            self.set_node_ready(parts[1], bool(body.get("ready", True)))
            return _handlers.Response(
                200, {"node": parts[1], "ready": bool(body.get("ready", True))}
            )
        if (
            len(parts) == 3
            and parts[0] == "nodes"
            and parts[2] == "gpu-exporter"
            and method == "POST"
        ):
            running = bool(body.get("running", True))
            self.set_gpu_exporter(parts[1], running)
            return _handlers.Response(200, {"node": parts[1], "running": running})
        if len(parts) == 3 and parts[0] == "usage" and method == "PUT":
            gpu = body.get("gpu")
            self.set_pod_usage(
                parts[1],
                parts[2],
                float(body["cpu"]),
                float(body["memory"]),
                gpu_percent=None if gpu is None else float(gpu),
            )
            return _handlers.Response(200, {"pod": f"{parts[1]}/{parts[2]}"})
        if parts == ["requests"]:
            if method == "DELETE":
                self.requests.clear()
            return _handlers.Response(200, self.requests.to_json())
        if parts == ["versions"] and method == "GET":
            # Each resource's newest change: how far a watcher must have read.
            latest = {
                f"{group}/{plural}" if group else plural: rv
                for (group, plural), rv in sorted(self.store.latest_change.items())
            }
            return _handlers.Response(200, {"latestChange": latest})
        if parts == ["watches", "close"] and method == "POST":
            return _handlers.Response(200, {"closed": self.close_watches()})
        if parts == ["compact"] and method == "POST":
            return _handlers.Response(200, {"resourceVersion": str(self.store.compact())})
        if parts == ["watches", "expire"] and method == "POST":
            return _handlers.Response(200, {"expired": self.expire_watches()})
        if parts == ["reconcile"] and method == "POST":
            self.reconcile()
            return _handlers.Response(200, {"resourceVersion": str(self.store.resource_version)})
        raise _status.no_such_path()


def _find_stored(group: str, plural: str) -> _resources.Resource:
    for resource in _resources.STORED:
        if resource.group == group and resource.plural == plural:
            return resource
    raise KeyError(f"no stored resource {plural!r} in group {group!r}")


def _system_objects(
    objects: list[Mapping[str, Any]], clock: _clock.SimClock
) -> list[dict[str, Any]]:
    """What every cluster has and a dump usually lacks: the namespaces its objects live
    in and the PriorityClasses its pods name (with the values the pods carry)."""
    created = _clock.rfc3339(clock.time() - 86400 * 30)
    have_namespaces = {
        o["metadata"]["name"] for o in objects if o.get("kind") == "Namespace" and o.get("metadata")
    }
    namespaces = set(_SYSTEM_NAMESPACES)
    classes: dict[str, int] = {
        "system-cluster-critical": 2_000_000_000,
        "system-node-critical": 2_000_001_000,
    }
    have_classes = {
        o["metadata"]["name"]
        for o in objects
        if o.get("kind") == "PriorityClass" and o.get("metadata")
    }
    for obj in objects:
        meta = obj.get("metadata") or {}
        if meta.get("namespace"):
            namespaces.add(meta["namespace"])
        if obj.get("kind") == "Pod":
            spec = obj.get("spec") or {}
            name = spec.get("priorityClassName")
            if name and name not in classes:
                classes[name] = int(spec.get("priority") or 0)
    result: list[dict[str, Any]] = []
    for name in sorted(namespaces - have_namespaces):
        result.append(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": name,
                    "creationTimestamp": created,
                    "labels": {"kubernetes.io/metadata.name": name},
                },
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }
        )
    for name, value in sorted(classes.items()):
        if name in have_classes:
            continue
        result.append(
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name, "creationTimestamp": created},
                "value": value,
                "globalDefault": False,
                "preemptionPolicy": "PreemptLowerPriority",
                "description": "Used for system critical pods that must run in the cluster."
                if name.startswith("system-")
                else f"Priority class {name}.",
            }
        )
    return result


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], sim: SimCluster) -> None:
        self.sim = sim
        super().__init__(address, _handlers.ApiHandler)


class SimServer:
    """A SimCluster served over HTTP from a thread, with its controllers running."""

    def __init__(self, sim: SimCluster, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.sim = sim
        try:
            self._http = _HttpServer((host, port), sim)
        except OSError as exc:
            raise errors.InputError(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}"
            ) from exc
        self._runner = _controllers.Runner(sim.controllers)
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
        user: dict[str, Any] = {"token": self.sim.token} if self.sim.token else {}
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


def load_objects_file(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Raw objects from a cluster file (`kubectl get -o json|yaml` output), Lists flattened."""
    name = os.fspath(path)
    try:
        text = pathlib.Path(name).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise errors.InputError(f"cannot read cluster file {name}: {exc.strerror or exc}") from exc
    try:
        stripped = text.lstrip()
        if stripped.startswith(("{", "[")):
            documents = [json.loads(text)]
        else:
            documents = list(yaml.load_all(text, Loader=_YAML_LOADER))
    except (ValueError, yaml.YAMLError) as exc:
        raise errors.InputError(f"{name}: not JSON or YAML: {exc}") from exc
    objects: list[dict[str, Any]] = []

    def flatten(item: Any) -> None:
        if isinstance(item, list):
            for element in item:
                flatten(element)
        elif isinstance(item, dict):
            if str(item.get("kind", "")).endswith("List") and "items" in item:
                flatten(item.get("items") or [])
            elif item.get("metadata", {}).get("name"):
                objects.append(item)

    flatten(documents)
    if not objects:
        raise errors.InputError(f"{name}: no Kubernetes objects in the file")
    return objects


def load_metrics_document(path: str | os.PathLike[str]) -> dict[str, Any]:
    name = os.fspath(path)
    try:
        document = json.loads(pathlib.Path(name).read_text(encoding="utf-8"))
    except OSError as exc:
        raise errors.InputError(f"cannot read metrics file {name}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise errors.InputError(f"{name}: invalid JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise errors.InputError(f"{name}: expected a JSON object")
    return document


def build_cluster(
    *,
    scenario: str | None = None,
    objects: Iterable[Mapping[str, Any]] | None = None,
    metrics: Mapping[str, Any] | None = None,
    now: datetime.datetime | None = None,
    clock: _clock.SimClock | None = None,
    ready_delay: float = 2.0,
    token: str | None = None,
    scheduler_seed: int = 0,
    percentage_of_nodes_to_score: int = 0,
    watch_bookmark_seconds: float = 60.0,
) -> SimCluster:
    """A SimCluster from a built-in scenario or from raw objects and a metrics document.

    The clock starts at `now` (default: the current time) unless one is given;
    a scenario is generated for that moment, so its metrics are fresh.
    """
    if (scenario is None) == (objects is None):
        raise errors.InputError("give a scenario or objects, not both")
    if clock is None:
        clock = _clock.SimClock(now)
    if scenario is not None:
        generated = _scenarios.builtin_scenario(scenario, now=clock.now())
        objects, metrics = generated.objects, generated.metrics
    assert objects is not None
    return SimCluster(
        objects,
        metrics,
        clock=clock,
        ready_delay=ready_delay,
        token=token,
        scheduler_seed=scheduler_seed,
        percentage_of_nodes_to_score=percentage_of_nodes_to_score,
        watch_bookmark_seconds=watch_bookmark_seconds,
    )


def start_server(
    *,
    scenario: str | None = None,
    objects: Iterable[Mapping[str, Any]] | None = None,
    metrics: Mapping[str, Any] | None = None,
    port: int = 0,
    now: datetime.datetime | None = None,
    clock: _clock.SimClock | None = None,
    ready_delay: float = 2.0,
    token: str | None = None,
    scheduler_seed: int = 0,
    percentage_of_nodes_to_score: int = 0,
    watch_bookmark_seconds: float = 60.0,
) -> SimServer:
    """Build a simulated cluster and serve it on 127.0.0.1 (`port` 0: a free one), started."""
    sim = build_cluster(
        scenario=scenario,
        objects=objects,
        metrics=metrics,
        now=now,
        clock=clock,
        ready_delay=ready_delay,
        token=token,
        scheduler_seed=scheduler_seed,
        percentage_of_nodes_to_score=percentage_of_nodes_to_score,
        watch_bookmark_seconds=watch_bookmark_seconds,
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
