"""The `--metrics FILE` format: Usage as JSON, for offline planning and `metrics dump`.

    {"collectedAt": "2026-11-29T08:00:00Z",
     "nodes": {"node-a": {"cpu": 3.2, "memory": 12884901888, "timestamp": "..."}},
     "pods":  {"shop/web-7d9f-abcde": {"cpu": 0.45, "memory": 536870912, "timestamp": "..."}}}

cpu is in cores, memory in bytes, timestamps are RFC 3339 and read as UTC. A
sample may carry `named: {"gpu": 1.5}` (metrics.prometheus.resources, in their
own units), and the document `capacity: {"node-a": {"gpu": 4}}` where a capacity
query gave it. Only
the shape is checked here: NaN or negative values load as they are, so that the
plausibility check refuses the round with its stable reason code instead of a
file error hiding what the source really reported.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import pathlib
import re
from collections.abc import Mapping
from typing import IO, Any

import msgspec

from loadaware import errors, gc_freeze
from loadaware.metrics import _types

# RFC 3339 date-time. datetime.fromisoformat alone would also take date-only and
# offset-less forms, and in 3.11 not the nanosecond fractions Go tools write.
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
    r"(?:([Zz])|([+-])(\d{2}):(\d{2}))"
)
# The forms Prometheus, Go and write_metrics_file write, in ASCII digits and with
# hours, minutes and seconds in range. For these datetime.fromisoformat, several
# times faster than reading the fields above, gives the same time (it truncates
# fractions to microseconds too); anything else (t or z, a space, a leap second,
# hour 24, non-ASCII digits) is read the strict way.
_COMMON_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?"
    r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])",
    re.ASCII,
)


def load_metrics_file(path: str | os.PathLike[str]) -> _types.Usage:
    """Read a metrics file. Raises InputError naming the file and every bad entry."""
    file = pathlib.Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise errors.InputError(f"metrics file {file} does not exist") from None
    except UnicodeDecodeError as exc:
        raise errors.InputError(f"metrics file {file} is not UTF-8 text: {exc.reason}") from None
    except OSError as exc:
        raise errors.InputError(f"cannot read metrics file {file}: {exc.strerror}") from exc
    if not text.strip():
        raise errors.InputError(f"metrics file {file} is empty")
    # The parse alone makes 150,000 dicts, enough to start the full collection
    # usage_from_json avoids.
    with gc_freeze.paused():
        try:
            data = _JSON.decode(text)  # twice as fast as json, the same values
        except msgspec.DecodeError:
            try:
                # json also accepts NaN and Infinity literals, which msgspec refuses and
                # write_metrics_file emits for them; they must reach the plausibility
                # check, not stop here. Its errors say where the text is broken.
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                where = f"{file}:{exc.lineno}:{exc.colno}"
                raise errors.InputError(f"{where}: invalid JSON: {exc.msg}") from None
        return usage_from_json(data, source=f"metrics file {file}")


_JSON = msgspec.json.Decoder()


def usage_to_json(usage: _types.Usage) -> dict[str, Any]:
    """Usage in the file's form. Names are sorted so that equal usage gives equal files."""
    document: dict[str, Any] = {
        "collectedAt": _format_timestamp(usage.collected_at),
        "nodes": {name: _sample_to_json(usage.nodes[name]) for name in sorted(usage.nodes)},
        "pods": {key: _sample_to_json(usage.pods[key]) for key in sorted(usage.pods)},
    }
    if usage.capacity:
        document["capacity"] = {
            name: {r: _number(v) for r, v in sorted(usage.capacity[name].items())}
            for name in sorted(usage.capacity)
        }
    return document


def write_metrics_file(
    usage: _types.Usage, path_or_stream: str | os.PathLike[str] | IO[str]
) -> None:
    """Write Usage as a metrics file (2-space indent, trailing newline)."""
    text = json.dumps(usage_to_json(usage), indent=2, ensure_ascii=False) + "\n"
    if isinstance(path_or_stream, str | os.PathLike):
        pathlib.Path(path_or_stream).write_text(text, encoding="utf-8")
    else:
        path_or_stream.write(text)


