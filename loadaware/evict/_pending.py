"""Settlements a StateStore carries to its next write (note_evicted, flush): each an
outcome that counts against every budget exactly as the reservation it settles,
so that writing it later changes no budget, only the record's outcome."""

from __future__ import annotations

from dataclasses import replace
from typing import Protocol, TypeVar


class Settled(Protocol):
    """The fields that name an eviction record's reservation, and its outcome."""

    @property
    def round(self) -> str: ...
    @property
    def pod(self) -> str: ...
    @property
    def uid(self) -> str: ...
    @property
    def outcome(self) -> str: ...


Record = TypeVar("Record", bound=Settled)


class PendingSettlements:
    """Outcomes by reservation (round, pod, uid), until the write that carries them."""

    def __init__(self) -> None:
        self._outcomes: dict[tuple[str, str, str], str] = {}

    def __bool__(self) -> bool:
        return bool(self._outcomes)

    def add(self, record: Settled, outcome: str) -> None:
        self._outcomes[(record.round, record.pod, record.uid)] = outcome

    def clear(self) -> None:
        self._outcomes.clear()

    def apply(self, records: list[Record]) -> None:
        """Settle, in place, the records they name."""
        if not self._outcomes:
            return
        # The records settled are a round's latest: looked for from the end.
        left = dict(self._outcomes)
        for i in range(len(records) - 1, -1, -1):
            existing = records[i]
            outcome = left.pop((existing.round, existing.pod, existing.uid), None)
            if outcome is not None:
                records[i] = replace(existing, outcome=outcome)  # type: ignore[type-var]
                if not left:
                    return
