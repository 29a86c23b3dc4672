"""`loadaware serve`: the long-running service.

One process serves, on one HTTP port (stdlib ThreadingHTTPServer: five small
routes need no framework, and no extra dependency sits in front of the
webhook's authentication):

    POST /alertmanager   the Alertmanager webhook (see _webhook)
    GET  /metrics        prometheus-client exposition (see _service_metrics)
    GET  /healthz        the process is serving
    GET  /readyz         the cluster cache has listed every kind and is within its
                         bound, the Kubernetes API and the metrics source answer, the
                         state namespace and ConfigMap are usable, lease calls succeed;
                         answered at once from the checks' last answers (each runs
                         on a thread of its own), never waiting for the cache
    GET  /status         JSON: running and recent rounds, next schedule fire
                         times, breaker, suspend switch and budget state, leadership,
                         the cluster cache (per kind: age, events, relists)

Rounds are started by schedules (_schedule) and the webhook, and only through
Service.try_start_round, which holds the single-flight lock: never two rounds
at once, in this process; across replicas the leader Lease (_leader) sees to
it. A trigger arriving during a round starts nothing and is counted
(loadaware_skipped_triggers_total). Only the leader starts rounds, and a
running round stops evicting as soon as leadership is lost or SIGTERM arrives
(the eviction in flight finishes, soft taints are removed by the executor on
its way out), after which the lease is released.

What only the operator can fix (the state or lease namespace missing, RBAC
denying a call) is found at start and said once, with the fix: the readiness
check that failed is logged when its answer changes, /readyz answers 503
naming it, and /status shows a lease failure under `leader`. Each is checked
again until it passes, so creating the namespace makes the replica ready
without a restart.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import http.server
import json
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from loadaware import cluster, evict, kube, plan, policy
from loadaware import round as rounds
from loadaware.errors import LoadawareError, PolicyError
from loadaware.runtime import (
    _forecast_proofs,
    _leader,
    _live,
    _schedule,
    _service_metrics,
    _webhook,
)

if TYPE_CHECKING:
    import kubernetes.client

log = logging.getLogger(__name__)

RECENT_ROUNDS = 20
READY_CACHE_SECONDS = 5.0  # a check is run again at most this often
# /readyz answers within this, whatever the checks do (a probe times out after 1 s
# by default): a check still running keeps its last answer, a first one is pending.
READY_WAIT_SECONDS = 0.5
PENDING = "pending: no answer yet"
# Request bodies other than the webhook's are not expected; any body we did not
# read is drained up to this much so the client sees our answer rather than a
# reset connection, and beyond it the connection is closed.
DRAIN_MAX_BYTES = 16 * 1024 * 1024
REQUEST_TIMEOUT_SECONDS = 30.0

RoundRunner = Callable[
    [policy.LoadAwarePolicy, rounds.RoundContext, rounds.RoundOptions], rounds.RoundResult
]


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def _rfc3339(moment: datetime.datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")


def parse_listen(address: str) -> tuple[str, int]:
    """`host:port`, `:port` or `[v6]:port` -> (host, port); port 0 picks a free one."""
    host, sep, port_text = address.rpartition(":")
    if not sep or not port_text.isdigit() or int(port_text) > 65535:
        raise PolicyError(
            f"listen address {address!r} is not host:port",
            problems=[f"serve.listen: {address!r}: expected host:port, e.g. 0.0.0.0:8080"],
        )
    host = host.removeprefix("[").removesuffix("]") or "0.0.0.0"
    return host, int(port_text)


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
        clock: Callable[[], datetime.datetime] = _utc_now,
        monotonic: Callable[[], float] = time.monotonic,
        run_round: RoundRunner = rounds.run_round,
        cache: cluster.ClusterCache | None = None,
    ) -> None:
        self.settings = settings
        self._context = context
        # One watched cache for every round: started with the service, it is what
        # /readyz waits for and what rounds plan from.
        self.cache = cache
        self.elector: _leader.Elector = elector or _leader.AlwaysLeader()
        self._clock = clock
        self._monotonic = monotonic
        self._run_round = run_round
        self._ready_checks = dict(ready_checks or {})
        self._ready_answers: dict[str, str] = {}  # each check's last answer
        self._ready_started: dict[str, float] = {}  # when each check last started
        self._ready_running: dict[str, threading.Event] = {}  # set when it answers
        self._ready_said: dict[str, str] = {}  # each check's answer as last logged
        self._ready_lock = threading.Lock()
        self._lock = threading.Lock()  # guards _running, _recent, _stopping
        self._flight = threading.Lock()  # held for the whole of a round
        self._idle = threading.Condition(self._lock)
        self._running: _Running | None = None
        self._recent: collections.deque[dict[str, Any]] = collections.deque(maxlen=RECENT_ROUNDS)
        self._stopping = threading.Event()
        self._cleaner: threading.Thread | None = None
        self._rounds_started = 0
        pool_names = {p.name for p in settings.node_pools}
        unknown = [
            f"schedules[{s.name}].pools: unknown pool {p!r}"
            for s in settings.schedules
            for p in s.pools or []
            if p not in pool_names
        ]
        if unknown:
            raise PolicyError("a schedule names a pool the policy does not have", problems=unknown)
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
        self._publish_next_runs()

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
            self._refresh_breaker()
            self._refresh_suspension()
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

    def _refresh_breaker(self) -> dict[str, Any]:
        try:
            store = evict.StateStore(self._context.kube, self.settings, self._clock)
            breaker = store.breaker()
        except LoadawareError as exc:
            return {"error": exc.summary()[:300]}
        except Exception as exc:
            return {"error": type(exc).__name__}
        now = self._clock()
        _service_metrics.observe_state(breaker, now)
        return {
            "open": breaker.is_open(now),
            "openUntil": _rfc3339(breaker.open_until),
            "reason": breaker.reason or None,
        }

    def _refresh_suspension(self) -> dict[str, Any]:
        try:
            store = evict.StateStore(self._context.kube, self.settings, self._clock)
            suspension = store.suspension()
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
        self.elector.start()
        self.schedules.start()
        self._publish_next_runs()
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
                extra={"reason": f"{name}: {_rfc3339(at) or 'never'}"},
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
        if self.cache is not None:
            self.cache.stop()
        _service_metrics.LEADER.set(0)

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    # -- answers ------------------------------------------------------------------

    def _publish_next_runs(self) -> None:
        for name, at in self.schedules.next_runs().items():
            gauge = _service_metrics.SCHEDULE_NEXT_RUN.labels(name)
            gauge.set(at.timestamp() if at is not None else float("nan"))

    def metrics_page(self) -> tuple[bytes, str]:
        _service_metrics.LEADER.set(1 if self.elector.is_leader() else 0)
        self._publish_next_runs()
        if self.cache is not None:
            _service_metrics.observe_cache_ages(self.cache.ages())
        # The switch is flipped by people between rounds; a scrape must show it at once.
        self._refresh_suspension()
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
        leader = self.elector.status()
        if leader.get("enabled"):
            # The elector logs its own failures when they change.
            results["leaderElection"] = leader.get("error") or "ok"
        ready = all(v == "ok" for v in results.values()) and not self.stopping
        if self.stopping:
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
        with self._lock:
            running = self._running
            recent = list(self._recent)
        budgets: dict[str, Any] = {}
        try:
            carried = evict.StateStore(
                self._context.kube, self.settings, self._clock
            ).carried_budget()
            budgets["windowLeft"] = carried.window_total_left
            budgets["coolingWorkloads"] = len(carried.cooling_workloads)
        except Exception as exc:
            budgets["error"] = getattr(exc, "reference", type(exc).__name__)
        limits = self.settings.limits
        budgets["round"] = {
            "maxNoOfPodsToEvictTotal": limits.max_no_of_pods_to_evict_total,
            "maxNoOfPodsToEvictPerNode": limits.max_no_of_pods_to_evict_per_node,
            "maxNoOfPodsToEvictPerNamespace": limits.max_no_of_pods_to_evict_per_namespace,
            "maxNoOfPodsToEvictPerWorkload": limits.max_no_of_pods_to_evict_per_workload,
        }
        return {
            "now": _rfc3339(self._clock()),
            "stopping": self.stopping,
            "leader": self.elector.status(),
            "running": None
            if running is None
            else {
                "round": running.round_id,
                "trigger": running.trigger,
                "label": running.label,
                "startedAt": _rfc3339(running.started_at),
                "phase": running.phase,
            },
            "rounds": recent,
            "roundsStarted": self.rounds_started,
            "schedules": self.schedules.describe(),
            "breaker": self._refresh_breaker(),
            "suspend": self._refresh_suspension(),
            "budgets": budgets,
            "webhook": self.webhook.state(),
            "clusterCache": self._cache_status(),
        }

    def _cache_status(self) -> dict[str, Any] | None:
        """Per kind: age, events applied, relists by cause; None without a cache."""
        if self.cache is None:
            return None
        ages = self.cache.ages()
        kinds = self.cache.stats()
        for name, stats in kinds.items():
            age = ages.get(name)
            stats["ageSeconds"] = None if age is None else round(age, 1)
        return {
            "synced": self.cache.synced,
            "maxAgeSeconds": self.settings.cluster_cache.max_age.total_seconds(),
            "kinds": kinds,
        }


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
        "startedAt": _rfc3339(record.started_at),
        "finishedAt": _rfc3339(record.finished_at),
        "sourceNodes": record.inputs.get("sourceNodes"),
        "evicted": execution.count("evicted") if execution else 0,
        "planned": len(record.plan.evictions) if record.plan else 0,
        "verdict": rounds.round_verdict(record) or None,
        "relief": [
            {"role": r.role, **rounds.relief_to_json(r)} for r in rounds.relief_rows(record)
        ],
        "completion": rounds.completion_to_json(record.completion),
    }


# -- HTTP --------------------------------------------------------------------------


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    timeout = REQUEST_TIMEOUT_SECONDS
    server_version = "loadaware"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        # The request line only, at debug level; never headers or bodies.
        log.debug("http request", extra={"reason": format % args})

    def do_GET(self) -> None:
        service = self.server.service
        path = self.path.split("?", 1)[0]
        if path == "/metrics":
            body, content_type = service.metrics_page()
            self._send(200, body, content_type)
        elif path == "/healthz":
            self._send(200, b"ok\n", "text/plain; charset=utf-8")
        elif path == "/readyz":
            ready, checks = service.readiness()
            self._json(200 if ready else 503, {"ready": ready, "checks": checks})
        elif path == "/status":
            self._json(200, service.status())
        elif path == "/alertmanager":
            self._json(405, {"result": "rejected", "detail": "use POST"}, {"Allow": "POST"})
        else:
            self._json(404, {"detail": "not found"})

    def do_POST(self) -> None:
        if self.path.split("?", 1)[0] != "/alertmanager":
            self._finish_unread()
            self._json(404, {"detail": "not found"})
            return
        reply = self._alertmanager()
        if reply.result:
            _service_metrics.WEBHOOK_NOTIFICATIONS.labels(reply.result).inc()
        self._json(reply.status, reply.body(), reply.headers)

    def _alertmanager(self) -> _webhook.Reply:
        webhook = self.server.service.webhook
        denied = webhook.authenticate(self.headers.get("Authorization"))
        if denied is not None:
            self._finish_unread()
            return denied
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/json":
            self._finish_unread()
            return _webhook.Reply(
                status=415, result="rejected", detail="Content-Type must be application/json"
            )
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            return _webhook.Reply(status=411, result="rejected", detail="Content-Length required")
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            return _webhook.Reply(status=411, result="rejected", detail="Content-Length required")
        if not length_text.strip().isdigit():
            self.close_connection = True
            return _webhook.Reply(status=400, result="rejected", detail="bad Content-Length")
        length = int(length_text)
        if length > webhook.max_body_bytes:
            self._finish_unread()
            return _webhook.Reply(
                status=413,
                result="rejected",
                detail=f"body larger than {webhook.max_body_bytes} bytes",
            )
        body = self.rfile.read(length)
        if len(body) != length:
            self.close_connection = True
            return _webhook.Reply(
                status=400, result="rejected", detail="body shorter than its length"
            )
        return webhook.handle(body)

    def _finish_unread(self) -> None:
        """Drain a body we will not read, so that the client gets the answer."""
        length_text = self.headers.get("Content-Length") or ""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            return
        if not length_text.strip().isdigit():
            return
        left = int(length_text)
        if left > DRAIN_MAX_BYTES:
            self.close_connection = True
            return
        while left > 0:
            chunk = self.rfile.read(min(left, 65536))
            if not chunk:
                break
            left -= len(chunk)

    def _json(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        data = (json.dumps(body, indent=2, default=str) + "\n").encode()
        self._send(status, data, "application/json", headers)

    def _send(
        self,
        status: int,
        data: bytes,
        content_type: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog of 5 resets connections when Alertmanager
    # (or several) sends a burst of notifications at once.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], service: Service) -> None:
        self.service = service
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)


class HttpServer:
    """The service's HTTP endpoints on their own thread (use as a context manager)."""

    def __init__(self, service: Service, listen: str) -> None:
        self._server = _Server(parse_listen(listen), service)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.1,), name="http", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = self._server.server_address[0]
        host = "127.0.0.1" if host in ("0.0.0.0", "") else host
        return f"http://{host}:{self.port}"

    def start(self) -> HttpServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> HttpServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(
    service: Service,
    listen: str,
    stop: threading.Event,
    *,
    ready: Callable[[HttpServer], None] | None = None,
) -> None:
    """Run until `stop` is set (the CLI sets it on SIGTERM or SIGINT), then shut down
    in order: triggers off, the running round finishes, lease released, HTTP closed."""
    with HttpServer(service, listen) as http_server:
        log.info("listening", extra={"address": http_server.url})
        service.start_background()
        if ready is not None:
            ready(http_server)
        stop.wait()
        log.info("shutting down: no new rounds; waiting for the running one")
        service.stop()


