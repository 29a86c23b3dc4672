"""What must survive a crash, a restart or a second trigger: the eviction history
behind window budgets and cooldowns, the circuit breaker, and the suspend switch.

It lives in one ConfigMap owned by loadaware. Every eviction is *reserved* in
it (optimistic concurrency on resourceVersion) before the Eviction API is
called, and settled after: a process killed in between leaves a reservation
that still counts, so no crash can exceed a budget. Two writers racing get a
409 and the loser re-reads and re-checks.

A settlement as evicted is not a write of its own (note_evicted): "evicted"
counts against every budget exactly as "reserved" does, so it goes with the
store's next write (the next reservation, another settlement, the breaker) or
with flush, which the executor calls when the round's evicting ends, however it
ends. A round writes its state once per eviction. Until it is written, the
store's own reads (records, carried_budget, settle_pending) see it applied; a
process stopped before the write leaves the reservation, which counts the same
and which a later round settles as evicted (below: the pod is gone, replaced or
terminating). A settlement that stops counting ("refused", "gone") frees budget
and is written at once (settle), with any pending.

A write costs little more on a long history than on a short one: from one write
to the next the store starts from what it wrote (no read), prunes only once the
oldest record is PRUNE_SLACK past every budget's span, checks the budgets against
sums kept in step with the history (_tally), and encodes only the records that
changed (_history); each record's time is parsed once.

The suspend switch is the annotation `loadaware.io/suspend` on the same
ConfigMap, so that on-call can flip it with `loadaware suspend` or a plain
`kubectl annotate` and no deploy. It is checked in the same read that reserves
an eviction: a suspension written before a reservation stops that eviction, and
one written after it is seen by the next, with nothing in between.

An eviction whose answer never came (a dropped connection, a timeout) keeps
its reservation: the pod may or may not have gone. A later round settles it
(settle_pending) once the Eviction must have been decided either way: the pod
still there with the same UID and not terminating was not evicted, and its
reservation is released; one gone, replaced or terminating stays counted.

The data stays under STATE_DATA_LIMIT, well below the 1 MiB kube-apiserver takes
in a ConfigMap: past that every reservation would be refused with a 422 and no
eviction could happen. The history is compact (_history), and when a write would
pass the limit what no budget needs goes first and settled evictions are folded
into counts that the window and the cooldown still count (_history.fold); a
reservation that cannot fit even so is refused naming the limit (HistoryFullError,
budget `state.size`).

Before a round, check_access says whether state can be kept at all: the
namespace exists and loadaware may read and write the ConfigMap there. Without
that check a round finds out only at its first reservation, and serve not at all.
"""

from __future__ import annotations

import datetime
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from loadaware import plan
from loadaware.errors import (
    ClusterError,
    ConflictError,
    RefusedError,
)
from loadaware.evict import _history, _pending, _state_access, _tally
from loadaware.kube import Kube, RawObject
from loadaware.policy import LoadAwarePolicy

log = logging.getLogger(__name__)

# "released": a later round found the pod of an unanswered eviction still there,
# not evicted; the reservation no longer counts.
Outcome = Literal["reserved", "evicted", "refused", "gone", "failed", "released"]
# Outcomes that count against budgets: evicted, or possibly evicted (a reservation
# whose settlement never came).
COUNTING: frozenset[str] = frozenset({"reserved", "evicted"})
# kube-apiserver's default --request-timeout: a request it received is decided
# within it, whether or not the client is still listening.
APISERVER_REQUEST_TIMEOUT = datetime.timedelta(seconds=60)
MAX_WRITE_ATTEMPTS = 8
HISTORY_KEY = "evictions.json"
BREAKER_KEY = "breaker.json"
SUSPEND_ANNOTATION = "loadaware.io/suspend"
# Who flipped the switch last, when and why (suspend or resume alike).
SUSPEND_CHANGED_BY_ANNOTATION = "loadaware.io/suspend-changed-by"
SUSPEND_CHANGED_AT_ANNOTATION = "loadaware.io/suspend-changed-at"
SUSPEND_REASON_ANNOTATION = "loadaware.io/suspend-reason"
# kube-apiserver refuses a ConfigMap whose data (keys and values) passes 1 MiB, with
# a 422 ("Too long"), and then no reservation could be written: the state's data
# stays under this, the rest left for keys and values written by hand.
CONFIG_MAP_DATA_LIMIT = 1024 * 1024
STATE_DATA_LIMIT = 900 * 1024
# Making room frees 1/FOLD_HEADROOM of the limit beyond what the write needs, so that
# the next thousand or so evictions are written without it.
FOLD_HEADROOM = 8
# How long past every budget's span a record may stay before it is pruned (_pruned).
PRUNE_SLACK = datetime.timedelta(minutes=5)
# Clocks of replicas may differ: a record forgets its workload only this long after
# the cooldown, as one replica's clock reads it.
CLOCK_SKEW_MARGIN = datetime.timedelta(minutes=1)


