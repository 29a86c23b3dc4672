"""Which Kubernetes API permissions the code of loadaware/ needs, found by reading it.

Every call loadaware makes goes through the official client's typed API classes
(CoreV1Api.read_namespaced_pod, AppsV1Api.list_replica_set_for_all_namespaces,
CustomObjectsApi.list_cluster_custom_object, ...). Their method names encode
the verb and the resource, so a static scan maps each one to a permission
(API group, resource[/subresource], verb), the unit RBAC rules grant.

- The API class of a method is the one the same file instantiates (a name like
  create_namespaced_event exists in CoreV1Api and EventsV1Api); a name no
  instantiated class has falls back to every class that has it and must be
  unambiguous.
- CustomObjectsApi's group and plural are arguments: string literals,
  module-level constants, or parameters of the enclosing function resolved from
  the literal arguments of its calls in the same module.
- A method passed to watch.Watch().stream(...) or called with watch=True needs
  `watch` besides `list`.
- Raw requests through ApiClient.param_serialize(method, path, ...) (then
  call_api) map by their REST path: a GET on a collection is list (watch when
  its function builds the query parameter ("watch", "true")), on a named
  object get; POST create, PUT update, PATCH patch, DELETE delete. A path
  that is not a literal or a module constant is taken to be any of the
  module's string literals that look like API paths (a table of lists) or,
  where it has none, those of the modules of its own package it imports.
- A function that passes its own parameters to param_serialize as the method
  and the path (loadaware.kube.raw_request) is a raw-request helper: each call
  of it is mapped as above, where it is called, from the arguments given
  there; the param_serialize inside it maps to nothing by itself.
- loadaware/sim is left out: it serves the API and never runs in a cluster.
"""

from __future__ import annotations

import ast
import pathlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import kubernetes.client

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "loadaware"
NOT_IN_CLUSTER = ("sim",)

_GROUP_OF_PREFIX = {
    "Core": "",
    "Apps": "apps",
    "Policy": "policy",
    "Coordination": "coordination.k8s.io",
    "Batch": "batch",
    "Scheduling": "scheduling.k8s.io",
    "Events": "events.k8s.io",
    "Networking": "networking.k8s.io",
    "RbacAuthorization": "rbac.authorization.k8s.io",
    "Autoscaling": "autoscaling",
    "Storage": "storage.k8s.io",
    "Discovery": "discovery.k8s.io",
    "Certificates": "certificates.k8s.io",
    "Authentication": "authentication.k8s.io",
    "Authorization": "authorization.k8s.io",
}
_VERB_OF_PREFIX = (
    ("delete_collection_", "deletecollection"),
    ("list_", "list"),
    ("read_", "get"),
    ("create_", "create"),
    ("replace_", "update"),
    ("patch_", "patch"),
    ("delete_", "delete"),
)
_CUSTOM_OBJECT_ARGS = ("group", "version", "plural")


@dataclass(frozen=True, order=True)
class Permission:
    group: str
    resource: str  # plural, with "/subresource" when there is one
    verb: str

    def __str__(self) -> str:
        return f"{self.verb} {self.resource}" + (f".{self.group}" if self.group else "")


@dataclass(frozen=True)
class ApiCall:
    path: str  # relative to the repository
    line: int
    api_class: str
    method: str
    permission: Permission


class ScanError(Exception):
    """A call the scan cannot map to a permission: teach it, don't skip it."""


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@cache
def api_classes() -> dict[str, frozenset[str]]:
    """API class name -> its public methods, from the installed client."""
    classes: dict[str, frozenset[str]] = {}
    for name in dir(kubernetes.client):
        if not re.fullmatch(r"[A-Za-z]+(V\d+(alpha\d+|beta\d+)?)?Api", name) or name == "ApiClient":
            continue
        methods = {
            m
            for m in dir(getattr(kubernetes.client, name))
            if not m.startswith("_")
            and not m.endswith("_with_http_info")
            and m not in ("close", "get_api_resources")
        }
        classes[name] = frozenset(methods)
    return classes


@cache
def _kinds() -> frozenset[str]:
    """Snake-case kinds of the client's API objects (pod, replica_set, pod_disruption_budget).

    Only models with kind and metadata count: V1NodeStatus is a part of a Node,
    and patch_node_status is the nodes/status subresource."""
    kinds = set()
    for name in dir(kubernetes.client):
        match = re.fullmatch(r"(?:Core|Events)?V\d+(?:alpha\d+|beta\d+)?([A-Z]\w*)", name)
        fields = getattr(getattr(kubernetes.client, name), "openapi_types", {})
        if match and "kind" in fields and "metadata" in fields:
            kinds.add(_snake(match.group(1)))
    return frozenset(kinds)


