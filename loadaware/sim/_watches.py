"""Watches: the open watch streams and connections of a simulated API server, and the
stream one watch request gets.

A watch replays the store's change log from the requested resourceVersion (410
once it is older than the log); an object that comes into a watch's selectors is
sent as ADDED and one that leaves them as DELETED, as the real API does; with
`allowWatchBookmarks` a BOOKMARK carries the watch's progress every
`watch_bookmark_seconds`; `timeoutSeconds` ends the stream. Tests cut every stream
(`close`, a restarting API server) or end them with 410 Gone (`expire`).
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from loadaware.sim import _events, _resources, _response, _selectors, _status, _storage, _store

_WATCH_POLL = 0.5
# kube-apiserver ends a watch that names no timeoutSeconds after --min-request-timeout
# (1800 s) at the earliest.
_DEFAULT_WATCH_SECONDS = 1800.0


class WatchRequestError(Exception):
    """Raised by routing to hand the connection over to a watch stream."""

    def __init__(self, resource: _resources.Resource, namespace: str | None, query: dict[str, str]):
        super().__init__("watch")
        self.resource = resource
        self.namespace = namespace
        self.query = query


class Watches:
    """The open connections and which of them stream a watch."""

    def __init__(self, store: _store.Store) -> None:
        self._store = store
        # Open watch connections -> False, or True once cut, or "expired" once told 410.
        self._watches: dict[Any, bool | str] = {}
        self._connections: set[Any] = set()
        self.connections_accepted = 0  # every connection ever opened to the server
        self._lock = threading.Lock()

    def opened(self, connection: Any) -> None:
        with self._lock:
            self._watches[connection] = False

    def ended(self, connection: Any) -> None:
        with self._lock:
            self._watches.pop(connection, None)

    def is_closed(self, connection: Any) -> bool:
        with self._lock:
            return self._watches.get(connection, False) is True

    def is_expired(self, connection: Any) -> bool:
        with self._lock:
            return self._watches.get(connection) == "expired"

    def close(self) -> int:
        """Cut every open watch stream mid-flight, as a restarting API server or a
        dropped connection does: no final chunk, the socket shut. Returns how many."""
        with self._lock:
            connections = list(self._watches)
            for connection in connections:
                self._watches[connection] = True
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        with self._store.changed:
            self._store.changed.notify_all()
        return len(connections)

    def expire(self) -> int:
        """Compact the change log and end every open watch with an ERROR event, 410
        Gone, as the API server does to a watcher whose resourceVersion it no longer
        has. Returns how many watches were ended."""
        self._store.compact()
        with self._lock:
            connections = [c for c, state in self._watches.items() if state is False]
            for connection in connections:
                self._watches[connection] = "expired"
        with self._store.changed:
            self._store.changed.notify_all()
        return len(connections)

    def connection_opened(self, connection: Any) -> None:
        with self._lock:
            self._connections.add(connection)
            self.connections_accepted += 1

    def connection_ended(self, connection: Any) -> None:
        with self._lock:
            self._connections.discard(connection)

    def close_connections(self) -> None:
        """Cut every open connection, watches and keep-alive ones alike."""
        self.close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def count(self) -> int:
        with self._lock:
            return len(self._watches)


def stream(
    watch: WatchRequestError,
    *,
    store: _store.Store,
    watches: Watches,
    connection: Any,
    write: Callable[[bytes], Any],
    bookmark_seconds: float,
) -> bool:
    """Stream one watch over a connection until its timeout, a cut or a 410; `write`
    sends bytes on it. False when the connection broke."""

    def send(data: bytes) -> None:
        write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    resource = watch.resource
    stored = _resources.EVENTS if resource is _resources.EVENTS_V1 else resource
    view = _events.to_events_v1 if resource is _resources.EVENTS_V1 else None
    query = watch.query
    labels = _selectors.parse_label_selector(query.get("labelSelector", ""))
    field_text = query.get("fieldSelector", "")
    if view is not None:
        field_text = _events.events_v1_fields(field_text)
    fields = _selectors.parse_field_selector(field_text, stored.field_selectors, stored.kind)
    selects = bool(query.get("labelSelector", "").strip() or field_text.strip())
    try:
        timeout = float(query.get("timeoutSeconds") or _DEFAULT_WATCH_SECONDS)
    except ValueError:
        timeout = _DEFAULT_WATCH_SECONDS
    deadline = time.monotonic() + timeout
    bookmarks = query.get("allowWatchBookmarks") in ("true", "1")
    bookmark_every = bookmark_seconds
    next_bookmark = time.monotonic() + bookmark_every

    def wanted(obj: Mapping[str, Any] | None) -> bool:
        if obj is None:
            return False
        meta = obj.get("metadata") or {}
        if watch.namespace and meta.get("namespace") != watch.namespace:
            return False
        return labels(meta.get("labels") or {}) and fields(obj)

    def encode(kind: str, obj: Mapping[str, Any]) -> bytes:
        shown = view(obj) if view is not None else obj
        return _response.ENCODE({"type": kind, "object": shown}).encode() + b"\n"

    def bookmark(version: int) -> bytes:
        # As the API server sends it: only the kind and the resourceVersion up to
        # which this watch has seen every change.
        marker = {
            "kind": resource.kind,
            "apiVersion": resource.api_version,
            "metadata": {"resourceVersion": str(version)},
        }
        return _response.ENCODE({"type": "BOOKMARK", "object": marker}).encode() + b"\n"

    def translated(event: _storage.WatchEvent) -> bytes | None:
        """The event as this watch's selection sees it: an object that comes into
        it is ADDED, one that leaves it DELETED (the API server's semantics)."""
        now_in = wanted(event.entry.obj)
        if not selects or event.type == "ADDED":
            return encode(event.type, event.entry.obj) if now_in else None
        was_in = wanted(event.old)
        if event.type == "DELETED":
            return encode("DELETED", event.entry.obj) if was_in or now_in else None
        if now_in and was_in:
            return encode("MODIFIED", event.entry.obj)
        if now_in:
            return encode("ADDED", event.entry.obj)
        if was_in:
            return encode("DELETED", event.entry.obj)
        return None

    requested = query.get("resourceVersion", "")
    initial: list[bytes] = []
    with store.lock:
        if requested in ("", "0"):
            last = store.resource_version
            initial = [
                encode("ADDED", o) for o in store.objects(stored, watch.namespace) if wanted(o)
            ]
        else:
            try:
                last = int(requested)
            except ValueError:
                last = -1
            if last < 0 or store.events_since(last) is None:
                gone = _status.gone(
                    f"too old resource version: {requested} ({store.resource_version})"
                )
                initial = [encode("ERROR", gone.status)]
                deadline = 0.0
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        "Cache-Control: no-cache, private\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    watches.opened(connection)
    try:
        write(head.encode("latin-1"))
        for chunk in initial:
            send(chunk)
        while time.monotonic() < deadline and not watches.is_closed(connection):
            with store.changed:
                events = store.events_since(last)
                if events is not None and not events:
                    wake = min(deadline, next_bookmark) if bookmarks else deadline
                    store.changed.wait(min(_WATCH_POLL, max(0.0, wake - time.monotonic())))
                    events = store.events_since(last)
            if events is None or watches.is_expired(connection):
                gone = _status.gone(f"too old resource version: {last}")
                send(encode("ERROR", gone.status))
                break
            for event in events:
                last = event.resource_version
                if event.resource != stored.key:
                    continue
                chunk = translated(event)
                if chunk is not None:
                    send(chunk)
            if bookmarks and time.monotonic() >= next_bookmark:
                send(bookmark(last))
                next_bookmark = time.monotonic() + bookmark_every
        write(b"0\r\n\r\n")
    except OSError:
        return False
    finally:
        watches.ended(connection)
    return True
