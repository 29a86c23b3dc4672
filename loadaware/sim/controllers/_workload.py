"""What every workload controller does alike: a pod from its template, created with the
Event the controller records, and its status written only when it changed.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from loadaware.sim import _events, _resources, _store
from loadaware.sim.controllers import _objects


def new_pod(
    owner: Mapping[str, Any], *, name: str = "", extra_labels: Mapping[str, str] = {}
) -> dict[str, Any]:
    template = (owner.get("spec") or {}).get("template") or {}
    template_meta = template.get("metadata") or {}
    meta: dict[str, Any] = {
        "namespace": owner["metadata"]["namespace"],
        "labels": {**(template_meta.get("labels") or {}), **extra_labels},
        "ownerReferences": [_objects.owner_ref(owner)],
    }
    if template_meta.get("annotations"):
        meta["annotations"] = dict(template_meta["annotations"])
    if name:
        meta["name"] = name
    else:
        meta["generateName"] = owner["metadata"]["name"] + "-"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


def create_pod(
    store: _store.Store, owner: dict[str, Any], pod: dict[str, Any], component: str
) -> None:
    try:
        created = store.add(_resources.PODS, pod)
    except Exception as exc:  # an invalid template: say so once, as the controller would
        _events.record(
            store,
            owner,
            type_="Warning",
            reason="FailedCreate",
            message=f"Error creating: {exc}",
            component=component,
        )
        return
    _events.record(
        store,
        owner,
        type_="Normal",
        reason="SuccessfulCreate",
        message=f"Created pod: {created['metadata']['name']}",
        component=component,
    )


def set_status(
    store: _store.Store, resource: _resources.Resource, obj: dict[str, Any], status: dict[str, Any]
) -> None:
    current = store.find(resource, obj["metadata"].get("namespace"), obj["metadata"]["name"])
    if current is None:
        return
    merged = {**(current.get("status") or {}), **status}
    for key in [k for k, v in merged.items() if k not in status and isinstance(v, int)]:
        merged[key] = 0
    if merged != current.get("status"):
        store.replace(
            resource,
            current,
            {**current, "metadata": dict(current["metadata"]), "status": merged},
        )