def _plural(kind: str) -> str:
    word = kind.replace("_", "")
    if word.endswith(("s", "x")):
        return word + "es"
    if word.endswith("y"):
        return word[:-1] + "ies"
    return word + "s"


def group_of(api_class: str) -> str:
    match = re.fullmatch(r"([A-Za-z]+?)V\d+(?:alpha\d+|beta\d+)?Api", api_class)
    if match is None or match.group(1) not in _GROUP_OF_PREFIX:
        raise ScanError(f"no API group known for {api_class}; add it to _GROUP_OF_PREFIX")
    return _GROUP_OF_PREFIX[match.group(1)]


def permission_of(api_class: str, method: str) -> Permission:
    """The permission a typed method needs, from the client's naming scheme:
    {verb}_[namespaced_]{kind}[_{subresource}][_for_all_namespaces]."""
    for prefix, verb_of_method in _VERB_OF_PREFIX:
        if method.startswith(prefix):
            rest = method[len(prefix) :]
            verb = verb_of_method
            break
    else:
        raise ScanError(f"{api_class}.{method}: no verb known for this method")
    rest = rest.removeprefix("namespaced_").removesuffix("_for_all_namespaces")
    words = rest.split("_")
    for cut in range(len(words), 0, -1):
        kind = "_".join(words[:cut])
        if kind in _kinds():
            sub = "_".join(words[cut:])
            resource = _plural(kind) + (f"/{sub.replace('_', '')}" if sub else "")
            return Permission(group_of(api_class), resource, verb)
    raise ScanError(f"{api_class}.{method}: no kind found in {rest!r}")


def _instantiated(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in api_classes():
                names.add(name)
    return names


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level NAME = "text" (also NAME: T = ..., and A, B = "x", "y")."""
    pairs: list[tuple[ast.expr, ast.expr | None]] = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            pairs.extend((target, node.value) for target in node.targets)
        elif isinstance(node, ast.AnnAssign):
            pairs.append((node.target, node.value))
    found = {}
    while pairs:
        target, value = pairs.pop()
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            pairs.extend(zip(target.elts, value.elts, strict=False))
        elif (
            isinstance(target, ast.Name)
            and isinstance(value, ast.Constant)
            and isinstance(value.value, str)
        ):
            found[target.id] = value.value
    return found


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _enclosing_function(
    node: ast.AST, parents: dict[ast.AST, ast.AST]
) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return node
    return None


def _string_values(
    expr: ast.expr,
    at: ast.AST,
    tree: ast.Module,
    parents: dict[ast.AST, ast.AST],
) -> set[str]:
    """The string values an argument can take, or ScanError."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}
    if isinstance(expr, ast.Name):
        function = _enclosing_function(at, parents)
        params = [a.arg for a in function.args.args] if function else []
        if function is not None and expr.id in params:
            index = params.index(expr.id)
            values: set[str] = set()
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                callee = node.func
                name = (
                    callee.attr if isinstance(callee, ast.Attribute) else getattr(callee, "id", "")
                )
                if name != function.name:
                    continue
                # A method called on self: the first parameter is not passed.
                offset = 1 if params and params[0] in ("self", "cls") else 0
                args = node.args
                if len(args) > index - offset >= 0:
                    values |= _string_values(args[index - offset], node, tree, parents)
                for keyword in node.keywords:
                    if keyword.arg == expr.id:
                        values |= _string_values(keyword.value, node, tree, parents)
            if values:
                return values
        constants = _constants(tree)
        if expr.id in constants:
            return {constants[expr.id]}
    raise ScanError(
        f"line {getattr(expr, 'lineno', '?')}: cannot tell the value of {ast.unparse(expr)}"
    )


def _custom_object_permissions(
    method: str, call: ast.Call, tree: ast.Module, parents: dict[ast.AST, ast.AST]
) -> set[Permission]:
    verb = next((v for p, v in _VERB_OF_PREFIX if method.startswith(p)), None)
    if verb is None:
        raise ScanError(f"CustomObjectsApi.{method}: no verb known")
    values: dict[str, set[str]] = {}
    for position, name in enumerate(_CUSTOM_OBJECT_ARGS):
        expr = next((k.value for k in call.keywords if k.arg == name), None)
        if expr is None and len(call.args) > position:
            expr = call.args[position]
        if expr is None:
            raise ScanError(f"CustomObjectsApi.{method}: no {name} argument")
        values[name] = _string_values(expr, call, tree, parents)
    suffix = method.split("_custom_object", 1)[1].strip("_")
    return {
        Permission(group, plural + (f"/{suffix}" if suffix else ""), verb)
        for group in values["group"]
        for plural in values["plural"]
    }


def _is_watched(attribute: ast.Attribute, parents: dict[ast.AST, ast.AST]) -> bool:
    parent = parents.get(attribute)
    if isinstance(parent, ast.Call):
        if isinstance(parent.func, ast.Attribute) and parent.func.attr == "stream":
            return True  # watch.Watch().stream(api.list_..., ...)
        if parent.func is attribute:
            return any(
                k.arg == "watch" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in parent.keywords
            )
    return False


_HTTP_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def permission_of_path(method: str, path: str) -> Permission:
    """The permission of a raw request: /api/v1/... or /apis/{group}/{version}/...,
    optionally under namespaces/{namespace}/, then {resource}[/{name}[/{subresource}]]."""
    match = re.fullmatch(r"/api/v1/(.+)|/apis/([^/]+)/[^/]+/(.+)", path.split("?", 1)[0])
    if match is None:
        raise ScanError(f"{method} {path}: not a Kubernetes API path")
    group = match.group(2) or ""
    parts = (match.group(1) or match.group(3)).strip("/").split("/")
    if parts[0] == "namespaces" and len(parts) > 2:
        parts = parts[2:]
    resource = parts[0] + (f"/{parts[2]}" if len(parts) > 2 else "")
    named = len(parts) > 1
    upper = method.upper()
    if upper == "GET":
        verb = "get" if named else "list"
    elif upper == "DELETE":
        verb = "delete" if named else "deletecollection"
    elif upper in _HTTP_VERBS:
        verb = _HTTP_VERBS[upper]
    else:
        raise ScanError(f"{method} {path}: no verb known for this method")
    return Permission(group, resource, verb)


def _api_paths(tree: ast.Module) -> set[str]:
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and re.match(r"/apis?/", node.value)
    }


