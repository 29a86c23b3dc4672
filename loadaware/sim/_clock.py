"""The simulated cluster's clock: creation times, grace periods, readiness delays, metric
timestamps and counters all read it, so tests can run on virtual time.

It runs at `speed` times real time from `start` (speed 0 freezes it) and can be
moved forward by hand; it never goes backwards, so counters stay monotonic.
"""

from __future__ import annotations

import datetime
import threading
import time


class SimClock:
    def __init__(self, start: datetime.datetime | None = None, *, speed: float = 1.0) -> None:
        if speed < 0:
            raise ValueError("speed must not be negative")
        origin = start or datetime.datetime.now(datetime.UTC)
        if origin.tzinfo is None:
            raise ValueError("start must be timezone-aware")
        self._lock = threading.Lock()
        self._base = origin.astimezone(datetime.UTC).timestamp()
        self._real_base = time.monotonic()
        self._speed = speed
        self._offset = 0.0

    @property
    def speed(self) -> float:
        return self._speed

    def time(self) -> float:
        """Seconds since the epoch, simulated."""
        with self._lock:
            return self._base + self._offset + (time.monotonic() - self._real_base) * self._speed

    def now(self) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(self.time(), datetime.UTC)

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        with self._lock:
            self._offset += seconds


def rfc3339(moment: float | datetime.datetime) -> str:
    """Seconds-precision RFC 3339 in UTC, as metav1.Time serialises."""
    if isinstance(moment, datetime.datetime):
        moment = moment.timestamp()
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


def rfc3339_micro(moment: float) -> str:
    """Microsecond RFC 3339, as metav1.MicroTime serialises (eventTime, lease times)."""
    whole = int(moment)
    return (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole))
        + f".{int((moment - whole) * 1e6):06d}Z"
    )


def parse_time(text: str | None) -> float | None:
    if not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
