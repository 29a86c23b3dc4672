"""PATCH bodies: JSON merge patch (RFC 7386), strategic merge patch, JSON patch (RFC 6902).

Strategic merge follows the patch strategies of the built-in types for the
lists a rebalancer and kubectl touch: lists of objects with a merge key
(containers by name, conditions by type, ownerReferences by uid, ...) merge
element by element, `finalizers` merges as a set, every other list is
replaced — node taints included, which carry no patch strategy in the API
either (kubectl taint sends the whole list). Directives: `$patch: replace |
delete | merge`, `$deleteFromPrimitiveList/<field>`, `$retainKeys`;
`$setElementOrder/<field>` is accepted and ignored (order is kept as merged).

Every function returns a new object; the input is not changed.
"""

from __future__ import annotations

import copy
from typing import Any

from loadaware.sim import _status

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
ACCEPTED = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH)

# Field name -> merge key of the list under it (the patchMergeKey of the Go types).
_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "env": "name",
    "ports": "containerPort",
    "conditions": "type",
    "ownerReferences": "uid",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "containerStatuses": "name",
    "initContainerStatuses": "name",
    "addresses": "type",
    "resourceClaims": "name",
    "readinessGates": "conditionType",
    "podIPs": "ip",
    "podCIDRs": "",
}
_SET_LISTS = frozenset({"finalizers"})


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        raise _status.bad_request("strategic merge patch: the patch must be a JSON object")
    return _smp_object(target if isinstance(target, dict) else {}, patch)


def _smp_object(target: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return {}
    result = dict(target)
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys") or key.startswith("$setElementOrder/"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            drop = set(map(repr, value or []))
            result[field] = [v for v in result.get(field) or [] if repr(v) not in drop]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            current = result.get(key)
            merged = _smp_object(current if isinstance(current, dict) else {}, value)
            if value.get("$patch") == "delete":
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = _smp_list(key, result.get(key), value)
        else:
            result[key] = copy.deepcopy(value)
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _smp_list(field: str, current: Any, patch: list[Any]) -> list[Any]:
    existing = list(current) if isinstance(current, list) else []
    if field in _SET_LISTS:
        merged = list(existing)
        for item in patch:
            if item not in merged:
                merged.append(copy.deepcopy(item))
        return merged
    merge_key = _MERGE_KEYS.get(field, "")
    if not merge_key or not all(isinstance(i, dict) for i in patch):
        for item in patch:
            if isinstance(item, dict) and item.get("$patch") == "replace":
                return [copy.deepcopy(i) for i in patch if i is not item]
        return copy.deepcopy(patch)
    result = [dict(i) if isinstance(i, dict) else i for i in existing]
    for item in patch:
        if item.get("$patch") == "replace":
            return [copy.deepcopy(i) for i in patch if i is not item]
        key = item.get(merge_key)
        position = next(
            (
                n
                for n, have in enumerate(result)
                if isinstance(have, dict) and have.get(merge_key) == key
            ),
            None,
        )
        if item.get("$patch") == "delete":
            if position is not None:
                del result[position]
            continue
        if position is None:
            result.append(_smp_object({}, item))
        else:
            result[position] = _smp_object(result[position], item)
    return result


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902; a failing `test` or a missing path is a 422, as kube-apiserver answers."""
    if not isinstance(operations, list):
        raise _status.bad_request("json patch: the patch must be a JSON array of operations")
    document = copy.deepcopy(target)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise _status.bad_request("json patch: every operation needs op and path")
        kind, path = op["op"], _pointer(op["path"])
        if kind == "add":
            document = _add(document, path, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            document, _ = _remove(document, path)
        elif kind == "replace":
            document, _ = _remove(document, path)
            document = _add(document, path, copy.deepcopy(op.get("value")))
        elif kind == "move":
            document, value = _remove(document, _pointer(op.get("from", "")))
            document = _add(document, path, value)
        elif kind == "copy":
            document = _add(document, path, copy.deepcopy(_get(document, _pointer(op["from"]))))
        elif kind == "test":
            if _get(document, path) != op.get("value"):
                raise _unprocessable(f"testing value {op['path']} failed")
        else:
            raise _status.bad_request(f"json patch: unknown operation {kind!r}")
    return document


def _unprocessable(message: str) -> _status.ApiError:
    return _status.ApiError(422, "Invalid", message)


def _pointer(text: str) -> list[str]:
    if text == "":
        return []
    if not text.startswith("/"):
        raise _status.bad_request(f"json patch: invalid path {text!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in text[1:].split("/")]


def _get(document: Any, path: list[str]) -> Any:
    for part in path:
        if isinstance(document, dict) and part in document:
            document = document[part]
        elif isinstance(document, list) and part.isdigit() and int(part) < len(document):
            document = document[int(part)]
        else:
            raise _unprocessable(f"doc is missing path: /{'/'.join(path)}")
    return document


def _add(document: Any, path: list[str], value: Any) -> Any:
    if not path:
        return value
    parent = _get(document, path[:-1])
    last = path[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent):
            parent.insert(int(last), value)
        else:
            raise _unprocessable(f"doc is missing path: /{'/'.join(path)}")
    else:
        raise _unprocessable(f"doc is missing path: /{'/'.join(path)}")
    return document


def _remove(document: Any, path: list[str]) -> tuple[Any, Any]:
    if not path:
        return None, document
    parent = _get(document, path[:-1])
    last = path[-1]
    if isinstance(parent, dict) and last in parent:
        return document, parent.pop(last)
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return document, parent.pop(int(last))
    raise _unprocessable(f"doc is missing path: /{'/'.join(path)}")


def apply(content_type: str, target: dict[str, Any], body: Any) -> Any:
    """Apply a PATCH body of `content_type` to a copy of `target`."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media == MERGE_PATCH:
        return merge_patch(target, body)
    if media == STRATEGIC_MERGE_PATCH:
        return strategic_merge_patch(target, body)
    if media == JSON_PATCH:
        return json_patch(target, body)
    raise _status.unsupported_media_type(media, ACCEPTED)
