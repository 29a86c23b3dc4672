"""OpenAPI documents of the simulated API: what kubectl reads before `create -f` and
`apply -f` (and `explain`), for the kinds the simulator serves.

    GET /openapi/v3                     the index: {"paths": {"api/v1": {"serverRelativeURL": ...}}}
    GET /openapi/v3/api/v1              one OpenAPI 3.0 document per group-version
    GET /openapi/v3/apis/apps/v1
    GET /openapi/v2                     one Swagger 2.0 document (JSON only)

Why v3 is the one that matters: kubectl (1.27 and later) validates with the
server. For each object it looks up, in the v3 document of its group-version, the
PATCH operation carrying the object's `x-kubernetes-group-version-kind`; when that
operation takes the `fieldValidation` query parameter, kubectl sends
`fieldValidation=Strict` with the write and validates nothing itself. Without it
kubectl falls back to validating against /openapi/v2, which it only reads as
protobuf: a JSON-only server answers that request 406, and kubectl's v2
validation fails ("failed to download openapi").

The PATCH operations list JSON patch and merge patch, not strategic merge patch.
`kubectl apply` builds its strategic merge patch from the v3 schema when the
operation lists it, and from the Go types compiled into kubectl otherwise (after
trying /openapi/v2, which fails quietly here): those know every list's merge key
(containers by name, tolerations replaced, ...), the permissive schemas below do
not. The server still accepts strategic merge patches (see _patch.py).

Schemas are permissive: each kind is an object with apiVersion, kind and
metadata and `x-kubernetes-preserve-unknown-fields`, tagged with its
`x-kubernetes-group-version-kind`. Documents are built once per process, on
first request; `hash` query parameters are not checked (every hash is current).

Limits: fieldValidation=Strict is accepted, not enforced (the simulator has no
schemas to find unknown fields with); metrics.k8s.io has no document.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from typing import Any

from loadaware.sim import _resources, _status

JSON = "application/json"
PROTOBUF_V2 = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
PROTOBUF_V3 = "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"

_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json")


def answer(segments: list[str], accept: str | None) -> tuple[bytes, dict[str, str]]:
    """The document at /openapi/{segments...} as JSON, and the headers to send with it.

    404 for a path with no document, 406 when the client accepts only protobuf."""
    if not segments or segments[0] not in ("v2", "v3"):
        raise _status.no_such_path()
    if not _accepts_json(accept):
        raise _status.ApiError(
            406,
            "NotAcceptable",
            f"only the following media types are accepted: {JSON}",
        )
    if segments == ["v2"]:
        body = _v2()
    elif segments == ["v3"]:
        body = _v3_index()
    else:
        body = _v3_documents().get("/".join(segments[1:]))
        if body is None:
            raise _status.no_such_path()
    return body, {"Etag": f'"{_hash(body)}"'}


def _accepts_json(accept: str | None) -> bool:
    if not accept:
        return True
    for part in accept.split(","):
        media = part.split(";", 1)[0].strip().lower()
        if media in (JSON, "application/*", "*/*"):
            return True
    return False


def _hash(body: bytes) -> str:
    # kube-apiserver's hashes are SHA-512, upper-case hex.
    return hashlib.sha512(body).hexdigest().upper()


def _encode(document: dict[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":"), sort_keys=True).encode()


# --- the documents ---


def _served() -> list[_resources.Resource]:
    return list(_resources.SERVED)


def _group_versions() -> dict[str, list[_resources.Resource]]:
    """Resources by the path of their group-version: "api/v1", "apis/apps/v1", ..."""
    found: dict[str, list[_resources.Resource]] = {}
    for resource in _served():
        found.setdefault(_gv_path(resource.group, resource.version), []).append(resource)
    found.setdefault(_gv_path("policy", "v1"), [])  # Eviction, posted to pods/eviction
    return found


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _package(group: str, version: str) -> str:
    """The Go package of a group's types, as kube-apiserver names its schemas:
    io.k8s.api.core.v1, io.k8s.api.apps.v1, io.k8s.api.coordination.v1, ..."""
    return f"io.k8s.api.{group.split('.', 1)[0] if group else 'core'}.{version}"


def _schema_name(group: str, version: str, kind: str) -> str:
    return f"{_package(group, version)}.{kind}"


def _gvk(group: str, version: str, kind: str) -> dict[str, str]:
    return {"group": group, "kind": kind, "version": version}


def _kind_schema(group: str, version: str, kind: str, ref: str) -> dict[str, Any]:
    return {
        "description": f"{kind} ({group or 'core'}/{version}): any fields are accepted.",
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"allOf": [{"$ref": f"{ref}{_META}.ObjectMeta"}], "default": {}},
        },
        "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-group-version-kind": [_gvk(group, version, kind)],
    }


def _list_schema(group: str, version: str, kind: str, ref: str) -> dict[str, Any]:
    item = _schema_name(group, version, kind)
    return {
        "description": f"A list of {kind}.",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "items": {"type": "array", "items": {"$ref": f"{ref}{item}"}},
            "metadata": {"allOf": [{"$ref": f"{ref}{_META}.ListMeta"}], "default": {}},
        },
        "x-kubernetes-group-version-kind": [_gvk(group, version, f"{kind}List")],
    }


def _meta_schemas() -> dict[str, Any]:
    loose = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        f"{_META}.ObjectMeta": {"description": "Standard object metadata.", **loose},
        f"{_META}.ListMeta": {"description": "Standard list metadata.", **loose},
        f"{_META}.Status": {
            "description": "Status is a return value for calls that don't return other objects.",
            **loose,
            "x-kubernetes-group-version-kind": [_gvk("", "v1", "Status")],
        },
        f"{_META}.DeleteOptions": {
            "description": "DeleteOptions may be provided when deleting an API object.",
            **loose,
            "x-kubernetes-group-version-kind": [
                _gvk(g, v, "DeleteOptions")
                for g, v in sorted({(r.group, r.version) for r in _served()} | {("policy", "v1")})
            ],
        },
    }


def _schemas(resources: Iterable[_resources.Resource], ref: str) -> dict[str, Any]:
    schemas = _meta_schemas()
    for r in resources:
        schemas[_schema_name(r.group, r.version, r.kind)] = _kind_schema(
            r.group, r.version, r.kind, ref
        )
        schemas[_schema_name(r.group, r.version, r.list_kind)] = _list_schema(
            r.group, r.version, r.kind, ref
        )
    return schemas


def _query(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "description": description,
        "schema": {"type": "string", "uniqueItems": True},
    }


_WRITE_PARAMETERS = (
    _query("dryRun", "When present, modifications are not persisted (All)."),
    _query("fieldManager", "The name of the actor making the changes."),
    _query(
        "fieldValidation",
        "How to treat unknown or duplicate fields: Ignore, Warn or Strict (accepted, not "
        "enforced by the simulator).",
    ),
)


def _response(ref: str, *codes: str) -> dict[str, Any]:
    content = {JSON: {"schema": {"$ref": ref}}}
    return {code: {"description": "OK", "content": content} for code in codes}


def _operation(
    action: str,
    verb: str,
    r: _resources.Resource,
    ref: str,
    *,
    kind: tuple[str, str, str] | None = None,
    body: str | None = None,
    body_types: tuple[str, ...] = ("*/*",),
    writes: bool = False,
    codes: tuple[str, ...] = ("200",),
    returns: str | None = None,
) -> dict[str, Any]:
    group, version, kind_name = kind or (r.group, r.version, r.kind)
    returned = returns or _schema_name(group, version, kind_name)
    operation: dict[str, Any] = {
        "operationId": f"{verb}{_go_name(r.group)}{r.version.capitalize()}{r.kind}",
        "responses": _response(f"#/components/schemas/{returned}", *codes),
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": _gvk(group, version, kind_name),
    }
    if writes:
        operation["parameters"] = list(_WRITE_PARAMETERS)
    if body is not None:
        schema = {"$ref": f"#/components/schemas/{body}"}
        operation["requestBody"] = {
            "required": True,
            "content": {media: {"schema": schema} for media in body_types},
        }
    return operation


def _go_name(group: str) -> str:
    return "".join(part.capitalize() for part in (group.split(".", 1)[0] or "core").split("-"))


def _path_parameter(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": description,
        "schema": {"type": "string", "uniqueItems": True},
    }


def _paths(r: _resources.Resource) -> dict[str, Any]:
    """The collection, object and subresource paths of one resource, with the operations
    its verbs allow."""
    ref = "#/components/schemas/"
    prefix = "/" + _gv_path(r.group, r.version)
    if r.namespaced:
        prefix += "/namespaces/{namespace}"
    collection = f"{prefix}/{r.plural}"
    item = f"{collection}/{{name}}"
    scope = [_path_parameter("namespace", "object name and auth scope")] if r.namespaced else []
    name = _path_parameter("name", f"name of the {r.kind}")
    kind = _schema_name(r.group, r.version, r.kind)
    verbs = set(r.verbs)
    paths: dict[str, Any] = {}

    ops: dict[str, Any] = {"parameters": scope}
    if "list" in verbs:
        ops["get"] = _operation(
            "list", "list", r, ref, returns=_schema_name(r.group, r.version, r.list_kind)
        )
    if "create" in verbs:
        ops["post"] = _operation(
            "post", "create", r, ref, body=kind, writes=True, codes=("200", "201", "202")
        )
    if "deletecollection" in verbs:
        ops["delete"] = _operation(
            "deletecollection", "deleteCollection", r, ref, returns=f"{_META}.Status"
        )
    paths[collection] = ops

    ops = {"parameters": [name, *scope]}
    if "get" in verbs:
        ops["get"] = _operation("get", "read", r, ref)
    if "update" in verbs:
        ops["put"] = _operation("put", "replace", r, ref, body=kind, writes=True)
    if "patch" in verbs:
        ops["patch"] = _operation(
            "patch", "patch", r, ref, body=f"{_META}.Patch", body_types=_PATCH_TYPES, writes=True
        )
    if "delete" in verbs:
        ops["delete"] = _operation("delete", "delete", r, ref, returns=f"{_META}.Status")
    paths[item] = ops

    for sub in r.subresources:
        ops = {"parameters": [name, *scope]}
        if sub == "status":
            ops["get"] = _operation("get", "readStatus", r, ref)
            ops["put"] = _operation("put", "replaceStatus", r, ref, body=kind, writes=True)
            ops["patch"] = _operation(
                "patch",
                "patchStatus",
                r,
                ref,
                body=f"{_META}.Patch",
                body_types=_PATCH_TYPES,
                writes=True,
            )
        elif sub == "eviction":
            eviction = ("policy", "v1", "Eviction")
            ops["post"] = _operation(
                "post",
                "createEviction",
                r,
                ref,
                kind=eviction,
                body=_schema_name(*eviction),
                writes=True,
                codes=("200", "201", "202"),
            )
        elif sub == "binding":
            binding = ("", "v1", "Binding")
            ops["post"] = _operation(
                "post",
                "createBinding",
                r,
                ref,
                kind=binding,
                body=_schema_name(*binding),
                writes=True,
                codes=("200", "201", "202"),
            )
        paths[f"{item}/{sub}"] = ops
    return paths


def _extra_kinds(gv_path: str) -> list[tuple[str, str, str]]:
    """Kinds posted to a subresource, which have a schema in their own group-version."""
    if gv_path == "api/v1":
        return [("", "v1", "Binding")]
    if gv_path == "apis/policy/v1":
        return [("policy", "v1", "Eviction")]
    return []


def _v3_document(gv_path: str, resources: list[_resources.Resource]) -> dict[str, Any]:
    ref = "#/components/schemas/"
    schemas = _schemas(resources, ref)
    schemas[f"{_META}.Patch"] = {
        "description": "The body of a PATCH request: a JSON patch, merge patch or strategic "
        "merge patch.",
        "type": "object",
    }
    for group, version, kind in _extra_kinds(gv_path):
        schemas[_schema_name(group, version, kind)] = _kind_schema(group, version, kind, ref)
    paths: dict[str, Any] = {}
    for r in resources:
        paths.update(_paths(r))
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": _resources.KUBE_VERSION},
        "paths": paths,
        "components": {"schemas": schemas},
    }


@functools.cache
def _v3_documents() -> dict[str, bytes]:
    return {
        gv_path: _encode(_v3_document(gv_path, resources))
        for gv_path, resources in _group_versions().items()
    }


@functools.cache
def _v3_index() -> bytes:
    return _encode(
        {
            "paths": {
                gv_path: {"serverRelativeURL": f"/openapi/v3/{gv_path}?hash={_hash(body)}"}
                for gv_path, body in sorted(_v3_documents().items())
            }
        }
    )


@functools.cache
def _v2() -> bytes:
    """Swagger 2.0: the same schemas as definitions, every group-version's paths."""
    ref = "#/definitions/"
    resources = _served()
    definitions = _schemas(resources, ref)
    for gv_path in _group_versions():
        for group, version, kind in _extra_kinds(gv_path):
            definitions[_schema_name(group, version, kind)] = _kind_schema(
                group, version, kind, ref
            )
    paths: dict[str, Any] = {}
    for r in resources:
        for path, ops in _paths(r).items():
            paths[path] = _as_v2(ops)
    return _encode(
        {
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": _resources.KUBE_VERSION},
            "paths": paths,
            "definitions": definitions,
        }
    )


