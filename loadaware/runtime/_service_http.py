"""The service's HTTP side: routes, the Alertmanager webhook's request handling
(authentication, Content-Type, length limits) and the server on its own thread.

One port, stdlib ThreadingHTTPServer: five small routes need no framework, and
no extra dependency sits in front of the webhook's authentication.

    POST /alertmanager   the Alertmanager webhook (see _webhook)
    GET  /metrics        prometheus-client exposition (see _service_status)
    GET  /healthz        the process is serving
    GET  /readyz         readiness, each check's last answer (see _service_status)
    GET  /status         JSON: rounds, schedules, breaker, budgets, leadership, the
                         cluster cache (see _service_status)
"""

from __future__ import annotations

import http.server
import json
import logging
import socket
import threading
from collections.abc import Mapping
from typing import Any

from loadaware.errors import PolicyError
from loadaware.runtime import _service, _service_metrics, _webhook

log = logging.getLogger(__name__)

# Request bodies other than the webhook's are not expected; any body we did not
# read is drained up to this much so the client sees our answer rather than a
# reset connection, and beyond it the connection is closed.
DRAIN_MAX_BYTES = 16 * 1024 * 1024
REQUEST_TIMEOUT_SECONDS = 30.0


def parse_listen(address: str) -> tuple[str, int]:
    """`host:port`, `:port` or `[v6]:port` -> (host, port); port 0 picks a free one."""
    host, sep, port_text = address.rpartition(":")
    if not sep or not port_text.isdigit() or int(port_text) > 65535:
        raise PolicyError(
            f"listen address {address!r} is not host:port",
            problems=[f"serve.listen: {address!r}: expected host:port, e.g. 0.0.0.0:8080"],
        )
    host = host.removeprefix("[").removesuffix("]") or "0.0.0.0"
    return host, int(port_text)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    timeout = REQUEST_TIMEOUT_SECONDS
    server_version = "loadaware"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        # The request line only, at debug level; never headers or bodies.
        log.debug("http request", extra={"reason": format % args})

    def do_GET(self) -> None:
        service = self.server.service
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            body, content_type = service.metrics_page()
            self._send(200, body, content_type)
        elif path == "/healthz":
            self._send(200, b"ok\n", "text/plain; charset=utf-8")
        elif path == "/readyz":
            ready, checks = service.readiness()
            self._json(200 if ready else 503, {"ready": ready, "checks": checks})
        elif path == "/status":
            self._json(200, service.status())
        elif path == "/alertmanager":
            self._json(405, {"result": "rejected", "detail": "use POST"}, {"Allow": "POST"})
        else:
            self._json(404, {"detail": "not found"})

    def do_POST(self) -> None:
        if self.path.split("?", 1)[0] != "/alertmanager":
            self._finish_unread()
            self._json(404, {"detail": "not found"})
            return
        reply = self._alertmanager()
        if reply.result:
            _service_metrics.WEBHOOK_NOTIFICATIONS.labels(reply.result).inc()
        self._json(reply.status, reply.body(), reply.headers)

    def _alertmanager(self) -> _webhook.Reply:
        webhook = self.server.service.webhook
        denied = webhook.authenticate(self.headers.get("Authorization"))
        if denied is not None:
            self._finish_unread()
            return denied
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/json":
            self._finish_unread()
            return _webhook.Reply(
                status=415, result="rejected", detail="Content-Type must be application/json"
            )
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            return _webhook.Reply(status=411, result="rejected", detail="Content-Length required")
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            return _webhook.Reply(status=411, result="rejected", detail="Content-Length required")
        if not length_text.strip().isdigit():
            self.close_connection = True
            return _webhook.Reply(status=400, result="rejected", detail="bad Content-Length")
        length = int(length_text)
        if length > webhook.max_body_bytes:
            self._finish_unread()
            return _webhook.Reply(
                status=413,
                result="rejected",
                detail=f"body larger than {webhook.max_body_bytes} bytes",
            )
        body = self.rfile.read(length)
        if len(body) != length:
            self.close_connection = True
            return _webhook.Reply(
                status=400, result="rejected", detail="body shorter than its length"
            )
        return webhook.handle(body)

    def _finish_unread(self) -> None:
        """Drain a body we will not read, so that the client gets the answer."""
        length_text = self.headers.get("Content-Length") or ""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            return
        if not length_text.strip().isdigit():
            return
        left = int(length_text)
        if left > DRAIN_MAX_BYTES:
            self.close_connection = True
            return
        while left > 0:
            chunk = self.rfile.read(min(left, 65536))
            if not chunk:
                break
            left -= len(chunk)

    def _json(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        data = (json.dumps(body, indent=2, default=str) + "\n").encode()
        self._send(status, data, "application/json", headers)

    def _send(
        self,
        status: int,
        data: bytes,
        content_type: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog of 5 resets connections when Alertmanager
    # (or several) sends a burst of notifications at once.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], service: _service.Service) -> None:
        self.service = service
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)


class HttpServer:
    """The service's HTTP endpoints on their own thread (use as a context manager)."""

    def __init__(self, service: _service.Service, listen: str) -> None:
        self._server = _Server(parse_listen(listen), service)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.1,), name="http", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = self._server.server_address[0]
        host = "127.0.0.1" if host in ("0.0.0.0", "") else host
        return f"http://{host}:{self.port}"

    def start(self) -> HttpServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> HttpServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
