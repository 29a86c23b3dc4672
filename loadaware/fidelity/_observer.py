"""The binding observer: every pod the cluster's scheduler binds, compared with what
the model would have done, into a sliding window of agreement.

The cluster cache tells the observer each change it applies (`add_listener`); the
listener only queues it, so the watch never waits. A worker thread keeps a mirror
of the scheduler's cache (`_mirror.ClusterMirror`), built from a snapshot of the
cluster cache and then kept current change by change, in order. A pod of a
modelled scheduler (`scheduling.modelled_profiles`) seen going from unbound to
bound, by whoever bound it, is compared (`_rule.compare_binding`) against the
mirror as it is just before that change: the cluster the scheduler saw, the pod
not yet placed, the pods bound before it placed, those bound after it not. Each
comparison is recorded in the window (`scheduling.AgreementWindow`) and handed to
`on_binding` (the service counts it).

Not compared: a DaemonSet's pods (their node is chosen by the DaemonSet
controller's node affinity, so they would say nothing of the scoring), pods
created already bound (static pods' mirrors, pods given a nodeName), and
bindings the mirror cannot place in order: those applied while it is being
rebuilt (a node added or deleted, a namespace's labels changed, a kind listed
again, the queue over QUEUE_LIMIT changes behind), counted as `skipped`, and
those a relist found bound, which no change shows.

Cost: a rebuild builds an Occupancy from a snapshot (seconds at 5,000 nodes and
150,000 pods), and happens only when the mirror cannot follow; a binding costs
one scoring of the pod over every node (a few milliseconds at 1,000 nodes);
every other change costs a few dictionary updates.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from loadaware import cluster, errors, scheduling
from loadaware.fidelity import _mirror, _rule

log = logging.getLogger(__name__)

# Changes the queue may hold before the observer gives up following them one by
# one and starts again from a snapshot (a worker far behind a busy cluster).
QUEUE_LIMIT = 200_000
WINDOW_SIZE = 500
WINDOW_SECONDS = 3600.0
_IDLE_SECONDS = 1.0

BindingSink = Callable[[scheduling.Binding], None]


class BindingObserver:
    """Compares each new binding of a modelled pod with the model (see the module)."""

    def __init__(
        self,
        cache: cluster.ClusterCache,
        profiles: scheduling.SchedulerProfiles = scheduling.DEFAULT_PROFILES,
        *,
        percentage_of_nodes_to_score: int = 0,
        window: scheduling.AgreementWindow | None = None,
        on_binding: BindingSink | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._cache = cache
        self._profiles = profiles
        self._percentage = percentage_of_nodes_to_score
        self.window = window or scheduling.AgreementWindow(WINDOW_SIZE, WINDOW_SECONDS)
        self._on_binding = on_binding or (lambda binding: None)
        self._monotonic = monotonic
        self._queue: collections.deque[cluster.CacheChange] = collections.deque()
        self._overflowed = False
        self._wake = threading.Event()
        self._idle = threading.Condition()
        self._busy = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._mirror: _mirror.ClusterMirror | None = None
        self._mirrored_to = 0  # the last change the mirror includes
        self._lock = threading.Lock()  # guards the counts below
        self._counts = {"compared": 0, "skipped": 0, "rebuilds": 0}
        self._seconds = {"comparing": 0.0, "rebuilding": 0.0}  # thread CPU time

    # --- lifecycle --------------------------------------------------------------------

    def start(self) -> BindingObserver:
        if self._thread is None:
            self._cache.add_listener(self._hear)
            self._thread = threading.Thread(target=self._run, name="binding-observer", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def __enter__(self) -> BindingObserver:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- what it found ----------------------------------------------------------------

    def snapshot(self) -> scheduling.ModelAgreement:
        """The agreement over the window: per schedulerName, and the latest disagreements."""
        return self.window.snapshot(now=self._monotonic())

    def stats(self) -> dict[str, Any]:
        """Bindings compared and skipped, rebuilds, the worker's CPU seconds comparing
        and rebuilding, and the changes waiting."""
        with self._lock:
            found: dict[str, Any] = {**self._counts}
            found.update({f"{k}Seconds": round(v, 3) for k, v in self._seconds.items()})
        found["queued"] = len(self._queue)
        return found

    def wait_idle(self, timeout: float) -> bool:
        """True once every change heard so far is followed; False after `timeout`."""
        with self._idle:
            return self._idle.wait_for(
                lambda: not self._queue and not self._busy and self._mirror is not None,
                timeout,
            )

    # --- the watch thread's side ------------------------------------------------------

    def _hear(self, change: cluster.CacheChange) -> None:
        # Called with the cache locked: queue and return.
        if len(self._queue) >= QUEUE_LIMIT:
            self._queue.clear()
            self._overflowed = True
        self._queue.append(change)
        self._wake.set()

    # --- the worker -------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(_IDLE_SECONDS)
            self._wake.clear()
            self._busy = True
            try:
                self._follow()
            except Exception:  # the worker must outlive a change it cannot follow
                log.exception("binding observer failed; rebuilding its mirror")
                self._mirror = None
            finally:
                with self._idle:
                    self._busy = False
                    self._idle.notify_all()

    def _follow(self) -> None:
        if self._overflowed:
            self._overflowed = False
            self._mirror = None
        if self._mirror is None and not self._rebuild():
            return
        while self._queue and not self._stop.is_set():
            change = self._queue.popleft()
            if change.sequence <= self._mirrored_to:
                continue  # in the snapshot the mirror was built from
            mirror = self._mirror
            assert mirror is not None
            if change.kind == "pods":
                self._compare(mirror, change)
            if not mirror.apply(change):
                self._mirror = None
                if not self._rebuild():
                    return
            else:
                self._mirrored_to = change.sequence

    def _rebuild(self) -> bool:
        if not self._cache.synced:
            return False
        started = time.thread_time()
        try:
            state, sequence = self._cache.counted_snapshot()
        except errors.ClusterError:
            return False  # not every kind listed yet, or an object it cannot read
        # A copy (taken at once, in C): the watch threads go on appending meanwhile.
        queued = self._queue.copy()
        skipped = sum(
            1 for c in queued if c.sequence <= sequence and self._is_binding(c) is not None
        )
        self._mirror = _mirror.ClusterMirror.from_state(state)
        self._mirrored_to = sequence
        with self._lock:
            self._counts["rebuilds"] += 1
            self._counts["skipped"] += skipped
            self._seconds["rebuilding"] += time.thread_time() - started
        return True

    def _is_binding(self, change: cluster.CacheChange) -> scheduling.SchedulerProfile | None:
        """The profile of the pod the change binds, None when it binds no modelled pod."""
        old, new = change.old, change.new
        if (
            change.kind != "pods"
            or old is None
            or new is None
            or old.node_name is not None
            or new.node_name is None
            or new.is_daemonset_pod
        ):
            return None
        return self._profiles.for_pod(new)

    def _compare(self, mirror: _mirror.ClusterMirror, change: cluster.CacheChange) -> None:
        profile = self._is_binding(change)
        if profile is None:
            return
        started = time.thread_time()
        binding = _rule.compare_binding(
            mirror.completed(change.old),
            change.new.node_name,
            mirror.occupancy,
            profile=profile,
            percentage_of_nodes_to_score=self._percentage,
            terminating=tuple(mirror.terminating.values()),
            indexes=mirror.indexes,
            seen_at=self._monotonic(),
        )
        with self._lock:
            self._counts["compared"] += 1
            self._seconds["comparing"] += time.thread_time() - started
        self.window.record(binding)
        if not binding.agreed:
            # At debug level: on a cluster whose scheduler scores otherwise this is
            # every binding; /status and the metrics carry the figure and examples.
            log.debug(
                "scheduler binding the model disagrees with",
                extra={
                    "pod": binding.pod,
                    "node": binding.node,
                    "scheduler_name": binding.scheduler_name,
                    "reason": binding.reason,
                },
            )
        self._on_binding(binding)
