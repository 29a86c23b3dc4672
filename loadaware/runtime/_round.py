"""One live round: read the cluster, read usage, plan, evict, verify, report.

Every trigger (`run --once`, a schedule, the Alertmanager webhook) calls
run_round(). What it reads and writes comes in through RoundContext, so the
same code runs against a real cluster, the simulated one, and in tests.

Before anything else a round checks that its state can be kept (the state
namespace exists, the ConfigMap may be read and written): otherwise it is
refused with exit 2 and the fix, before a taint or an eviction. Then it
settles the reservations earlier rounds left without an answer, so that a
dropped connection does not hold a window budget until the window passes.

After the evictions and the relief check a live round is judged on what it did
(_verdict): one that stopped evicting early or left hot a node it planned to
relieve ends `partial`, with the counts, and exits 1 (3 when what stopped it
was a fail-closed refusal: stale metrics, the suspend switch, the breaker).
"""

from __future__ import annotations

import datetime
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from loadaware import cluster, evict, metrics, plan, policy, report
from loadaware.errors import ClusterError, RefusedError, SetupError
from loadaware.runtime import _forecast, _forecast_proof, _relief, _verdict
from loadaware.runtime._offline import timed_plan

log = logging.getLogger(__name__)

# Re-reading usage before every eviction would hammer the metrics source in a
# large round; a reading this recent still counts as fresh for the re-check. The
# sources are no finer: metrics-server scrapes every 15 s by default, and so do most
# Prometheus setups; at 30,000 pods a re-read cost a round about a second.
RECHECK_REUSE_SECONDS = 15.0


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


@dataclass(frozen=True, kw_only=True)
class RoundContext:
    kube: evict.Kube
    read_cluster: Callable[[], cluster.ClusterState]
    # Usage for the nodes and pods of a cluster; raises RefusedError when it cannot vouch for it.
    read_usage: Callable[[cluster.ClusterState], metrics.Usage]
    clock: Callable[[], datetime.datetime] = _utc_now
    sleep: Callable[[float], None] = time.sleep
    poll_seconds: float = 1.0
    # Usage read this recently (by `clock`) still counts as fresh for the re-check
    # before an eviction; 0 re-reads before every eviction.
    recheck_reuse_seconds: float = RECHECK_REUSE_SECONDS
    # Raises RefusedError when the view of the cluster is older than its bound (the
    # cluster cache's check); asked before each eviction. None: read fresh each time.
    check_cluster: Callable[[], None] | None = None
    # The forecast for rounds planned ahead (RoundOptions.forecast_horizon); None:
    # the source has none (only Prometheus keeps past weeks).
    read_forecast: _forecast.ForecastReader | None = None


@dataclass(kw_only=True)
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
    # Set by a round planned ahead: what to prove once its horizon has passed.
    proof: _forecast_proof.PendingProof | None = None


EXIT_OK, EXIT_ERROR, EXIT_REFUSED = 0, 1, 3
# ExecutionReport.stopped when the executor found the breaker open (opened by
# another round since this one checked it): nothing was tried.
BREAKER_OPEN = "breaker-open"


def run_round(
    settings: policy.LoadAwarePolicy, context: RoundContext, options: RoundOptions | None = None
) -> report.RoundRecord:
    options = options or RoundOptions()
    dry_run = settings.dry_run if options.dry_run is None else options.dry_run
    record = report.RoundRecord(
        round_id=options.round_id,
        trigger=options.trigger,
        started_at=context.clock(),
        dry_run=dry_run,
        policy_hash=policy.policy_hash(settings),
    )
    try:
        _run(settings, context, options, dry_run, record)
    except SetupError as exc:
        # Refused, with the input error's exit code: nothing was tried, and only the
        # operator can fix it (the message says how).
        record.status, record.reason, record.exit_code = (
            "refused",
            f"{exc.reference}: {exc}",
            exc.exit_code,
        )
    except RefusedError as exc:
        record.status, record.reason, record.exit_code = (
            "refused",
            f"{exc.reference}: {exc}",
            EXIT_REFUSED,
        )
    except ClusterError as exc:
        record.status, record.reason, record.exit_code = (
            "aborted",
            f"{exc.reference}: {exc}",
            EXIT_ERROR,
        )
    record.finished_at = context.clock()
    log.info(
        "round finished",
        extra={"round": record.round_id, "reason": record.reason, "dry_run": dry_run},
    )
    return record


