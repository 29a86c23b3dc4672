"""The eviction history as the state ConfigMap keeps it (key `evictions.json`):
decoded and encoded by one History per StateStore, and folded to stay under a
size bound.

The text is one compact JSON object:

    {"format":2,"since":"2026-11-29T08:00:00Z","strings":["r1","shop",...],
     "columns":["at","round","namespace","pod","uid","kind","workload","node",
                "outcome","count"],
     "records":[[5,0,1,"web-7d4f-x2k9q","CXr2...",2,3,4,5],...]}

Each record is an array in the order of `columns`:
- at: whole seconds after `since`, rounded up, so that a record never reads
  older than it is (a cooldown or window holds up to a second longer, never
  shorter, and an unanswered reservation is settled a second later at most);
- round, namespace, node, outcome: indexes into `strings`, where each repeated
  string is written once;
- pod: the name within the namespace;
- uid: the UUID's 16 bytes as unpadded base64url (22 characters);
- kind and workload: the workload `Kind/namespace/name` as the index of its kind
  in `strings` and its name, or the length of the pod's name that is the
  workload's name (a Deployment's pod is named after it);
- count: how many evictions the record stands for, written only when not 1
  (see fold).
A field that does not fit its compact form (a uid that is no UUID, a workload of
another namespace, no pod) is written as it is in a one-element array, with
kind null for a workload. A realistic record takes about 90 bytes this way,
where an object with its fields by name took 260: the history of a 5,000-node
round of 1,400 evictions is about 130 KB.

A round rewrites its whole history once per eviction (the reservation, which
carries the settlement of the eviction before), so the history of a 1,000-eviction
round would be decoded and encoded a thousand times over. History remembers the
text it last read or wrote with its records, and each record's encoded form: what
is unchanged is neither parsed nor encoded again. The records a store writes next
are mostly the very objects it got back from the last write, in the same places:
those are matched by identity, position by position, and only the others are
looked up by value (a record another writer wrote, read back) or encoded. `since`
and `strings` change only by appending a string, so an encoded record stays valid;
once most strings belong to records that were pruned, both are laid out anew and
every record is encoded once more.

A record's time is parsed from its text once (parsed_time keeps the last 16,384
parsed, more than a full state holds), not at every write that reads it.

The format before this one, a JSON list of objects with the records' fields by
name, is still read (an upgrade in the middle of a window keeps every budget); the
next write is in this format.
"""

from __future__ import annotations

import base64
import datetime
import functools
import json
import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import compress
from operator import is_not
from typing import Any, Generic, TypeVar

Record = TypeVar("Record")

FORMAT = 2
COLUMNS = (
    "at",
    "round",
    "namespace",
    "pod",
    "uid",
    "kind",
    "workload",
    "node",
    "outcome",
    "count",
)
_COMPACT = (",", ":")
_HEADER_COLUMNS = json.dumps(list(COLUMNS), separators=_COMPACT)
# Strings beyond this many per record belong mostly to pruned records: lay out anew.
_STRINGS_PER_RECORD = 6
_STRINGS_SLACK = 64
# How many records may leave the front of the history between two writes (pruned)
# and the rest still be matched to the last write's rows in place.
_PRUNED_IN_PLACE = 64
# Each record in the history is known by value under itself and as read back (two
# entries at most); past three per record (and a few), those of records no longer
# in it are forgotten, once per so many writes.
_ENCODED_PER_RECORD = 3
_ENCODED_SLACK = 64


