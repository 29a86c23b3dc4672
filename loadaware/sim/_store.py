"""The simulated cluster's storage: objects by resource, resourceVersions, the generic
registry's semantics, and a log of changes for watches.

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
import copy
import json
import secrets
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from loadaware.sim import _admission, _clock, _resources, _selectors, _status

_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode
_WATCH_LOG = 20_000

ResourceKey = tuple[str, str]


class _Entry:
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


class _Bucket:
    __slots__ = ("entries", "keys", "resource")

    def __init__(self, resource: _resources.Resource) -> None:
        self.resource = resource
        self.entries: dict[str, _Entry] = {}
        self.keys: list[str] = []  # sorted

    def put(self, key: str, entry: _Entry) -> None:
        if key not in self.entries:
            bisect.insort(self.keys, key)
        self.entries[key] = entry

    def drop(self, key: str) -> None:
        if self.entries.pop(key, None) is not None:
            del self.keys[bisect.bisect_left(self.keys, key)]


@dataclass(frozen=True, slots=True, kw_only=True)
class ListResult:
    entries: list[_Entry]
    resource_version: str
    continue_token: str
    remaining: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class WatchEvent:
    resource_version: int
    type: str  # ADDED | MODIFIED | DELETED
    resource: ResourceKey
    entry: _Entry
    # The object before this change (None for ADDED): a watch with selectors turns a
    # change into or out of its selection into ADDED or DELETED, as the API server does.
    old: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteOptions:
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None  # Orphan | Background | Foreground
    precondition_uid: str | None = None
    precondition_resource_version: str | None = None
    dry_run: bool = False


def object_key(namespace: str | None, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


class Store:
    def __init__(self, clock: _clock.SimClock, *, continue_ttl: float = 300.0) -> None:
        self.clock = clock
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.continue_ttl = continue_ttl
        self._buckets: dict[ResourceKey, _Bucket] = {r.key: _Bucket(r) for r in _resources.STORED}
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

    def bucket(self, resource: _resources.Resource) -> _Bucket:
        return self._buckets[resource.key]

    def get(
        self, resource: _resources.Resource, namespace: str | None, name: str
    ) -> dict[str, Any]:
        entry = self.entry(resource, namespace, name)
        return entry.obj

    def entry(self, resource: _resources.Resource, namespace: str | None, name: str) -> _Entry:
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

    def _range(self, bucket: _Bucket, namespace: str | None) -> tuple[int, int]:
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
            chosen: list[_Entry] = []
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
        entry = _Entry(new)
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
                self._buckets[resource.key].entries[key] = _Entry(dict(obj))
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

    def create(
        self,
        resource: _resources.Resource,
        namespace: str | None,
        body: Any,
        *,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        obj = self._check_body(resource, body)
        meta = dict(obj.get("metadata") or {})
        if resource.namespaced:
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise _status.bad_request(
                    "the namespace of the provided object does not match the namespace sent "
                    "on the request"
                )
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + "".join(
                secrets.choice(_GENERATE_ALPHABET) for _ in range(5)
            )
        obj["metadata"] = meta
        _admission.check_name(resource, obj)
        with self.lock:
            if resource.namespaced:
                self._check_namespace(namespace or "", meta["name"], resource)
            key = object_key(namespace if resource.namespaced else None, meta["name"])
            if key in self._buckets[resource.key].entries:
                raise _status.already_exists(resource.plural, meta["name"], resource.group)
            for field in ("deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion"):
                meta.pop(field, None)
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = _clock.rfc3339(self.clock.time())
            if resource.has_generation:
                meta["generation"] = 1
            obj = _admission.prepare_create(resource, obj, priority_of=self.priority_of)
            obj = _ordered(resource, obj)
            if dry_run:
                return obj
            return self._commit("ADDED", resource, key, None, obj)

    def _check_namespace(self, namespace: str, name: str, resource: _resources.Resource) -> None:
        found = self._buckets[_resources.NAMESPACES.key].entries.get(namespace)
        if found is None:
            raise _status.not_found("namespaces", namespace)
        if found.obj.get("metadata", {}).get("deletionTimestamp"):
            raise _status.forbidden(
                resource.plural,
                name,
                f"unable to create new content in namespace {namespace} because it is being "
                "terminated",
                resource.group,
            )

    def priority_of(self, class_name: str) -> tuple[int, str] | None:
        if not class_name:
            for entry in self._buckets[_resources.PRIORITY_CLASSES.key].entries.values():
                if entry.obj.get("globalDefault"):
                    return int(entry.obj.get("value", 0)), entry.obj.get(
                        "preemptionPolicy", "PreemptLowerPriority"
                    )
            return 0, "PreemptLowerPriority"
        if class_name in _admission.SYSTEM_PRIORITY_CLASSES:
            return _admission.SYSTEM_PRIORITY_CLASSES[class_name], "PreemptLowerPriority"
        found = self._buckets[_resources.PRIORITY_CLASSES.key].entries.get(class_name)
        if found is None:
            return None
        return int(found.obj.get("value", 0)), found.obj.get(
            "preemptionPolicy", "PreemptLowerPriority"
        )

    def _check_body(self, resource: _resources.Resource, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise _status.bad_request(
                f"the object provided is unrecognized (must be of type {resource.kind})"
            )
        kind = body.get("kind")
        if kind and kind != resource.kind:
            raise _status.bad_request(
                f"the object provided is unrecognized (must be of type {resource.kind}): "
                f"kind {kind!r}"
            )
        api_version = body.get("apiVersion")
        if api_version and api_version != resource.api_version:
            raise _status.bad_request(
                f"the API version in the data ({api_version}) does not match the expected API "
                f"version ({resource.api_version})"
            )
        obj = copy.deepcopy(body)
        obj["kind"] = resource.kind
        obj["apiVersion"] = resource.api_version
        if not isinstance(obj.get("metadata", {}), dict):
            raise _status.bad_request("metadata: expected an object")
        return obj

    def update(
        self,
        resource: _resources.Resource,
        namespace: str | None,
        name: str,
        body: Any,
        *,
        subresource: str = "",
        dry_run: bool = False,
    ) -> dict[str, Any]:
        obj = self._check_body(resource, body)
        meta = dict(obj.get("metadata") or {})
        if meta.get("name") and meta["name"] != name:
            raise _status.bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL "
                f"({name})"
            )
        if resource.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
            raise _status.bad_request(
                "the namespace of the provided object does not match the namespace sent on "
                "the request"
            )
        with self.lock:
            old = self.get(resource, namespace if resource.namespaced else None, name)
            wanted_rv = meta.get("resourceVersion")
            if wanted_rv and wanted_rv != old["metadata"].get("resourceVersion"):
                raise _status.conflict(resource.plural, name, resource.group)
            if meta.get("uid") and meta["uid"] != old["metadata"].get("uid"):
                raise _status.conflict(
                    resource.plural,
                    name,
                    resource.group,
                    f"Precondition failed: UID in precondition: {meta['uid']}, UID in object "
                    f"meta: {old['metadata'].get('uid')}",
                )
            if subresource == "status":
                new = dict(old)
                new["metadata"] = dict(old["metadata"])
                if "status" in obj:
                    new["status"] = obj["status"]
                else:
                    new.pop("status", None)
            else:
                new = obj
                kept = {
                    k: old["metadata"][k]
                    for k in (
                        "uid",
                        "creationTimestamp",
                        "deletionTimestamp",
                        "deletionGracePeriodSeconds",
                        "generation",
                        "namespace",
                    )
                    if k in old["metadata"]
                }
                meta.update(kept)
                meta["name"] = name
                new["metadata"] = meta
                if resource.has_status:
                    if "status" in old:
                        new["status"] = old["status"]
                    else:
                        new.pop("status", None)
                _admission.check_name(resource, new)
                _admission.validate_update(resource, old, new)
                if resource.has_generation and new.get("spec") != old.get("spec"):
                    meta["generation"] = int(old["metadata"].get("generation") or 1) + 1
            return self._write(resource, old, _ordered(resource, new), dry_run=dry_run)

    def _write(
        self,
        resource: _resources.Resource,
        old: dict[str, Any],
        new: dict[str, Any],
        *,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Store `new` in place of `old`: a no-op when nothing changed, a removal when a
        deleting object's last finalizer went."""
        new["metadata"]["resourceVersion"] = old["metadata"].get("resourceVersion")
        if new == old or dry_run:
            return new if dry_run else old
        meta = new["metadata"]
        key = object_key(meta.get("namespace") if resource.namespaced else None, meta["name"])
        if (
            meta.get("deletionTimestamp")
            and not meta.get("finalizers")
            and (resource is not _resources.PODS)
        ):
            return self._commit("DELETED", resource, key, old, new)
        return self._commit("MODIFIED", resource, key, old, new)

    def replace(
        self, resource: _resources.Resource, old: dict[str, Any], new: dict[str, Any]
    ) -> dict[str, Any]:
        """A controller's write: no admission, no preconditions. The lock must be held."""
        return self._write(resource, old, new)

    def add(self, resource: _resources.Resource, obj: dict[str, Any]) -> dict[str, Any]:
        """A controller's create through admission; the lock must be held."""
        meta = obj["metadata"]
        return self.create(resource, meta.get("namespace"), obj)

    def patch(
        self,
        resource: _resources.Resource,
        namespace: str | None,
        name: str,
        content_type: str,
        body: Any,
        *,
        subresource: str = "",
        dry_run: bool = False,
    ) -> dict[str, Any]:
        from loadaware.sim import _patch

        with self.lock:
            old = self.get(resource, namespace if resource.namespaced else None, name)
            patched = _patch.apply(content_type, old, body)
            if not isinstance(patched, dict):
                raise _status.bad_request("the patch did not produce an object")
            meta = patched.get("metadata")
            if not isinstance(meta, dict):
                raise _status.bad_request("the patch removed metadata")
            # A patch is unconditional unless it names a resourceVersion itself.
            patch_meta = body.get("metadata") if isinstance(body, dict) else None
            if not (isinstance(patch_meta, dict) and patch_meta.get("resourceVersion")):
                meta = {**meta, "resourceVersion": old["metadata"].get("resourceVersion")}
                patched = {**patched, "metadata": meta}
            if subresource != "status" and resource.has_status:
                patched = {**patched, "status": old.get("status")}
                if old.get("status") is None:
                    patched.pop("status")
            return self.update(
                resource, namespace, name, patched, subresource=subresource, dry_run=dry_run
            )

    def delete(
        self,
        resource: _resources.Resource,
        namespace: str | None,
        name: str,
        options: DeleteOptions,
    ) -> tuple[dict[str, Any], bool]:
        """Delete (or start deleting) an object; returns it and whether it is gone."""
        with self.lock:
            ns = namespace if resource.namespaced else None
            old = self.get(resource, ns, name)
            meta = old["metadata"]
            if options.precondition_uid and options.precondition_uid != meta.get("uid"):
                raise _status.conflict(
                    resource.plural,
                    name,
                    resource.group,
                    f"Precondition failed: UID in precondition: {options.precondition_uid}, "
                    f"UID in object meta: {meta.get('uid')}",
                )
            if (
                options.precondition_resource_version
                and options.precondition_resource_version != meta.get("resourceVersion")
            ):
                raise _status.conflict(
                    resource.plural,
                    name,
                    resource.group,
                    "Precondition failed: ResourceVersion in precondition: "
                    f"{options.precondition_resource_version}, ResourceVersion in object meta: "
                    f"{meta.get('resourceVersion')}",
                )
            key = object_key(ns, name)
            grace = self._grace_period(resource, old, options)
            now = self.clock.time()
            if options.propagation_policy == "Orphan":
                self._orphan_dependents(meta.get("uid"), options.dry_run)
            if grace is None or grace == 0:
                if meta.get("finalizers") or resource is _resources.NAMESPACES:
                    return self._mark_deleting(resource, old, now, 0, options.dry_run), False
                if options.dry_run:
                    return old, True
                self._commit("DELETED", resource, key, old, copy.copy(old))
                return old, True
            return self._mark_deleting(resource, old, now, grace, options.dry_run), False

    def _mark_deleting(
        self,
        resource: _resources.Resource,
        old: dict[str, Any],
        now: float,
        grace: int,
        dry_run: bool,
    ) -> dict[str, Any]:
        meta = dict(old["metadata"])
        deadline = now + grace
        current = _clock.parse_time(meta.get("deletionTimestamp"))
        # A second delete may shorten the grace period, never lengthen it.
        if current is not None and current <= deadline:
            return old
        meta["deletionTimestamp"] = _clock.rfc3339(deadline)
        meta["deletionGracePeriodSeconds"] = grace
        new = {**old, "metadata": meta}
        if resource is _resources.NAMESPACES:
            new["status"] = {**(old.get("status") or {}), "phase": "Terminating"}
        if dry_run:
            return new
        key = object_key(meta.get("namespace") if resource.namespaced else None, meta["name"])
        return self._commit("MODIFIED", resource, key, old, new)

    def _grace_period(
        self, resource: _resources.Resource, obj: Mapping[str, Any], options: DeleteOptions
    ) -> int | None:
        """Seconds of graceful deletion, or None for immediate removal."""
        if resource is not _resources.PODS:
            return None
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        # Pods that never ran, or finished, have nothing to stop: they go at once.
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            return None
        if options.grace_period_seconds is not None:
            return max(0, options.grace_period_seconds)
        return int(spec.get("terminationGracePeriodSeconds", 30))

    def _orphan_dependents(self, uid: str | None, dry_run: bool) -> None:
        if not uid or dry_run:
            return
        for bucket in self._buckets.values():
            for entry in list(bucket.entries.values()):
                refs = entry.obj.get("metadata", {}).get("ownerReferences") or []
                if any(r.get("uid") == uid for r in refs):
                    meta = dict(entry.obj["metadata"])
                    meta["ownerReferences"] = [r for r in refs if r.get("uid") != uid]
                    self._write(bucket.resource, entry.obj, {**entry.obj, "metadata": meta})

    def remove(self, resource: _resources.Resource, obj: Mapping[str, Any]) -> None:
        """Remove an object for good (a kubelet confirming a pod's end, the garbage
        collector); the lock must be held."""
        meta = obj["metadata"]
        key = object_key(meta.get("namespace") if resource.namespaced else None, meta["name"])
        current = self._buckets[resource.key].entries.get(key)
        if current is not None:
            self._commit("DELETED", resource, key, current.obj, copy.copy(current.obj))