def _run(
    settings: policy.LoadAwarePolicy,
    context: RoundContext,
    options: RoundOptions,
    dry_run: bool,
    record: report.RoundRecord,
) -> None:
    state = evict.StateStore(context.kube, settings, context.clock)
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
    if not dry_run:
        # Refused, not a noop: nothing is done on purpose, the record and the
        # refused-rounds metric say why, and a forgotten suspension shows up as
        # rounds that stop succeeding. A dry run changes nothing, so it goes on,
        # as it does with the breaker open: on-call can still see what would happen.
        suspension = state.suspension()
        if suspension.suspended:
            raise evict.SuspendedError(suspension)
        breaker = state.breaker()
        if breaker.is_open(context.clock()):
            until = evict.rfc3339(breaker.open_until)  # type: ignore[arg-type]
            raise RefusedError(
                f"open until {until} after: {breaker.reason}", reference="breaker-open"
            )
    # Before the budgets are read, so that this round may use what was released.
    # A dry run writes nothing, so it settles nothing either.
    settled = (
        _settle_pending(state, record) if not dry_run else {"released": [], "assumedEvicted": []}
    )
    _phase(options, "planning")
    snapshot = context.read_cluster()
    usage = current = context.read_usage(snapshot)
    # Planning ahead: the plan, its re-checks and landing control see the forecast.
    plan_context = context
    if options.forecast_horizon is not None:
        plan_context, usage = _forecast.plan_ahead(context, snapshot, current, options)
    carried = state.carried_budget(plan.unavailable_by_workload(snapshot))
    record.budgets = _budgets_json(settings, carried)
    record.budgets.update(settled)
    planned_at = context.clock()
    planned = timed_plan(
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
        "sourceNodes": sorted(options.source_nodes) if options.source_nodes is not None else None,
    }
    options.proof = _forecast_proof.PendingProof.for_round(
        options.round_id, snapshot, settings, planned, dry_run=dry_run
    )
    if planned.status == "refused":
        raise RefusedError(
            planned.reason.partition(": ")[2], reference=planned.reason.partition(":")[0]
        )
    record.status, record.reason = planned.status, planned.reason
    if not planned.evictions:
        return
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
    recheck = _Rechecker(settings, plan_context, snapshot, usage, options.stop_requested)
    # A dry run changes nothing, so the plan's landings stand as they are.
    control = (
        None
        if dry_run
        else plan.LandingControl.for_plan(snapshot, usage, settings, planned_at, planned)
    )
    _phase(options, "evicting")
    execution = executor.run(planned, snapshot, recheck, control)
    record.execution = execution
    # Before the relief check, which may open the breaker (and so set `stopped`)
    # on evidence about the moves, not on how far the round got.
    stopped = execution.stopped
    record.status = "executed"
    evicted = [o for o in execution.outcomes if o.result == "evicted"]
    record.reason = (
        f"{len(evicted)} evicted, {execution.count('dry-run')} dry-run, "
        f"{execution.count('refused-pdb')} refused by PDBs, {execution.count('skipped')} skipped"
        + (f"; stopped: {stopped}" if stopped else "")
    )
    if evicted:
        # On the moment's usage: before the peak that is all there is to see.
        _verify_relief(settings, context, options, snapshot, current, execution, executor, record)
    if not dry_run:
        # A dry run moves nothing: there is nothing relieved or left hot to judge.
        _judge(record, planned, execution, stopped)
    suspended = (stopped or "").startswith(f"{evict.SuspendedError.reference}:")
    stale = (stopped or "").startswith(f"{cluster.STALE_CACHE}:")
    # Fail-closed stops keep their own exit code: the round refused to go on.
    if recheck.refused is not None or suspended or stale or stopped == BREAKER_OPEN:
        record.exit_code = EXIT_REFUSED
    elif record.status == "partial" or any(o.result == "failed" for o in execution.outcomes):
        record.exit_code = EXIT_ERROR


