"""Reading and writing the raw objects every controller handles: keys, owner references,
conditions, a pod's readiness, and the names and digests controllers derive.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from typing import Any

from loadaware.sim import _storage

_SAFE = "bcdfghjklmnpqrstvwxz2456789"
# The node lifecycle controller's taint on a NotReady node.
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"


def key(obj: Mapping[str, Any]) -> str:
    meta = obj["metadata"]
    return _storage.object_key(meta.get("namespace"), meta["name"])


def controller_ref(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return condition
    return None


def is_pod_ready(pod: Mapping[str, Any]) -> bool:
    ready = condition(pod, "Ready")
    return ready is not None and ready.get("status") == "True"


def is_active(pod: Mapping[str, Any]) -> bool:
    """Counted by its controller: not terminating, not finished."""
    return not pod["metadata"].get("deletionTimestamp") and (pod.get("status") or {}).get(
        "phase"
    ) not in ("Succeeded", "Failed")


def owner_ref(owner: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def with_condition(
    conditions: Iterable[Mapping[str, Any]], kind: str, status: str, now: str, **extra: Any
) -> list[dict[str, Any]]:
    result, found = [], False
    for condition in conditions:
        if condition.get("type") == kind:
            found = True
            changed = condition.get("status") != status
            updated = {**condition, "status": status, **extra}
            if changed:
                updated["lastTransitionTime"] = now
            result.append(updated)
        else:
            result.append(dict(condition))
    if not found:
        result.append({"type": kind, "status": status, "lastTransitionTime": now, **extra})
    return result


def template_hash(template: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(repr(sorted(str(template))).encode()).digest()
    return "".join(_SAFE[b % len(_SAFE)] for b in digest[:10])


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def scaled(value: Any, expected: int) -> int:
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * expected / 100)
    return int(value)