class History(Generic[Record]):
    """Records to and from the history's JSON text, with what was last seen kept.

    Records are read by their fields at, round, pod, uid, namespace, workload,
    node, outcome and count, and made with record_type(**fields)."""

    def __init__(self, record_type: Callable[..., Record]) -> None:
        self._make = record_type
        self._text: str | None = None
        self._records: tuple[Record, ...] = ()
        # The rows of _records, position by position, and the frame they were encoded
        # against; None when _records were read from another writer's text.
        self._rows: list[str] | None = None
        self._rows_frame: _Frame | None = None
        # Each record's row and the record as it reads back (its time in whole seconds).
        self._encoded: dict[Record, tuple[str, Record]] = {}
        self._frame = _Frame()

    def decode(self, text: str) -> tuple[Record, ...]:
        if text != self._text:
            document = json.loads(text)
            if isinstance(document, list):  # the format before: objects by field name
                self._records = tuple(self._make(**item) for item in document)
            else:
                self._records = self._read(document)
            self._text = text
            self._rows = None
        return self._records

    def encode(self, records: Sequence[Record]) -> str:
        if self._frame.outgrown(len(records)):
            self._lay_out(records)
        frame = self._frame
        in_place = self._in_place(records)
        if in_place is not None:
            rows, read_back = in_place
        else:
            rows, read_back = self._looked_up(records)
        text = (
            f'{{"format":{FORMAT},"since":{json.dumps(_rfc3339(frame.since))},'
            f'"strings":[{frame.strings_text()}],"columns":{_HEADER_COLUMNS},'
            f'"records":[{",".join(rows)}]}}'
        )
        self._text, self._records = text, tuple(read_back)
        self._rows, self._rows_frame = rows, frame
        return text

    def _in_place(self, records: Sequence[Record]) -> tuple[list[str], list[Record]] | None:
        """The rows and read-back records of `records` from those of the last encode,
        where they are the same objects in the same places, after at most a few
        pruned from the front; None when too few are (the records looked up then)."""
        last, last_rows = self._records, self._rows
        if last_rows is None or self._rows_frame is not self._frame or not last or not records:
            return None
        first = records[0]
        for offset in range(min(len(last), _PRUNED_IN_PLACE + 1)):
            if last[offset] is first:
                break
        else:
            return None
        aligned = last[offset:]
        common = min(len(records), len(aligned))
        # Positions whose record is another object than the last write's, found without
        # a Python loop over the ones that are not.
        changed = list(compress(range(common), map(is_not, records, aligned)))
        if len(changed) > common // 4 + 8:
            return None
        rows = last_rows[offset : offset + common]
        read_back = list(aligned[:common])
        for i in changed:
            rows[i], read_back[i] = self._entry(records[i])
        for r in records[common:]:
            row, back = self._entry(r)
            rows.append(row)
            read_back.append(back)
        if len(self._encoded) > _ENCODED_PER_RECORD * len(records) + _ENCODED_SLACK:
            self._encoded = _by_value(records, rows, read_back)
        return rows, read_back

    def _entry(self, record: Record) -> tuple[str, Record]:
        """A record's row and the record as it reads back: known by value, or encoded
        (and then known, under both)."""
        entry = self._encoded.get(record)
        if entry is None:
            entry = self._encoded[record] = self._encode_one(record)
            if entry[1] is not record:
                self._encoded[entry[1]] = entry
        return entry

    def _looked_up(self, records: Sequence[Record]) -> tuple[list[str], list[Record]]:
        known = self._encoded
        rows: list[str] = []
        read_back: list[Record] = []
        for r in records:
            row, back = known.get(r) or self._encode_one(r)
            rows.append(row)
            read_back.append(back)
        # Only the records still in the history are kept, so the cache stays its size;
        # each under the record as read back too, which is what the next update starts
        # from.
        self._encoded = _by_value(records, rows, read_back)
        return rows, read_back

    def compact(self) -> None:
        """Forget the strings no record uses any more; the next encode lays out anew."""
        self._frame = _Frame()
        self._encoded = {}

    def _lay_out(self, records: Sequence[Record]) -> None:
        times = [_whole_seconds_up(_parse(r.at)) for r in records]  # type: ignore[attr-defined]
        self._frame = _Frame(since=min(times, default=_EPOCH))
        self._encoded = {}

    def _encode_one(self, record: Any) -> tuple[str, Record]:
        frame = self._frame
        assert frame.since is not None
        moment = _whole_seconds_up(_parse(record.at))
        namespace: str = record.namespace
        prefix = namespace + "/"
        pod: str | list[str] = (
            record.pod[len(prefix) :] if record.pod.startswith(prefix) else [record.pod]
        )
        kind: int | None = None
        workload: str | int | list[str] = [record.workload]
        parts = record.workload.split("/", 2)
        if len(parts) == 3 and parts[1] == namespace:
            kind = frame.index(parts[0])
            name = parts[2]
            workload = len(name) if isinstance(pod, str) and name and pod.startswith(name) else name
        row: list[Any] = [
            int((moment - frame.since).total_seconds()),
            frame.index(record.round),
            frame.index(namespace),
            pod,
            _compact_uid(record.uid),
            kind,
            workload,
            frame.index(record.node),
            frame.index(record.outcome),
        ]
        if record.count != 1:
            row.append(record.count)
        at = _rfc3339(moment)
        read_back = record if at == record.at else replace(record, at=at)
        return json.dumps(row, separators=_COMPACT), read_back

    def _read(self, document: dict[str, Any]) -> tuple[Record, ...]:
        if document.get("format") != FORMAT or document.get("columns") != list(COLUMNS):
            raise ValueError(
                f"evictions.json: format {document.get('format')!r} with columns "
                f"{document.get('columns')!r} is not one this version reads "
                f"(format {FORMAT}, columns {list(COLUMNS)})"
            )
        strings: list[str] = document["strings"]
        since = _parse(document["since"]) if document.get("since") else _EPOCH
        if not self._frame.extended_by(since, strings):
            # Another writer laid it out anew: encodings made for ours no longer hold.
            self._frame = _Frame(since=since)
            self._encoded = {}
        self._frame.extend(strings)
        times: dict[int, str] = {}
        records = []
        for row in document["records"]:
            seconds, round_id, namespace_at, pod, uid, kind, workload, node, outcome = row[:9]
            namespace = strings[namespace_at]
            at = times.get(seconds)
            if at is None:
                at = times[seconds] = _rfc3339(since + datetime.timedelta(seconds=seconds))
            if kind is None:
                workload = workload[0]
            else:
                name = pod[:workload] if isinstance(workload, int) else workload
                workload = f"{strings[kind]}/{namespace}/{name}"
            records.append(
                self._make(
                    at=at,
                    round=strings[round_id],
                    pod=pod[0] if isinstance(pod, list) else f"{namespace}/{pod}",
                    uid=uid[0] if isinstance(uid, list) else _uuid_text(uid),
                    namespace=namespace,
                    workload=workload,
                    node=strings[node],
                    outcome=strings[outcome],
                    count=row[9] if len(row) > 9 else 1,
                )
            )
        return tuple(records)