@dataclass(frozen=True, slots=True, kw_only=True)
class EvictionRecord:
    at: str  # RFC 3339
    round: str
    pod: str  # namespace/name
    uid: str
    namespace: str
    workload: str
    node: str
    outcome: Outcome = "reserved"
    # Evictions the record stands for: more than 1 once folded (_history.fold), when
    # pod, uid and node are empty.
    count: int = 1

    @property
    def time(self) -> datetime.datetime:
        # Read at every write for each record the history holds: parsed once.
        return _history.parsed_time(self.at)


@dataclass(frozen=True, kw_only=True)
class Breaker:
    open_until: datetime.datetime | None = None
    reason: str = ""

    def is_open(self, now: datetime.datetime) -> bool:
        return self.open_until is not None and now < self.open_until


@dataclass(frozen=True, slots=True, kw_only=True)
class Suspension:
    suspended: bool = False
    value: str | None = None  # the annotation as written; None when absent
    changed_by: str = ""
    changed_at: str = ""  # RFC 3339, as written
    reason: str = ""

    def describe(self) -> str:
        parts = [f"{SUSPEND_ANNOTATION}={self.value!r}"]
        if self.changed_by:
            parts.append(f"by {self.changed_by}")
        if self.changed_at:
            parts.append(f"at {self.changed_at}")
        if self.reason:
            parts.append(f"({self.reason})")
        return " ".join(parts)


def suspension_of(body: RawObject | None) -> Suspension:
    """The switch as a ConfigMap's annotations have it.

    Only an absent annotation, an empty one or "false" lets evictions through:
    any other value ("true", but also "yes" or "1" typed in a hurry) suspends,
    since someone set it on purpose and guessing wrong would evict."""
    annotations = ((body or {}).get("metadata") or {}).get("annotations") or {}
    value = annotations.get(SUSPEND_ANNOTATION)
    suspended = value is not None and value.strip().lower() not in ("", "false")
    return Suspension(
        suspended=suspended,
        value=value,
        changed_by=annotations.get(SUSPEND_CHANGED_BY_ANNOTATION, ""),
        changed_at=annotations.get(SUSPEND_CHANGED_AT_ANNOTATION, ""),
        reason=annotations.get(SUSPEND_REASON_ANNOTATION, ""),
    )


class SuspendedError(RefusedError):
    """The suspend switch is on: nothing may be evicted, by any trigger."""

    reference = "suspended"

    def __init__(self, suspension: Suspension) -> None:
        super().__init__(suspension.describe())
        self.suspension = suspension


@dataclass(frozen=True, slots=True, kw_only=True)
class Settlement:
    """A reservation left without an answer, settled by a later round."""

    record: EvictionRecord  # as it was reserved
    # "released": not evicted, no longer counted; "evicted": counted (assumed evicted).
    outcome: Literal["released", "evicted"]
    why: str


class BudgetExhaustedError(Exception):
    """A budget spanning rounds has nothing left; `budget` names it."""

    def __init__(self, budget: str, message: str | None = None) -> None:
        super().__init__(message or budget)
        self.budget = budget


class HistoryFullError(BudgetExhaustedError):
    """The eviction history cannot take another record within STATE_DATA_LIMIT, even
    with every record no budget needs dropped and every settled eviction folded."""

    def __init__(self, message: str) -> None:
        super().__init__("state.size", message)


