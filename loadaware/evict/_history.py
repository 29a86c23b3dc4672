"""The eviction history as the state ConfigMap keeps it: a JSON list of records,
decoded and encoded by one History per StateStore.

A round reads and rewrites its whole history twice per eviction (the reservation,
then the settlement), so the history of a 1,000-eviction round would be decoded and
encoded a thousand times over. History remembers the text it last read or wrote
with its records, and each record's encoded form: what is unchanged is neither
parsed nor encoded again. The text is the same as json.dumps of the records'
fields in their order, compact.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any, Generic, TypeVar

Record = TypeVar("Record")


class History(Generic[Record]):
    """Records to and from the history's JSON text, with what was last seen kept."""

    def __init__(self, record_type: Callable[..., Record]) -> None:
        self._make = record_type
        self._names = tuple(f.name for f in fields(record_type))  # type: ignore[arg-type]
        self._text: str | None = None
        self._records: tuple[Record, ...] = ()
        self._encoded: dict[Record, str] = {}

    def decode(self, text: str) -> tuple[Record, ...]:
        if text != self._text:
            items: list[dict[str, Any]] = json.loads(text)
            self._records = tuple(self._make(**item) for item in items)
            self._text = text
        return self._records

    def encode(self, records: Sequence[Record]) -> str:
        known = self._encoded
        encoded = {r: known.get(r) or self._encode_one(r) for r in records}
        # Only the records still in the history are kept, so the cache stays its size.
        self._encoded = encoded
        text = "[" + ",".join(encoded[r] for r in records) + "]"
        self._text, self._records = text, tuple(records)
        return text

    def _encode_one(self, record: Record) -> str:
        return json.dumps(
            {name: getattr(record, name) for name in self._names}, separators=(",", ":")
        )
