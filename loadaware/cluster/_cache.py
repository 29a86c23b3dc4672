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

The executor's reads (`read_pod`, `list_pods`, `list_node_pods`, `list_nodes`,
`find_namespace`) are answered from the cache, as the raw objects' fields the executor reads;
writes still go to the API server.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import datetime
import functools
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from loadaware import kube
from loadaware.cluster import _convert, _fields, _live, _types
from loadaware.errors import (
    ClusterError,
    ForbiddenError,
    InputError,
    LoadawareError,
    RefusedError,
    UnauthorizedError,
    UnreachableError,
)

if TYPE_CHECKING:
    import kubernetes.client

log = logging.getLogger(__name__)

STALE_CACHE = "stale-cluster-cache"
# Causes of a relist, as counted and logged.
EXPIRED, DROPPED, FAILED = "expired", "dropped", "failed"
# client-go's reflector asks for 5 to 10 minutes; shorter here, so that a kind with
# no events and a server that sends no bookmarks still shows its age is bounded.
WATCH_SECONDS = (60.0, 90.0)
_RETRY_SECONDS = (0.2, 5.0)
_READ_MARGIN_SECONDS = 30.0
_JSON = msgspec.json.Decoder()


@dataclasses.dataclass(slots=True)
class _PodEntry:
    pod: _types.Pod
    class_priority: bool  # its priority comes from its class (completed at the snapshot)
    unschedulable: bool  # kube-scheduler found no node for it (PodScheduled False)
    published: bool = False  # in a snapshot: never changed in place from then on


