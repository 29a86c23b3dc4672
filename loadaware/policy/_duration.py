"""Kubernetes-style durations (`90s`, `10m`, `1h30m`, `500ms`), as Go's time.ParseDuration reads them."""

from __future__ import annotations

import datetime
import re
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
DURATION_PATTERN = r"^(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+)$"


def parse_duration(text: str) -> datetime.timedelta:
    """Parse a duration; raise ValueError naming the accepted form."""
    if not isinstance(text, str):
        raise ValueError(f"expected a duration string such as 90s, 10m or 1h, got {text!r}")
    raw = text.strip()
    if raw == "0":
        return datetime.timedelta(0)
    pos, seconds = 0, 0.0
    for match in _PART.finditer(raw):
        if match.start() != pos:
            break
        seconds += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
        pos = match.end()
    if pos != len(raw) or not raw:
        raise ValueError(
            f"invalid duration {text!r}: use a number with a unit (ns, us, ms, s, m, h), "
            "e.g. 90s, 10m, 1h30m"
        )
    return datetime.timedelta(seconds=seconds)


def format_duration(value: datetime.timedelta) -> str:
    """The shortest Kubernetes-style text for a duration (whole units where possible)."""
    total = value.total_seconds()
    if total == 0:
        return "0s"
    if total != int(total):
        return f"{round(total * 1000)}ms"
    seconds = int(total)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}h" if hours else "", f"{minutes}m" if minutes else "", f"{secs}s" if secs else ""]
    return "".join(parts)


def _coerce(value: Any) -> datetime.timedelta:
    if isinstance(value, datetime.timedelta):
        return value
    return parse_duration(value)


Duration = Annotated[
    datetime.timedelta,
    BeforeValidator(_coerce),
    PlainSerializer(format_duration, return_type=str),
    WithJsonSchema({"type": "string", "pattern": DURATION_PATTERN, "examples": ["90s", "10m", "1h"]}),
]
