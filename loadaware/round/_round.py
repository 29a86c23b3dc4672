"""One live round: read the cluster, read usage, plan, evict, verify, report.

Every trigger (`run --once`, a schedule, the Alertmanager webhook) calls
run_round(). What it reads and writes comes in through RoundContext, so the
same code runs against a real cluster, the simulated one, and in tests; what it
hands back is a RoundResult: the audit record, the error it ended with (if
any), the proof a round planned ahead owes, and the usage it read.

Before anything else a round checks that its state can be kept (the state
namespace exists, the ConfigMap may be read and written): otherwise it is
refused with exit 2 and the fix, before a taint or an eviction. A round is
refused too when the model of kube-scheduler is known to disagree with the
cluster's (_model_guard, scheduler-model-disagrees). Then it settles the
reservations earlier rounds left without an answer, so that a dropped
connection does not hold a window budget until the window passes.

After the evictions and the relief check a live round is measured by what it
did of its plan (_completion): one that stopped evicting early or left hot a node it planned to
relieve ends `partial`, with the counts, and its error is what stopped it (a
fail-closed refusal stays one: stale metrics, the suspend switch, the breaker).
The CLI turns the error into the exit code.
"""

from __future__ import annotations

import datetime
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from loadaware import cluster, evict, metrics, plan, policy, scheduling
from loadaware.errors import ClusterError, LoadawareError, RefusedError, SetupError
from loadaware.round import (
    _completion,
    _forecast,
    _forecast_proof,
    _inputs,
    _model_guard,
    _planning,
    _recheck,
    _record,
    _relief,
)

log = logging.getLogger(__name__)


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


@dataclass(frozen=True, kw_only=True)
class RoundContext:
    kube: evict.Kube
    read_cluster: Callable[[], cluster.ClusterState]
    # Usage for the nodes and pods of a cluster; raises RefusedError when it cannot vouch for it.
    read_usage: _inputs.UsageReader
    clock: Callable[[], datetime.datetime] = _utc_now
    sleep: Callable[[float], None] = time.sleep
    poll_seconds: float = 1.0
    # Usage read this recently (by `clock`) still counts as fresh for the re-check
    # before an eviction; 0 re-reads before every eviction.
    recheck_reuse_seconds: float = _recheck.RECHECK_REUSE_SECONDS
    # Raises RefusedError when the view of the cluster is older than its bound (the
    # cluster cache's check); asked before each eviction. None: read fresh each time.
    check_cluster: Callable[[], None] | None = None
    # The forecast for rounds planned ahead (RoundOptions.forecast_horizon); None:
    # the source has none (only Prometheus keeps past weeks).
    read_forecast: _forecast.ForecastReader | None = None
    # The recent agreement of the model with the cluster's scheduler (serve measures it
    # on every binding); too low, a live round is refused (_model_guard). None: unmeasured.
    model_agreement: Callable[[], scheduling.ModelAgreement] | None = None


@dataclass(frozen=True, kw_only=True)
class RoundOptions:
    trigger: str = "once"
    dry_run: bool | None = None  # None: the policy's dryRun
    round_id: str = field(default_factory=lambda: secrets.token_hex(4))
    # Only these nodes may be sources (an alert names the hot node); None: any hot node.
    source_nodes: frozenset[str] | None = None
    # Asked before each eviction and while waiting for replacements: a reason to
    # stop (SIGTERM, lost leadership) or None to go on. The eviction in flight
    # always finishes; waits end early, and the round's taints are removed.
    stop_requested: Callable[[], str | None] | None = None
    # Told where the round is: "planning", "evicting", "verifying" (serve's /status).
    on_phase: Callable[[str], None] | None = None
    # Plan ahead: on the usage forecast for [start, start + horizon] (see _forecast).
    forecast_horizon: datetime.timedelta | None = None


class PartialRoundError(LoadawareError):
    """The round did less than it planned (stopped evicting early, or left hot a
    node it planned to relieve) with nothing else to blame."""

    reference = "partial-round"


@dataclass(frozen=True, kw_only=True)
class RoundResult:
    """A finished round, as its triggers need it."""

    record: _record.RoundRecord  # the audit record
    # Why the round did not do all it set out to, or None: a RefusedError when it
    # refused or stopped fail-closed, a SetupError or ClusterError when it could not
    # go on, else what stopped it (PartialRoundError when nothing did).
    error: LoadawareError | None = None
    # What a round planned on a forecast expected, to prove once its horizon has passed.
    proof: _forecast_proof.PendingProof | None = None
    # The moment's usage the round read first (None: it read none).
    usage: metrics.Usage | None = None