def _as_v2(ops: dict[str, Any]) -> dict[str, Any]:
    """A v3 path item in Swagger 2.0's shape: body parameters, consumes and produces."""
    converted: dict[str, Any] = {}
    for method, op in ops.items():
        if method == "parameters":
            converted[method] = [_parameter_v2(p) for p in op]
            continue
        op = dict(op)
        parameters = [_parameter_v2(p) for p in op.pop("parameters", [])]
        body = op.pop("requestBody", None)
        if body is not None:
            content = body["content"]
            schema = next(iter(content.values()))["schema"]
            parameters.insert(
                0, {"name": "body", "in": "body", "required": True, "schema": _ref_v2(schema)}
            )
            op["consumes"] = list(content)
        if parameters:
            op["parameters"] = parameters
        op["produces"] = [JSON]
        op["responses"] = {
            code: {"description": "OK", "schema": _ref_v2(response["content"][JSON]["schema"])}
            for code, response in op["responses"].items()
        }
        converted[method] = op
    return converted


def _parameter_v2(parameter: dict[str, Any]) -> dict[str, Any]:
    converted = {k: v for k, v in parameter.items() if k != "schema"}
    converted["type"] = "string"
    converted["uniqueItems"] = True
    return converted


def _ref_v2(schema: dict[str, Any]) -> dict[str, Any]:
    return {"$ref": schema["$ref"].replace("#/components/schemas/", "#/definitions/")}