class _Frame:
    """What records are encoded against: the time their seconds count from, and the
    strings their indexes point at (only ever appended to)."""

    def __init__(self, since: datetime.datetime | None = None) -> None:
        self.since = since
        self.strings: list[str] = []
        self._encoded: list[str] = []
        self._text = ""  # the first _joined of them encoded and joined
        self._joined = 0
        self._index: dict[str, int] = {}

    def index(self, text: str) -> int:
        at = self._index.get(text)
        if at is None:
            at = self._index[text] = len(self.strings)
            self.strings.append(text)
            self._encoded.append(json.dumps(text))
        return at

    def strings_text(self) -> str:
        """The strings as JSON, without the brackets; only new ones are joined on."""
        if self._joined < len(self._encoded):
            tail = ",".join(self._encoded[self._joined :])
            self._text = f"{self._text},{tail}" if self._text else tail
            self._joined = len(self._encoded)
        return self._text

    def outgrown(self, records: int) -> bool:
        """Whether to lay out anew: nothing laid out yet, or most strings unused."""
        return (
            not self.strings or len(self.strings) > _STRINGS_SLACK + _STRINGS_PER_RECORD * records
        )

    def extended_by(self, since: datetime.datetime, strings: list[str]) -> bool:
        """Whether a text laid out on since and strings keeps every index of this one."""
        return since == self.since and strings[: len(self.strings)] == self.strings

    def extend(self, strings: list[str]) -> None:
        for text in strings[len(self.strings) :]:
            self.index(text)


@dataclass(frozen=True, slots=True)
class MadeRoom:
    text: str
    given_up: dict[str, int]  # records "dropped", and "folded" into fewer