@dataclass(frozen=True, kw_only=True)
class _Snapshot:
    records: tuple[EvictionRecord, ...]
    breaker: Breaker
    suspension: Suspension
    body: RawObject | None  # None: the ConfigMap does not exist yet
    # No record is older than this (None: not known): until it is PRUNE_SLACK past
    # every budget's span, nothing is pruned and no record is looked at to know it.
    oldest: datetime.datetime | None = None


class StateStore:
    def __init__(
        self,
        kube: Kube,
        policy: LoadAwarePolicy,
        clock: Callable[[], datetime.datetime],
        *,
        data_limit: int = STATE_DATA_LIMIT,
    ) -> None:
        self._kube = kube
        self._policy = policy
        self._clock = clock
        self._data_limit = data_limit
        self._namespace = policy.state.namespace
        self._name = policy.state.config_map
        self._history = _history.History(EvictionRecord)
        # The ConfigMap as this store last wrote it: the next update starts from it
        # rather than from a read. Its resourceVersion makes the write fail (409) if
        # anyone wrote since, a suspension included, and only then is it read again.
        # A round updates once per eviction, and the history grows with the round.
        self._written: _Snapshot | None = None
        # Settlements that count exactly as the reservation they settle, carried to
        # the next write (note_evicted, flush), by (round, pod, uid).
        self._pending = _pending.PendingSettlements()
        self._tally = _tally.Tally(COUNTING)

    # Reading ----------------------------------------------------------------

    def _read(self) -> _Snapshot:
        return self._snapshot_of(self._kube.read_config_map(self._namespace, self._name))

    def _snapshot_of(
        self, body: RawObject | None, oldest: datetime.datetime | None = None
    ) -> _Snapshot:
        if body is None:
            return _Snapshot(records=(), breaker=Breaker(), suspension=Suspension(), body=None)
        data = body.get("data") or {}
        records = self._history.decode(data.get(HISTORY_KEY) or "[]")
        raw_breaker = json.loads(data.get(BREAKER_KEY) or "{}")
        until = raw_breaker.get("openUntil")
        breaker = Breaker(
            open_until=datetime.datetime.fromisoformat(until.replace("Z", "+00:00"))
            if until
            else None,
            reason=raw_breaker.get("reason", ""),
        )
        return _Snapshot(
            records=records,
            breaker=breaker,
            suspension=suspension_of(body),
            body=body,
            oldest=oldest,
        )

    def _current(self) -> tuple[EvictionRecord, ...]:
        """The records as the ConfigMap holds them, with this store's pending
        settlements applied: what they are, though not yet written."""
        records = list(self._read().records)
        self._pending.apply(records)
        return tuple(records)

    def breaker(self) -> Breaker:
        return self._read().breaker

    def records(self) -> tuple[EvictionRecord, ...]:
        return self._current()

    def suspension(self) -> Suspension:
        return self._read().suspension

    def carried_budget(
        self, unavailable_per_workload: Mapping[str, int] | None = None
    ) -> plan.CarriedBudget:
        """What earlier rounds used of the budgets that span rounds, for the planner."""
        now = self._clock()
        records = [r for r in self._current() if r.outcome in COUNTING]
        limits = self._policy.limits
        cooling = frozenset(
            r.workload for r in records if r.workload and now - r.time < limits.cooldown
        )
        window = limits.window
        total_left: int | None = None
        namespace_left: dict[str, int] | None = None
        if window is not None:
            recent = [r for r in records if now - r.time < window.duration]
            if window.max_evictions is not None:
                total_left = max(window.max_evictions - sum(r.count for r in recent), 0)
            if window.max_evictions_per_namespace is not None:
                namespace_left = {}
                for r in recent:
                    namespace_left[r.namespace] = namespace_left.get(r.namespace, 0) + r.count
                namespace_left = {
                    ns: max(window.max_evictions_per_namespace - used, 0)
                    for ns, used in namespace_left.items()
                }
        return plan.CarriedBudget(
            cooling_workloads=cooling,
            window_total_left=total_left,
            window_namespace_left=namespace_left,
            window_namespace_limit=window.max_evictions_per_namespace if window else None,
            unavailable_per_workload=dict(unavailable_per_workload or {}),
        )

    def check_access(self, *, write: bool) -> bool:
        """Whether rounds can keep their state here (_state_access.check_state_access)."""
        return _state_access.check_state_access(
            self._kube, self._namespace, self._name, self._new_body({}), write=write
        )

    @property
    def settle_after(self) -> datetime.timedelta:
        """How old an unanswered reservation must be before a later round settles it:
        by then its Eviction was decided, or never will be. From the reservation's
        stamp: its own write, the read of the pod's siblings and the Eviction call
        (each bounded by the client's timeout), then the API server deciding what it
        received (bounded by its own). Clocks of different replicas may differ by a
        few seconds; with the default timeout of 15s this is 105s. Not covered: a
        process frozen for longer between its reservation and its Eviction (a
        stopped container, a paused VM), which only a fence could rule out."""
        client = datetime.timedelta(seconds=3 * self._kube.timeout_seconds)
        return client + APISERVER_REQUEST_TIMEOUT

    def settle_pending(self) -> tuple[Settlement, ...]:
        """Settle the reservations older than settle_after whose eviction got no answer.

        The pod decides: still there, same UID, no deletionTimestamp, so the
        Eviction did not happen and the reservation is released; gone, replaced
        under its name or terminating, so it (probably) did, and it stays counted,
        now as evicted. A pod that cannot be read leaves its reservation as it is,
        for the next round. The write is an update like any other (re-read on 409):
        a reservation its own round settled in between is left alone."""
        now = self._clock()
        pending = [
            r
            for r in self._current()
            if r.outcome == "reserved" and now - r.time > self.settle_after
        ]
        decided: dict[tuple[str, str], Settlement] = {}
        for record in pending:
            settlement = self._settle(record)
            if settlement is not None:
                decided[(record.round, record.uid)] = settlement
        if not decided:
            return ()
        applied: list[Settlement] = []

        def change(records: list[EvictionRecord], breaker: Breaker) -> Breaker:
            applied.clear()  # a retry after a 409 starts from the re-read records
            for i, existing in enumerate(records):
                settlement = decided.get((existing.round, existing.uid))
                if settlement is None or existing.outcome != "reserved":
                    continue
                records[i] = replace(existing, outcome=settlement.outcome)
                applied.append(settlement)
            return breaker

        self._update(change)
        return tuple(applied)

    def _settle(self, record: EvictionRecord) -> Settlement | None:
        if not record.uid:
            return None  # no UID to tell the pod from a namesake: keep counting it
        namespace, _, name = record.pod.partition("/")
        try:
            live = self._kube.read_pod(namespace, name)
        except ClusterError:
            return None
        if live is None:
            return Settlement(record=record, outcome="evicted", why="pod gone")
        meta = live.get("metadata") or {}
        if meta.get("uid") != record.uid:
            return Settlement(record=record, outcome="evicted", why="pod replaced (new UID)")
        if meta.get("deletionTimestamp"):
            return Settlement(record=record, outcome="evicted", why="pod terminating")
        return Settlement(
            record=record, outcome="released", why="pod still there, same UID, not terminating"
        )

    # Writing ----------------------------------------------------------------

    def reserve(self, record: EvictionRecord) -> None:
        """Add a reservation, or raise BudgetExhaustedError naming the budget it would
        break, or SuspendedError when the switch is on."""

        def change(records: list[EvictionRecord], breaker: Breaker) -> Breaker:
            self._check_budgets(records, record)
            # Stamped as written, not as first tried: settle_after counts from here,
            # however many 409s came before.
            records.append(replace(record, at=rfc3339(self._clock())))
            return breaker

        self._update(change, refuse_when_suspended=True, refuse_when_full=True)

    def note_evicted(self, record: EvictionRecord) -> None:
        """Settle a reservation as evicted, written with the next write (a reservation,
        another settlement, the breaker, flush) rather than by a write of its own.

        "evicted" counts against every budget exactly as "reserved" does (COUNTING),
        so until it is written the record counts as it will after; a process stopped
        before the write leaves the reservation, which a later round settles
        (settle_pending: the pod is gone, replaced or terminating, so it stays
        counted). Every read of this store sees it settled."""
        self._pending.add(record, "evicted")

    def flush(self) -> None:
        """Write the settlements note_evicted carries, if any."""
        if self._pending:
            self._update(lambda _records, breaker: breaker)

    def settle(self, record: EvictionRecord, outcome: Outcome) -> None:
        """Settle a reservation now, with whatever settlements are pending."""

        def change(records: list[EvictionRecord], breaker: Breaker) -> Breaker:
            for i, existing in enumerate(records):
                if (existing.round, existing.pod, existing.uid) == (
                    record.round,
                    record.pod,
                    record.uid,
                ):
                    records[i] = replace(existing, outcome=outcome)
            return breaker

        self._update(change)

    def open_breaker(self, until: datetime.datetime, reason: str) -> None:
        self._update(lambda records, _breaker: Breaker(open_until=until, reason=reason))

    def close_breaker(self) -> None:
        self._update(lambda records, _breaker: Breaker())

    def _check_budgets(self, records: Sequence[EvictionRecord], new: EvictionRecord) -> None:
        now = self._clock()
        limits = self._policy.limits
        # In step with the history rather than a pass over it: this runs at every
        # reservation, and the history grows with the round (_tally).
        tally = self._tally
        tally.follow(records)
        if tally.cooling(new.workload, new.round, now - limits.cooldown):
            raise BudgetExhaustedError("cooldown")
        window = limits.window
        if window is None:
            return
        recent, recent_in_namespace = tally.in_window(new.namespace, now - window.duration)
        if window.max_evictions is not None and recent >= window.max_evictions:
            raise BudgetExhaustedError("window.maxEvictions")
        per_namespace = window.max_evictions_per_namespace
        if per_namespace is not None and recent_in_namespace >= per_namespace:
            raise BudgetExhaustedError("window.maxEvictionsPerNamespace")

    def set_suspended(self, suspended: bool, *, by: str, reason: str) -> Suspension:
        """Flip the switch, recording who, when and why; creates the ConfigMap if missing.
        Only the annotations change: history and breaker are left as they are."""
        for _attempt in range(MAX_WRITE_ATTEMPTS):
            body = self._kube.read_config_map(self._namespace, self._name)
            updated = dict(body) if body is not None else self._new_body({})
            metadata = dict(updated.get("metadata") or {})
            metadata["annotations"] = {
                **(metadata.get("annotations") or {}),
                SUSPEND_ANNOTATION: "true" if suspended else "false",
                SUSPEND_CHANGED_BY_ANNOTATION: by,
                SUSPEND_CHANGED_AT_ANNOTATION: rfc3339(self._clock()),
                SUSPEND_REASON_ANNOTATION: reason,
            }
            updated["metadata"] = metadata
            try:
                if body is None:
                    written = self._kube.create_config_map(self._namespace, updated)
                else:
                    written = self._kube.replace_config_map(self._namespace, updated)
            except ConflictError:
                continue  # a round reserved in between (409 on update, or created it first)
            return suspension_of(written)
        raise ConflictError(
            f"configmap {self._namespace}/{self._name} kept changing; "
            f"gave up after {MAX_WRITE_ATTEMPTS} attempts"
        )

    def _update(
        self,
        change: Callable[[list[EvictionRecord], Breaker], Breaker],
        *,
        refuse_when_suspended: bool = False,
        refuse_when_full: bool = False,
    ) -> None:
        for _attempt in range(MAX_WRITE_ATTEMPTS):
            snapshot, self._written = self._written or self._read(), None
            if refuse_when_suspended and snapshot.suspension.suspended:
                raise SuspendedError(snapshot.suspension)
            records, oldest = self._pruned(snapshot)
            self._pending.apply(records)
            breaker = change(records, snapshot.breaker)
            body = snapshot.body
            try:
                written = self._write(body, records, breaker, refuse_when_full=refuse_when_full)
            except ConflictError:
                continue  # another writer got in first: re-read and re-check
            self._written = self._snapshot_of(written, oldest)
            self._pending.clear()
            return
        raise ConflictError(
            f"configmap {self._namespace}/{self._name} kept changing; "
            f"gave up after {MAX_WRITE_ATTEMPTS} attempts"
        )

    def _pruned(self, snapshot: _Snapshot) -> tuple[list[EvictionRecord], datetime.datetime]:
        """Records still needed by some budget, older ones dropped on write, and a time
        none of them is older than.

        Dropped once the oldest is PRUNE_SLACK past what any budget reads, not as
        soon as it is: a pass over the history per few minutes rather than at every
        write while records age out. No budget counts them meanwhile (each reads
        its own span)."""
        limits = self._policy.limits
        keep = max(
            limits.cooldown,
            limits.window.duration if limits.window else datetime.timedelta(0),
            datetime.timedelta(hours=1),
        )
        now = self._clock()
        kept_after = now - keep  # now - t < keep is t > now - keep
        # What the write adds is stamped now: the bound is now at the latest (a
        # clock set back only keeps records longer).
        if snapshot.oldest is not None and snapshot.oldest > kept_after - PRUNE_SLACK:
            return list(snapshot.records), min(snapshot.oldest, now)
        kept = [r for r in snapshot.records if r.time > kept_after]
        return kept, min(min((r.time for r in kept), default=now), now)

    def _write(
        self,
        body: RawObject | None,
        records: list[EvictionRecord],
        breaker: Breaker,
        *,
        refuse_when_full: bool = False,
    ) -> RawObject:
        """Returns the ConfigMap as the API server stored it."""
        breaker_text = json.dumps(_breaker_json(breaker), separators=(",", ":"))
        others = {
            key: value
            for key, value in ((body or {}).get("data") or {}).items()
            if key not in (HISTORY_KEY, BREAKER_KEY)
        }
        room = self._data_limit - _data_size(
            {**others, BREAKER_KEY: breaker_text, HISTORY_KEY: ""}, (body or {}).get("binaryData")
        )
        history = self._history.encode(records)
        if len(history) > room:
            history = self._made_room(records, room, refuse_when_full=refuse_when_full)
        data = {HISTORY_KEY: history, BREAKER_KEY: breaker_text}
        if body is None:
            return self._kube.create_config_map(self._namespace, self._new_body(data))
        updated = dict(body)
        updated["data"] = {**(body.get("data") or {}), **data}
        return self._kube.replace_config_map(self._namespace, updated)

    def _made_room(
        self, records: list[EvictionRecord], room: int, *, refuse_when_full: bool
    ) -> str:
        """The history's text within `room` characters if it can be (_history.make_room).
        A reservation that would still not fit is refused (HistoryFullError) rather
        than written for the API server to refuse, which would stop every later
        write, settlements and the breaker included."""
        now = self._clock()
        settled_before = now - self.settle_after
        made = _history.make_room(
            self._history,
            records,
            target=room - room // FOLD_HEADROOM,
            droppable=lambda r: r.outcome not in COUNTING and r.time < settled_before,
            foldable=lambda r: r.outcome == "evicted",
            forget_workload_before=now - self._policy.limits.cooldown - CLOCK_SKEW_MARGIN,
        )
        if any(made.given_up.values()):
            log.warning(
                "eviction history over its share of the state ConfigMap: made room",
                extra={"limit": room, "size": len(made.text), **made.given_up},
            )
        if len(made.text) > room and refuse_when_full:
            raise HistoryFullError(
                f"the eviction history in configmap {self._namespace}/{self._name} would "
                f"take {len(made.text)} bytes with every settled eviction folded, over its "
                f"{room} of the state's limit of {self._data_limit} (kube-apiserver "
                f"refuses a ConfigMap's data over {CONFIG_MAP_DATA_LIMIT}); room comes "
                f"back as records pass limits.cooldown and limits.window.duration"
            )
        return made.text

    def _new_body(self, data: dict[str, str]) -> RawObject:
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": self._name,
                "namespace": self._namespace,
                "labels": {"app.kubernetes.io/managed-by": "loadaware"},
            },
            "data": data,
        }


def _data_size(data: Mapping[str, str], binary: Mapping[str, str] | None) -> int:
    """Bytes of a ConfigMap's data as kube-apiserver counts them against its limit,
    keys included (more than it counts: on the safe side); binaryData as the base64
    that carries it."""
    return sum(
        len(k.encode()) + len(v.encode()) for k, v in (*data.items(), *(binary or {}).items())
    )


def _breaker_json(breaker: Breaker) -> dict[str, Any]:
    if breaker.open_until is None:
        return {}
    return {
        "openUntil": breaker.open_until.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z"),
        "reason": breaker.reason,
    }


def rfc3339(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")


def parse_rfc3339(text: object) -> datetime.datetime | None:
    """An RFC 3339 time from the API (None when missing or not a time)."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=datetime.UTC)
