"""The cluster as a watched cache: each kind listed once, then watched from the list's
resourceVersion, so that a round reads memory and the API server serves events.

    with ClusterCache(client) as cache:       # lists every kind, then watches
        cache.wait_synced(timeout=120)
        cache.check_fresh(max_age)            # RefusedError (exit 3) when too old
        state = cache.snapshot()              # a ClusterState, as read_cluster gives

One thread per kind lists it (paginated, as read_cluster does), converts every
object once, then watches from the list's resourceVersion with bookmarks. Each
ADDED, MODIFIED or DELETED event converts the one object it carries, as the
file loader would; a snapshot only assembles what is converted, in the API
server's list order (by namespace and name), so it plans as a fresh list would.
Pods are completed (their workload, their priority from its class) at the
snapshot: again only the pods that changed, unless a workload or a
PriorityClass did.

A watch the server ends at its timeout is opened again from the last
resourceVersion. One answered 410 Gone (the version was compacted away), one
cut mid-stream, or any other failure of a watch is followed by a relist of that
kind; the old objects serve until the new list is complete. Each cause is
logged once per kind and counted (`relists`).

Age: per kind, the time since its newest event, bookmark, list or watch start.
`check_fresh` refuses a round, as stale metrics do, when any kind is older than
the bound; a kind whose list never completed is refused too.

Listeners (`add_listener`) are told each change as it is applied (`CacheChange`,
numbered), and `counted_snapshot` says how many changes a snapshot includes: what
mirrors the cluster by its changes (the binding observer) starts from one and
follows on. The cache only holds objects; what a listener makes of them is its own.

The executor's reads (`read_pod`, `list_pods`, `list_node_pods`, `list_nodes`,
`find_namespace`, and `read_node`, a node's taints with their resourceVersion) are
answered from the cache, as the raw objects' fields the executor reads; writes still
go to the API server. A pod's is built once per change of the pod and shared by every
read until the next: the readers must not change what they get.

Its parts: `_cache_watch` lists and watches each kind, `_cache_store` holds what they
read and assembles the snapshot, `_cache_objects` converts one object of each kind,
`_cache_pod_pages` reads the pod list's pages typed, as the file loader reads pods;
this module answers from them.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loadaware import kube
from loadaware.cluster import _cache_objects, _cache_store, _cache_watch, _live, _types
from loadaware.errors import ClusterError, ForbiddenError, RefusedError, UnauthorizedError

if TYPE_CHECKING:
    import kubernetes.client

STALE_CACHE = "stale-cluster-cache"
# client-go's reflector asks for 5 to 10 minutes; shorter here, so that a kind with
# no events and a server that sends no bookmarks still shows its age is bounded.
WATCH_SECONDS = (60.0, 90.0)


class ClusterCache:
    """The cluster's kinds, listed once and kept current by watches (see the module)."""

    def __init__(
        self,
        client: kubernetes.client.ApiClient,
        settings: kube.ClientSettings | None = None,
        *,
        watch_seconds: tuple[float, float] = WATCH_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
        on_event: Callable[[str, str], None] | None = None,
        on_relist: Callable[[str, str], None] | None = None,
        sync_timeout: float = 300.0,
    ) -> None:
        self._sync_timeout = sync_timeout
        self._monotonic = monotonic
        self._store = _cache_store.CacheStore(path for path, _ in _live._LISTS)
        self._watchers = _cache_watch.KindWatchers(
            self._store,
            client,
            settings or kube.ClientSettings(),
            watch_seconds=watch_seconds,
            monotonic=monotonic,
            on_event=on_event or (lambda kind, type_: None),
            on_relist=on_relist or (lambda kind, cause: None),
        )

    # --- lifecycle -----------------------------------------------------------------

    def start(self) -> ClusterCache:
        self._watchers.start()
        return self

    def stop(self) -> None:
        self._watchers.stop()

    def __enter__(self) -> ClusterCache:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def synced(self) -> bool:
        with self._store.lock:
            return self._store.synced

    def wait_synced(self, timeout: float | None = None) -> bool:
        """True once every kind has been listed; False when `timeout` passed first, or
        as soon as the first lists failed in a way that waiting does not mend
        (`failure()` says how)."""
        deadline = None if timeout is None else self._monotonic() + timeout
        with self._store.changed:
            while not self._store.synced:
                if self._watchers.stopped or self.failure() is not None:
                    return False
                left = None if deadline is None else deadline - self._monotonic()
                if left is not None and left <= 0:
                    return False
                self._store.changed.wait(0.5 if left is None else min(0.5, left))
            return True

    # --- what it knows about itself ---------------------------------------------------

    def ages(self) -> dict[str, float | None]:
        """Seconds since each kind's newest event, bookmark, list or watch start; None
        for a kind never listed."""
        now = self._monotonic()
        with self._store.lock:
            return {k.name: _age(k, now) for k in self._store.kinds.values()}

    def age(self) -> float | None:
        """The oldest kind's age; None until every kind has been listed."""
        ages = self.ages().values()
        if any(a is None for a in ages):
            return None
        return max(a for a in ages if a is not None)

    def failure(self) -> RefusedError | None:
        """Why the kinds not yet listed cannot be expected to be: a first list refused
        for its credentials (401) or its permissions (403), or the first list of every
        kind failed the same way (an unreachable server, a TLS failure). None while a
        list may yet succeed. The lists go on being retried; a success clears it."""
        with self._store.lock:
            unsynced = [k for k in self._store.kinds.values() if not k.synced]
            failures = [k.failure for k in unsynced]
            refused = [f for f in failures if isinstance(f, UnauthorizedError | ForbiddenError)]
            if refused:
                cause = refused[0]
            elif (
                unsynced
                and len(unsynced) == len(self._store.kinds)
                and all(f is not None for f in failures)
                and len({f.reference for f in failures if f is not None}) == 1
            ):
                cause = failures[0]
            else:
                return None
        assert cause is not None
        every = "" if refused else "every kind's first list failed: "
        return RefusedError(
            f"the cluster cache cannot list the cluster: {every}{cause}",
            reference=cause.reference,
            hint=cause.hint,
        )

    def check_fresh(self, max_age: datetime.timedelta) -> None:
        """RefusedError (stale-cluster-cache) unless every kind is listed and younger
        than `max_age`; the cache's `failure()` when it has one."""
        failure = self.failure()
        if failure is not None:
            raise failure
        bound = max_age.total_seconds()
        with self._store.lock:
            errors = {k.name: k.error for k in self._store.kinds.values() if k.error}
        stale: list[str] = []
        for name, age in sorted(self.ages().items()):
            if age is None:
                why = errors.get(name)
                stale.append(f"{name} never listed" + (f" ({why})" if why else ""))
            elif age > bound:
                stale.append(f"{name} {age:.0f}s old")
        if stale:
            raise RefusedError(
                f"the cluster cache is older than {bound:.0f}s: {', '.join(stale)}",
                reference=STALE_CACHE,
            )

    def stats(self) -> dict[str, dict[str, Any]]:
        """Per kind: events applied, relists by cause, resourceVersion, synced."""
        with self._store.lock:
            return {
                k.name: {
                    "events": k.events,
                    "relists": dict(k.relists),
                    "resourceVersion": k.version,
                    "synced": k.synced,
                }
                for k in self._store.kinds.values()
            }

    def versions(self) -> dict[str, int]:
        """Per kind path, the resourceVersion its watch has read up to."""
        with self._store.lock:
            return {k.path: int(k.version or 0) for k in self._store.kinds.values() if k.served}

    # --- the cluster --------------------------------------------------------------------

    def add_listener(self, listener: _cache_store.CacheListener) -> None:
        """Tell `listener` every change from now on, in the order applied. It is called
        on a watch thread with the cache locked: it must hand the change on and return
        at once, never block nor read the cache."""
        with self._store.lock:
            self._store.listeners.append(listener)

    def counted_snapshot(self) -> tuple[_types.ClusterState, int]:
        """The snapshot, and the sequence number of the last change it includes (the
        changes told to listeners are numbered from 1)."""
        with self._store.lock:
            return self.snapshot(), self._store.changes

    def snapshot(self) -> _types.ClusterState:
        """The cluster as last seen, as read_cluster would give it from a fresh list."""
        with self._store.lock:
            if not self._store.synced:
                raise ClusterError(
                    "the cluster cache has not listed every kind yet", reference=STALE_CACHE
                )
            if self._store.invalid:
                what, why = next(iter(sorted(self._store.invalid.items())))
                raise ClusterError(
                    f"the cluster returned an object loadaware cannot read: {what}: {why}",
                    reference="invalid-cluster-object",
                )
            return self._store.snapshot()

    # --- the executor's reads, as the raw objects' fields it reads ---------------------

    def _listed(self, path: str) -> None:
        """Wait for the kind's first list (up to the sync timeout, or until the cache's
        `failure()` says waiting is vain): before it, an absent object would read as
        gone."""
        deadline = self._monotonic() + self._sync_timeout
        with self._store.changed:
            while not self._store.kinds[path].synced:
                failure = self.failure()
                if failure is not None:
                    raise failure
                left = deadline - self._monotonic()
                if left <= 0 or self._watchers.stopped:
                    raise ClusterError(
                        f"the cluster cache has not listed {self._store.kinds[path].name} yet",
                        reference=STALE_CACHE,
                    )
                self._store.changed.wait(min(0.5, left))

    def read_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        self._listed(_cache_objects.PODS)
        with self._store.lock:
            entry = self._store.pods.get(f"{namespace}/{name}")
        return None if entry is None else _pod_view(entry)

    def list_pods(self, namespace: str, label_selector: str = "") -> list[dict[str, Any]]:
        wanted = _equality_selector(label_selector)
        self._listed(_cache_objects.PODS)
        with self._store.lock:
            keys = sorted(self._store.pods_labelled(namespace, wanted))
            entries = [self._store.pods[k] for k in keys]
        return _pod_views(entries)

    def list_node_pods(self, node: str) -> list[dict[str, Any]]:
        self._listed(_cache_objects.PODS)
        with self._store.lock:
            entries = [self._store.pods[k] for k in sorted(self._store.pods_by_node.get(node, ()))]
        return _pod_views(entries)

    def read_node(self, name: str) -> dict[str, Any] | None:
        """The node's taints and resourceVersion as last seen (the fields a write of its
        taints reads), or None when the cache does not hold them. The version may be
        behind the server's: a write naming it then fails with a conflict."""
        self._listed(_cache_objects.NODES)
        with self._store.lock:
            seen = self._store.node_taints.get(name)
        if seen is None:
            return None
        return {
            "metadata": {"name": name, "resourceVersion": seen.resource_version},
            "spec": {"taints": [dict(t) for t in seen.taints]},
        }

    def find_namespace(self, name: str) -> dict[str, Any] | None:
        self._listed("/api/v1/namespaces")
        with self._store.lock:
            labels = self._store.kinds["/api/v1/namespaces"].objects.get(name)
        if labels is None:
            return None
        return {"metadata": {"name": name, "labels": dict(labels)}}

    def list_nodes(self) -> list[dict[str, Any]]:
        self._listed("/api/v1/nodes")
        with self._store.lock:
            nodes = [n for _, n in sorted(self._store.kinds["/api/v1/nodes"].objects.items())]
        return [_node_view(n) for n in nodes]