class _Kind:
    """One kind's objects, converted, and how far its watch has read."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.name = path.rsplit("/", 1)[-1]
        self.objects: dict[str, Any] = {}
        self.version = ""
        self.synced = False
        self.served = True
        self.seen_at: float | None = None  # monotonic time of the newest sign of life
        self.events = 0
        self.relists: dict[str, int] = {}
        self.said: set[str] = set()  # causes already logged
        self.error: str | None = None  # why the last list failed, while it does
        self.failure: LoadawareError | None = None  # the same, as the error it was


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
        self._client = client
        self._sync_timeout = sync_timeout
        self._settings = settings or kube.ClientSettings()
        self._server = kube.server_of(client)
        self._watch_seconds = watch_seconds
        self._monotonic = monotonic
        self._on_event = on_event or (lambda kind, type_: None)
        self._on_relist = on_relist or (lambda kind, cause: None)
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._responses: dict[str, Any] = {}  # kind -> the open watch response
        self._kinds = {path: _Kind(path) for path, _ in _live._LISTS}
        # One converter for the cache's life: what the objects share is kept once.
        converter = _convert.Converter()
        self._converters = {
            path: functools.partial(convert, converter) for path, convert in _CONVERTERS.items()
        }
        self._invalid: dict[str, str] = {}  # object -> why it cannot be read
        self._said_alike: set[str] = set()  # failures logged, whatever the kind
        # Pods, and what their completion depends on.
        self._pods: dict[str, _PodEntry] = {}
        self._pods_by_namespace: dict[str, set[str]] = {}
        self._pods_by_node: dict[str, set[str]] = {}
        self._sorted_pods: list[str] | None = None  # pod keys in list order, once sorted
        self._workloads: tuple[_types.Workload, ...] | None = None  # as last assembled
        self._resolver: _convert._WorkloadResolver | None = None
        self._resolution = 0  # bumped when a workload or a PriorityClass changes
        self._resolved_at = -1
        self._fresh: set[str] = set()  # pods converted since the last snapshot
        self._last_state: _types.ClusterState | None = None
        self._dirty = True

    # --- lifecycle -----------------------------------------------------------------

    def start(self) -> ClusterCache:
        if self._threads:
            return self
        for path in self._kinds:
            thread = threading.Thread(
                target=self._run, args=(path,), name=f"cache-{path.rsplit('/', 1)[-1]}", daemon=True
            )
            self._threads.append(thread)
            thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            responses = list(self._responses.values())
            self._changed.notify_all()
        for response in responses:
            _shutdown(response)
        for thread in self._threads:
            thread.join(timeout=5)

    def __enter__(self) -> ClusterCache:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def synced(self) -> bool:
        with self._lock:
            return all(k.synced for k in self._kinds.values())

    def wait_synced(self, timeout: float | None = None) -> bool:
        """True once every kind has been listed; False when `timeout` passed first, or
        as soon as the first lists failed in a way that waiting does not mend
        (`failure()` says how)."""
        deadline = None if timeout is None else self._monotonic() + timeout
        with self._changed:
            while not all(k.synced for k in self._kinds.values()):
                if self._stop.is_set() or self.failure() is not None:
                    return False
                left = None if deadline is None else deadline - self._monotonic()
                if left is not None and left <= 0:
                    return False
                self._changed.wait(0.5 if left is None else min(0.5, left))
            return True

    # --- what it knows about itself ---------------------------------------------------

    def ages(self) -> dict[str, float | None]:
        """Seconds since each kind's newest event, bookmark, list or watch start; None
        for a kind never listed."""
        now = self._monotonic()
        with self._lock:
            return {k.name: _age(k, now) for k in self._kinds.values()}

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
        with self._lock:
            unsynced = [k for k in self._kinds.values() if not k.synced]
            failures = [k.failure for k in unsynced]
            refused = [f for f in failures if isinstance(f, UnauthorizedError | ForbiddenError)]
            if refused:
                cause = refused[0]
            elif (
                unsynced
                and len(unsynced) == len(self._kinds)
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
        with self._lock:
            errors = {k.name: k.error for k in self._kinds.values() if k.error}
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
        with self._lock:
            return {
                k.name: {
                    "events": k.events,
                    "relists": dict(k.relists),
                    "resourceVersion": k.version,
                    "synced": k.synced,
                }
                for k in self._kinds.values()
            }

    def versions(self) -> dict[str, int]:
        """Per kind path, the resourceVersion its watch has read up to."""
        with self._lock:
            return {k.path: int(k.version or 0) for k in self._kinds.values() if k.served}

    # --- the cluster --------------------------------------------------------------------

    def snapshot(self) -> _types.ClusterState:
        """The cluster as last seen, as read_cluster would give it from a fresh list."""
        with self._lock:
            if not all(k.synced for k in self._kinds.values()):
                raise ClusterError(
                    "the cluster cache has not listed every kind yet", reference=STALE_CACHE
                )
            if self._invalid:
                what, why = next(iter(sorted(self._invalid.items())))
                raise ClusterError(
                    f"the cluster returned an object loadaware cannot read: {what}: {why}",
                    reference="invalid-cluster-object",
                )
            if not self._dirty and self._last_state is not None:
                return self._last_state
            state = self._assemble()
            self._last_state = state
            self._dirty = False
            return state

    def _assemble(self) -> _types.ClusterState:
        kinds = self._kinds
        namespaces = kinds["/api/v1/namespaces"].objects
        classes_kind = kinds["/apis/scheduling.k8s.io/v1/priorityclasses"].objects
        classes = {name: value for name, (value, _) in sorted(classes_kind.items())}
        # As the file loader: the first class, in list order, that says globalDefault.
        default_priority = next(
            (value for _, (value, default) in sorted(classes_kind.items()) if default), 0
        )
        if (
            self._resolved_at != self._resolution
            or self._workloads is None
            or self._resolver is None
        ):
            # A workload or a PriorityClass changed: every pod is completed again.
            workloads: list[_types.Workload] = []
            index: dict[str, _types.Workload] = {}
            for path in _WORKLOAD_PATHS:
                objects = kinds[path].objects  # keyed by Workload.key
                workloads.extend(objects[key] for key in sorted(objects))
                index.update(objects)
            self._workloads = tuple(workloads)
            resolver = _convert._WorkloadResolver(index)
            self._resolver = resolver
            changing: Iterable[str] = self._pods.keys()
        else:
            resolver = self._resolver
            changing = self._fresh
        for key in changing:
            entry = self._pods[key]
            entry.pod = _completed(entry, resolver, classes, default_priority)
            entry.published = True
        self._resolved_at = self._resolution
        self._fresh = set()
        if self._sorted_pods is None:
            self._sorted_pods = sorted(self._pods)
        entries = self._pods
        pods = tuple([entries[key].pod for key in self._sorted_pods])
        nodes = kinds["/api/v1/nodes"].objects
        pdbs = kinds["/apis/policy/v1/poddisruptionbudgets"].objects
        return _types.ClusterState(
            nodes=tuple(nodes[name] for name in sorted(nodes)),
            pods=pods,
            pdbs=tuple(pdbs[key] for key in sorted(pdbs)),
            workloads=self._workloads,
            namespace_labels={name: namespaces[name] for name in sorted(namespaces)},
            priority_classes=classes,
        )

    # --- the executor's reads, as the raw objects' fields it reads ---------------------

    def _listed(self, path: str) -> None:
        """Wait for the kind's first list (up to the sync timeout, or until the cache's
        `failure()` says waiting is vain): before it, an absent object would read as
        gone."""
        deadline = self._monotonic() + self._sync_timeout
        with self._changed:
            while not self._kinds[path].synced:
                failure = self.failure()
                if failure is not None:
                    raise failure
                left = deadline - self._monotonic()
                if left <= 0 or self._stop.is_set():
                    raise ClusterError(
                        f"the cluster cache has not listed {self._kinds[path].name} yet",
                        reference=STALE_CACHE,
                    )
                self._changed.wait(min(0.5, left))

    def read_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        self._listed(_PODS)
        with self._lock:
            entry = self._pods.get(f"{namespace}/{name}")
            return None if entry is None else _pod_view(entry)

    def list_pods(self, namespace: str, label_selector: str = "") -> list[dict[str, Any]]:
        wanted = _equality_selector(label_selector)
        self._listed(_PODS)
        with self._lock:
            keys = sorted(self._pods_by_namespace.get(namespace, ()))
            entries = [self._pods[k] for k in keys]
        return [
            _pod_view(e)
            for e in entries
            if all(e.pod.labels.get(k) == v for k, v in wanted.items())
        ]

    def list_node_pods(self, node: str) -> list[dict[str, Any]]:
        self._listed(_PODS)
        with self._lock:
            entries = [self._pods[k] for k in sorted(self._pods_by_node.get(node, ()))]
        return [_pod_view(e) for e in entries]

    def find_namespace(self, name: str) -> dict[str, Any] | None:
        self._listed("/api/v1/namespaces")
        with self._lock:
            labels = self._kinds["/api/v1/namespaces"].objects.get(name)
        if labels is None:
            return None
        return {"metadata": {"name": name, "labels": dict(labels)}}

    def list_nodes(self) -> list[dict[str, Any]]:
        self._listed("/api/v1/nodes")
        with self._lock:
            nodes = [n for _, n in sorted(self._kinds["/api/v1/nodes"].objects.items())]
        return [_node_view(n) for n in nodes]

    # --- a kind's thread ----------------------------------------------------------------

    def _run(self, path: str) -> None:
        kind = self._kinds[path]
        cause: str | None = None  # why the next list is a relist
        pause = _RETRY_SECONDS[0]
        while not self._stop.is_set():
            try:
                self._list(kind)
                if cause is not None:
                    kind.relists[cause] = kind.relists.get(cause, 0) + 1
                    self._on_relist(kind.name, cause)
                cause = None
                pause = _RETRY_SECONDS[0]
                if not kind.served:
                    return  # an optional kind this server lacks: nothing to watch
                cause = self._watch_until_broken(kind)
            except ClusterError as exc:
                with self._lock:
                    kind.error = exc.summary()[:300]
                    kind.failure = exc
                    # Waiters may now see that every first list failed alike.
                    self._changed.notify_all()
                    # An unreachable server fails every kind alike: said once, not per kind.
                    alike = f"{exc.reference}: {exc.message.partition(': ')[2]}"
                    repeated = isinstance(exc, UnreachableError) and alike in self._said_alike
                    self._said_alike.add(alike)
                if not repeated:
                    self._say(kind, FAILED, kind.error)
                if cause is None and kind.synced:
                    cause = FAILED
                self._stop.wait(pause)
                pause = min(pause * 2, _RETRY_SECONDS[1])
            except Exception as exc:  # a thread that dies would leave the kind to age silently
                log.exception("cluster cache failed", extra={"kind": kind.name})
                cause = FAILED
                with self._lock:
                    kind.error = type(exc).__name__
                self._stop.wait(pause)
                pause = min(pause * 2, _RETRY_SECONDS[1])

    def _list(self, kind: _Kind) -> None:
        items, version = _live.list_kind(self._client, kind.path, self._settings)
        converted: dict[str, Any] = {}
        invalid: dict[str, str] = {}
        convert = self._converters[kind.path]
        for position, raw in enumerate(items, start=1):
            try:
                key, value = convert(raw, position)
            except InputError as exc:
                invalid[_describe(kind, raw)] = exc.message
                continue
            converted[key] = value
        with self._lock:
            prefix = f"{kind.name}: "
            self._invalid = {k: v for k, v in self._invalid.items() if not k.startswith(prefix)}
            self._invalid.update(invalid)
            if kind.path == _PODS:
                self._replace_pods(converted)
            elif kind.path in _RESOLUTION_PATHS and converted != kind.objects:
                self._resolution += 1
            kind.objects = converted
            kind.version = version or ""
            kind.served = version is not None
            kind.synced = True
            kind.error = None
            kind.failure = None
            kind.seen_at = self._monotonic()
            self._dirty = True
            self._changed.notify_all()

    def _watch_until_broken(self, kind: _Kind) -> str:
        """Watch until the stream breaks; the cause of the relist that must follow."""
        while not self._stop.is_set():
            timeout = random.uniform(*self._watch_seconds)
            try:
                response = self._open_watch(kind, timeout)
            except _GoneError:
                self._say(kind, EXPIRED, "the resourceVersion is too old")
                return EXPIRED
            except ClusterError as exc:
                self._say(kind, FAILED, exc.summary())
                return FAILED
            with self._lock:
                self._responses[kind.path] = response
                kind.seen_at = self._monotonic()
            try:
                for line in _lines(response):
                    cause = self._apply(kind, line)
                    if cause is not None:
                        return cause
            except (*kube.CONNECTION_ERRORS, _CutError) as exc:
                if self._stop.is_set():
                    return DROPPED
                self._say(kind, DROPPED, f"{type(exc).__name__}: {exc}")
                return DROPPED
            finally:
                with self._lock:
                    self._responses.pop(kind.path, None)
                with contextlib.suppress(Exception):
                    response.release_conn()
            # Ended by the server's timeout, cleanly: watch on from where it got to.
        return DROPPED

    def _open_watch(self, kind: _Kind, timeout: float) -> Any:
        settings = self._settings
        query: list[tuple[str, Any]] = [
            ("watch", "true"),
            ("resourceVersion", kind.version),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", int(timeout)),
        ]
        response = kube.raw_request(
            self._client,
            "GET",
            kind.path,
            query,
            timeout=(settings.connect_timeout_seconds, timeout + _READ_MARGIN_SECONDS),
            doing=f"watching {kind.path}",
        )
        if response.status == 410:
            response.release_conn()
            raise _GoneError()
        if response.status >= 400:
            answer = kube.read_error(response)
            raise kube.api_error(answer, f"watching {kind.path}", self._server)
        return response

    def _apply(self, kind: _Kind, line: bytes) -> str | None:
        """Apply one watch event; the cause of a relist when the event calls for one."""
        try:
            event = _JSON.decode(line)
            type_ = event["type"]
            obj = event["object"]
        except (msgspec.DecodeError, KeyError, TypeError):
            self._say(kind, FAILED, "a watch event that is not JSON")
            return FAILED
        if type_ == "ERROR":
            code = obj.get("code") if isinstance(obj, dict) else None
            if code == 410:
                self._say(kind, EXPIRED, str(obj.get("message", "")))
                return EXPIRED
            self._say(kind, FAILED, str(obj.get("message", "") if isinstance(obj, dict) else obj))
            return FAILED
        version = ((obj.get("metadata") or {}) if isinstance(obj, dict) else {}).get(
            "resourceVersion"
        )
        if type_ == "BOOKMARK":
            with self._lock:
                kind.version = str(version or kind.version)
                kind.seen_at = self._monotonic()
            return None
        if type_ not in ("ADDED", "MODIFIED", "DELETED"):
            return None
        # Watch events carry kind and apiVersion; a list's items do not, and the
        # converter reads the kind from the object either way.
        key: str | None = None
        value: Any = None
        problem: str | None = None
        try:
            key, value = self._converters[kind.path](obj, 0)
        except InputError as exc:
            problem = exc.message
        described = _describe(kind, obj)
        with self._lock:
            kind.events += 1
            kind.version = str(version or kind.version)
            kind.seen_at = self._monotonic()
            self._dirty = True
            if problem is not None:
                if type_ == "DELETED":
                    self._invalid.pop(described, None)
                else:
                    self._invalid[described] = problem
                self._changed.notify_all()
                return None
            self._invalid.pop(described, None)
            assert key is not None
            if kind.path == _PODS:
                if type_ == "DELETED":
                    self._drop_pod(key)
                else:
                    self._put_pod(key, value)
            else:
                old = kind.objects.get(key)
                if type_ == "DELETED":
                    kind.objects.pop(key, None)
                else:
                    kind.objects[key] = value
                if kind.path in _RESOLUTION_PATHS and (type_ == "DELETED" or old != value):
                    self._resolution += 1
            self._changed.notify_all()
        self._on_event(kind.name, type_)
        return None

    # --- pods and their indexes (lock held) ----------------------------------------------

    def _replace_pods(self, converted: Mapping[str, _PodEntry]) -> None:
        self._sorted_pods = None  # sorted once at the next snapshot, not key by key
        for key in list(self._pods):
            if key not in converted:
                self._drop_pod(key)
        for key, entry in converted.items():
            self._put_pod(key, entry)

    def _put_pod(self, key: str, entry: _PodEntry) -> None:
        old = self._pods.get(key)
        if old is None:
            if self._sorted_pods is not None:
                # One new pod in 150,000: insert it in order rather than sort again.
                bisect.insort(self._sorted_pods, key)
            self._pods_by_namespace.setdefault(entry.pod.namespace, set()).add(key)
        elif old.pod.node_name != entry.pod.node_name and old.pod.node_name:
            self._pods_by_node.get(old.pod.node_name, set()).discard(key)
        if entry.pod.node_name:
            self._pods_by_node.setdefault(entry.pod.node_name, set()).add(key)
        self._pods[key] = entry
        self._fresh.add(key)

    def _drop_pod(self, key: str) -> None:
        entry = self._pods.pop(key, None)
        if entry is None:
            return
        if self._sorted_pods is not None:
            del self._sorted_pods[bisect.bisect_left(self._sorted_pods, key)]
        self._fresh.discard(key)
        self._pods_by_namespace.get(entry.pod.namespace, set()).discard(key)
        if entry.pod.node_name:
            self._pods_by_node.get(entry.pod.node_name, set()).discard(key)

    def _say(self, kind: _Kind, cause: str, detail: str) -> None:
        """Log a cause once per kind: a lasting problem is said, not repeated."""
        with self._lock:
            if cause in kind.said:
                return
            kind.said.add(cause)
            listed = kind.synced
        # A compacted resourceVersion (410 Gone) is how the API server ends old
        # watches: normal. A dropped stream or a failed call is worth a warning.
        log.log(
            logging.INFO if cause == EXPIRED else logging.WARNING,
            "cluster cache relists" if listed else "cluster cache cannot list",
            extra={"kind": kind.name, "reason": f"{cause}: {detail}"[:300]},
        )


class _GoneError(Exception):
    pass


class _CutError(Exception):
    pass


def _age(kind: _Kind, now: float) -> float | None:
    if not kind.synced or kind.seen_at is None:
        return None
    if not kind.served:
        return 0.0  # an optional kind the server lacks: nothing there to go stale
    return max(0.0, now - kind.seen_at)


def _shutdown(response: Any) -> None:
    with contextlib.suppress(AttributeError, OSError):
        response.shutdown()


def _lines(response: Any) -> Iterator[bytes]:
    """The watch stream's events, one JSON document per line, as they arrive."""
    buffer = b""
    for chunk in response.stream(65536, decode_content=True):
        buffer += chunk
        while True:
            end = buffer.find(b"\n")
            if end < 0:
                break
            line, buffer = buffer[:end], buffer[end + 1 :]
            if line.strip():
                yield line
    if buffer.strip():
        # The server ends every event with a newline: a stream that stops inside one
        # was cut.
        raise _CutError(f"the stream ended inside an event ({len(buffer)} bytes)")


