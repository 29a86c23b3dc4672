"""Carry out a Plan: evictions within budgets, re-checked just before each, paced
per workload, with soft-taint steering, then verified.

Order: the next eviction is sent once the previous replacement is bound (a
StatefulSet recreates its pod only after the old one is gone), so replacements
are placed in the order the plan predicted them. Landing control: given a
plan.LandingControl, each move's landing set and steer set are derived again
just before its eviction from the cluster as observed (where the replacements
so far were bound, which predecessors are gone), and a move whose source was
relieved meanwhile or that has no good landing left is skipped. Steering: before
each eviction the nodes of its `steer` set carry loadaware's soft taint and no
other node does (only the changes are patched); the taints stay until the
replacement is bound, so kube-scheduler places it under exactly those taints.
Whether loadaware may set them is checked (a server-side dry run) before
anything is evicted. Every taint set is removed when the round ends, however it
ends.

An eviction is not success. Success is the replacement Ready on a good node.
So after each eviction the executor finds the replacement the controller
created and waits (bounded by verify.timeout) for it to be Ready, before it
evicts the next pod of the same workload and again at the end of the round. A
replacement anywhere in its landing set is success, and one on another good
node is counted (off-set); one that stays Pending, or lands back on its source,
on a hot or excluded node or on a node it takes over its targets, opens the
circuit breaker: no further eviction this round, nor in any round until
verify.breakerCooldown has passed.

The suspend switch is checked in the reservation before every eviction (see
_state): a suspended eviction is skipped ("suspended") and the round stops
there; replacements of pods already evicted are still verified.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from loadaware import cluster, plan, scheduling
from loadaware.errors import (
    ClusterError,
    LoadawareError,
    NotFoundError,
    RefusedError,
    TooManyRequestsError,
)
from loadaware.evict import _recheck, _state, _stops, _taint
from loadaware.evict._outcome import EvictionOutcome, Result, record_outcome
from loadaware.kube import Kube, RawObject
from loadaware.policy import LoadAwarePolicy

log = logging.getLogger(__name__)

# expected: on the plan's expectedNode; in-set: elsewhere in its landing set; off-set: a
# good landing outside it; cool: another node, where no landing control judged it; the
# rest are bad landings (source, hot, excluded, over-targets) or none (pending, not-found).
Landing = Literal[
    "expected",
    "in-set",
    "off-set",
    "cool",
    "hot",
    "source",
    "excluded",
    "over-targets",
    "pending",
    "not-found",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplacementReport:
    pod: str  # the evicted pod, namespace/name
    replacement: str | None  # name of the pod the controller created
    node: str | None  # where it was scheduled
    ready: bool
    seconds_to_ready: float | None
    landing: Landing
    ready_at: datetime.datetime | None = None  # when it was first seen Ready
    # By when the evicted pod had stopped using its node: its deletionTimestamp (the
    # kubelet's deadline), or when it was first seen gone; None: never seen either.
    predecessor_stopped_by: datetime.datetime | None = None


# Evictions that clean up rather than move: a Failed pod's controller replaced it
# when it failed, so no new pod will appear for this eviction.
NO_REPLACEMENT_RULES = frozenset({"RemoveFailedPods"})
# The first wait for a replacement to be bound; later waits double up to poll_seconds.
_FIRST_BIND_POLL_SECONDS = 0.1


@dataclass(kw_only=True)
class ExecutionReport:
    round_id: str
    dry_run: bool
    outcomes: list[EvictionOutcome] = field(default_factory=list)
    replacements: list[ReplacementReport] = field(default_factory=list)
    # Why the round stopped evicting early: a refusal (stale data, the suspend switch,
    # the breaker found open) or another stop (see _stops); its summary() says it.
    stopped: LoadawareError | None = None
    breaker: str | None = None  # why the breaker is open (opened now, or found open)
    tainted: list[str] = field(default_factory=list)  # every node that carried the taint
    untainted: list[str] = field(default_factory=list)  # taints removed, in order
    cordoned: list[str] = field(default_factory=list)  # nodes being emptied (consolidation)
    taints_left: list[str] = field(default_factory=list)  # could not be removed

    def count(self, result: Result) -> int:
        return sum(1 for o in self.outcomes if o.result == result)

    @property
    def stop_reason(self) -> str | None:
        """Why the round stopped evicting early, in words; None: it did not."""
        return self.stopped.summary() if self.stopped is not None else None


@dataclass(kw_only=True)
class _Waiting:
    eviction: plan.Eviction
    owner_uid: str
    labels: dict[str, str]
    known_uids: set[str]
    evicted_at: datetime.datetime
    evicted_uid: str = ""
    stopped_by: datetime.datetime | None = None


def off_plan_problem(pod: str, node: str | None, expected: str, node_count: int) -> str:
    """Why a replacement that landed on a good node other than the planned one opens
    the breaker, with the likely cause on a cluster kube-scheduler samples."""
    problem = f"replacement of {pod} landed on {node}, not on {expected} as planned"
    # From minFeasibleNodesToFind nodes kube-scheduler scores only a sample of the
    # feasible ones unless percentageOfNodesToScore is 100.
    if node_count >= scheduling.MIN_FEASIBLE_NODES_TO_FIND:
        problem += (
            f"; with {node_count} nodes, kube-scheduler scores only a sample of them "
            "unless its percentageOfNodesToScore is 100 "
            "(see docs/install.md, kube-scheduler settings)"
        )
    return problem


class Executor:
    def __init__(
        self,
        *,
        kube: Kube,
        state: _state.StateStore,
        policy: LoadAwarePolicy,
        clock: Callable[[], datetime.datetime],
        sleep: Callable[[float], None],
        round_id: str,
        dry_run: bool,
        poll_seconds: float = 1.0,
        stop_requested: Callable[[], str | None] | None = None,
        check_view: Callable[[], None] | None = None,
    ) -> None:
        self._kube = kube
        # Raises RefusedError when the evictor's view of the cluster (the cache its
        # reads come from) is older than its bound: nothing is judged on it then.
        self._check_view = check_view
        self._state = state
        self._policy = policy
        self._clock = clock
        self._sleep = sleep
        self._round = round_id
        self._dry_run = dry_run
        self._poll = poll_seconds
        self._stop_requested = stop_requested or (lambda: None)
        self._carrying: set[str] = set()  # nodes carrying the steering taint now
        self._planned = 0  # evictions in the plan being carried out
        self._control: plan.LandingControl | None = None

    def run(
        self,
        planned: plan.Plan,
        snapshot: cluster.ClusterState,
        recheck: _recheck.Recheck,
        control: plan.LandingControl | None = None,
    ) -> ExecutionReport:
        """Carry out the plan. With `control`, each move's landing set and steer set
        are derived again just before its eviction from the cluster as observed
        (the replacements bound so far, the predecessors gone), and a replacement is
        judged by whether its landing is good, not by whether it is the planned node."""
        report = ExecutionReport(round_id=self._round, dry_run=self._dry_run)
        self._control = control
        self._planned = len(planned.evictions)
        if not planned.evictions:
            return report
        if not self._dry_run:
            breaker = self._state.breaker()
            if breaker.is_open(self._clock()):
                report.breaker = (
                    f"open until {_state.rfc3339(breaker.open_until)}: {breaker.reason}"  # type: ignore[arg-type]
                )
                report.stopped = _stops.BreakerOpenError(report.breaker)
                for e in planned.evictions:
                    self._record(report, e, "skipped", _stops.BreakerOpenError.reference)
                return report
        classes = {n.name: n.node_class for n in planned.nodes}
        pods = {p.key: p for p in snapshot.pods}
        self._carrying.clear()
        try:
            if self._steers:
                first = next((e.steer[0] for e in planned.evictions if e.steer), None)
                if first is not None:
                    _taint.check_steering_allowed(self._kube, first)
            self._cordon_consolidated(planned, report)
            self._evict_all(planned, pods, classes, recheck, report)
        finally:
            if self._carrying:
                left = sorted(self._carrying)
                report.taints_left = _taint.remove_taints_quietly(self._kube, left)
                report.untainted.extend(n for n in left if n not in report.taints_left)
                self._carrying.clear()
        return report

    @property
    def _steers(self) -> bool:
        return self._policy.steering.soft_taint and not self._dry_run

    def _steer(self, eviction: plan.Eviction, report: ExecutionReport) -> None:
        """Exactly the eviction's steer set carries the taint from now on."""
        wanted = set(eviction.steer)
        for name in sorted(self._carrying - wanted):
            _taint.remove_hotspot_taint(self._kube, name)
            self._carrying.discard(name)
            report.untainted.append(name)
        for name in sorted(wanted - self._carrying):
            _taint.add_hotspot_taint(self._kube, name)
            self._carrying.add(name)
            if name not in report.tainted:
                report.tainted.append(name)

    def _wait_bound(self, waiting: _Waiting) -> None:
        """Hold the taints until kube-scheduler has bound the replacement (or found no
        node for it, or verify.timeout passed): changing them earlier would steer it
        somewhere the plan did not predict."""
        deadline = waiting.evicted_at + self._policy.verify.timeout
        # kube-scheduler binds within a second or so: look again soon, then less often.
        pause = min(_FIRST_BIND_POLL_SECONDS, self._poll)
        while True:
            if self._stale() is not None:
                return
            found = self._replacement(waiting)
            if found is not None and (
                (found.get("spec") or {}).get("nodeName") or _is_unschedulable(found)
            ):
                return
            if self._clock() >= deadline or self._stop_requested() is not None:
                return
            self._sleep(pause)
            pause = min(pause * 2, self._poll)

    def _cordon_consolidated(self, planned: plan.Plan, report: ExecutionReport) -> None:
        """Cordon the nodes a consolidation empties before evicting from them.

        kube-scheduler's default scoring prefers the emptiest node, which is the one
        being emptied: without the cordon the replacements would land right back.
        The nodes stay cordoned; removing them is the autoscaler's job."""
        consolidation = planned.consolidation
        if self._dry_run or consolidation is None or not consolidation.nodes:
            return
        for name in consolidation.nodes:
            self._kube.cordon_node(name)
            report.cordoned.append(name)

    # Evicting -----------------------------------------------------------------

    def _evict_all(
        self,
        planned: plan.Plan,
        pods: dict[str, cluster.Pod],
        classes: dict[str, str],
        recheck: _recheck.Recheck,
        report: ExecutionReport,
    ) -> None:
        waiting: dict[str, _Waiting] = {}
        for eviction in planned.evictions:
            if report.stopped is None:
                self._check_outstanding(waiting, classes, report)
            if report.stopped is not None:
                self._record(report, eviction, "skipped", f"round stopped: {report.stop_reason}")
                continue
            workload = eviction.workload or eviction.pod
            # Pacing: one pod per workload at a time.
            if workload in waiting and not self._verify(waiting.pop(workload), classes, report):
                self._record(report, eviction, "skipped", f"round stopped: {report.stop_reason}")
                continue
            pod = pods.get(eviction.pod)
            changed = self._pod_changed(eviction, pod)
            outcome = _recheck.Skip(changed) if changed is not None else recheck(eviction)
            if isinstance(outcome, _recheck.Stop):
                report.stopped = outcome.error
                self._record(report, eviction, "skipped", outcome.error.summary())
                continue
            if isinstance(outcome, _recheck.Skip):
                self._record(report, eviction, "skipped", outcome.reason)
                continue
            assert pod is not None
            if self._control is not None:
                derived = self._control.landing(eviction)
                if derived.skip is not None:
                    self._record(report, eviction, "skipped", derived.skip)
                    continue
                eviction = derived.applied_to(eviction)
            if self._steers:
                self._steer(eviction, report)
            started = self._evict(eviction, pod, report)
            if started is not None:
                # Each replacement is placed before the next eviction, as the plan
                # predicted them: in order, and under this eviction's taints.
                self._wait_bound(started)
                waiting[workload] = started
        for pending in waiting.values():
            self._verify(pending, classes, report)

    def _pod_changed(self, eviction: plan.Eviction, pod: cluster.Pod | None) -> str | None:
        """Whether the pod is still the one planned: same UID, same node, not terminating."""
        namespace, _, name = eviction.pod.partition("/")
        live = self._kube.read_pod(namespace, name)
        if live is None or pod is None:
            return "pod-gone"
        meta = live.get("metadata") or {}
        if eviction.uid and meta.get("uid") != eviction.uid:
            return "pod-replaced"
        if (live.get("spec") or {}).get("nodeName") != eviction.node:
            return "pod-moved"
        if meta.get("deletionTimestamp"):
            return "pod-terminating"
        return None

    def _evict(
        self, eviction: plan.Eviction, pod: cluster.Pod, report: ExecutionReport
    ) -> _Waiting | None:
        namespace, _, name = eviction.pod.partition("/")
        now = self._clock()
        record = _state.EvictionRecord(
            at=_state.rfc3339(now),
            round=self._round,
            pod=eviction.pod,
            uid=eviction.uid,
            namespace=namespace,
            workload=eviction.workload or eviction.pod,
            node=eviction.node,
        )
        if not self._dry_run:
            try:
                self._state.reserve(record)
            except _state.BudgetExhaustedError as exc:
                self._record(report, eviction, "skipped", "budget", budget=exc.budget)
                return None
            except _state.SuspendedError as exc:
                report.stopped = exc
                self._record(report, eviction, "skipped", exc.reference)
                return None
        known = {p["metadata"]["uid"] for p in self._siblings(pod)}
        try:
            self._kube.evict_pod(
                namespace,
                name,
                uid=eviction.uid or None,
                grace_period_seconds=self._policy.evictor.grace_period_seconds,
                dry_run=self._dry_run,
            )
        except TooManyRequestsError:
            self._settle(record, "refused")
            self._record(report, eviction, "refused-pdb", "pod-disruption-budget")
            return None
        except NotFoundError:
            self._settle(record, "gone")
            self._record(report, eviction, "gone", "not-found")
            return None
        except ClusterError as exc:
            # 409, 5xx, a timeout: the eviction may or may not have happened, so the
            # reservation stays counted, and the round stops here.
            report.stopped = _stops.EvictionFailedError(eviction.pod, exc)
            self._record(report, eviction, "failed", exc.reference)
            return None
        if self._dry_run:
            self._record(report, eviction, "dry-run", eviction.reason)
            return None
        self._settle(record, "evicted")
        self._record(report, eviction, "evicted", eviction.reason)
        if eviction.reason in NO_REPLACEMENT_RULES:
            return None
        owner = pod.owner
        return _Waiting(
            eviction=eviction,
            owner_uid=owner.uid if owner else "",
            labels=dict(pod.labels),
            known_uids=known,
            evicted_at=now,
            evicted_uid=eviction.uid or pod.uid,
        )

    def _settle(self, record: _state.EvictionRecord, outcome: _state.Outcome) -> None:
        try:
            self._state.settle(record, outcome)
        except ClusterError:
            # The reservation still counts: safe, only stricter than needed.
            log.warning("could not settle eviction record", extra={"pod": record.pod})

    def _siblings(self, pod: cluster.Pod) -> list[RawObject]:
        selector = ",".join(f"{k}={v}" for k, v in sorted(pod.labels.items()))
        return self._kube.list_pods(pod.namespace, selector)

    def _record(
        self,
        report: ExecutionReport,
        eviction: plan.Eviction,
        result: Result,
        reason: str,
        *,
        budget: str = "",
    ) -> None:
        outcome = EvictionOutcome(
            pod=eviction.pod,
            uid=eviction.uid,
            node=eviction.node,
            expected_node=eviction.expected_node,
            workload=eviction.workload or eviction.pod,
            result=result,
            reason=reason,
            at=self._clock(),
            budget=budget,
            steer=eviction.steer if self._steers else (),
            landing_set=eviction.landing_set,
        )
        report.outcomes.append(outcome)
        record_outcome(
            outcome,
            kube=self._kube,
            round_id=self._round,
            dry_run=self._dry_run,
            progress=f"{len(report.outcomes)}/{self._planned}",
        )

    # Verifying ----------------------------------------------------------------

    def _check_outstanding(
        self, waiting: dict[str, _Waiting], classes: dict[str, str], report: ExecutionReport
    ) -> None:
        """A look, without waiting, at replacements not yet verified: those Ready are
        verified now; one the scheduler found no node for, or that landed badly,
        opens the breaker before anything else is evicted."""
        if self._stale() is not None:
            return  # judged later, on a current view, or not at all
        for workload, pending in list(waiting.items()):
            found = self._replacement(pending)
            if found is None:
                continue
            node = (found.get("spec") or {}).get("nodeName")
            if (
                _is_ready(found)
                or _is_unschedulable(found)
                or (node and (node == pending.eviction.node or classes.get(node) == "hot"))
                or (node and self._judge(pending.eviction, node) is not None)
            ):
                del waiting[workload]
                if (
                    not self._verify(pending, classes, report, wait=False)
                    or report.stopped is not None
                ):
                    return

    def _verify(
        self,
        waiting: _Waiting,
        classes: dict[str, str],
        report: ExecutionReport,
        *,
        wait: bool = True,
    ) -> bool:
        """Wait for the replacement to be Ready; False (and the breaker open) when it is
        not, or when it landed on a hot node or back on its source."""
        deadline = waiting.evicted_at + self._policy.verify.timeout
        found: RawObject | None = None
        while True:
            stale = self._stale()
            if stale is not None:
                # Not verified, not failed: a view this old proves nothing either way.
                report.stopped = report.stopped or stale
                return True
            found = self._replacement(waiting)
            if found is not None and (_is_ready(found) or (not wait and _is_unschedulable(found))):
                break
            if not wait or self._clock() >= deadline:
                break
            if (stop := self._stop_requested()) is not None:
                report.stopped = report.stopped or _stops.StopRequestedError(stop)
                # Not verified, not failed: the round was told to stop.
                return True
            self._sleep(self._poll)
        eviction = waiting.eviction
        node = ((found or {}).get("spec") or {}).get("nodeName")
        ready = found is not None and _is_ready(found)
        landing: Landing
        bad = self._judge(eviction, node) if node else None
        if found is None:
            landing = "not-found"
        elif not node:
            landing = "pending"
        elif node == eviction.node:
            landing = "source"
        elif classes.get(node) == "hot":
            landing = "hot"
        elif bad is not None:
            landing = bad  # type: ignore[assignment]
        elif node == eviction.expected_node:
            landing = "expected"
        elif node in eviction.landing_set:
            landing = "in-set"
        elif self._control is not None:
            landing = "off-set"
        elif classes.get(node) == "excluded":
            landing = "excluded"
        else:
            landing = "cool"
        seconds = (self._clock() - waiting.evicted_at).total_seconds() if ready else None
        report.replacements.append(
            ReplacementReport(
                pod=eviction.pod,
                replacement=((found or {}).get("metadata") or {}).get("name"),
                node=node,
                ready=ready,
                seconds_to_ready=seconds,
                landing=landing,
                ready_at=self._clock() if ready else None,
                predecessor_stopped_by=waiting.stopped_by,
            )
        )
        problem: str | None = None
        if landing in ("source", "hot"):
            problem = f"replacement of {eviction.pod} landed on {landing} node {node}"
        elif landing in ("excluded", "over-targets") and self._control is not None:
            what = (
                "an excluded node" if landing == "excluded" else "a node it takes over its targets"
            )
            problem = f"replacement of {eviction.pod} landed on {what}, {node}"
        elif landing in ("cool", "excluded") and eviction.expected_node is not None:
            # The model that chose the landing and its steering taints was wrong
            # here; further moves planned with it are not to be trusted this round.
            problem = off_plan_problem(eviction.pod, node, eviction.expected_node, len(classes))
        elif found is not None and not ready and _is_unschedulable(found):
            problem = f"replacement of {eviction.pod} is unschedulable (no node fits it)"
        elif not ready:
            problem = (
                f"replacement of {eviction.pod} not Ready within "
                f"{self._policy.verify.timeout.total_seconds():.0f}s ({landing})"
            )
        if problem is not None:
            self.open_breaker(problem, report)
            return False
        return True

    def _replacement(self, waiting: _Waiting) -> RawObject | None:
        namespace = waiting.eviction.pod.partition("/")[0]
        selector = ",".join(f"{k}={v}" for k, v in sorted(waiting.labels.items()))
        listed = self._kube.list_pods(namespace, selector)
        predecessor = _listed_predecessor(waiting, listed)
        _note_predecessor(waiting, predecessor, self._clock())
        if predecessor is None and waiting.evicted_uid and self._control is not None:
            self._control.predecessor_gone(waiting.eviction, self._clock())
        fresh = [
            p
            for p in listed
            if p["metadata"].get("uid") not in waiting.known_uids
            and not p["metadata"].get("deletionTimestamp")
            and _controlled_by(p, waiting.owner_uid)
        ]
        if not fresh:
            return None
        fresh.sort(key=lambda p: p["metadata"].get("creationTimestamp") or "")
        found = fresh[0]
        node = (found.get("spec") or {}).get("nodeName")
        if node and self._control is not None:
            self._control.replacement_bound(waiting.eviction, node, self._clock())
        return found

    def _stale(self) -> RefusedError | None:
        """Why the view of the cluster is too old to judge on, or None."""
        if self._check_view is None:
            return None
        try:
            self._check_view()
        except RefusedError as exc:
            return exc
        return None

    def _judge(self, eviction: plan.Eviction, node: str) -> str | None:
        """Why landing on `node` is bad (see LandingControl.judge_landing); None when
        it is good or no landing control judges it."""
        if self._control is None:
            return None
        return self._control.judge_landing(eviction, node)

    def open_breaker(self, reason: str, report: ExecutionReport) -> None:
        report.breaker = reason
        report.stopped = report.stopped or _stops.BreakerOpenedError(reason)
        if self._dry_run:
            return
        until = self._clock() + self._policy.verify.breaker_cooldown
        try:
            self._state.open_breaker(until, reason)
        except ClusterError:
            log.error("could not persist the open breaker", extra={"reason": reason})