def _age(kind: _cache_store.Kind, now: float) -> float | None:
    if not kind.synced or kind.seen_at is None:
        return None
    if not kind.served:
        return 0.0  # an optional kind the server lacks: nothing there to go stale
    return max(0.0, now - kind.seen_at)


def _equality_selector(text: str) -> dict[str, str]:
    """`k=v,k2=v2` as a dict: the only selectors the executor sends."""
    wanted: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key.endswith("!"):
            raise ValueError(f"only equality label selectors are served from the cache: {text}")
        wanted[key.strip()] = value.removeprefix("=").strip()
    return wanted


def _rfc3339(moment: datetime.datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod_view(entry: _cache_objects.PodEntry) -> dict[str, Any]:
    """The entry's view, built at its first read and kept with it: the executor reads a
    workload's pods at every check, and an entry is replaced, never changed, when its
    pod changes (completing it at a snapshot changes no field read here). Shared by
    every read of the entry: callers must not change it."""
    view = entry.view
    if view is None:
        view = entry.view = _built_view(entry)
    return view


def _pod_views(entries: list[_cache_objects.PodEntry]) -> list[dict[str, Any]]:
    # Most are built already, at every check after the first: no call for those.
    return [e.view or _pod_view(e) for e in entries]


def _built_view(entry: _cache_objects.PodEntry) -> dict[str, Any]:
    pod = entry.pod
    meta: dict[str, Any] = {
        "name": pod.name,
        "namespace": pod.namespace,
        "uid": pod.uid,
        "labels": dict(pod.labels),
        "creationTimestamp": _rfc3339(pod.creation_timestamp),
    }
    if pod.owner is not None:
        meta["ownerReferences"] = [
            {
                "kind": pod.owner.kind,
                "name": pod.owner.name,
                "uid": pod.owner.uid,
                "controller": True,
            }
        ]
    if pod.deletion_timestamp is not None:
        meta["deletionTimestamp"] = _rfc3339(pod.deletion_timestamp)
    conditions = [{"type": "Ready", "status": "True" if pod.ready else "False"}]
    if entry.unschedulable:
        conditions.append({"type": "PodScheduled", "status": "False", "reason": "Unschedulable"})
    return {
        "metadata": meta,
        "spec": {"nodeName": pod.node_name} if pod.node_name else {},
        "status": {"phase": pod.phase, "conditions": conditions},
    }


def _node_view(node: _types.Node) -> dict[str, Any]:
    return {
        "metadata": {"name": node.name, "uid": node.uid, "labels": dict(node.labels)},
        "spec": {
            "taints": [{"key": t.key, "value": t.value, "effect": t.effect} for t in node.taints],
            "unschedulable": node.unschedulable,
        },
    }