def _imported_api_paths(tree: ast.Module, where: str) -> set[str]:
    """The API path literals of the modules of its own package that a module imports
    (`from loadaware.cluster import _cache_objects`): where a module's table of paths
    is kept beside it."""
    module_file = ROOT / where.rsplit(":", 1)[0]
    package = ".".join(module_file.parent.relative_to(ROOT).parts)
    paths: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == package:
            for alias in node.names:
                sibling = module_file.parent / f"{alias.name}.py"
                if sibling.is_file():
                    paths |= _api_paths(ast.parse(sibling.read_text(), filename=str(sibling)))
    return paths


def _raw_request_permissions(
    call: ast.Call, tree: ast.Module, parents: dict[ast.AST, ast.AST], where: str
) -> set[Permission]:
    def argument(position: int, name: str) -> ast.expr:
        expr = next((k.value for k in call.keywords if k.arg == name), None)
        if expr is None and len(call.args) > position:
            expr = call.args[position]
        if expr is None:
            raise ScanError(f"{where}: param_serialize without {name}")
        return expr

    methods = _string_values(argument(0, "method"), call, tree, parents)
    try:
        paths = _string_values(argument(1, "resource_path"), call, tree, parents)
    except ScanError:
        paths = _api_paths(tree)
        if not paths:
            raise
    permissions = {permission_of_path(m, p) for m in methods for p in paths}
    if _asks_to_watch(call, parents):
        permissions = {
            Permission(p.group, p.resource, "watch") if p.verb == "list" else p for p in permissions
        }
    return permissions


def _asks_to_watch(call: ast.Call, parents: dict[ast.AST, ast.AST]) -> bool:
    """A raw GET whose function builds the query ("watch", "true"): a watch, not a list."""
    scope: ast.AST | None = call
    while scope is not None and not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
        scope = parents.get(scope)
    if scope is None:
        return False
    return any(
        isinstance(node, ast.Tuple)
        and len(node.elts) == 2
        and isinstance(node.elts[0], ast.Constant)
        and node.elts[0].value == "watch"
        for node in ast.walk(scope)
    )


@dataclass(frozen=True)
class RawHelper:
    """A function that hands its `method` and `path` parameters to param_serialize."""

    name: str
    method: tuple[int, str]  # the parameter's position and name
    path: tuple[int, str]


def _raw_helpers_in(tree: ast.Module) -> dict[str, RawHelper]:
    """The module's raw-request helpers: functions that build a request from their own
    `method` and resource-path parameters, through `param_serialize(method, path)`
    or by sending `call_api(method, ...)` with a parameter named `path`."""
    helpers: dict[str, RawHelper] = {}
    for function in tree.body:
        if not isinstance(function, ast.FunctionDef):
            continue
        params = [a.arg for a in function.args.args]
        for node in ast.walk(function):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("param_serialize", "call_api")
                and node.args
                and all(isinstance(a, ast.Name) and a.id in params for a in node.args[:1])
            ):
                continue
            method = node.args[0].id  # type: ignore[attr-defined]
            if node.func.attr == "param_serialize":
                if len(node.args) < 2 or not (
                    isinstance(node.args[1], ast.Name) and node.args[1].id in params
                ):
                    continue
                path = node.args[1].id
            elif "path" in params:
                path = "path"
            else:
                continue
            helpers[function.name] = RawHelper(
                function.name, (params.index(method), method), (params.index(path), path)
            )
    return helpers


