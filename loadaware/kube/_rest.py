"""Raw requests: a list page or a watch stream as bytes, the client's models skipped.

Lists and watches of the cluster's kinds are read as raw JSON (see cluster/_live.py
for why). The answer comes back whatever its status, so that the caller can
treat 404, 410, 429 and 5xx as its protocol says; `api_error` turns an answer
the caller does not handle into loadaware's error. A failure below HTTP raises
UnreachableError naming the server and the cause.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from loadaware.kube import _errors


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorAnswer:
    """An error answer, read: what api_error needs (status, reason, body) and the headers."""

    status: int
    reason: str
    body: str
    headers: Mapping[str, str]


def raw_request(
    client: Any,
    method: str,
    path: str,
    query: list[tuple[str, Any]],
    *,
    timeout: tuple[float, float],
    doing: str,
) -> Any:
    """The urllib3 response of one request, its body not read (a watch streams it).

    The RBAC scan (tests/deploy/rbac_scan.py) reads `method` and `path` at each
    call of this function: keep them literal, module constants or a module's
    table of API paths there."""
    server = _errors.server_of(client)
    with _errors.translated(doing, server):
        serialized_method, url, headers, body, post = client.param_serialize(
            method,
            path,
            query_params=query,
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        answer = client.call_api(
            serialized_method,
            url,
            header_params=headers,
            body=body,
            post_params=post,
            _request_timeout=timeout,
        )
    return answer.response


def read_error(response: Any) -> ErrorAnswer:
    """An error answer's body (for its Status message) and headers (Retry-After); the
    connection goes back to the pool."""
    try:
        data = response.read()
    finally:
        response.release_conn()
    return ErrorAnswer(
        status=int(response.status),
        reason=str(response.reason or ""),
        body=bytes(data or b"").decode("utf-8", "replace"),
        headers=dict(response.headers or {}),
    )
