"""Which API requests the simulated server answered, by verb and resource: the
evidence behind claims such as "a round on a warm cache lists nothing".

Verbs are the API server's audit verbs (get, list, watch, create, update, patch,
delete, deletecollection), so a count reads as kube-apiserver's
`apiserver_request_total{verb, resource}` would. Discovery, /version, /metrics
and the admin API under /_sim/ are not resource requests and are not counted.
"""

from __future__ import annotations

import collections
import threading
from typing import Any

_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def verb_of(method: str, path: str, query: dict[str, str]) -> tuple[str, str] | None:
    """(verb, resource) of a request, the resource as `pods`, `pods/eviction`,
    `deployments.apps`; None for what is not a resource request."""
    segments = [s for s in path.split("/") if s]
    if len(segments) >= 3 and segments[0] == "api" and segments[1] == "v1":
        group, rest = "", segments[2:]
    elif len(segments) >= 4 and segments[0] == "apis":
        group, rest = segments[1], segments[3:]
    else:
        return None
    if len(rest) >= 3 and rest[0] == "namespaces":
        rest = rest[2:]
    resource = rest[0]
    if group:
        resource = f"{resource}.{group}"
    named = len(rest) >= 2
    if len(rest) >= 3:
        resource = f"{resource}/{rest[2]}"
    if method == "GET":
        if named:
            return "get", resource
        return ("watch" if query.get("watch") in ("true", "1") else "list"), resource
    if method == "DELETE":
        return ("delete" if named else "deletecollection"), resource
    verb = _VERBS.get(method)
    return None if verb is None else (verb, resource)


class RequestLog:
    """Counts of requests by (verb, resource); thread-safe, cleared on demand."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: collections.Counter[tuple[str, str]] = collections.Counter()

    def record(self, method: str, path: str, query: dict[str, str]) -> None:
        key = verb_of(method, path, query)
        if key is None:
            return
        with self._lock:
            self._counts[key] += 1

    def counts(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return dict(self._counts)

    def total(self, verb: str | None = None) -> int:
        with self._lock:
            return sum(n for (v, _), n in self._counts.items() if verb is None or v == verb)

    def clear(self) -> None:
        with self._lock:
            self._counts.clear()

    def to_json(self) -> dict[str, Any]:
        counts = self.counts()
        return {
            "total": sum(counts.values()),
            "requests": [
                {"verb": verb, "resource": resource, "count": n}
                for (verb, resource), n in sorted(counts.items())
            ],
        }
