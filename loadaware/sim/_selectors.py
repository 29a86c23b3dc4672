"""`labelSelector` and `fieldSelector` query strings, parsed and matched as the API server does.

Label selectors: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`,
comma-separated and ANDed. Field selectors: `path=value`, `path==value`,
`path!=value`, over the fields each resource allows (others are a 400, as in
the real API). Both also match `metav1.LabelSelector` objects (PDB and
workload selectors).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from loadaware.sim import _status

LabelMatcher = Callable[[Mapping[str, str]], bool]
FieldMatcher = Callable[[Mapping[str, Any]], bool]

_SET_FORM = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_./-]+)\s*(?:(notin|in)\s*\(([^)]*)\)\s*)?$")
_EQUALITY_FORM = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s*(==|=|!=)\s*([A-Za-z0-9_.-]*)\s*$")


def _split_terms(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    terms, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return [t for t in terms if t.strip()]


def parse_label_selector(text: str) -> LabelMatcher:
    """A matcher for a labelSelector query; 400 BadRequest when it does not parse."""
    checks: list[LabelMatcher] = []
    for term in _split_terms(text or ""):
        checks.append(_label_term(term))
    if not checks:
        return lambda labels: True
    return lambda labels: all(check(labels) for check in checks)


def _label_term(term: str) -> LabelMatcher:
    equality = _EQUALITY_FORM.match(term)
    if equality:
        key, op, value = equality.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    form = _SET_FORM.match(term)
    if not form:
        raise _status.bad_request(
            f"unable to parse requirement: found '{term.strip()}', expected: "
            "identifier, '=', '==', '!=', 'in', 'notin'"
        )
    negate, key, op, values_text = form.groups()
    if op is None:
        if negate:
            return lambda labels: key not in labels
        return lambda labels: key in labels
    if negate:
        raise _status.bad_request(f"unable to parse requirement: unexpected '!' before {key} {op}")
    values = frozenset(v.strip() for v in values_text.split(",") if v.strip())
    if op == "in":
        return lambda labels: labels.get(key) in values
    return lambda labels: labels.get(key) not in values


def parse_field_selector(text: str, allowed: frozenset[str], kind: str) -> FieldMatcher:
    """A matcher for a fieldSelector query over the `allowed` field paths."""
    checks: list[FieldMatcher] = []
    for term in (t for t in (text or "").split(",") if t.strip()):
        match = re.match(r"^\s*([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*?)\s*$", term)
        if not match:
            raise _status.bad_request(f"invalid selector: '{text}'; can't understand '{term}'")
        path, op, value = match.groups()
        if path not in allowed:
            raise _status.bad_request(f"field label not supported: {path}")
        checks.append(_field_term(path, op, value))
    if not checks:
        return lambda obj: True
    return lambda obj: all(check(obj) for check in checks)


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """A field as the API server's field sets render it: missing is "", booleans lowercase."""
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return ""
        value = value.get(part)
    if path == "status.podIPs":
        ips = obj.get("status", {}).get("podIPs") or []
        return ",".join(ip.get("ip", "") for ip in ips)
    if path == "source":
        source = obj.get("source") or {}
        return str(source.get("component", ""))
    if value is None:
        return "false" if path in ("spec.unschedulable", "spec.hostNetwork") else ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _field_term(path: str, op: str, value: str) -> FieldMatcher:
    if op == "!=":
        return lambda obj: field_value(obj, path) != value
    return lambda obj: field_value(obj, path) == value


def equality_value(text: str, path: str) -> str | None:
    """The value a fieldSelector requires `path` to equal, if it does (for index lookups)."""
    for term in (text or "").split(","):
        match = re.match(r"^\s*([A-Za-z0-9_.]+)\s*(==|=)\s*(.*?)\s*$", term)
        if match and match.group(1) == path:
            return match.group(3)
    return None


def label_selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """metav1.LabelSelector semantics: None matches nothing, an empty selector everything."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op = expr.get("key"), expr.get("operator")
        values = expr.get("values") or []
        present = key in labels
        if op == "In" and not (present and labels[key] in values):
            return False
        if op == "NotIn" and present and labels[key] in values:
            return False
        if op == "Exists" and not present:
            return False
        if op == "DoesNotExist" and present:
            return False
    return True
