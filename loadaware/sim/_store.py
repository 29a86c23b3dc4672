"""The simulated cluster's store: the generic registry's semantics on top of the
storage (`_storage`): admission on create and update, preconditions, patches,
graceful deletion, finalizers and orphaning, as kube-apiserver applies them.
"""

from __future__ import annotations

import copy
import secrets
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from loadaware.sim import _admission, _clock, _resources, _status, _storage

_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteOptions:
    grace_period_seconds: int | None = None
    propagation_policy: str | None = None  # Orphan | Background | Foreground
    precondition_uid: str | None = None
    precondition_resource_version: str | None = None
    dry_run: bool = False


class Store(_storage.Storage):
    """The API's writes (create, update, patch, delete) with their checks, and the
    controllers' writes (add, replace, remove) without them."""

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
            key = _storage.object_key(namespace if resource.namespaced else None, meta["name"])
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
        key = _storage.object_key(
            meta.get("namespace") if resource.namespaced else None, meta["name"]
        )
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
            key = _storage.object_key(ns, name)
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
        key = _storage.object_key(
            meta.get("namespace") if resource.namespaced else None, meta["name"]
        )
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
        key = _storage.object_key(
            meta.get("namespace") if resource.namespaced else None, meta["name"]
        )
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