def _listed_predecessor(waiting: _Waiting, listed: list[RawObject]) -> RawObject | None:
    """The evicted pod in the same list that finds its replacement, or None: gone."""
    if not waiting.evicted_uid:
        return None
    return next((p for p in listed if p["metadata"].get("uid") == waiting.evicted_uid), None)


def _note_predecessor(
    waiting: _Waiting, predecessor: RawObject | None, now: datetime.datetime
) -> None:
    """Learn by when the evicted pod stopped (`predecessor`: it as still listed, or
    None): relief is judged on samples taken after that."""
    if waiting.stopped_by is not None or not waiting.evicted_uid:
        return
    if predecessor is not None:
        # Not yet gone: the kubelet stops it by its deletionTimestamp at the latest.
        deleting = predecessor["metadata"].get("deletionTimestamp")
        waiting.stopped_by = _state.parse_rfc3339(deleting)
        return
    waiting.stopped_by = now


def _controlled_by(pod: RawObject, owner_uid: str) -> bool:
    if not owner_uid:
        return True
    refs: list[dict[str, Any]] = pod["metadata"].get("ownerReferences") or []
    return any(r.get("uid") == owner_uid for r in refs)


def _is_unschedulable(pod: RawObject) -> bool:
    """kube-scheduler tried and found no node (PodScheduled False, reason Unschedulable)."""
    return any(
        c.get("type") == "PodScheduled"
        and c.get("status") == "False"
        and c.get("reason") == "Unschedulable"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _is_ready(pod: RawObject) -> bool:
    status = pod.get("status") or {}
    if not (pod.get("spec") or {}).get("nodeName"):
        return False
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )
