"""Kubernetes-style durations (`90s`, `10m`, `1h30m`, `500ms`), read as Go's time.ParseDuration."""

from __future__ import annotations

import datetime
import re
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
DURATION_PATTERN = r"^(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+)$"
DURATION_FORM = "a number with a unit (ns, us, ms, s, m, h), e.g. 90s, 10m, 1h30m, or 0"

_MICROSECOND = datetime.timedelta(microseconds=1)


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
        raise ValueError(f"invalid duration {text!r}: use {DURATION_FORM}")
    try:
        return datetime.timedelta(seconds=seconds)
    except OverflowError:
        # timedelta tops out near 2.7 million years; pydantic only reports ValueError.
        raise ValueError(f"duration {text!r} is too large") from None


def format_duration(value: datetime.timedelta) -> str:
    """The shortest Kubernetes-style text for a duration; parse_duration reads it back exactly."""
    if value < datetime.timedelta(0):
        return "-" + format_duration(-value)
    # Integer microseconds: timedelta's own resolution, so nothing is lost to float rounding.
    micros = value // _MICROSECOND
    if micros == 0:
        return "0s"
    whole_seconds, fraction = divmod(micros, 1_000_000)
    hours, rest = divmod(whole_seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "")
    if fraction == 0:
        return text + (f"{secs}s" if secs else "")
    if not text and secs == 0:
        return f"{fraction // 1000}ms" if fraction % 1000 == 0 else f"{fraction}us"
    return text + f"{secs}.{fraction:06d}".rstrip("0") + "s"


def _coerce(value: Any) -> datetime.timedelta:
    if isinstance(value, datetime.timedelta):
        return value
    # YAML reads an unquoted `0` as an integer; zero is the one number without a unit
    # that cannot be misread, so accept it as Go's ParseDuration accepts "0".
    if type(value) is int and value == 0:
        return datetime.timedelta(0)
    return parse_duration(value)


Duration = Annotated[
    datetime.timedelta,
    BeforeValidator(_coerce),
    PlainSerializer(format_duration, return_type=str),
    WithJsonSchema(
        {"type": "string", "pattern": DURATION_PATTERN, "examples": ["90s", "10m", "1h"]}
    ),
]
