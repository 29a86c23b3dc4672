"""One translation of what the Kubernetes client raises into loadaware's errors.

Modelled on httpx's `map_httpcore_exceptions`: every call to the API server runs
inside `translated(doing, server)`, which turns

    ApiException 401              -> UnauthorizedError   (cluster-unauthorized)
    ApiException 403              -> ForbiddenError      (cluster-forbidden)
    ApiException 404              -> NotFoundError
    ApiException 409              -> ConflictError
    ApiException 429              -> TooManyRequestsError
    ApiException other            -> ClusterError
    urllib3 / socket / TLS errors -> UnreachableError    (cluster-unreachable)

with `raise ... from exc`. The message names what was being done, the server's
address and the cause ("connection refused", "TLS certificate verification
failed: ...", "403 Forbidden: <the Status message>"). It never carries a request
header, a token or a whole body: only a Status body's message, truncated.
"""

from __future__ import annotations

import json
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import urllib3

from loadaware.errors import (
    ClusterError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    TooManyRequestsError,
    UnauthorizedError,
    UnreachableError,
)

MESSAGE_MAX_CHARS = 300

_BY_STATUS: dict[int, type[ClusterError]] = {
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    429: TooManyRequestsError,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Status:
    """What an error answer says: kube-apiserver's Status object, as far as it is one."""

    code: int
    reason: str  # Status.reason ("NotFound", "Forbidden"), else the HTTP reason phrase
    message: str  # Status.message, truncated; "" when the body is not a Status
    details_kind: str | None = None  # Status.details.kind ("namespaces" for a missing one)


def status_of(exc: Any) -> Status:
    """The Status of an ApiException (or anything with status, reason and body)."""
    code = int(getattr(exc, "status", 0) or 0)
    body = getattr(exc, "body", None)
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    parsed: Any = None
    if body:
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
    if not isinstance(parsed, dict):
        # Not a Status: a proxy's error page or an echo of the request is never quoted.
        return Status(code=code, reason=str(getattr(exc, "reason", "") or ""), message="")
    details = parsed.get("details")
    kind = details.get("kind") if isinstance(details, dict) else None
    return Status(
        code=code,
        reason=str(parsed.get("reason") or getattr(exc, "reason", "") or ""),
        message=str(parsed.get("message") or "")[:MESSAGE_MAX_CHARS],
        details_kind=kind if isinstance(kind, str) else None,
    )


def server_of(client: Any) -> str:
    """The API server's address an ApiClient talks to, without any credentials."""
    host = str(getattr(getattr(client, "configuration", None), "host", "") or "")
    scheme, sep, rest = host.rpartition("://")
    rest = rest.rpartition("@")[2]  # user:password@ in a URL is never shown
    return f"{scheme}{sep}{rest}" if sep else rest


def api_error(exc: Any, doing: str, server: str = "") -> ClusterError:
    """One ApiException (or an answer with status, reason and body) as loadaware's error."""
    status = status_of(exc)
    # The server is named where it may be the wrong one: credentials it does not know.
    where = f" ({server})" if server and status.code == 401 else ""
    text = f"{doing}{where}: {status.code} {status.reason}".rstrip()
    if status.message:
        text += f": {status.message}"
    error = _BY_STATUS.get(status.code, ClusterError)
    hint = None
    if status.code in (401, 403):
        hint = "check the credentials and RBAC of the kubeconfig or service account"
    return error(text, hint=hint, status_code=status.code, details_kind=status.details_kind)


def unreachable_error(exc: BaseException, doing: str, server: str = "") -> UnreachableError:
    """A failure below HTTP (no answer) as UnreachableError naming the server and the cause."""
    at = f" at {server}" if server else ""
    return UnreachableError(
        f"{doing}: cannot reach the Kubernetes API{at}: {cause_of(exc)}",
        hint="check the server address and CA of the kubeconfig (kubectl cluster-info)",
    )


def cause_of(exc: BaseException) -> str:
    """A short, safe description of why a connection failed, from the innermost cause."""
    chain = list(_chain(exc))
    # urllib3's timeouts wrap a bare socket timeout: they say which one it was.
    for inner in chain:
        if isinstance(inner, urllib3.exceptions.NewConnectionError):
            continue  # a subclass of ConnectTimeoutError for history's sake, not a timeout
        if isinstance(inner, urllib3.exceptions.ConnectTimeoutError):
            return "connection timed out"
        if isinstance(inner, urllib3.exceptions.ReadTimeoutError):
            return "no answer in time (read timeout)"
    for inner in chain:
        if isinstance(inner, ssl.SSLCertVerificationError):
            detail = inner.verify_message or inner.reason or "verification failed"
            return f"TLS certificate verification failed: {detail}"
        if isinstance(inner, ssl.SSLError):
            return f"TLS handshake failed: {inner.reason or type(inner).__name__}"
        if isinstance(inner, ConnectionRefusedError):
            return "connection refused"
        if isinstance(inner, ConnectionResetError):
            return "connection reset by the server"
        if isinstance(inner, socket.gaierror):
            return f"the host name does not resolve ({inner.strerror or inner})"
        if isinstance(inner, TimeoutError):
            return "timed out"
        if isinstance(inner, urllib3.exceptions.ProtocolError):
            return "the connection was closed before an answer"
        if isinstance(inner, OSError) and inner.strerror:
            return inner.strerror.lower()
    return type(exc).__name__


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and its causes, innermost last; urllib3's `reason` counts as a cause.
    The innermost is tried first, since the outer ones wrap it in their own words."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        reason = getattr(current, "reason", None)
        current = (
            reason
            if isinstance(reason, BaseException)
            else (current.__cause__ or current.__context__)
        )
    return reversed(seen)


# What a call to the API server raises when no HTTP answer came back.
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (urllib3.exceptions.HTTPError, OSError)


@contextmanager
def translated(doing: str, server: str = "") -> Iterator[None]:
    """Run a client call; raise what it raised as loadaware's error (see the module)."""
    from kubernetes.client.exceptions import ApiException

    try:
        yield
    except ApiException as exc:
        if not exc.status:
            # The client's own wrapping of a TLS failure: no answer came back.
            raise unreachable_error(exc, doing, server) from exc
        raise api_error(exc, doing, server) from exc
    except CONNECTION_ERRORS as exc:
        raise unreachable_error(exc, doing, server) from exc
