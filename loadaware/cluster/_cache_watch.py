"""Keeping the cluster cache current: one thread per kind lists it (paginated, as
read_cluster does; the pods' pages read typed, _cache_pod_pages), then watches from
the list's resourceVersion with bookmarks, writing what it reads into the cache's
store.

A watch the server ends at its timeout is opened again from the last
resourceVersion. One answered 410 Gone (the version was compacted away), one cut
mid-stream, or any other failure of a watch is followed by a relist of that kind; the
old objects serve until the new list is complete. A failed list is retried with a
growing pause. Each cause is logged once per kind and counted (`relists`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import msgspec

from loadaware import kube
from loadaware.cluster import (
    _cache_node_events,
    _cache_objects,
    _cache_pod_pages,
    _cache_store,
    _convert,
    _live,
)
from loadaware.errors import ClusterError, InputError, UnreachableError

if TYPE_CHECKING:
    import kubernetes.client

log = logging.getLogger(__name__)

# How long stop() waits for the watch threads, all together.
_STOP_SECONDS = 5.0

# Causes of a relist, as counted and logged.
EXPIRED, DROPPED, FAILED = "expired", "dropped", "failed"
_RETRY_SECONDS = (0.2, 5.0)
_READ_MARGIN_SECONDS = 30.0
_JSON = msgspec.json.Decoder()


class KindWatchers:
    """The threads that list and watch every kind of the store (see the module)."""

    def __init__(
        self,
        store: _cache_store.CacheStore,
        client: kubernetes.client.ApiClient,
        settings: kube.ClientSettings,
        *,
        watch_seconds: tuple[float, float],
        monotonic: Callable[[], float],
        on_event: Callable[[str, str], None],
        on_relist: Callable[[str, str], None],
    ) -> None:
        self._store = store
        self._client = client
        self._settings = settings
        self._server = kube.server_of(client)
        self._watch_seconds = watch_seconds
        self._monotonic = monotonic
        self._on_event = on_event
        self._on_relist = on_relist
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._responses: dict[str, Any] = {}  # kind -> the open watch response
        self._said_alike: set[str] = set()  # failures logged, whatever the kind
        # One converter for the cache's life: what the objects share is kept once.
        converter = self._converter = _convert.Converter()
        self._converters = {
            path: functools.partial(convert, converter)
            for path, convert in _cache_objects.CONVERTERS.items()
        }
        self._node_events = _cache_node_events.NodeEvents()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def start(self) -> None:
        if self._threads:
            return
        for path in self._store.kinds:
            thread = threading.Thread(
                target=self._run, args=(path,), name=f"cache-{path.rsplit('/', 1)[-1]}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._store.lock:
            responses = list(self._responses.values())
            self._store.changed.notify_all()
        for response in responses:
            _shutdown(response)
        # One bound for all: a thread still inside a request that has no answer yet
        # cannot be woken, and each waited for in turn made stop() cost 5 s a kind.
        # They are daemons: a process that ends does not wait for them.
        deadline = time.monotonic() + _STOP_SECONDS
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    # --- a kind's thread ----------------------------------------------------------------

    def _run(self, path: str) -> None:
        kind = self._store.kinds[path]
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
                with self._store.lock:
                    kind.error = exc.summary()[:300]
                    kind.failure = exc
                    # Waiters may now see that every first list failed alike.
                    self._store.changed.notify_all()
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
                with self._store.lock:
                    kind.error = type(exc).__name__
                self._stop.wait(pause)
                pause = min(pause * 2, _RETRY_SECONDS[1])

    def _list(self, kind: _cache_store.Kind) -> None:
        # Most of a large cluster's objects are pods: their pages are read typed, each
        # pod kept as read, or left raw for its converter (see _cache_pod_pages).
        pods = kind.path == _cache_objects.PODS
        read_page = _cache_pod_pages.PodPages(self._converter).read if pods else None
        items, version = _live.list_kind(
            self._client, kind.path, self._settings, read_page=read_page
        )
        converted: dict[str, Any] = {}
        invalid: dict[str, str] = {}
        node_taints: dict[str, _cache_store.NodeTaints] = {}
        convert = self._converters[kind.path]
        nodes = kind.path == _cache_objects.NODES
        for position, raw in enumerate(items, start=1):
            if pods and isinstance(raw, _cache_objects.PodEntry):
                converted[raw.pod.key] = raw
                continue
            try:
                key, value = convert(raw, position)
            except InputError as exc:
                invalid[_describe(kind, raw)] = exc.message
                continue
            converted[key] = value
            if nodes and (taints := _cache_store.NodeTaints.of(raw)) is not None:
                node_taints[key] = taints
        with self._store.lock:
            self._store.listed(
                kind, converted, invalid, version, self._monotonic(), node_taints=node_taints
            )

    def _watch_until_broken(self, kind: _cache_store.Kind) -> str:
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
            with self._store.lock:
                # stop() sets the event before it takes the lock to shut the streams
                # down: a stream opened after that is this thread's to end.
                stopping = self._stop.is_set()
                if not stopping:
                    self._responses[kind.path] = response
                    kind.seen_at = self._monotonic()
            if stopping:
                _shutdown(response)
                with contextlib.suppress(Exception):
                    response.close()
                    response.release_conn()
                return DROPPED
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
                with self._store.lock:
                    self._responses.pop(kind.path, None)
                with contextlib.suppress(Exception):
                    response.release_conn()
            # Ended by the server's timeout, cleanly: watch on from where it got to.
        return DROPPED

    def _open_watch(self, kind: _cache_store.Kind, timeout: float) -> Any:
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

    def _apply(self, kind: _cache_store.Kind, line: bytes) -> str | None:
        """Apply one watch event; the cause of a relist when the event calls for one."""
        if kind.path == _cache_objects.NODES:
            read = self._node_events.read(line)
            if read is not None:
                self._put(
                    kind, read.type, read.node.name, read.node, read.resource_version, read.taints
                )
                return None
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
        store = self._store
        if type_ == "BOOKMARK":
            with store.lock:
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
        if problem is not None:
            with store.lock:
                kind.events += 1
                kind.version = str(version or kind.version)
                kind.seen_at = self._monotonic()
                store.put_invalid(type_, described, problem)
                store.changed.notify_all()
            return None
        assert key is not None
        taints = _cache_store.NodeTaints.of(obj) if kind.path == _cache_objects.NODES else None
        self._put(kind, type_, key, value, version, taints, described)
        return None

    def _put(
        self,
        kind: _cache_store.Kind,
        type_: str,
        key: str,
        value: Any,
        version: Any,
        taints: _cache_store.NodeTaints | None,
        described: str | None = None,
    ) -> None:
        store = self._store
        with store.lock:
            kind.events += 1
            kind.version = str(version or kind.version)
            kind.seen_at = self._monotonic()
            store.put(
                kind, type_, key, value, described or f"{kind.name}: {key}", node_taints=taints
            )
            store.changed.notify_all()
        self._on_event(kind.name, type_)

    def _say(self, kind: _cache_store.Kind, cause: str, detail: str) -> None:
        """Log a cause once per kind: a lasting problem is said, not repeated."""
        with self._store.lock:
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


def _describe(kind: _cache_store.Kind, raw: Any) -> str:
    meta = raw.get("metadata") if isinstance(raw, dict) else None
    if not isinstance(meta, dict):
        # The object is refused for it; what names it must not fail in turn.
        meta = {}
    namespace, name = meta.get("namespace"), meta.get("name")
    return f"{kind.name}: {namespace}/{name}" if namespace else f"{kind.name}: {name}"
