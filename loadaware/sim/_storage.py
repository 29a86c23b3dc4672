"""The simulated cluster's storage, without the API's semantics: objects by resource
in key order, one resourceVersion counter, and a log of changes for watches.

As in etcd, one counter gives every write its resourceVersion and lists come
back in key order (namespace/name), which is what makes `limit` + `continue`
pagination stable. Stored objects are never changed in place: every write
stores a new dict, so readers may hold an object (and its cached JSON) without
a lock. Callers must treat returned objects as read-only.

Continue tokens carry the resourceVersion of the first page like the real
ones, but later pages are served from the current state rather than a
snapshot; a token older than `continue_ttl` simulated seconds is refused with
410 Expired, as after an etcd compaction.
"""

from __future__ import annotations

import base64
import bisect
import collections
import contextlib
import json
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from loadaware.sim import _clock, _resources, _selectors, _status

_ENCODE = json.JSONEncoder(separators=(",", ":")).encode
_WATCH_LOG = 20_000

ResourceKey = tuple[str, str]


class Entry:
    """A stored object and, once asked for, its JSON without kind and apiVersion (as list
    items are sent)."""

    __slots__ = ("body", "obj")

    def __init__(self, obj: dict[str, Any]) -> None:
        self.obj = obj
        self.body: bytes | None = None

    def item_json(self) -> bytes:
        body = self.body
        if body is None:
            body = _ENCODE(
                {k: v for k, v in self.obj.items() if k != "kind" and k != "apiVersion"}
            ).encode()
            self.body = body
        return body

    def full_json(self) -> bytes:
        item = self.item_json()
        head = _ENCODE({"kind": self.obj["kind"], "apiVersion": self.obj["apiVersion"]})
        if item == b"{}":
            return head.encode()
        return head[:-1].encode() + b"," + item[1:]


class Bucket:
    __slots__ = ("entries", "keys", "resource")

    def __init__(self, resource: _resources.Resource) -> None:
        self.resource = resource
        self.entries: dict[str, Entry] = {}
        self.keys: list[str] = []  # sorted

    def put(self, key: str, entry: Entry) -> None:
        if key not in self.entries:
            bisect.insort(self.keys, key)
        self.entries[key] = entry

    def drop(self, key: str) -> None:
        if self.entries.pop(key, None) is not None:
            del self.keys[bisect.bisect_left(self.keys, key)]


@dataclass(frozen=True, slots=True, kw_only=True)
class ListResult:
    entries: list[Entry]
    resource_version: str
    continue_token: str
    remaining: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class WatchEvent:
    resource_version: int
    type: str  # ADDED | MODIFIED | DELETED
    resource: ResourceKey
    entry: Entry
    # The object before this change (None for ADDED): a watch with selectors turns a
    # change into or out of its selection into ADDED or DELETED, as the API server does.
    old: dict[str, Any] | None = None