_TOP_ORDER = ("kind", "apiVersion", "metadata", "spec", "status")


def _ordered(resource: _resources.Resource, obj: dict[str, Any]) -> dict[str, Any]:
    """kind, apiVersion, metadata, spec, status first, as the API server writes them."""
    obj["kind"], obj["apiVersion"] = resource.kind, resource.api_version
    result = {k: obj[k] for k in _TOP_ORDER if k in obj}
    result.update((k, v) for k, v in obj.items() if k not in result)
    return result


def delete_options(query: Mapping[str, str], body: Any) -> DeleteOptions:
    """DeleteOptions from the query string and/or a DeleteOptions body; 400 when malformed."""
    if body is not None and not isinstance(body, dict):
        raise _status.bad_request("DeleteOptions: expected an object")
    body = body or {}
    grace: Any = body.get("gracePeriodSeconds")
    if "gracePeriodSeconds" in query:
        grace = query["gracePeriodSeconds"]
    if grace is not None:
        try:
            grace = int(grace)
        except (TypeError, ValueError):
            raise _status.bad_request(f"invalid gracePeriodSeconds: {grace!r}") from None
    propagation = query.get("propagationPolicy") or body.get("propagationPolicy")
    if body.get("orphanDependents") is True:
        propagation = "Orphan"
    if propagation not in (None, "Orphan", "Background", "Foreground"):
        raise _status.invalid(
            "DeleteOptions",
            "",
            [
                (
                    "propagationPolicy",
                    "FieldValueNotSupported",
                    f'Unsupported value: "{propagation}": supported values: "Foreground", '
                    '"Background", "Orphan", "nil"',
                )
            ],
        )
    preconditions = body.get("preconditions") or {}
    return DeleteOptions(
        grace_period_seconds=grace,
        propagation_policy=propagation,
        precondition_uid=preconditions.get("uid"),
        precondition_resource_version=preconditions.get("resourceVersion"),
        dry_run=is_dry_run(query, body),
    )


def is_dry_run(query: Mapping[str, str], body: Any = None) -> bool:
    values = [query["dryRun"]] if "dryRun" in query else []
    if isinstance(body, dict):
        values += list(body.get("dryRun") or [])
    for value in values:
        if value != "All":
            raise _status.bad_request(f'Invalid value: "{value}": supported values: "All"')
    return bool(values)
