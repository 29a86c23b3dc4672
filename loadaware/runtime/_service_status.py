"""What the service answers about itself: /readyz, /status and /metrics.

    GET  /readyz   the cluster cache has listed every kind and is within its
                   bound, the Kubernetes API and the metrics source answer, the
                   state namespace and ConfigMap are usable, lease calls succeed;
                   answered at once from the checks' last answers (each runs on a
                   thread of its own), never waiting for the cache
    GET  /status   JSON: running and recent rounds, next schedule fire times,
                   breaker, suspend switch and budget state, leadership, the
                   cluster cache (per kind: age, events, relists), the
                   scheduler model's agreement with the cluster's bindings
                   (per schedulerName, the latest disagreements)
    GET  /metrics  prometheus-client exposition (see _service_metrics)

What only the operator can fix (the state or lease namespace missing, RBAC
denying a call) is found at start and said once, with the fix: the readiness
check that failed is logged when its answer changes, /readyz answers 503
naming it, and /status shows a lease failure under `leader`. Each is checked
again until it passes, so creating the namespace makes the replica ready
without a restart.

The answers read the service through ServiceView, so that this module needs
nothing from the service's own (_service imports this one).
"""

from __future__ import annotations

import datetime
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from loadaware import cluster, evict, fidelity, policy
from loadaware.errors import LoadawareError
from loadaware.runtime import _leader, _schedule, _scheduler_check, _service_metrics, _webhook

log = logging.getLogger(__name__)

READY_CACHE_SECONDS = 5.0  # a check is run again at most this often
# /readyz answers within this, whatever the checks do (a probe times out after 1 s
# by default): a check still running keeps its last answer, a first one is pending.
READY_WAIT_SECONDS = 0.5
PENDING = "pending: no answer yet"


def rfc3339(moment: datetime.datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")


class ServiceView(Protocol):
    """What the answers read of the service (loadaware.runtime.Service)."""

    settings: policy.LoadAwarePolicy
    cache: cluster.ClusterCache | None
    observer: fidelity.BindingObserver | None
    elector: _leader.Elector
    schedules: _schedule.Schedules
    webhook: _webhook.Webhook

    @property
    def stopping(self) -> bool: ...

    @property
    def rounds_started(self) -> int: ...

    def round_activity(self) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]: ...

    def state_store(self) -> evict.StateStore: ...

    def refresh_breaker(self) -> dict[str, Any]: ...

    def refresh_suspension(self) -> dict[str, Any]: ...


def publish_next_runs(schedules: _schedule.Schedules) -> None:
    for name, at in schedules.next_runs().items():
        gauge = _service_metrics.SCHEDULE_NEXT_RUN.labels(name)
        gauge.set(at.timestamp() if at is not None else float("nan"))


