"""HTTP in front of the simulated cluster: the Kubernetes REST paths, metrics.k8s.io and
Prometheus text at /metrics; discovery (`_discovery`), OpenAPI (`_openapi`), watch
streams (`_watches`) and the admin API under /_sim/ (`_admin`) answer from their
own modules.

Routing follows kube-apiserver's URL scheme:

    /api/v1[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]
    /apis/{group}/{version}[/namespaces/{ns}]/{resource}[/{name}[/{subresource}]]

GET on a collection lists (or watches, with `watch=true`), POST creates, DELETE
deletes the collection; on an object GET, PUT, PATCH and DELETE; `status`,
`eviction` and `binding` subresources where the real API has them. Unknown
paths are 404 and known paths with a wrong method 405, with Status bodies.
`Accept: ...;as=Table` gets server-side printed Tables, as kubectl asks.
`watch=true` hands the connection to a watch stream.

Responses are sent in a single write with TCP_NODELAY: small writes on a
keep-alive connection otherwise meet delayed ACKs and cost 40 ms each.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from loadaware.sim import (
    _admin,
    _cluster,
    _discovery,
    _events,
    _eviction,
    _metrics_api,
    _openapi,
    _resources,
    _response,
    _status,
    _store,
    _tables,
    _watches,
)

log = logging.getLogger(__name__)

_OPEN_PATHS = frozenset({"/version", "/healthz", "/livez", "/readyz", "/_sim/healthz"})


class ApiHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "loadaware-sim"
    sys_version = ""

    @property
    def sim(self) -> _cluster.SimCluster:
        return self.server.sim  # type: ignore[attr-defined, no-any-return]

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sim.watches.connection_opened(self.connection)

    def finish(self) -> None:
        self.sim.watches.connection_ended(self.connection)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("request", extra={"request": format % args})

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    # --- plumbing ---

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            # Go's client streams bodies of unknown length (kubectl create --raw -f FILE).
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, response: _response.Response) -> None:
        head = [f"HTTP/1.1 {response.code} {self.responses.get(response.code, ('',))[0]}"]
        head.append(f"Content-Type: {response.content_type}")
        head.append(f"Content-Length: {len(response.body)}")
        head.append("Cache-Control: no-cache, private")
        head.append(f"Date: {self.date_time_string()}")
        for key, value in response.headers.items():
            head.append(f"{key}: {value}")
        if self.close_connection:
            head.append("Connection: close")
        payload = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.body
        self.wfile.write(payload)
        self.log_request(response.code, len(response.body))

    def _handle(self, method: str) -> None:
        started = time.perf_counter()
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/") or "/"
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        try:
            raw = self._read_body()
        except (OSError, ValueError):
            self.close_connection = True
            return
        if path.startswith("/_sim/"):
            response = _admin.answer(self.sim, method, path, raw)
            self._send(response)
            return
        for fault in self.sim.faults.take(method, path):
            if fault.latency:
                time.sleep(fault.latency)
            if fault.drop:
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            error = fault.error()
            if error is not None:
                self._send(_response.Response(error.code, error.status, headers=error.headers))
                return
        self.sim.requests.record(method, path, query)
        try:
            _check_auth(self.sim.settings.token, path, self.headers.get("Authorization") or "")
            response = self._route(method, path, query, raw)
        except _watches.WatchRequestError as watch:
            if not _watches.stream(
                watch,
                store=self.sim.store,
                watches=self.sim.watches,
                connection=self.connection,
                write=self.wfile.write,
                bookmark_seconds=self.sim.settings.watch_bookmark_seconds,
            ):
                self.close_connection = True
            return
        except _status.ApiError as exc:
            response = _response.Response(exc.code, exc.status, headers=exc.headers)
        except Exception:
            log.exception("simulated API failed on a request", extra={"path": path})
            error = _status.internal("the simulated API server failed; see its log")
            response = _response.Response(500, error.status)
        self._send(response)
        log.debug(
            "served",
            extra={"method": method, "path": path, "seconds": time.perf_counter() - started},
        )

    # --- routing ---

    def _route(
        self, method: str, path: str, query: dict[str, str], raw: bytes
    ) -> _response.Response:
        segments = [s for s in path.split("/") if s]
        if not segments:
            return _response.Response(
                200, {"paths": ["/api", "/api/v1", "/apis", "/metrics", "/version"]}
            )
        head = segments[0]
        if len(segments) == 1 and head in ("healthz", "livez", "readyz"):
            return _response.Response(200, "ok", content_type=_response.TEXT)
        if segments == ["version"]:
            return _response.Response(200, _discovery.version_info())
        if segments == ["metrics"]:
            if method != "GET":
                raise _status.method_not_allowed()
            return _response.Response(
                200, self.sim.exposition(), content_type="text/plain; version=0.0.4; charset=utf-8"
            )
        if head == "openapi":
            if method != "GET":
                raise _status.method_not_allowed()
            body, headers = _openapi.answer(segments[1:], self.headers.get("Accept"))
            return _response.Response(200, body, headers=headers)
        if head == "api":
            if len(segments) == 1:
                return _response.Response(200, _discovery.api_versions(self.server.server_address))  # type: ignore[attr-defined]
            if segments[1] != "v1":
                raise _status.no_such_path()
            if len(segments) == 2:
                return _response.Response(200, _discovery.api_resources("", "v1"))
            return self._resource(method, "", "v1", segments[2:], query, raw)
        if head == "apis":
            if len(segments) == 1:
                return _response.Response(200, _discovery.api_groups())
            group = segments[1]
            versions = _resources.groups().get(group)
            if versions is None:
                raise _status.no_such_path()
            if len(segments) == 2:
                return _response.Response(200, _discovery.api_group(group))
            version = segments[2]
            if version not in versions:
                raise _status.no_such_path()
            if len(segments) == 3:
                return _response.Response(200, _discovery.api_resources(group, version))
            if group == _resources.METRICS_GROUP:
                return _metrics_api.answer(self.sim, method, segments[3:], query)
            return self._resource(method, group, version, segments[3:], query, raw)
        raise _status.no_such_path()

    def _resource(
        self,
        method: str,
        group: str,
        version: str,
        rest: list[str],
        query: dict[str, str],
        raw: bytes,
    ) -> _response.Response:
        namespace: str | None = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            candidate = _resources.find(group, version, rest[2])
            if candidate is not None and candidate.namespaced:
                namespace, rest = rest[1], rest[2:]
        resource = _resources.find(group, version, rest[0])
        if resource is None or len(rest) > 3:
            raise _status.no_such_path()
        if namespace is not None and not resource.namespaced:
            raise _status.no_such_path()
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else ""
        if name is not None and resource.namespaced and namespace is None:
            raise _status.no_such_path()
        if sub and sub not in resource.subresources:
            raise _status.no_such_path()
        sim = self.sim
        store = sim.store
        stored = _resources.EVENTS if resource is _resources.EVENTS_V1 else resource
        view = _events.to_events_v1 if resource is _resources.EVENTS_V1 else None
        accepts_table = "as=Table" in (self.headers.get("Accept") or "")

        if name is None:
            if method == "GET":
                if query.get("watch") in ("true", "1"):
                    raise _watches.WatchRequestError(resource, namespace, query)
                return self._list(resource, stored, namespace, query, accepts_table, view)
            if method == "POST":
                if resource.namespaced and namespace is None:
                    raise _status.method_not_allowed()
                body = _json_body(raw)
                if view is not None and isinstance(body, dict):
                    body = _events.from_events_v1(body)
                created = store.create(stored, namespace, body, dry_run=_store.is_dry_run(query))
                return _object(201, created, view)
            if method == "DELETE":
                return self._delete_collection(stored, namespace, query, raw, view)
            raise _status.method_not_allowed()

        if sub == "eviction":
            if method != "POST":
                raise _status.method_not_allowed()
            body = _json_body(raw)
            return _response.Response(
                201, _eviction.evict(store, namespace or "", name, body, query)
            )
        if sub == "binding":
            if method != "POST":
                raise _status.method_not_allowed()
            body = _json_body(raw) or {}
            target = (body.get("target") or {}).get("name") if isinstance(body, dict) else None
            if not target:
                raise _status.invalid(
                    "Binding", name, [("target.name", "FieldValueRequired", "Required value")]
                )
            with store.lock:
                sim.controllers.bind(namespace or "", name, str(target))
            return _response.Response(201, _status.success(201))

        object_namespace = namespace if resource.namespaced else None
        if method == "GET":
            entry = store.entry(stored, object_namespace, name)
            if accepts_table:
                return _response.Response(200, self._table(resource, [entry.obj], {}, query))
            if view is not None:
                return _response.Response(200, view(entry.obj))
            return _response.Response(200, entry.full_json())
        if method == "PUT":
            body = _json_body(raw)
            if view is not None and isinstance(body, dict):
                body = _events.from_events_v1(body)
            updated = store.update(
                stored,
                object_namespace,
                name,
                body,
                subresource=sub,
                dry_run=_store.is_dry_run(query),
            )
            return _object(200, updated, view)
        if method == "PATCH":
            body = _json_body(raw)
            content_type = self.headers.get("Content-Type") or ""
            patched = store.patch(
                stored,
                object_namespace,
                name,
                content_type,
                body,
                subresource=sub,
                dry_run=_store.is_dry_run(query),
            )
            return _object(200, patched, view)
        if method == "DELETE" and not sub:
            options = _store.delete_options(query, _json_body(raw))
            obj, gone = store.delete(stored, object_namespace, name, options)
            if stored is _resources.PODS or not gone:
                # 200 with the object while it lingers (grace period, finalizers), as
                # kube-apiserver answers unless orphanDependents=false asks for 202.
                return _object(200, obj, view)
            details = {"name": name}
            if resource.group:
                details["group"] = resource.group
            details["kind"] = resource.plural
            details["uid"] = obj["metadata"].get("uid", "")
            return _response.Response(200, _status.success(200, details))
        raise _status.method_not_allowed()

    def _list(
        self,
        resource: _resources.Resource,
        stored: _resources.Resource,
        namespace: str | None,
        query: dict[str, str],
        accepts_table: bool,
        view: Callable[[Any], dict[str, Any]] | None,
    ) -> _response.Response:
        field_selector = query.get("fieldSelector", "")
        if view is not None:
            field_selector = _events.events_v1_fields(field_selector)
        try:
            limit = int(query.get("limit") or 0)
        except ValueError:
            raise _status.bad_request(f"invalid limit: {query.get('limit')}") from None
        result = self.sim.store.list(
            stored,
            namespace,
            label_selector=query.get("labelSelector", ""),
            field_selector=field_selector,
            limit=max(limit, 0),
            continue_token=query.get("continue", ""),
            resource_version=query.get("resourceVersion", ""),
            resource_version_match=query.get("resourceVersionMatch", ""),
        )
        list_meta: dict[str, Any] = {"resourceVersion": result.resource_version}
        if result.continue_token:
            list_meta["continue"] = result.continue_token
        if result.remaining is not None:
            list_meta["remainingItemCount"] = result.remaining
        if accepts_table:
            objects = [e.obj for e in result.entries]
            if view is not None:
                objects = [view(o) for o in objects]
            return _response.Response(200, self._table(stored, objects, list_meta, query))
        head = {
            "kind": resource.list_kind,
            "apiVersion": resource.api_version,
            "metadata": list_meta,
        }
        if view is not None:
            head["items"] = [
                {k: v for k, v in view(e.obj).items() if k not in ("kind", "apiVersion")}
                for e in result.entries
            ]
            return _response.Response(200, head)
        prefix = _response.ENCODE(head)[:-1].encode() + b',"items":['
        return _response.Response(
            200, prefix + b",".join(e.item_json() for e in result.entries) + b"]}"
        )

    def _table(
        self,
        resource: _resources.Resource,
        objects: list[Mapping[str, Any]],
        list_meta: dict[str, Any],
        query: dict[str, str],
    ) -> dict[str, Any]:
        return _tables.table(
            resource,
            list(objects),
            now=self.sim.clock.time(),
            include_object=query.get("includeObject", "Metadata"),
            list_meta=list_meta,
        )

    def _delete_collection(
        self,
        resource: _resources.Resource,
        namespace: str | None,
        query: dict[str, str],
        raw: bytes,
        view: Callable[[Any], dict[str, Any]] | None,
    ) -> _response.Response:
        if "deletecollection" not in resource.verbs:
            raise _status.method_not_allowed()
        options = _store.delete_options(query, _json_body(raw))
        store = self.sim.store
        with store.lock:
            result = store.list(
                resource,
                namespace,
                label_selector=query.get("labelSelector", ""),
                field_selector=query.get("fieldSelector", ""),
            )
            deleted = []
            for entry in result.entries:
                meta = entry.obj["metadata"]
                obj, _ = store.delete(resource, meta.get("namespace"), meta["name"], options)
                deleted.append(view(obj) if view is not None else obj)
        return _response.Response(
            200,
            {
                "kind": resource.list_kind,
                "apiVersion": resource.api_version,
                "metadata": {"resourceVersion": str(store.resource_version)},
                "items": deleted,
            },
        )


def _check_auth(token: str | None, path: str, header: str) -> None:
    if token is None or path in _OPEN_PATHS:
        return
    if header != f"Bearer {token}":
        raise _status.unauthorized()


def _json_body(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _status.bad_request(f"couldn't get version/kind; json parse error: {exc}") from None


def _object(
    code: int, obj: dict[str, Any], view: Callable[[Any], dict[str, Any]] | None
) -> _response.Response:
    return _response.Response(code, view(obj) if view is not None else obj)