def run_round(
    settings: policy.LoadAwarePolicy, context: RoundContext, options: RoundOptions | None = None
) -> RoundResult:
    options = options or RoundOptions()
    dry_run = settings.dry_run if options.dry_run is None else options.dry_run
    record = _record.RoundRecord(
        round_id=options.round_id,
        trigger=options.trigger,
        started_at=context.clock(),
        dry_run=dry_run,
        policy_hash=policy.policy_hash(settings),
    )
    reads = _inputs.UsageReads(context.read_usage)
    round_ = _Round(settings, context, options, dry_run, record, reads)
    error: LoadawareError | None
    try:
        error = round_.run()
    except (SetupError, RefusedError) as exc:
        # Refused: nothing was tried. A SetupError keeps the input error's exit code:
        # only the operator can fix it (the message says how).
        record.status, record.reason = "refused", exc.summary()
        error = exc
    except ClusterError as exc:
        record.status, record.reason = "aborted", exc.summary()
        error = exc
    if error is not None:
        record.exit_code = error.exit_code
    record.finished_at = context.clock()
    log.info(
        "round finished",
        extra={"round": record.round_id, "reason": record.reason, "dry_run": dry_run},
    )
    return RoundResult(record=record, error=error, proof=round_.proof, usage=reads.first)


@dataclass(frozen=True, kw_only=True)
class _Planning:
    """What a round planned on, and the plan."""

    snapshot: cluster.ClusterState
    current: metrics.Usage  # the moment's usage
    usage: metrics.Usage  # as planned on: the forecast's, when planning ahead
    planned: plan.Plan
    at: datetime.datetime
    # What the plan was made on, for landing control to start from (None: the plan
    # has no evictions, or the round is a dry run, which needs no landing control).
    basis: plan.LandingBasis | None = None


