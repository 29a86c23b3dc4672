"""The simulated control plane: the controllers, kube-scheduler and the kubelet run in
rounds, each one's writes the next one's input, until nothing changes.

Work is driven by what changed: a store listener files changed objects as
dirty (`_state`), so a quiet 150,000-pod cluster costs nothing per round.
`reconcile()` runs one round under the store lock; `Runner` runs rounds in a
thread when the store changes or a timer (readiness, grace periods) is due.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from loadaware import scheduling
from loadaware.sim import _clock, _resources, _settings, _store, _usage
from loadaware.sim.controllers import (
    _daemonset,
    _deployment,
    _disruption,
    _garbage_collector,
    _job,
    _kubelet,
    _node_lifecycle,
    _objects,
    _replicaset,
    _scheduler,
    _state,
    _statefulset,
)

log = logging.getLogger(__name__)

# Chains of reactions (evicted -> removed -> replaced -> bound) settle within a few rounds.
_MAX_ROUNDS = 10


class Controllers:
    """Every controller of the simulated cluster, run in turn by `reconcile()`: their
    shared state (`_state`), the kubelet and the scheduler with theirs, and the
    controllers that keep none (functions of the shared state)."""

    def __init__(
        self,
        store: _store.Store,
        usage: _usage.UsageModel,
        settings: _settings.SimSettings,
    ) -> None:
        self.store = store
        self.clock = store.clock
        self.usage = usage
        self._ready_delay = settings.ready_delay
        self.state = _state.ControlState(store)
        self.kubelet = _kubelet.Kubelet(self.state, settings)
        self.scheduler = _scheduler.Scheduler(self.state, settings)

    @property
    def node_sampler(self) -> scheduling.NodeSampler:
        return self.scheduler.node_sampler

    # --- one round ---

    def reconcile(self) -> None:
        """Rounds until nothing more changes (one controller's writes are another's input)."""
        with self.store.lock:
            for _ in range(_MAX_ROUNDS):
                before = self.store.resource_version
                _garbage_collector.collect(self.state)
                _garbage_collector.delete_namespaces(self.state)
                self._workload_controllers()
                self.scheduler.run()
                self.kubelet.run()
                _disruption.sync(self.state)
                if self.store.resource_version == before:
                    break

    def next_due(self) -> float | None:
        """The simulated time at which a timer (start, grace period, PDB expiry) is due."""
        due: list[float] = []
        with self.store.lock:
            for key in list(self.state.pods):
                namespace, _, name = key.partition("/")
                pod = self.store.find(_resources.PODS, namespace, name)
                if pod is None:
                    continue
                deletion = _clock.parse_time(pod["metadata"].get("deletionTimestamp"))
                if deletion is not None:
                    due.append(deletion)
                scheduled = _objects.condition(pod, "PodScheduled")
                if pod["spec"].get("nodeName") and scheduled is not None:
                    since = _clock.parse_time(scheduled.get("lastTransitionTime"))
                    if since is not None:
                        due.append(since + self._ready_delay)
            due.extend(
                since + _disruption.DISRUPTED_POD_TIMEOUT
                for since in self.state.disrupted_since.values()
            )
        return min(due) if due else None

    # --- what the API and tests call ---

    def bind(self, namespace: str, name: str, node: str) -> None:
        """The pods/binding subresource: 409 if already bound; lock held by the caller."""
        self.scheduler.bind(namespace, name, node)

    def set_node_ready(self, name: str, ready: bool) -> None:
        """A node's kubelet stops (or resumes) posting status."""
        _node_lifecycle.set_node_ready(self.store, name, ready)

    # --- workload controllers ---

    def _workload_controllers(self) -> None:
        # Deployments first: they may create or scale the ReplicaSets handled next.
        dirty = self.state.owners
        self.state.owners = set()
        order = (
            _resources.DEPLOYMENTS,
            _resources.REPLICASETS,
            _resources.STATEFULSETS,
            _resources.JOBS,
        )
        # By kind in that order, then by key: the order a scan of the store gives.
        found: list[tuple[int, str, str]] = []
        for uid in dirty:
            known = self.state.workloads.get(uid)
            if known is not None and known[0] in order:
                found.append((order.index(known[0]), known[1], uid))
        found.sort()
        by_uid: dict[str, tuple[_resources.Resource, dict[str, Any]]] = {}
        for rank, key, uid in found:
            namespace, _, name = key.partition("/")
            obj = self.store.find(order[rank], namespace, name)
            if obj is not None and obj["metadata"]["uid"] == uid:
                by_uid[uid] = (order[rank], obj)
        for resource, obj in by_uid.values():
            if resource is _resources.DEPLOYMENTS:
                _deployment.sync(self.state, obj)
        for resource, obj in by_uid.values():
            meta = obj["metadata"]
            current = self.store.find(resource, meta["namespace"], meta["name"])
            if current is None:
                continue
            if resource is _resources.REPLICASETS:
                _replicaset.sync(self.state, current)
            elif resource is _resources.STATEFULSETS:
                _statefulset.sync(self.state, current)
            elif resource is _resources.JOBS:
                _job.sync(self.state, current)
        for resource, obj in by_uid.values():
            if resource is _resources.DEPLOYMENTS:
                _deployment.sync_status(self.state, obj)
        self._daemonsets()

    def _daemonsets(self) -> None:
        """Every DaemonSet when a node changed what they select, else those whose pods
        or spec changed; in key order either way."""
        state = self.state
        everything, dirty = state.all_daemonsets, state.daemonsets
        state.all_daemonsets, state.daemonsets = False, set()
        if everything:
            for ds in self.store.objects(_resources.DAEMONSETS):
                _daemonset.sync(state, ds)
            return
        keys = sorted(
            known[1]
            for uid in dirty
            if (known := state.workloads.get(uid)) is not None and known[0] is _resources.DAEMONSETS
        )
        for key in keys:
            namespace, _, name = key.partition("/")
            ds = self.store.find(_resources.DAEMONSETS, namespace, name)
            if ds is not None:
                _daemonset.sync(state, ds)


class Runner:
    """Runs reconcile rounds in a thread: on every store change, and when a timer is due."""

    def __init__(self, controllers: Controllers, *, poll_seconds: float = 0.05) -> None:
        self.controllers = controllers
        self.poll_seconds = poll_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sim-controllers", daemon=True)
        self._seen = -1

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self.controllers.store.changed:
            self.controllers.store.changed.notify_all()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        store = self.controllers.store
        due: float | None = None
        while not self._stop.is_set():
            try:
                with store.changed:
                    if store.resource_version == self._seen:
                        store.changed.wait(self.poll_seconds)
                    changed = store.resource_version != self._seen
                    if not changed and (due is None or due > store.clock.time()):
                        continue
                    self.controllers.reconcile()
                    self._seen = store.resource_version
                    # Timers only move when the store does: computed once per round.
                    due = self.controllers.next_due()
            except Exception:  # a controller bug must not stop the cluster
                log.exception("simulated controllers failed")
                self._stop.wait(self.poll_seconds)
