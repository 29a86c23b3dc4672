"""Carry out a Plan: evictions within budgets, re-checked just before each, paced
per workload, with soft-taint steering, then verified.

Order: the plan's order of relief, except that with steering and landing
control the next eviction may be one of the next steering.lookahead whose steer
set needs fewer taint changes (_steering_order). The next eviction is sent once the previous
replacement is bound (a StatefulSet recreates its pod only after the old one is
gone), so replacements are placed one at a time. Landing control: given a
plan.LandingControl, each move's landing set and steer set are derived again
just before its eviction from the cluster as observed (where the replacements
so far were bound, which predecessors are gone), and a move whose source was
relieved meanwhile or that has no good landing left is skipped. Steering: before
each eviction the nodes of its `steer` set carry loadaware's soft taint, with
those of earlier evictions whose replacement is not bound yet, and no other node
does (only the changes are patched); a move's taints stay until its replacement
is bound, so kube-scheduler places it under exactly those taints, and go once no
move needs them. No eviction is sent that would put the taint on more than
steering.maxTaintedFraction of the nodes. Whether loadaware may set them is
checked (a server-side dry run) before anything is evicted. Every taint set is
removed when the round ends, however it ends.

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

Off-set landings are the model disagreeing with the cluster's scheduler: each
replacement's node is told to the round's guard as soon as it is bound, and past
its bound (see _landing_guard) the round stops evicting, its taints removed at
once, with ModelDisagreesError (scheduler-model-disagrees). Bad landings still
open the breaker.

Its parts: `_steering` keeps the taints on each eviction's steer set, `_steering_order`
picks the next eviction, `_verify` finds
and judges the replacements, `_execution_report` is what the round did.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable

from loadaware import cluster, plan
from loadaware.errors import ClusterError, NotFoundError, TooManyRequestsError
from loadaware.evict import (
    _landing_guard,
    _recheck,
    _state,
    _steering,
    _steering_order,
    _stops,
    _verify,
)
from loadaware.evict._execution_report import ExecutionReport
from loadaware.evict._outcome import EvictionOutcome, Result, record_outcome
from loadaware.kube import Kube, RawObject
from loadaware.policy import LoadAwarePolicy

log = logging.getLogger(__name__)

# Evictions that clean up rather than move: a Failed pod's controller replaced it
# when it failed, so no new pod will appear for this eviction.
NO_REPLACEMENT_RULES = frozenset({"RemoveFailedPods"})


class Executor:
    """Carries out one round's plan (see the module): the evictions in order, each
    steered by the round's SteeringTaints and its replacement judged by the round's
    ReplacementVerifier."""

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
        self._check_view = check_view
        self._state = state
        self._policy = policy
        self._clock = clock
        self._sleep = sleep
        self._round = round_id
        self._dry_run = dry_run
        self._poll = poll_seconds
        self._stop_requested = stop_requested or (lambda: None)
        self._planned = 0  # evictions in the plan being carried out
        self._control: plan.LandingControl | None = None
        self._guard: _landing_guard.OffSetLandingGuard | None = None
        # The round's parts, made afresh by each run.
        self._steering = _steering.SteeringTaints(kube, 0)
        self._verifier = self._verifier_for(None)

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
        self._verifier = self._verifier_for(control)
        self._guard = (
            _landing_guard.OffSetLandingGuard(self._policy, control)
            if control is not None
            else None
        )
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
        cap = plan.taint_cap(self._policy.steering.max_tainted_fraction, len(snapshot.nodes))
        self._steering = _steering.SteeringTaints(self._kube, cap)
        try:
            if self._steers:
                self._steering.check_allowed(planned)
            self._cordon_consolidated(planned, report)
            self._evict_all(planned, pods, classes, recheck, report)
        finally:
            try:
                self._steering.remove_all(report)
            finally:
                self._flush_settlements()
        return report

    def _verifier_for(self, control: plan.LandingControl | None) -> _verify.ReplacementVerifier:
        return _verify.ReplacementVerifier(
            kube=self._kube,
            policy=self._policy,
            clock=self._clock,
            sleep=self._sleep,
            poll_seconds=self._poll,
            stop_requested=self._stop_requested,
            check_view=self._check_view,
            control=control,
            open_breaker=self.open_breaker,
        )

    @property
    def _steers(self) -> bool:
        return self._policy.steering.soft_taint and not self._dry_run

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
        waiting: dict[str, _verify.Waiting] = {}
        # Without landing control the plan's landings hold only in the plan's order.
        steered = self._steers and self._control is not None
        lookahead = self._policy.steering.lookahead if steered else 0
        order = _steering_order.SteeringOrder(planned.evictions, lookahead)
        while order:
            self._note_bound(waiting)
            if report.stopped is None:
                self._verifier.check_outstanding(waiting, classes, report)
                self._verifier.note_departures()
            steering = self._steering.writes if report.stopped is None and lookahead else None
            eviction = order.take(steering, waiting)
            if report.stopped is not None:
                self._record(report, eviction, "skipped", f"round stopped: {report.stop_reason}")
                continue
            workload = eviction.workload or eviction.pod
            # Pacing: one pod per workload at a time.
            if workload in waiting and not self._verifier.verify(
                waiting.pop(workload), classes, report
            ):
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
                held = self._steering.held if self._steers else frozenset()
                derived = self._control.landing(eviction, held)
                if derived.skip is not None:
                    self._record(report, eviction, "skipped", derived.skip)
                    continue
                eviction = derived.applied_to(eviction)
            if self._steers:
                over = self._steering.over_cap(eviction)
                if over is not None:
                    self._record(report, eviction, "skipped", over)
                    continue
                self._steering.steer(eviction, report)
            started = self._evict(eviction, pod, report)
            if started is not None:
                # Each replacement is placed before the next eviction, as the plan
                # predicted them: in order, and under this eviction's taints.
                self._steering.sent(eviction)
                bound = self._verifier.wait_bound(started)
                waiting[workload] = started
                if bound is not None:
                    self._steering.bound(eviction.pod)
                    report.bound_at[eviction.pod] = bound.at
                    self._guard_landing(started.eviction, bound.node, report)
        # Nothing more is reserved: the last settlement is written now, not after the
        # wait for the replacements.
        self._flush_settlements()
        # The last moves' taints go once their replacements are bound, not after
        # the wait for every replacement to be Ready.
        self._note_bound(waiting)
        if self._steers:
            self._steering.release(report)
        for pending in waiting.values():
            self._verifier.verify(pending, classes, report)
            if self._steers and self._steering.unbound:
                self._note_bound(waiting)
                self._steering.release(report)

    def _note_bound(self, waiting: dict[str, _verify.Waiting]) -> None:
        """Tell the steering which replacements not bound before are bound now."""
        unbound = self._steering.unbound
        if not unbound:
            return
        verifying = {pending.eviction.pod: pending for pending in waiting.values()}
        for pod in unbound:
            pending = verifying.get(pod)
            # One no longer waiting was verified: Ready (so bound), or the round stops.
            if pending is None or self._verifier.is_bound(pending):
                self._steering.bound(pod)

    def _guard_landing(self, eviction: plan.Eviction, node: str, report: ExecutionReport) -> None:
        """Where the replacement was bound, told to the round's guard on the model
        (see _landing_guard): past its bound the round stops evicting and its steering
        taints come off now, as the landings they claim are not to be trusted."""
        if self._guard is None:
            return
        disagrees = self._guard.observe(eviction, node)
        if disagrees is None or report.stopped is not None:
            return
        report.stopped = disagrees
        log.warning(
            "stopping: the scheduler disagrees with the model",
            extra={"round": self._round, "reason": disagrees.summary()},
        )
        self._steering.remove_all(report)

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
    ) -> _verify.Waiting | None:
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
        # Counted as the reservation was: written with the next reservation, or when
        # the round's evicting ends (_flush_settlements).
        self._state.note_evicted(record)
        self._record(report, eviction, "evicted", eviction.reason)
        if eviction.reason in NO_REPLACEMENT_RULES:
            return None
        owner = pod.owner
        return _verify.Waiting(
            eviction=eviction,
            owner_uid=owner.uid if owner else "",
            labels=dict(pod.labels),
            known_uids=known,
            evicted_at=now,
            evicted_uid=eviction.uid or pod.uid,
        )

    def _settle(self, record: _state.EvictionRecord, outcome: _state.Outcome) -> None:
        """An outcome that stops counting ("refused", "gone"), written at once: it frees
        budget."""
        try:
            self._state.settle(record, outcome)
        except ClusterError:
            # The reservation still counts: safe, only stricter than needed.
            log.warning("could not settle eviction record", extra={"pod": record.pod})

    def _flush_settlements(self) -> None:
        if self._dry_run:
            return
        try:
            self._state.flush()
        except ClusterError:
            # The reservations still count, and a later round settles them as evicted.
            log.warning("could not write the settlements of the round's evictions")

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
