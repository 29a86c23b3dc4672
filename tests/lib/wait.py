"""Waiting in tests: poll a condition under a deadline (never sleep to synchronise),
or check that one holds for a while."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

DEFAULT_TIMEOUT_SECONDS = 20.0


def poll(
    condition: Callable[[], T],
    what: str,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    *,
    interval: float = 0.05,
) -> T:
    """condition()'s first truthy value, asked every `interval` seconds.

    Fails the test with "timed out after <timeout>s waiting for <what>" once
    `timeout` seconds have passed; `what` names what the test waits for."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out after {timeout}s waiting for {what}"
        # Polling, not synchronising: the deadline above bounds the wait.
        time.sleep(interval)
    return value


def hold(
    condition: Callable[[], object], what: str, seconds: float, *, interval: float = 0.05
) -> None:
    """Ask `condition` every `interval` seconds for `seconds`: what must stay true for
    a while (a follower that must not write, one leader at a time). Fails the test
    with "<what> stopped holding after <n>s" the first time it is falsy."""
    started = time.monotonic()
    while (elapsed := time.monotonic() - started) < seconds:
        assert condition(), f"{what} stopped holding after {elapsed:.1f}s"
        time.sleep(interval)
