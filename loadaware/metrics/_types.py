"""Usage: what nodes and pods really use, with the time of the newest sample behind each value."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageSample:
    cpu_cores: float
    memory_bytes: float
    # Time of the newest underlying sample, never a query's evaluation time:
    # staleness is judged from this.
    timestamp: datetime.datetime


@dataclass(frozen=True, kw_only=True)
class Usage:
    collected_at: datetime.datetime
    nodes: Mapping[str, UsageSample] = field(default_factory=dict)
    pods: Mapping[str, UsageSample] = field(default_factory=dict)  # key "namespace/name"