def make_room(
    history: History[Record],
    records: Sequence[Record],
    *,
    target: int,
    droppable: Callable[[Record], bool],
    foldable: Callable[[Record], bool],
    forget_workload_before: datetime.datetime,
) -> MadeRoom:
    """The history's text made to fit `target` characters, giving up first what no
    budget needs, oldest first: the strings no record uses (lossless), the records
    `droppable` says no budget and no settlement reads, then the `foldable` ones
    (settled evictions), folded oldest first (fold says why that keeps every
    budget). The text may still be over target when nothing is left to give up.

    The target is below the limit (StateStore leaves an eighth of it), so that
    once something must be given up there is room for the next thousand or so
    evictions, and this runs once per many evictions, not on each."""
    history.compact()
    text = history.encode(records)
    if len(text) <= target:
        return MadeRoom(text=text, given_up={"dropped": 0, "folded": 0})
    kept = [r for r in records if not droppable(r)]
    text, folded = history.encode(kept), 0
    order = sorted(
        (i for i, r in enumerate(kept) if foldable(r)),
        key=lambda i: _parse(kept[i].at),  # type: ignore[attr-defined]
    )
    row = max(len(text) // max(len(kept), 1), 1)
    while len(text) > target and folded < len(order):
        # Enough for the excess at a row's average size, then twice as many each time.
        folded = min(max(2 * folded, (len(text) - target) // row + 1), len(order))
        chosen = set(order[:folded])
        text = history.encode(fold(kept, chosen, forget_workload_before=forget_workload_before))
    return MadeRoom(text=text, given_up={"dropped": len(records) - len(kept), "folded": folded})


def fold(
    records: Sequence[Record],
    chosen: set[int],
    *,
    forget_workload_before: datetime.datetime,
) -> list[Record]:
    """The history with the records at the `chosen` positions folded: those of one
    round, namespace, workload and minute become one record that counts them all
    (count), at the latest of their times, without pod, uid or node. Of records
    older than forget_workload_before (past the cooldown) only the namespace and
    the minute are kept, across rounds and workloads.

    Why this, and not dropping records: every record that counts against a budget
    must go on counting for as long as it did. The window (maxEvictions,
    maxEvictionsPerNamespace) counts by namespace and time, the cooldown looks for a
    workload's latest eviction in an earlier round; a folded record keeps both, and
    its time, the latest of the minute, makes a window count it up to a minute
    longer, never shorter. Only what no budget reads goes: which pod, its UID and
    node, which settle_pending needs only of reservations, never folded."""
    groups: dict[tuple[str, str, str, int], Any] = {}
    kept: list[Record] = []
    for position, record in enumerate(records):
        if position not in chosen:
            kept.append(record)
            continue
        r: Any = record
        moment = _parse(r.at)
        minute = math.floor(moment.timestamp() / 60)
        if moment < forget_workload_before:
            key = ("", r.namespace, "", minute)
        else:
            key = (r.round, r.namespace, r.workload, minute)
        earlier = groups.get(key)
        if earlier is None:
            groups[key] = replace(
                r, round=key[0], workload=key[2], pod="", uid="", node="", outcome="evicted"
            )
        else:
            groups[key] = replace(
                earlier, at=max(earlier.at, r.at, key=_parse), count=earlier.count + r.count
            )
    folded = sorted(groups.values(), key=lambda r: _parse(r.at))
    return [*folded, *kept]


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _by_value(
    records: Sequence[Record], rows: list[str], read_back: list[Record]
) -> dict[Record, tuple[str, Record]]:
    encoded: dict[Record, tuple[str, Record]] = {}
    for r, row, back in zip(records, rows, read_back, strict=True):
        encoded[r] = encoded[back] = (row, back)
    return encoded


def _parse(text: str) -> datetime.datetime:
    moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=datetime.UTC)


# A state holds some ten thousand records at most (STATE_DATA_LIMIT), many of them
# at the same second.
@functools.lru_cache(maxsize=1 << 14)
def parsed_time(text: str) -> datetime.datetime:
    """A record's time from its RFC 3339 text, parsed once while it is in use."""
    return _parse(text)


def _whole_seconds_up(moment: datetime.datetime) -> datetime.datetime:
    whole = moment.replace(microsecond=0)
    return whole if whole == moment else whole + datetime.timedelta(seconds=1)


def _rfc3339(moment: datetime.datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")


def _compact_uid(uid: str) -> str | list[str]:
    try:
        parsed = uuid.UUID(uid)
    except ValueError:
        return [uid]
    if str(parsed) != uid:  # upper case, braces, no hyphens: kept as written
        return [uid]
    return base64.urlsafe_b64encode(parsed.bytes).rstrip(b"=").decode()


def _uuid_text(compact: str) -> str:
    h = base64.urlsafe_b64decode(compact + "==").hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