def _judge(
    record: report.RoundRecord,
    planned: plan.Plan,
    execution: evict.ExecutionReport,
    stopped: str | None,
) -> None:
    """Partial when the round stopped early or left hot a node it planned to
    relieve (see _verdict): status and reason say so, with the counts (and the
    audit record's verdict, report.round_verdict)."""
    completion = _verdict.judge_round(planned, execution, record.relief, stopped=stopped)
    record.completion = completion
    if completion.partial:
        record.status, record.reason = "partial", report.describe_completion(completion)


def _settle_pending(
    state: evict.StateStore, record: report.RoundRecord
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
            extra={"round": record.round_id, "reason": f"{exc.reference}: {exc}"},
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


class _Rechecker:
    """Just-in-time re-check before each eviction: no stop asked for, the view of the
    cluster within its bound, usage still fresh, source still hot."""

    def __init__(
        self,
        settings: policy.LoadAwarePolicy,
        context: RoundContext,
        snapshot: cluster.ClusterState,
        usage: metrics.Usage,
        stop_requested: Callable[[], str | None] | None = None,
    ) -> None:
        self._stop_requested = stop_requested
        self._settings = settings
        self._context = context
        self._snapshot = snapshot
        self._classes: dict[str, str] = {}
        self._read_at: datetime.datetime | None = None
        self.refused: RefusedError | None = None
        self._usage = usage

    def __call__(self, eviction: plan.Eviction) -> str | None:
        stop = self._stop_requested() if self._stop_requested is not None else None
        if stop is not None:
            return f"stop: {stop}"
        if self._context.check_cluster is not None:
            try:
                self._context.check_cluster()
            except RefusedError as exc:
                # Fail closed: nothing is evicted on a view of the cluster too old.
                self.refused = exc
                return f"stop: {exc.reference}: {exc}"
        now = self._context.clock()
        if (
            self._read_at is None
            or (now - self._read_at).total_seconds() >= self._context.recheck_reuse_seconds
        ):
            try:
                self._usage = self._context.read_usage(self._snapshot)
            except RefusedError as exc:
                # Fail closed: the source can no longer be vouched for.
                self.refused = exc
                return f"stop: {exc.reference}: {exc}"
            table = plan.classify_nodes(
                self._snapshot,
                self._usage,
                self._settings.node_pools,
                {},
                allocatable_names=plan.allocatable_names(self._settings),
            )
            self._classes = dict(zip(table.names, table.classes, strict=True))
            self._read_at = now
        # Only hotspot relief needs a hot source; a deschedule strategy's or
        # consolidation's pod leaves whatever its node's load.
        if eviction.reason == "hotspot" and self._classes.get(eviction.node) != "hot":
            return plan.SOURCE_NOT_HOT
        return None


def _verify_relief(
    settings: policy.LoadAwarePolicy,
    context: RoundContext,
    options: RoundOptions,
    snapshot: cluster.ClusterState,
    usage: metrics.Usage,
    execution: evict.ExecutionReport,
    executor: evict.Executor,
    record: report.RoundRecord,
) -> None:
    """Wait for evidence and judge every node the round changed (see _relief)."""
    assert record.plan is not None
    _phase(options, "verifying")
    check = _relief.ReliefCheck(
        settings=settings,
        kube=context.kube,
        read_usage=context.read_usage,
        clock=context.clock,
        sleep=context.sleep,
        stop_requested=options.stop_requested or (lambda: None),
    )
    breaker = _relief.verify_relief(check, snapshot, record.plan, execution, usage, record)
    if breaker is not None:
        executor.open_breaker(breaker, execution)


def _phase(options: RoundOptions, phase: str) -> None:
    if options.on_phase is not None:
        options.on_phase(phase)


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