def build_service(
    settings: policy.LoadAwarePolicy,
    api: kubernetes.client.ApiClient,
    *,
    identity: str | None = None,
) -> Service:
    """The Service `loadaware serve` runs: live rounds, the Lease (unless disabled),
    and readiness checks of the API, the metrics source and the state."""
    elector: _leader.Elector
    if settings.serve.leader_election.enabled:
        elector = _leader.LeaseElector(
            api,
            settings.serve.leader_election,
            identity=identity,
            on_change=lambda leading: _service_metrics.LEADER.set(1 if leading else 0),
        )
    else:
        elector = _leader.AlwaysLeader(identity or _leader.default_identity())
    cache = cluster.ClusterCache(
        api,
        sync_timeout=settings.cluster_cache.sync_timeout.total_seconds(),
        on_event=_service_metrics.observe_cache_event,
        on_relist=_service_metrics.observe_cache_relist,
    )
    context = _live.live_round_context(settings, api, cache=cache)

    def check_state() -> None:
        # As a round checks it: a policy that only dry-runs needs no namespace.
        evict.StateStore(context.kube, settings, _utc_now).check_access(write=not settings.dry_run)

    return Service(
        settings,
        context,
        elector=elector,
        read_secret=_live.secret_reader(api),
        cache=cache,
        ready_checks={
            # Not ready until the first list of every kind, nor while the cache is stale.
            "clusterCache": _live.cache_check(settings, cache),
            "api": lambda: _live.check_api(api),
            "metrics": _live.metrics_check(settings, api),
            "state": check_state,
        },
    )


def serve_policy(
    *,
    policy_file: str | os.PathLike[str],
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
    listen: str | None = None,
    identity: str | None = None,
) -> int:
    """`loadaware serve`: build everything from the policy and serve until SIGTERM/SIGINT."""
    settings = policy.load_policy(policy_file)
    api = kube.api_client(kubeconfig=kubeconfig, context=context)
    service = build_service(settings, api, identity=identity)
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.info("signal received", extra={"signal": signal.Signals(signum).name})
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    serve(service, listen or settings.serve.listen, stop)
    return 0