def object_key(namespace: str | None, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


class Storage:
    """Objects by resource and the change log; `Store` adds the API's semantics."""

    def __init__(self, clock: _clock.SimClock, *, continue_ttl: float = 300.0) -> None:
        self.clock = clock
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.continue_ttl = continue_ttl
        self._buckets: dict[ResourceKey, Bucket] = {r.key: Bucket(r) for r in _resources.STORED}
        self._rv = 1
        self._loaded_rv = 1
        self._log: collections.deque[WatchEvent] = collections.deque(maxlen=_WATCH_LOG)
        # The resourceVersion of each resource's newest change: how far a watcher of
        # it must have read to have seen everything.
        self.latest_change: dict[ResourceKey, int] = {}
        # Called with (type, resource, old object, new object) after every write, lock held.
        self.on_change: list[Callable[[str, _resources.Resource, Any, Any], None]] = []

    # --- reading ---

    @property
    def resource_version(self) -> int:
        return self._rv

    def bucket(self, resource: _resources.Resource) -> Bucket:
        return self._buckets[resource.key]

    def get(
        self, resource: _resources.Resource, namespace: str | None, name: str
    ) -> dict[str, Any]:
        entry = self.entry(resource, namespace, name)
        return entry.obj

    def entry(self, resource: _resources.Resource, namespace: str | None, name: str) -> Entry:
        found = self._buckets[resource.key].entries.get(object_key(namespace, name))
        if found is None:
            raise _status.not_found(resource.plural, name, resource.group)
        return found

    def find(
        self, resource: _resources.Resource, namespace: str | None, name: str
    ) -> dict[str, Any] | None:
        found = self._buckets[resource.key].entries.get(object_key(namespace, name))
        return None if found is None else found.obj

    def objects(
        self, resource: _resources.Resource, namespace: str | None = None
    ) -> list[dict[str, Any]]:
        """Every object of a resource (in a namespace), in key order."""
        with self.lock:
            bucket = self._buckets[resource.key]
            start, stop = self._range(bucket, namespace)
            return [bucket.entries[k].obj for k in bucket.keys[start:stop]]

    def _range(self, bucket: Bucket, namespace: str | None) -> tuple[int, int]:
        if not namespace:
            return 0, len(bucket.keys)
        # "ns/" ... "ns0": '0' sorts right after '/', so this is every key of the namespace.
        return (
            bisect.bisect_left(bucket.keys, namespace + "/"),
            bisect.bisect_left(bucket.keys, namespace + "0"),
        )

    def list(
        self,
        resource: _resources.Resource,
        namespace: str | None,
        *,
        label_selector: str = "",
        field_selector: str = "",
        limit: int = 0,
        continue_token: str = "",
        resource_version: str = "",
        resource_version_match: str = "",
    ) -> ListResult:
        labels = _selectors.parse_label_selector(label_selector)
        fields = _selectors.parse_field_selector(
            field_selector, resource.field_selectors, resource.kind
        )
        filtered = bool(label_selector.strip() or field_selector.strip())
        with self.lock:
            current = self._rv
            self._check_list_version(resource_version, resource_version_match, current)
            bucket = self._buckets[resource.key]
            start, stop = self._range(bucket, namespace)
            list_rv = current
            if continue_token:
                list_rv, start_key = self._decode_continue(continue_token)
                start = max(start, bisect.bisect_left(bucket.keys, start_key))
            keys = bucket.keys
            entries = bucket.entries
            chosen: list[Entry] = []
            position = start
            while position < stop:
                entry = entries[keys[position]]
                position += 1
                obj = entry.obj
                if filtered and not (
                    labels(obj.get("metadata", {}).get("labels") or {}) and fields(obj)
                ):
                    continue
                chosen.append(entry)
                if limit and len(chosen) >= limit:
                    break
            token, remaining = "", None
            if limit and len(chosen) >= limit and position < stop:
                token = self._encode_continue(list_rv, keys[position - 1])
                if not filtered:
                    remaining = stop - position
        return ListResult(
            entries=chosen,
            resource_version=str(list_rv),
            continue_token=token,
            remaining=remaining,
        )

    def _check_list_version(self, requested: str, match: str, current: int) -> None:
        if not requested or requested == "0":
            return
        try:
            wanted = int(requested)
        except ValueError:
            raise _status.bad_request(f"invalid resource version: {requested}") from None
        if wanted > current:
            raise _status.ApiError(
                504,
                "Timeout",
                f"Too large resource version: {wanted}, current: {current}",
                details={
                    "causes": [
                        {
                            "reason": "ResourceVersionTooLarge",
                            "message": "Too large resource version",
                        }
                    ],
                    "retryAfterSeconds": 1,
                },
            )
        if match == "Exact" and wanted != current:
            raise _status.gone(f"too old resource version: {wanted} ({current})")

    def _encode_continue(self, rv: int, last_key: str) -> str:
        raw = {"v": "meta.k8s.io/v1", "rv": rv, "start": last_key + "\x00", "t": self.clock.time()}
        return base64.urlsafe_b64encode(_ENCODE(raw).encode()).decode().rstrip("=")

    def _decode_continue(self, token: str) -> tuple[int, str]:
        try:
            raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
            rv, start, issued = int(raw["rv"]), str(raw["start"]), float(raw.get("t", 0))
        except (ValueError, KeyError, TypeError) as exc:
            raise _status.bad_request(f"continue key is not valid: {exc}") from None
        if self.clock.time() - issued > self.continue_ttl:
            raise _status.gone(
                "The provided continue parameter is too old to display a consistent list "
                "result. You can start a new list without the continue parameter, or use "
                "the continue token in this response to retrieve the remainder of the results."
            )
        return rv, start

    def events_since(self, rv: int) -> list[WatchEvent] | None:
        """Changes after `rv`, or None when the log no longer reaches back that far."""
        with self.lock:
            if rv < self._log_floor:
                return None
            # From the newest back: a watcher is usually a few changes behind, and the
            # log holds thousands.
            newer: list[WatchEvent] = []
            for event in reversed(self._log):
                if event.resource_version <= rv:
                    break
                newer.append(event)
            newer.reverse()
            return newer

    def compact(self) -> int:
        """Forget the change log, as etcd's compaction does: a watch from any earlier
        resourceVersion is answered 410 Gone. Returns the oldest version still served."""
        with self.lock:
            self._log.clear()
            self._loaded_rv = self._rv
            self.changed.notify_all()
            return self._rv

    @property
    def _log_floor(self) -> int:
        """The oldest resourceVersion a watch can start from."""
        if len(self._log) == self._log.maxlen:
            return self._log[0].resource_version - 1
        return self._loaded_rv

    # --- writing ---

    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _commit(
        self,
        kind: str,
        resource: _resources.Resource,
        key: str,
        old: dict[str, Any] | None,
        new: dict[str, Any],
    ) -> dict[str, Any]:
        bucket = self._buckets[resource.key]
        rv = self._next_rv()
        new["metadata"]["resourceVersion"] = str(rv)
        entry = Entry(new)
        if kind == "DELETED":
            bucket.drop(key)
        else:
            bucket.put(key, entry)
        self._log.append(
            WatchEvent(resource_version=rv, type=kind, resource=resource.key, entry=entry, old=old)
        )
        self.latest_change[resource.key] = rv
        for listener in self.on_change:
            listener(kind, resource, old, new)
        self.changed.notify_all()
        return new

    def load(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """Store objects as they are (a dump or a scenario): no admission, resourceVersions
        kept, and the counter moved past the largest."""
        with self.lock:
            highest = self._rv
            for obj in objects:
                resource = _resources.for_object(
                    str(obj.get("apiVersion", "")), str(obj.get("kind"))
                )
                if resource is None:
                    continue
                meta = obj.get("metadata") or {}
                namespace = meta.get("namespace") or ("default" if resource.namespaced else None)
                if resource.namespaced and meta.get("namespace") != namespace:
                    obj = {**obj, "metadata": {**meta, "namespace": namespace}}
                if obj.get("apiVersion") != resource.api_version:
                    obj = {**obj, "apiVersion": resource.api_version}
                if "uid" not in meta:
                    obj = {**obj, "metadata": {**obj["metadata"], "uid": str(uuid.uuid4())}}
                with contextlib.suppress(ValueError):
                    highest = max(highest, int(meta.get("resourceVersion") or 0))
                key = object_key(namespace, meta["name"])
                self._buckets[resource.key].entries[key] = Entry(dict(obj))
            for bucket in self._buckets.values():
                bucket.keys = sorted(bucket.entries)
            self._rv = highest
            for bucket in self._buckets.values():
                for key in bucket.keys:
                    entry = bucket.entries[key]
                    if not entry.obj["metadata"].get("resourceVersion"):
                        meta = {**entry.obj["metadata"], "resourceVersion": str(self._next_rv())}
                        entry.obj = {**entry.obj, "metadata": meta}
            self._loaded_rv = self._rv
            self.changed.notify_all()