class _Round:
    """One round's steps; the only writer of its audit record."""

    def __init__(
        self,
        settings: policy.LoadAwarePolicy,
        context: RoundContext,
        options: RoundOptions,
        dry_run: bool,
        record: _record.RoundRecord,
        reads: _inputs.UsageReads,
    ) -> None:
        self.settings = settings
        self.context = context
        self.options = options
        self.dry_run = dry_run
        self.record = record
        self.reads = reads
        self.proof: _forecast_proof.PendingProof | None = None

    def run(self) -> LoadawareError | None:
        """Plan and carry out the round; returns the error it ended with, or None."""
        state = evict.StateStore(self.context.kube, self.settings, self.context.clock)
        settled = self._open(state)
        # Before a taint or an eviction, and before the round plans on the model.
        agreement = _model_guard.check_model_agreement(
            self.settings, self.context.model_agreement, dry_run=self.dry_run
        )
        self.record.model_agreement = agreement.figures
        if agreement.refusal is not None:
            raise agreement.refusal
        planning = self._plan(state, settled)
        refusal = planning.planned.refusal
        if refusal is not None:
            raise RefusedError(refusal.message, reference=refusal.code)
        self.record.status, self.record.reason = planning.planned.status, planning.planned.reason
        if not planning.planned.evictions:
            return None
        return self._execute(state, planning)

    def _open(self, state: evict.StateStore) -> dict[str, list[dict[str, str]]]:
        """Before the round reads anything: its state can be kept, no suspension, no
        open breaker, no taint a killed round left; returns what it settled of the
        reservations earlier rounds left without an answer."""
        settings, context, record, dry_run = self.settings, self.context, self.record, self.dry_run
        # A dry run writes no state and reads it as empty where the namespace is
        # missing, so only a round that evicts needs the namespace; both need to be
        # allowed to read the ConfigMap.
        if not state.check_access(write=not dry_run):
            log.warning(
                "state namespace not found; a round that evicts would be refused",
                extra={"round": record.round_id, "namespace": settings.state.namespace},
            )
        if settings.steering.soft_taint and not dry_run:
            # A round that crashed may have left its taint behind.
            cleaned = evict.remove_leftover_taints(context.kube)
            record.leftover_taints_removed = cleaned
            if cleaned:
                log.warning("removed leftover hotspot taints", extra={"node": ",".join(cleaned)})
        if dry_run:
            # A dry run changes nothing, so it goes on while suspended, as it does with
            # the breaker open: on-call can still see what would happen. It writes
            # nothing, so it settles nothing either.
            return {"released": [], "assumedEvicted": []}
        # Refused, not a noop: nothing is done on purpose, the record and the
        # refused-rounds metric say why, and a forgotten suspension shows up as
        # rounds that stop succeeding.
        suspension = state.suspension()
        if suspension.suspended:
            raise evict.SuspendedError(suspension)
        breaker = state.breaker()
        if breaker.is_open(context.clock()):
            until = evict.rfc3339(breaker.open_until)  # type: ignore[arg-type]
            raise evict.BreakerOpenError(f"open until {until} after: {breaker.reason}")
        # Before the budgets are read, so that this round may use what was released.
        return _settle_pending(state, record)

    def _plan(self, state: evict.StateStore, settled: dict[str, list[dict[str, str]]]) -> _Planning:
        """Read the inputs and plan on them."""
        settings, context, options, record = self.settings, self.context, self.options, self.record
        self._phase("planning")
        snapshot = context.read_cluster()
        current = self.reads.moment(snapshot)
        if options.forecast_horizon is not None:
            # Planning ahead: the plan, its re-checks and landing control see the forecast.
            self.reads.forecast = _forecast.read_forecast(
                context.read_forecast, snapshot, context.clock(), options.forecast_horizon
            )
        usage = self.reads.as_planned(current)
        carried = state.carried_budget(plan.unavailable_by_workload(snapshot))
        record.budgets = _budgets_json(settings, carried)
        record.budgets.update(settled)
        planned_at = context.clock()
        planned, basis = _planning.timed_plan_with_basis(
            snapshot,
            usage,
            settings,
            planned_at,
            carried=carried,
            source_nodes=options.source_nodes,
        )
        record.plan = planned
        record.inputs = {
            "nodes": len(snapshot.nodes),
            "pods": len(snapshot.pods),
            "hotNodes": sum(1 for n in planned.nodes if n.node_class == "hot"),
            "metricsCollectedAt": evict.rfc3339(usage.collected_at),
            "sourceNodes": sorted(options.source_nodes)
            if options.source_nodes is not None
            else None,
        }
        self.proof = _forecast_proof.PendingProof.for_round(
            options.round_id, snapshot, settings, planned, dry_run=self.dry_run
        )
        return _Planning(
            snapshot=snapshot,
            current=current,
            usage=usage,
            planned=planned,
            at=planned_at,
            # A dry run changes nothing, so the plan's landings stand as they are, and
            # the planner's working copy of the cluster need not be kept.
            basis=None if self.dry_run else basis,
        )

    def _execute(self, state: evict.StateStore, planning: _Planning) -> LoadawareError | None:
        """Carry the plan out, verify relief and work out what the round did of its plan."""
        settings, context, options, record = self.settings, self.context, self.options, self.record
        dry_run = self.dry_run
        executor = evict.Executor(
            kube=context.kube,
            state=state,
            policy=settings,
            clock=context.clock,
            sleep=context.sleep,
            round_id=options.round_id,
            dry_run=dry_run,
            poll_seconds=context.poll_seconds,
            stop_requested=options.stop_requested,
            check_view=context.check_cluster,
        )
        recheck = _recheck.Rechecker(
            settings,
            planning.snapshot,
            planning.usage,
            read_usage=self.reads.planning,
            clock=context.clock,
            reuse_seconds=context.recheck_reuse_seconds,
            check_cluster=context.check_cluster,
            stop_requested=options.stop_requested,
            asked={e.node for e in planning.planned.evictions},
        )
        # Started from what the plan was made on: the cluster is not classified twice.
        control = None if planning.basis is None else plan.LandingControl.from_basis(planning.basis)
        self._phase("evicting")
        execution = executor.run(planning.planned, planning.snapshot, recheck, control)
        record.execution = execution
        # Before the relief check, which may open the breaker (and so set `stopped`)
        # on evidence about the moves, not on how far the round got.
        stopped = execution.stopped
        record.status = "executed"
        evicted = [o for o in execution.outcomes if o.result == "evicted"]
        record.reason = (
            f"{len(evicted)} evicted, {execution.count('dry-run')} dry-run, "
            f"{execution.count('refused-pdb')} refused by PDBs, "
            f"{execution.count('skipped')} skipped"
            + (f"; stopped: {stopped.summary()}" if stopped is not None else "")
        )
        if evicted:
            # On the moment's usage: before the peak that is all there is to see.
            self._verify_relief(planning.snapshot, planning.current, execution, executor)
        if not dry_run:
            # A dry run moves nothing: nothing is relieved or left hot.
            self._record_completion(planning.planned, execution, stopped)
        # Fail-closed stops keep their refusal: the round refused to go on.
        if isinstance(stopped, RefusedError):
            return stopped
        if record.status == "partial" or any(o.result == "failed" for o in execution.outcomes):
            return stopped or PartialRoundError(record.reason)
        return None

    def _record_completion(
        self, planned: plan.Plan, execution: evict.ExecutionReport, stopped: LoadawareError | None
    ) -> None:
        """Partial when the round stopped early or left hot a node it planned to
        relieve (see _completion): status and reason say so, with the counts (and the
        audit record's verdict, round_verdict)."""
        record = self.record
        completion = _completion.round_completion(
            planned,
            execution,
            record.relief,
            stopped=stopped.summary() if stopped is not None else None,
        )
        record.completion = completion
        if completion.partial:
            record.status, record.reason = "partial", _completion.describe_completion(completion)

    def _verify_relief(
        self,
        snapshot: cluster.ClusterState,
        usage: metrics.Usage,
        execution: evict.ExecutionReport,
        executor: evict.Executor,
    ) -> None:
        """Wait for evidence and judge every node the round changed (see _relief)."""
        record = self.record
        assert record.plan is not None
        self._phase("verifying")
        check = _relief.ReliefCheck(
            settings=self.settings,
            kube=self.context.kube,
            read_usage=self.reads.moment,
            clock=self.context.clock,
            sleep=self.context.sleep,
            stop_requested=self.options.stop_requested or (lambda: None),
        )
        relief = _relief.verify_relief(check, snapshot, record.plan, execution, usage)
        record.relief = list(relief.nodes)
        record.relief_verdict = relief.verdict
        record.relief_wait = dict(relief.wait)
        if relief.breaker is not None:
            executor.open_breaker(relief.breaker, execution)

    def _phase(self, phase: str) -> None:
        if self.options.on_phase is not None:
            self.options.on_phase(phase)


