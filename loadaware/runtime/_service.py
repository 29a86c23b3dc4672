"""The service `loadaware serve` runs: its triggers, its rounds one at a time, and
their record.

Rounds are started by schedules (_schedule) and the webhook, and only through
Service.try_start_round, which holds the single-flight lock: never two rounds
at once, in this process; across replicas the leader Lease (_leader) sees to
it. A trigger arriving during a round starts nothing and is counted
(loadaware_skipped_triggers_total). Only the leader starts rounds, and a
running round stops evicting as soon as leadership is lost or SIGTERM arrives
(the eviction in flight finishes, soft taints are removed by the executor on
its way out), after which the lease is released.

After each round the breaker and the suspend switch are read again, for the
metrics; what the service answers on /readyz, /status and /metrics is
_service_status's, its HTTP side _service_http's, and its wiring from the
policy _service_wiring's.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from loadaware import cluster, evict, fidelity, plan, policy
from loadaware import round as rounds
from loadaware.errors import LoadawareError
from loadaware.runtime import (
    _forecast_proofs,
    _leader,
    _live,
    _schedule,
    _service_metrics,
    _service_status,
    _webhook,
)

log = logging.getLogger(__name__)

RECENT_ROUNDS = 20

RoundRunner = Callable[
    [policy.LoadAwarePolicy, rounds.RoundContext, rounds.RoundOptions], rounds.RoundResult
]


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


@dataclasses.dataclass(kw_only=True)
class _Running:
    round_id: str
    trigger: str
    label: str
    started_at: datetime.datetime
    thread: threading.Thread
    phase: str = "starting"  # planning, evicting, verifying (RoundOptions.on_phase)


class Service:
    """Triggers, the single-flight lock, recent rounds and the HTTP endpoints' answers."""

    def __init__(
        self,
        settings: policy.LoadAwarePolicy,
        context: rounds.RoundContext,
        *,
        elector: _leader.Elector | None = None,
        read_secret: _webhook.SecretReader | None = None,
        ready_checks: Mapping[str, Callable[[], None]] | None = None,
        clock: Callable[[], datetime.datetime] = utc_now,
        monotonic: Callable[[], float] = time.monotonic,
        run_round: RoundRunner = rounds.run_round,
        cache: cluster.ClusterCache | None = None,
        observer: fidelity.BindingObserver | None = None,
    ) -> None:
        self.settings = settings
        self._context = context
        # One watched cache for every round: started with the service, it is what
        # /readyz waits for and what rounds plan from.
        self.cache = cache
        # Compares the cache's bindings with the model (metrics, /status): on every
        # replica, leader or not, since it only reads.
        self.observer = observer
        self.elector: _leader.Elector = elector or _leader.AlwaysLeader()
        self._clock = clock
        self._run_round = run_round
        self._status = _service_status.ServiceStatus(
            self, ready_checks=ready_checks or {}, clock=clock, monotonic=monotonic
        )
        self._lock = threading.Lock()  # guards _running, _recent, _stopping
        self._flight = threading.Lock()  # held for the whole of a round
        self._idle = threading.Condition(self._lock)
        self._running: _Running | None = None
        self._recent: collections.deque[dict[str, Any]] = collections.deque(maxlen=RECENT_ROUNDS)
        self._stopping = threading.Event()
        self._cleaner: threading.Thread | None = None
        self._rounds_started = 0
        self.schedules = _schedule.Schedules(settings.schedules, self._on_schedule, clock=clock)
        # Rounds planned ahead are proved once their horizon has passed.
        self.proofs = _forecast_proofs.service_proofs(
            settings, clock=clock, read_secret=read_secret
        )
        self.webhook = _webhook.Webhook(
            settings.serve.webhook,
            start_round=lambda nodes, group: self.try_start_round(
                "alertmanager", source_nodes=nodes, label=group
            ),
            is_leader=self.elector.is_leader,
            clock=clock,
            monotonic=monotonic,
            read_secret=read_secret,
        )
        for result in _service_metrics.WEBHOOK_RESULTS:
            _service_metrics.WEBHOOK_NOTIFICATIONS.labels(result)

    # -- triggers -----------------------------------------------------------------

    def try_start_round(
        self,
        trigger: str,
        *,
        source_nodes: frozenset[str] | None = None,
        dry_run: bool | None = None,
        pools: list[str] | None = None,
        label: str = "",
        forecast_horizon: datetime.timedelta | None = None,
    ) -> str:
        """Start a round in the background: "started", or why not ("round-in-progress",
        "not-leader", "shutting-down"). Never blocks for a round's length."""
        outcome = self._start(trigger, source_nodes, dry_run, pools, label, forecast_horizon)
        if outcome != "started":
            _service_metrics.SKIPPED_TRIGGERS.labels(trigger, outcome).inc()
            log.info("trigger starts no round", extra={"reason": f"{trigger}: {outcome}"})
        return outcome

    def _start(
        self,
        trigger: str,
        source_nodes: frozenset[str] | None,
        dry_run: bool | None,
        pools: list[str] | None,
        label: str,
        forecast_horizon: datetime.timedelta | None = None,
    ) -> str:
        with self._lock:
            if self._stopping.is_set():
                return "shutting-down"
            if not self.elector.is_leader():
                return "not-leader"
            if not self._flight.acquire(blocking=False):
                return "round-in-progress"
            options = rounds.RoundOptions(
                trigger=trigger,
                dry_run=dry_run,
                source_nodes=source_nodes,
                stop_requested=self._stop_reason,
                on_phase=self._set_phase,
                forecast_horizon=forecast_horizon,
            )
            thread = threading.Thread(
                target=self._round_thread,
                args=(options, pools, label),
                name=f"round-{options.round_id}",
                daemon=True,
            )
            self._running = _Running(
                round_id=options.round_id,
                trigger=trigger,
                label=label,
                started_at=self._clock(),
                thread=thread,
            )
            self._rounds_started += 1
            try:
                thread.start()
            except BaseException:
                self._running = None
                self._flight.release()
                raise
        return "started"

    def _set_phase(self, phase: str) -> None:
        with self._lock:
            if self._running is not None:
                self._running.phase = phase

    def _stop_reason(self) -> str | None:
        if self._stopping.is_set():
            return "shutting-down"
        if not self.elector.is_leader():
            return "lost-leadership"
        return None

    def _on_schedule(self, schedule: policy.Schedule) -> None:
        outcome = self.try_start_round(
            "schedule",
            dry_run=schedule.dry_run,
            pools=schedule.pools,
            label=schedule.name,
            forecast_horizon=schedule.forecast.horizon if schedule.forecast else None,
        )
        log.info("schedule fired", extra={"reason": f"{schedule.name}: {outcome}"})
        _service_status.publish_next_runs(self.schedules)

    def _round_thread(
        self, options: rounds.RoundOptions, pools: list[str] | None, label: str
    ) -> None:
        summary: dict[str, Any]
        try:
            if pools:
                options = dataclasses.replace(options, source_nodes=self._pool_nodes(pools))
            result = self._run_round(self.settings, self._context, options)
            _service_metrics.observe_round(result)
            if result.proof is not None and self.proofs is not None:
                self.proofs.add(result.proof)
            summary = _summary(result.record, label)
            _live.log_round_result(result.record, label)
        except Exception as exc:
            # The service outlives a broken round: log it, count it, go on.
            log.exception("round failed", extra={"round": options.round_id})
            _service_metrics.ROUNDS.labels(options.trigger, "error").inc()
            _service_metrics.LAST_ROUND.labels("error").set(self._clock().timestamp())
            summary = {
                "round": options.round_id,
                "trigger": options.trigger,
                "label": label,
                "status": "error",
                "reason": (
                    exc.summary()
                    if isinstance(exc, LoadawareError)
                    else f"{type(exc).__name__}: {exc}"
                )[:300],
                "exitCode": 1,
            }
        finally:
            self.refresh_breaker()
            self.refresh_suspension()
        with self._lock:
            self._recent.appendleft(summary)
            self._running = None
            self._flight.release()
            self._idle.notify_all()

    def _pool_nodes(self, pools: list[str]) -> frozenset[str]:
        wanted = set(pools)
        state = self._context.read_cluster()
        return frozenset(
            node.name
            for node in state.nodes
            if (pool := plan.pool_of(node, self.settings.node_pools)) is not None
            and pool.name in wanted
        )

    def state_store(self) -> evict.StateStore:
        return evict.StateStore(self._context.kube, self.settings, self._clock)

    def refresh_breaker(self) -> dict[str, Any]:
        try:
            breaker = self.state_store().breaker()
        except LoadawareError as exc:
            return {"error": exc.summary()[:300]}
        except Exception as exc:
            return {"error": type(exc).__name__}
        now = self._clock()
        _service_metrics.observe_state(breaker, now)
        return {
            "open": breaker.is_open(now),
            "openUntil": _service_status.rfc3339(breaker.open_until),
            "reason": breaker.reason or None,
        }

    def refresh_suspension(self) -> dict[str, Any]:
        try:
            suspension = self.state_store().suspension()
        except LoadawareError as exc:
            return {"error": exc.summary()[:300]}
        except Exception as exc:
            return {"error": type(exc).__name__}
        _service_metrics.observe_suspension(suspension)
        return {
            "suspended": suspension.suspended,
            "value": suspension.value,
            "changedBy": suspension.changed_by or None,
            "changedAt": suspension.changed_at or None,
            "reason": suspension.reason or None,
        }

    # -- waiting (shutdown, tests) ------------------------------------------------

    def is_running(self) -> bool:
        with self._lock:
            return self._running is not None

    def wait_idle(self, timeout: float | None = None) -> bool:
        """True once no round runs (False if `timeout` seconds pass first)."""
        # Real time, not the injected clock: this bounds how long a thread blocks.
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while self._running is not None:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._idle.wait(left)
        return True

    @property
    def rounds_started(self) -> int:
        with self._lock:
            return self._rounds_started

    def recent_rounds(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._recent)

    # -- lifecycle ----------------------------------------------------------------

    def start_background(self) -> None:
        """Leader election and schedules; the HTTP server is started by serve()."""
        if self.cache is not None:
            self.cache.start()
        if self.observer is not None:
            self.observer.start()
        self.elector.start()
        self.schedules.start()
        _service_status.publish_next_runs(self.schedules)
        # Say at start what is wrong with the setup, without waiting for a probe,
        # and without holding up the start for a slow metrics source.
        threading.Thread(target=self.readiness, name="startup-checks", daemon=True).start()
        if self.settings.steering.soft_taint and not self.settings.dry_run:
            self._cleaner = threading.Thread(
                target=self._remove_leftover_taints, name="leftover-taints", daemon=True
            )
            self._cleaner.start()
        for name, at in self.schedules.next_runs().items():
            log.info(
                "schedule next run",
                extra={"reason": f"{name}: {_service_status.rfc3339(at) or 'never'}"},
            )

    def _remove_leftover_taints(self) -> None:
        """Once leading, remove the steering taints a killed process left, without
        waiting for the first round (which would do it too)."""
        while not self._stopping.is_set():
            if self.elector.is_leader():
                with self._flight:
                    try:
                        cleaned = evict.remove_leftover_taints(self._context.kube)
                    except LoadawareError as exc:
                        log.warning(
                            "could not remove leftover hotspot taints", extra={"reason": str(exc)}
                        )
                        return
                if cleaned:
                    log.warning(
                        "removed leftover hotspot taints", extra={"node": ",".join(cleaned)}
                    )
                return
            self._stopping.wait(1.0)

    def stop(self, round_timeout: float | None = None) -> None:
        """No new round; the running one stops evicting and finishes; the lease is released."""
        with self._lock:
            self._stopping.set()
        self.schedules.shutdown()
        if self.proofs is not None:
            self.proofs.cancel()
        if self._cleaner is not None:
            self._cleaner.join(timeout=round_timeout)
        if not self.wait_idle(round_timeout):
            log.error("round still running at shutdown; the lease expires by itself")
        self.elector.stop()
        if self.observer is not None:
            self.observer.stop()
        if self.cache is not None:
            self.cache.stop()
        _service_metrics.LEADER.set(0)

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    # -- answers (_service_status) ----------------------------------------------

    def metrics_page(self) -> tuple[bytes, str]:
        return self._status.metrics_page()

    def readiness(
        self, wait: float = _service_status.READY_WAIT_SECONDS
    ) -> tuple[bool, dict[str, str]]:
        return self._status.readiness(wait)

    def status(self) -> dict[str, Any]:
        return self._status.status()

    def round_activity(self) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
        """The running round and the recent ones as /status shows them, read together."""
        with self._lock:
            running = self._running
            recent = list(self._recent)
            if running is None:
                return None, recent
            return {
                "round": running.round_id,
                "trigger": running.trigger,
                "label": running.label,
                "startedAt": _service_status.rfc3339(running.started_at),
                "phase": running.phase,
            }, recent


def _summary(record: rounds.RoundRecord, label: str) -> dict[str, Any]:
    execution = record.execution
    return {
        "round": record.round_id,
        "trigger": record.trigger,
        "label": label,
        "status": record.status,
        "reason": record.reason,
        "exitCode": record.exit_code,
        "dryRun": record.dry_run,
        "startedAt": _service_status.rfc3339(record.started_at),
        "finishedAt": _service_status.rfc3339(record.finished_at),
        "sourceNodes": record.inputs.get("sourceNodes"),
        "evicted": execution.count("evicted") if execution else 0,
        "planned": len(record.plan.evictions) if record.plan else 0,
        "verdict": rounds.round_verdict(record) or None,
        "relief": [
            {"role": r.role, **rounds.relief_to_json(r)} for r in rounds.relief_rows(record)
        ],
        "completion": rounds.completion_to_json(record.completion),
    }
