"""Prometheus text exposition format 0.0.4: one series' labels and value."""

from __future__ import annotations

from collections.abc import Mapping


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def line(labels: Mapping[str, str], value: float) -> str:
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
    return f"{{{inner}}} {value!r}"
