"""The garbage collector (background propagation) and namespace deletion."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadaware.sim import _resources, _store
from loadaware.sim.controllers import _state


def collect(state: _state.ControlState) -> None:
    """Delete the dependents of the objects deleted since the last round."""
    while state.deleted_uids:
        uid = state.deleted_uids.pop()
        for resource_key, key in sorted(state.dependents.pop(uid, ())):
            resource = next(r for r in _resources.STORED if r.key == resource_key)
            obj = state.store.bucket(resource).entries.get(key)
            if obj is None or obj.obj["metadata"].get("deletionTimestamp"):
                continue
            refs = obj.obj["metadata"].get("ownerReferences") or []
            # A dependent with another live owner stays.
            if any(r.get("uid") != uid and r.get("uid") in _live_uids(state, r) for r in refs):
                continue
            meta = obj.obj["metadata"]
            state.store.delete(
                resource, meta.get("namespace"), meta["name"], _store.DeleteOptions()
            )
        state.owned.pop(uid, None)


def _live_uids(state: _state.ControlState, ref: Mapping[str, Any]) -> set[str]:
    kind = ref.get("kind")
    resource = next((r for r in _resources.STORED if r.kind == kind), None)
    if resource is None:
        return set()
    return {o["metadata"]["uid"] for o in state.store.objects(resource)}


def delete_namespaces(state: _state.ControlState) -> None:
    """Empty each namespace being deleted, then remove it."""
    for name in sorted(state.deleting_namespaces):
        remaining = 0
        for resource in _resources.STORED:
            if not resource.namespaced:
                continue
            for obj in state.store.objects(resource, name):
                remaining += 1
                if not obj["metadata"].get("deletionTimestamp"):
                    state.store.delete(
                        resource, name, obj["metadata"]["name"], _store.DeleteOptions()
                    )
        if remaining == 0:
            namespace = state.store.find(_resources.NAMESPACES, None, name)
            if namespace is not None:
                state.store.remove(_resources.NAMESPACES, namespace)
            state.deleting_namespaces.discard(name)
