"""Fault injection: make chosen requests slow, fail or vanish, for tests of the clients.

A rule matches a request by a regular expression on its path (searched, not
anchored, so "/pods" matches every pod path) and optionally its method, and
applies `times` times (None: until cleared). Faults are:

- latency: the response is delayed this many (real) seconds;
- status 500 or 429 (or any code): a Status body as kube-apiserver sends it
  (429 with Retry-After, as API Priority and Fairness does);
- drop: the connection is closed without a response.

The admin endpoints under /_sim/ are never faulted.
"""

from __future__ import annotations

import itertools
import re
import threading
from dataclasses import dataclass, field
from typing import Any

from loadaware.sim import _status


@dataclass(slots=True, kw_only=True)
class Fault:
    path: str = ""
    method: str | None = None
    latency: float = 0.0
    status: int | None = None
    drop: bool = False
    times: int | None = None
    id: int = 0
    _pattern: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._pattern = re.compile(self.path)
        if self.status is not None and not 400 <= self.status <= 599:
            raise ValueError("status must be an HTTP error code (400-599)")
        if self.latency < 0:
            raise ValueError("latency must not be negative")

    def matches(self, method: str, path: str) -> bool:
        if self.method is not None and self.method.upper() != method.upper():
            return False
        return self._pattern.search(path) is not None

    def error(self) -> _status.ApiError | None:
        if self.status is None:
            return None
        if self.status == 429:
            return _status.ApiError(
                429,
                "TooManyRequests",
                "Too many requests, please try again later.",
                details={"retryAfterSeconds": 1},
                headers={"Retry-After": "1"},
            )
        if self.status == 500:
            return _status.internal("injected fault")
        if self.status == 503:
            return _status.ApiError(
                503, "ServiceUnavailable", "the server is currently unable to handle the request"
            )
        return _status.ApiError(self.status, "InternalError", f"injected fault ({self.status})")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "method": self.method,
            "latency": self.latency,
            "status": self.status,
            "drop": self.drop,
            "times": self.times,
        }


class Faults:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[Fault] = []
        self._ids = itertools.count(1)

    def add(
        self,
        path: str = "",
        *,
        method: str | None = None,
        latency: float = 0.0,
        status: int | None = None,
        drop: bool = False,
        times: int | None = None,
    ) -> Fault:
        fault = Fault(
            path=path, method=method, latency=latency, status=status, drop=drop, times=times
        )
        with self._lock:
            fault.id = next(self._ids)
            self._rules.append(fault)
        return fault

    def remove(self, fault_id: int) -> bool:
        with self._lock:
            before = len(self._rules)
            self._rules = [r for r in self._rules if r.id != fault_id]
            return len(self._rules) != before

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    def list(self) -> list[Fault]:
        with self._lock:
            return list(self._rules)

    def take(self, method: str, path: str) -> list[Fault]:
        """The rules that apply to this request, each counted as used once."""
        chosen = []
        with self._lock:
            for rule in list(self._rules):
                if not rule.matches(method, path):
                    continue
                chosen.append(rule)
                if rule.times is not None:
                    rule.times -= 1
                    if rule.times <= 0:
                        self._rules.remove(rule)
        return chosen
