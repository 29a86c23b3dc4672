"""The simulated cluster without its HTTP server: storage, controllers, usage, faults,
the simulated clock and the open watches, with the Python API tests drive it by
(`advance`, `evict`, `set_node_ready`, `set_pod_usage`, ...).

Owners the objects' pods name but the objects lack (a dump of nodes, pods and
PDBs only) are inferred from the pods; `inferred` says what was decided for each.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from loadaware import errors
from loadaware.sim import (
    _clock,
    _eviction,
    _faults,
    _infer,
    _pod_ips,
    _requests,
    _resources,
    _settings,
    _store,
    _usage,
    _watches,
    controllers,
    scenarios,
)

log = logging.getLogger(__name__)

_SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


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
        settings: _settings.SimSettings | None = None,
    ) -> None:
        self.clock = clock or _clock.SimClock()
        self.settings = settings or _settings.SimSettings()
        self.store = _store.Store(self.clock)
        self.requests = _requests.RequestLog()
        self.watches = _watches.Watches(self.store)
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
        self.controllers = controllers.Controllers(self.store, self.usage, self.settings)
        self.faults = _faults.Faults()

    # --- watch streams ---

    def close_watches(self) -> int:
        """Cut every open watch stream mid-flight (see `_watches.Watches.close`)."""
        return self.watches.close()

    def expire_watches(self) -> int:
        """End every open watch with 410 Gone (see `_watches.Watches.expire`)."""
        return self.watches.expire()

    def close_connections(self) -> None:
        """Cut every open connection, watches and keep-alive ones alike."""
        self.watches.close_connections()

    def open_watches(self) -> int:
        return self.watches.count()

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


def build_cluster(
    *,
    scenario: str | None = None,
    objects: Iterable[Mapping[str, Any]] | None = None,
    metrics: Mapping[str, Any] | None = None,
    now: datetime.datetime | None = None,
    clock: _clock.SimClock | None = None,
    settings: _settings.SimSettings | None = None,
    **changes: Any,
) -> SimCluster:
    """A SimCluster from a built-in scenario or from raw objects and a metrics document.

    The clock starts at `now` (default: the current time) unless one is given;
    a scenario is generated for that moment, so its metrics are fresh. `changes`
    name SimSettings fields to change from `settings` (default: the defaults), as
    tests do: `build_cluster(scenario="small", ready_delay=5.0)`.
    """
    settings = with_changes(settings, changes)
    if (scenario is None) == (objects is None):
        raise errors.InputError("give a scenario or objects, not both")
    if clock is None:
        clock = _clock.SimClock(now)
    if scenario is not None:
        generated = scenarios.builtin_scenario(scenario, now=clock.now())
        objects, metrics = generated.objects, generated.metrics
    assert objects is not None
    return SimCluster(
        objects,
        metrics,
        clock=clock,
        settings=settings,
    )


def with_changes(
    settings: _settings.SimSettings | None, changes: Mapping[str, Any]
) -> _settings.SimSettings:
    """`settings` (default: the defaults) with the named fields changed."""
    settings = settings or _settings.SimSettings()
    return dataclasses.replace(settings, **changes) if changes else settings