def _describe(kind: _Kind, raw: Any) -> str:
    meta = (raw.get("metadata") or {}) if isinstance(raw, dict) else {}
    namespace, name = meta.get("namespace"), meta.get("name")
    return f"{kind.name}: {namespace}/{name}" if namespace else f"{kind.name}: {name}"


def _equality_selector(text: str) -> dict[str, str]:
    """`k=v,k2=v2` as a dict: the only selectors the executor sends."""
    wanted: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key.endswith("!"):
            raise ValueError(f"only equality label selectors are served from the cache: {text}")
        wanted[key.strip()] = value.removeprefix("=").strip()
    return wanted


def _completed(
    entry: _PodEntry,
    resolver: _convert._WorkloadResolver,
    classes: Mapping[str, int],
    default_priority: int,
) -> _types.Pod:
    """The pod with its workload and priority as the cluster now says: itself where
    nothing changed, completed in place where no snapshot has seen it, else a copy."""
    pod = entry.pod
    workload, selector = pod.workload, pod.owner_selector
    if pod.owner is not None:
        workload, selector = resolver.resolve(pod.namespace, pod.owner)
    priority = pod.priority
    if entry.class_priority:
        priority = _convert._class_priority(pod.priority_class_name, classes, default_priority)
    if workload == pod.workload and selector == pod.owner_selector and priority == pod.priority:
        return pod
    if not entry.published:
        object.__setattr__(pod, "workload", workload)
        object.__setattr__(pod, "owner_selector", selector)
        object.__setattr__(pod, "priority", priority)
        return pod
    entry.published = False
    return dataclasses.replace(pod, workload=workload, owner_selector=selector, priority=priority)