class ServiceStatus:
    """The service's answers to /readyz, /status and /metrics, and the readiness
    checks' last answers."""

    def __init__(
        self,
        service: ServiceView,
        *,
        ready_checks: Mapping[str, Callable[[], None]],
        clock: Callable[[], datetime.datetime],
        monotonic: Callable[[], float],
    ) -> None:
        self._service = service
        self._clock = clock
        self._monotonic = monotonic
        self._ready_checks = dict(ready_checks)
        self._ready_answers: dict[str, str] = {}  # each check's last answer
        self._ready_started: dict[str, float] = {}  # when each check last started
        self._ready_running: dict[str, threading.Event] = {}  # set when it answers
        self._ready_said: dict[str, str] = {}  # each check's answer as last logged
        self._ready_lock = threading.Lock()

    def metrics_page(self) -> tuple[bytes, str]:
        service = self._service
        _service_metrics.LEADER.set(1 if service.elector.is_leader() else 0)
        publish_next_runs(service.schedules)
        if service.cache is not None:
            _service_metrics.observe_cache_ages(service.cache.ages())
        if service.observer is not None:
            _service_metrics.observe_agreement(
                service.observer.snapshot(),
                _scheduler_check.modelled_profiles(service.settings).names,
            )
        # The switch is flipped by people between rounds; a scrape must show it at once.
        service.refresh_suspension()
        return _service_metrics.render_metrics()

    def readiness(self, wait: float = READY_WAIT_SECONDS) -> tuple[bool, dict[str, str]]:
        """Whether the replica is ready, and each check's answer, within `wait` seconds
        whatever the checks do. Each check runs on a thread of its own, started again
        at most every READY_CACHE_SECONDS and never while it still runs; until its
        first answer it reads as pending (not ready)."""
        now = self._monotonic()
        with self._ready_lock:
            for name, check in self._ready_checks.items():
                started = self._ready_started.get(name)
                if name in self._ready_running or (
                    started is not None and now - started < READY_CACHE_SECONDS
                ):
                    continue
                self._ready_started[name] = now
                done = self._ready_running[name] = threading.Event()
                threading.Thread(
                    target=self._run_check,
                    args=(name, check, done),
                    name=f"ready-{name}",
                    daemon=True,
                ).start()
            running = list(self._ready_running.values())
        # Real time, not the injected clock: this bounds how long a probe waits.
        deadline = time.monotonic() + wait
        for done in running:
            done.wait(max(0.0, deadline - time.monotonic()))
        with self._ready_lock:
            results = {name: self._ready_answers.get(name, PENDING) for name in self._ready_checks}
        leader = self._service.elector.status()
        if leader.get("enabled"):
            # The elector logs its own failures when they change.
            results["leaderElection"] = leader.get("error") or "ok"
        stopping = self._service.stopping
        ready = all(v == "ok" for v in results.values()) and not stopping
        if stopping:
            results["service"] = "shutting down"
        return ready, results

    def _run_check(self, name: str, check: Callable[[], None], done: threading.Event) -> None:
        answer = "interrupted"
        try:
            check()
            answer = "ok"
        except LoadawareError as exc:
            answer = exc.summary()[:300]
        except Exception as exc:
            answer = type(exc).__name__
        finally:
            with self._ready_lock:
                self._ready_answers[name] = answer
                self._ready_running.pop(name, None)
            done.set()
        self._say_changes({name: answer})

    def _say_changes(self, results: Mapping[str, str]) -> None:
        """Log a check's answer when it changes: a cause that lasts is said once."""
        with self._ready_lock:
            changed = {k: v for k, v in results.items() if self._ready_said.get(k, "ok") != v}
            self._ready_said.update(changed)
        for name, answer in sorted(changed.items()):
            if answer == "ok":
                log.info("readiness check passes again", extra={"check": name, "reason": name})
            else:
                log.warning("readiness check failed", extra={"reason": f"{name}: {answer}"})

    def status(self) -> dict[str, Any]:
        service = self._service
        running, recent = service.round_activity()
        budgets: dict[str, Any] = {}
        try:
            carried = service.state_store().carried_budget()
            budgets["windowLeft"] = carried.window_total_left
            budgets["coolingWorkloads"] = len(carried.cooling_workloads)
        except Exception as exc:
            budgets["error"] = getattr(exc, "reference", type(exc).__name__)
        limits = service.settings.limits
        budgets["round"] = {
            "maxNoOfPodsToEvictTotal": limits.max_no_of_pods_to_evict_total,
            "maxNoOfPodsToEvictPerNode": limits.max_no_of_pods_to_evict_per_node,
            "maxNoOfPodsToEvictPerNamespace": limits.max_no_of_pods_to_evict_per_namespace,
            "maxNoOfPodsToEvictPerWorkload": limits.max_no_of_pods_to_evict_per_workload,
        }
        return {
            "now": rfc3339(self._clock()),
            "stopping": service.stopping,
            "leader": service.elector.status(),
            "running": running,
            "rounds": recent,
            "roundsStarted": service.rounds_started,
            "schedules": service.schedules.describe(),
            "breaker": service.refresh_breaker(),
            "suspend": service.refresh_suspension(),
            "budgets": budgets,
            "webhook": service.webhook.state(),
            "clusterCache": self._cache_status(),
            "schedulerModel": self._model_status(),
        }

    def _model_status(self) -> dict[str, Any] | None:
        """The model's agreement with the cluster's recent bindings; None without an
        observer."""
        observer = self._service.observer
        if observer is None:
            return None
        names = _scheduler_check.modelled_profiles(self._service.settings).names
        return {
            **_scheduler_check.agreement_document(observer.snapshot(), names),
            "observer": observer.stats(),
        }

    def _cache_status(self) -> dict[str, Any] | None:
        """Per kind: age, events applied, relists by cause; None without a cache."""
        cache = self._service.cache
        if cache is None:
            return None
        ages = cache.ages()
        kinds = cache.stats()
        for name, stats in kinds.items():
            age = ages.get(name)
            stats["ageSeconds"] = None if age is None else round(age, 1)
        return {
            "synced": cache.synced,
            "maxAgeSeconds": self._service.settings.cluster_cache.max_age.total_seconds(),
            "kinds": kinds,
        }