def _sample_to_json(sample: _types.UsageSample) -> dict[str, Any]:
    document: dict[str, Any] = {
        "cpu": _number(sample.cpu_cores),
        "memory": _number(sample.memory_bytes),
        "timestamp": _format_timestamp(sample.timestamp),
    }
    if sample.named:
        document["named"] = {r: _number(v) for r, v in sorted(sample.named.items())}
    return document


def _number(value: float) -> float | int:
    # Whole byte counts read better as 536870912 than 536870912.0.
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def _format_timestamp(moment: datetime.datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError(f"timestamp {moment.isoformat()} has no time zone; usage times are UTC")
    return moment.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")


def usage_from_json(data: Any, *, source: str = "metrics") -> _types.Usage:
    """Usage from a parsed `--metrics` document; InputError lists every problem."""
    # The collector is off for the reason the Prometheus reader pauses it: 150,000
    # new samples start a full collection over all the process holds (0.7 s with a
    # 5,000-node cluster loaded), which frees nothing, as samples make no cycles.
    with gc_freeze.paused():
        return _usage_from_json(data, source)


def _usage_from_json(data: Any, source: str) -> _types.Usage:
    if not isinstance(data, Mapping):
        raise errors.InputError(f"{source}: expected a JSON object at the top level")
    problems: list[str] = []
    collected_at = _timestamp(data, "collectedAt", "collectedAt", problems)
    nodes = _samples(data, "nodes", problems, is_pod=False)
    pods = _samples(data, "pods", problems, is_pod=True)
    capacity = {
        name: _named(values, f"capacity[{json.dumps(name)}]", problems)
        for name, values in _object(data, "capacity", problems).items()
    }
    if problems or collected_at is None:
        raise errors.InputError(f"{source} is invalid:\n" + "\n".join(f"  - {p}" for p in problems))
    return _types.Usage(collected_at=collected_at, nodes=nodes, pods=pods, capacity=capacity)


def _object(data: Mapping[str, Any], field: str, problems: list[str]) -> Mapping[str, Any]:
    value = data.get(field, {})
    if not isinstance(value, Mapping):
        problems.append(f"{field}: expected an object")
        return {}
    return value


def _named(value: Any, where: str, problems: list[str]) -> dict[str, float]:
    """Named resource values: an object of numbers."""
    if not isinstance(value, Mapping):
        problems.append(f"{where}: expected an object of resource name to number")
        return {}
    found: dict[str, float] = {}
    for name in value:
        checked = _value(value, name, where, "in the resource's unit", problems)
        if checked is not None:
            found[name] = checked
    return found


def _samples(
    data: Mapping[str, Any], section: str, problems: list[str], *, is_pod: bool
) -> dict[str, _types.UsageSample]:
    if section not in data:
        problems.append(f"{section}: required (an object, which may be empty)")
        return {}
    entries = data[section]
    if not isinstance(entries, Mapping):
        problems.append(f"{section}: expected an object keyed by {_key_form(is_pod)}")
        return {}
    samples: dict[str, _types.UsageSample] = {}
    # Many samples share a timestamp (one scrape, one evaluation time); datetimes
    # are immutable, so equal strings may share one.
    moments: dict[str, datetime.datetime | None] = {}
    for key, entry in entries.items():
        # The plain shape, which cannot have a problem, without building the
        # messages: 150,000 pods are read in a fraction of the general path's time.
        if (
            type(entry) is dict
            and type(key) is str
            and type(cpu := entry.get("cpu")) in _JSON_NUMBERS
            and type(memory := entry.get("memory")) in _JSON_NUMBERS
            and type(text := entry.get("timestamp")) is str
            and "named" not in entry
            and (not is_pod or _is_pod_key(key))
        ):
            if text not in moments:
                moments[text] = _parse_timestamp(text)
            if (moment := moments[text]) is not None:
                samples[key] = _types.plain_sample(float(cpu), float(memory), moment)
                continue
        where = f"{section}[{json.dumps(key, ensure_ascii=False)}]"
        if is_pod and not _is_pod_key(key):
            problems.append(f"{where}: pod keys must be namespace/name")
            continue
        if not isinstance(entry, Mapping):
            problems.append(f"{where}: expected an object with cpu, memory and timestamp")
            continue
        before = len(problems)
        cpu = _value(entry, "cpu", where, "cores", problems)
        memory = _value(entry, "memory", where, "bytes", problems)
        timestamp = _timestamp(entry, "timestamp", f"{where}.timestamp", problems)
        named = _named(entry["named"], f"{where}.named", problems) if "named" in entry else {}
        if len(problems) == before and cpu is not None and memory is not None and timestamp:
            samples[key] = _types.UsageSample(
                cpu_cores=cpu, memory_bytes=memory, timestamp=timestamp, named=named
            )
    return samples


# What json.loads gives for a number (type(), so not bool, which _value refuses).
_JSON_NUMBERS = (int, float)


def _key_form(is_pod: bool) -> str:
    return "namespace/name" if is_pod else "node name"


def _is_pod_key(key: str) -> bool:
    namespace, slash, name = key.partition("/")
    return bool(slash and namespace and name and "/" not in name)


def _value(
    entry: Mapping[str, Any], field: str, where: str, unit: str, problems: list[str]
) -> float | None:
    if field not in entry:
        problems.append(f"{where}.{field}: required ({unit})")
        return None
    value = entry[field]
    # bool is an int to Python but not a number in JSON's sense.
    if isinstance(value, bool) or not isinstance(value, int | float):
        kind = "a string" if isinstance(value, str) else f"{json.dumps(value)[:40]}"
        problems.append(f"{where}.{field}: expected a JSON number ({unit}), got {kind}")
        return None
    return float(value)


def _timestamp(
    entry: Mapping[str, Any], field: str, where: str, problems: list[str]
) -> datetime.datetime | None:
    if field not in entry or entry[field] is None:
        problems.append(f"{where}: required (an RFC 3339 time such as 2026-11-29T07:59:45Z)")
        return None
    value = entry[field]
    moment = _parse_timestamp(value) if isinstance(value, str) else None
    if moment is None:
        problems.append(
            f"{where}: expected an RFC 3339 time with a zone such as 2026-11-29T07:59:45Z, "
            f"got {json.dumps(value, ensure_ascii=False)[:60]}"
        )
    return moment


def _parse_timestamp(text: str) -> datetime.datetime | None:
    if _COMMON_RFC3339.fullmatch(text):
        try:
            moment = datetime.datetime.fromisoformat(text)
        except ValueError:
            pass  # not a date (02-30), or an offset datetime cannot hold: decided below
        else:
            return moment.astimezone(datetime.UTC)
    return _parse_rfc3339(text)


def _parse_rfc3339(text: str) -> datetime.datetime | None:
    """The strict reading of any RFC 3339 date-time; None where it is not one."""
    match = _RFC3339.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = match.groups()
    # Go writes up to nanoseconds; datetime holds microseconds.
    micros = int((fraction or "0")[:6].ljust(6, "0"))
    offset = datetime.timedelta(0)
    if not zulu:
        offset = datetime.timedelta(hours=int(off_h), minutes=int(off_m))
        offset = -offset if sign == "-" else offset
    try:
        # RFC 3339 allows a leap second (:60); datetime does not, so it becomes :59.999999.
        leap = int(second) == 60
        moment = datetime.datetime(
            int(year),
            int(month),
            int(day),
            int(hour),
            int(minute),
            59 if leap else int(second),
            999_999 if leap else micros,
            tzinfo=datetime.timezone(offset),
        )
    except ValueError:
        return None
    return moment.astimezone(datetime.UTC)
