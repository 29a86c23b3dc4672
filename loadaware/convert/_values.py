"""Small conversions of descheduler values: selectors, durations, thresholds, names."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from loadaware import errors, policy

_KEBAB = re.compile(r"(?<!^)(?=[A-Z])")


def label_selector(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise errors.InputError(f"a labelSelector must be a mapping, got {raw!r}")
    selector: dict[str, Any] = {}
    if raw.get("matchLabels"):
        selector["matchLabels"] = {str(k): str(v) for k, v in raw["matchLabels"].items()}
    if raw.get("matchExpressions"):
        selector["matchExpressions"] = [
            {
                "key": str(e.get("key")),
                "operator": str(e.get("operator")),
                **({"values": [str(v) for v in e["values"]]} if e.get("values") else {}),
            }
            for e in raw["matchExpressions"]
        ]
    return selector


def merge_selectors(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """Both selectors at once (a pod must match each): labels that disagree become
    In-expressions, which together match nothing, as the two selectors would."""
    if not second:
        return dict(first)
    if not first:
        return dict(second)
    labels = dict(first.get("matchLabels") or {})
    expressions = list(first.get("matchExpressions") or []) + list(
        second.get("matchExpressions") or []
    )
    for key, value in (second.get("matchLabels") or {}).items():
        if labels.get(key, value) == value:
            labels[key] = value
        else:
            expressions.append({"key": key, "operator": "In", "values": [value]})
    merged: dict[str, Any] = {}
    if labels:
        merged["matchLabels"] = labels
    if expressions:
        merged["matchExpressions"] = expressions
    return merged


def go_duration(value: Any, where: str) -> str:
    """A metav1.Duration (Go's time.ParseDuration text) as loadaware writes durations."""
    try:
        return policy.format_duration(policy.parse_duration(str(value)))
    except ValueError as exc:
        raise errors.InputError(f"{where}: {exc}") from None


def number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise errors.InputError(f"a threshold must be a number, got {value!r}")
    return int(value) if float(value).is_integer() else float(value)


def canonical(value: Any) -> str:
    return repr(sorted(value))


def sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), sorted(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(sorted(v) for v in value)
    return value


def kebab(name: str) -> str:
    return _KEBAB.sub("-", name).lower()