def _settle_pending(
    state: evict.StateStore, record: _record.RoundRecord
) -> dict[str, list[dict[str, str]]]:
    """Settle earlier rounds' unanswered reservations, as the audit record lists them
    (budgets.released, budgets.assumedEvicted). A failure leaves them counted,
    which is safe, and the round goes on."""
    settled: dict[str, list[dict[str, str]]] = {"released": [], "assumedEvicted": []}
    try:
        settlements = state.settle_pending()
    except ClusterError as exc:
        log.warning(
            "could not settle unanswered reservations",
            extra={"round": record.round_id, "reason": exc.summary()},
        )
        return settled
    for settlement in settlements:
        released = settlement.outcome == "released"
        log.warning(
            "released the reservation of an eviction that did not happen"
            if released
            else "kept the reservation of an unanswered eviction",
            extra={
                "round": record.round_id,
                "pod": settlement.record.pod,
                "reason": settlement.why,
            },
        )
        settled["released" if released else "assumedEvicted"].append(
            {
                "pod": settlement.record.pod,
                "uid": settlement.record.uid,
                "round": settlement.record.round,
                "reservedAt": settlement.record.at,
                "why": settlement.why,
            }
        )
    return settled


def _budgets_json(
    settings: policy.LoadAwarePolicy, carried: plan.CarriedBudget
) -> dict[str, object]:
    limits = settings.limits
    return {
        "round": {
            "maxNoOfPodsToEvictTotal": limits.max_no_of_pods_to_evict_total,
            "maxNoOfPodsToEvictPerNode": limits.max_no_of_pods_to_evict_per_node,
            "maxNoOfPodsToEvictPerNamespace": limits.max_no_of_pods_to_evict_per_namespace,
            "maxNoOfPodsToEvictPerWorkload": limits.max_no_of_pods_to_evict_per_workload,
        },
        "windowLeft": carried.window_total_left,
        "coolingWorkloads": len(carried.cooling_workloads),
    }
