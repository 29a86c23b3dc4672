"""What a conversion found to differ from the descheduler, setting by setting."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["changes-behaviour", "note"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversionIssue:
    source: str  # where in the DeschedulerPolicy, e.g. profiles[p].pluginConfig[X].args.y
    severity: Severity
    why: str


class Issues:
    """The issues of one conversion, in the order found."""

    __slots__ = ("found",)

    def __init__(self) -> None:
        self.found: list[ConversionIssue] = []

    def add(self, source: str, severity: Severity, why: str) -> None:
        self.found.append(ConversionIssue(source=source, severity=severity, why=why))