def _rfc3339(moment: datetime.datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pod_view(entry: _PodEntry) -> dict[str, Any]:
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


# --- converting one object of a kind --------------------------------------------------


def _reader(raw: Any, kind: str, position: int, namespaced: bool) -> _fields.FieldReader:
    if not isinstance(raw, dict):
        raise InputError(f"{kind}: expected an object")
    return _convert._reader_for(raw, kind, position, namespaced)


def _namespace(converter: _convert.Converter, raw: Any, position: int) -> tuple[str, Any]:
    name, labels = converter.namespace(raw, _reader(raw, "Namespace", position, False))
    return name, labels


def _priority_class(converter: _convert.Converter, raw: Any, position: int) -> tuple[str, Any]:
    r = _reader(raw, "PriorityClass", position, False)
    name, value = converter.priority_class(raw, r)
    return name, (value, r.boolean(raw.get("globalDefault"), "globalDefault"))


def _node(converter: _convert.Converter, raw: Any, position: int) -> tuple[str, Any]:
    node = converter.node(raw, _reader(raw, "Node", position, False))
    return node.name, node


def _pod(converter: _convert.Converter, raw: Any, position: int) -> tuple[str, Any]:
    pod, class_priority = converter.pod(raw, _reader(raw, "Pod", position, True))
    conditions = (raw.get("status") or {}).get("conditions") or []
    unschedulable = any(
        isinstance(c, dict)
        and c.get("type") == "PodScheduled"
        and c.get("status") == "False"
        and c.get("reason") == "Unschedulable"
        for c in conditions
    )
    return pod.key, _PodEntry(pod, class_priority, unschedulable)


def _pdb(converter: _convert.Converter, raw: Any, position: int) -> tuple[str, Any]:
    pdb = converter.pdb(raw, _reader(raw, "PodDisruptionBudget", position, True))
    return pdb.key, pdb


def _workload(kind: str) -> Callable[[_convert.Converter, Any, int], tuple[str, Any]]:
    def convert(converter: _convert.Converter, raw: Any, position: int) -> tuple[str, Any]:
        if isinstance(raw, dict) and not raw.get("kind"):
            raw["kind"] = kind
        workload = converter.workload(raw, _reader(raw, kind, position, True))
        return workload.key, workload

    return convert


_PODS = "/api/v1/pods"
_WORKLOAD_PATHS = (
    "/apis/apps/v1/replicasets",
    "/apis/apps/v1/deployments",
    "/apis/apps/v1/statefulsets",
    "/apis/apps/v1/daemonsets",
    "/apis/batch/v1/jobs",
)
# Kinds a pod's completion reads: a change to one re-completes every pod.
_RESOLUTION_PATHS = frozenset({*_WORKLOAD_PATHS, "/apis/scheduling.k8s.io/v1/priorityclasses"})
# Each kind's conversion of one object, through the cache's converter.
_CONVERTERS: dict[str, Callable[[_convert.Converter, Any, int], tuple[str, Any]]] = {
    "/api/v1/namespaces": _namespace,
    "/apis/scheduling.k8s.io/v1/priorityclasses": _priority_class,
    "/api/v1/nodes": _node,
    _PODS: _pod,
    "/apis/policy/v1/poddisruptionbudgets": _pdb,
    "/apis/apps/v1/replicasets": _workload("ReplicaSet"),
    "/apis/apps/v1/deployments": _workload("Deployment"),
    "/apis/apps/v1/statefulsets": _workload("StatefulSet"),
    "/apis/apps/v1/daemonsets": _workload("DaemonSet"),
    "/apis/batch/v1/jobs": _workload("Job"),
}