@cache
def raw_helpers(package: pathlib.Path = PACKAGE) -> dict[str, RawHelper]:
    """Every raw-request helper of the package, by function name."""
    helpers: dict[str, RawHelper] = {}
    for path in sorted(package.rglob("*.py")):
        helpers.update(_raw_helpers_in(ast.parse(path.read_text(), filename=str(path))))
    return helpers


def _helper_call_permissions(
    helper: RawHelper, call: ast.Call, tree: ast.Module, parents: dict[ast.AST, ast.AST], where: str
) -> set[Permission]:
    def argument(position: int, name: str) -> ast.expr:
        expr = next((k.value for k in call.keywords if k.arg == name), None)
        if expr is None and len(call.args) > position:
            expr = call.args[position]
        if expr is None:
            raise ScanError(f"{where}: {helper.name} without {name}")
        return expr

    methods = _string_values(argument(*helper.method), call, tree, parents)
    try:
        paths = _string_values(argument(*helper.path), call, tree, parents)
    except ScanError:
        paths = _api_paths(tree) or _imported_api_paths(tree, where)
        if not paths:
            raise
    permissions = {permission_of_path(m, p) for m in methods for p in paths}
    if _asks_to_watch(call, parents):
        permissions = {
            Permission(p.group, p.resource, "watch") if p.verb == "list" else p for p in permissions
        }
    return permissions


def scan_file(path: pathlib.Path) -> Iterator[ApiCall]:
    tree = ast.parse(path.read_text(), filename=str(path))
    parents = _parents(tree)
    here = _instantiated(tree)
    every = api_classes()
    helpers = raw_helpers()
    defined_here = _raw_helpers_in(tree)
    relative = str(path.relative_to(ROOT))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in helpers:
                where = f"{relative}:{node.lineno}"
                found = _helper_call_permissions(helpers[name], node, tree, parents, where)
                for permission in sorted(found):
                    yield ApiCall(relative, node.lineno, "ApiClient", name, permission)
            continue
        if not isinstance(node, ast.Attribute):
            continue
        call = parents.get(node)
        if node.attr == "param_serialize" and isinstance(call, ast.Call) and call.func is node:
            function = _enclosing_function(node, parents)
            if function is not None and function.name in defined_here:
                continue  # a helper: its calls carry the permissions
            where = f"{relative}:{node.lineno}"
            for permission in sorted(_raw_request_permissions(call, tree, parents, where)):
                yield ApiCall(relative, node.lineno, "ApiClient", node.attr, permission)
            continue
        if node.attr == "call_api" and not any(
            isinstance(n, ast.Attribute) and n.attr == "param_serialize" for n in ast.walk(tree)
        ):
            function = _enclosing_function(node, parents)
            if function is not None and function.name in defined_here:
                continue  # a helper: its calls carry the permissions
            raise ScanError(f"{relative}:{node.lineno}: a raw call_api the scan cannot map")
        owners = {name for name, methods in every.items() if node.attr in methods}
        if not owners:
            continue
        local = owners & here
        if not local and not here:
            # A name shared with something else (a wrapper's own method) in a file
            # that makes no client at all is not a client call.
            continue
        chosen = local or owners
        if len(chosen) > 1:
            raise ScanError(
                f"{relative}:{node.lineno}: {node.attr} exists in {sorted(chosen)}; "
                "instantiate the one meant in this file"
            )
        (api_class,) = chosen
        if api_class == "CustomObjectsApi":
            call = parents.get(node)
            if not isinstance(call, ast.Call) or call.func is not node:
                raise ScanError(f"{relative}:{node.lineno}: call CustomObjectsApi methods directly")
            permissions = _custom_object_permissions(node.attr, call, tree, parents)
        else:
            permissions = {permission_of(api_class, node.attr)}
        for permission in sorted(permissions):
            yield ApiCall(relative, node.lineno, api_class, node.attr, permission)
            if permission.verb == "list" and _is_watched(node, parents):
                watch = Permission(permission.group, permission.resource, "watch")
                yield ApiCall(relative, node.lineno, api_class, node.attr, watch)


def scan_package(package: pathlib.Path = PACKAGE) -> list[ApiCall]:
    calls: list[ApiCall] = []
    for path in sorted(package.rglob("*.py")):
        if path.relative_to(package).parts[0] in NOT_IN_CLUSTER:
            continue
        calls.extend(scan_file(path))
    return calls
