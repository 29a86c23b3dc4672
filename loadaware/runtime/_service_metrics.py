"""loadaware's own Prometheus metrics: what rounds did and how the service is doing.

The names are a stable contract (docs/reference/metrics.md): dashboards and alert
rules rely on them. Every label set is bounded: triggers, results and reason
codes are fixed vocabularies, nodes and namespaces are the cluster's own.
The eviction counter lives with the evictor (evict/_outcome.py), which counts
each outcome as it happens, and so does the gauge of the nodes carrying the
steering taint, loadaware_tainted_nodes (evict/_steering.py), set as each taint
is put on or taken off; this module counts the rest from a round's record.

All metrics live in prometheus_client's default registry, next to the
evictor's counter, so `/metrics` and a Pushgateway push carry both.
"""

from __future__ import annotations

import datetime
import math
import threading
from collections.abc import Iterable

import prometheus_client
from prometheus_client import Counter, Gauge, Histogram

from loadaware import build_info, evict, scheduling
from loadaware import round as rounds

REGISTRY = prometheus_client.REGISTRY
NODE_CLASSES: tuple[str, ...] = ("hot", "cold", "normal", "excluded")
# Results a round ends with (RoundRecord.status), plus "error" for a round that
# raised something unexpected. "partial": a live round that stopped evicting
# early or left hot nodes it planned to relieve.
ROUND_RESULTS: tuple[str, ...] = (
    "planned",
    "noop",
    "refused",
    "executed",
    "partial",
    "aborted",
    "error",
)
WEBHOOK_RESULTS: tuple[str, ...] = ("accepted", "ignored", "coalesced", "rejected", "unauthorized")
# Where a verified replacement ended up (ReplacementReport.landing), folded into
# whether the plan held: planned (in its landing set), off-set (a good node outside
# it), bad (source, hot, excluded, over its targets) or pending (not scheduled or gone).
LANDING_WHERE = rounds.LANDING_WHERE
LANDINGS_WHERE = rounds.LANDINGS_WHERE

ROUNDS = Counter(
    "loadaware_rounds_total", "Rounds run, by trigger and result.", ["trigger", "result"]
)
ROUND_DURATION = Histogram(
    "loadaware_round_duration_seconds",
    "Wall time of a round, from reading the cluster to the end of verification.",
    ["trigger"],
    # Planning takes seconds; verification waits for replacements for minutes.
    buckets=(0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200),
)
LAST_ROUND = Gauge(
    "loadaware_last_round_timestamp_seconds",
    "Unix time the last round with this result finished.",
    ["result"],
)
LAST_SUCCESS = Gauge(
    "loadaware_last_successful_round_timestamp_seconds",
    "Unix time the last round that exited 0 (planned, nothing to do, or executed) finished.",
)
REFUSED = Counter(
    "loadaware_refused_rounds_total",
    "Rounds refused fail-closed, by stable reason code (stale-metrics, breaker-open, ...).",
    ["reason"],
)
NODES = Gauge(
    "loadaware_nodes", "Nodes by class in the last round that classified them.", ["class"]
)
NODE_UTILISATION = Gauge(
    "loadaware_node_utilisation_ratio",
    "Utilisation (0-1 of allocatable) of each node as the last round saw it.",
    ["node", "resource"],
)
SAMPLE_AGE = Gauge(
    "loadaware_metrics_sample_age_seconds",
    "Age of the oldest node sample the last round read (max over its nodes).",
)
SOLVER_SECONDS = Gauge(
    "loadaware_solver_seconds",
    "Planning wall time of the last round, by the method that produced the plan.",
    ["method"],
)
PROFILE_EVICTIONS = Counter(
    "loadaware_profile_evictions_total",
    "Evictions planned or skipped per profile and rule (a strategy, or hotspot relief).",
    ["profile", "rule", "outcome"],
)
SOLVER_GAP = Gauge(
    "loadaware_solver_gap_ratio",
    "Relative gap between the last plan's objective and its lower bound (0: proven optimal).",
)
BUDGET_REMAINING = Gauge(
    "loadaware_budget_remaining",
    "Evictions left: `window` in limits.window (across rounds), `round` in "
    "maxNoOfPodsToEvictTotal after the last round.",
    ["budget"],
)
BREAKER_OPEN = Gauge(
    "loadaware_breaker_open", "1 while the circuit breaker stops evictions, else 0."
)
SUSPENDED = Gauge(
    "loadaware_suspended",
    "1 while the suspend switch (annotation loadaware.io/suspend on the state "
    "ConfigMap) stops every eviction, else 0.",
)
BOUNCED = Counter(
    "loadaware_bounced_replacements_total",
    "Replacements that landed back on their source node or on another hot node.",
)
LANDINGS = Counter(
    "loadaware_landings_total",
    "Verified replacements of live rounds, by where they landed against the plan: "
    "planned (in its landing set), off-set (a good node outside it), bad (its source, a hot "
    "or excluded node, or over its targets), pending (not scheduled or not found).",
    ["where"],
)
for _where in LANDINGS_WHERE:
    LANDINGS.labels(_where)  # at 0 from the start, so ratios and increases have a series
# Verdicts of the relief check (rounds.NodeRelief), per role, as label values.
RELIEF_VERDICTS: dict[str, tuple[str, ...]] = {
    "relieved": ("relieved", "improved", "not-improved", "unverified"),
    "landing": ("within-targets", "turned-hot", "unverified"),
}
RELIEF_NODES = Counter(
    "loadaware_relief_nodes_total",
    "Nodes judged after live rounds on samples taken after the moves, by role (relieved: "
    "a hot node pods left; landing: a node replacements landed on) and verdict.",
    ["role", "verdict"],
)
for _role, _verdicts in RELIEF_VERDICTS.items():
    for _verdict in _verdicts:
        RELIEF_NODES.labels(_role, _verdict)
MODEL_ERROR = Histogram(
    "loadaware_model_error_ratio",
    "Absolute error between the utilisation the plan expected (after what was done) and "
    "the utilisation observed after the moves, per judged node and resource.",
    ["role", "resource"],
    buckets=(0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0),
)
EVICTION_TO_READY = Histogram(
    "loadaware_eviction_to_ready_seconds",
    "Time from an eviction to its replacement being Ready.",
    buckets=(1, 2, 5, 10, 20, 30, 60, 120, 300, 600),
)
CACHE_EVENTS = Counter(
    "loadaware_cluster_cache_events_total",
    "Watch events the cluster cache applied, by kind and event type.",
    ["kind", "type"],
)
CACHE_RELISTS = Counter(
    "loadaware_cluster_cache_relists_total",
    "Relists of a kind by the cluster cache, by cause: expired (410 Gone), dropped "
    "(the stream was cut) or failed (any other watch error).",
    ["kind", "cause"],
)
CACHE_AGE = Gauge(
    "loadaware_cluster_cache_age_seconds",
    "Seconds since the cluster cache's newest event, bookmark, list or watch start, "
    "by kind (NaN until the kind is listed).",
    ["kind"],
)
MODEL_AGREEMENT = Gauge(
    "loadaware_scheduler_model_agreement_ratio",
    "Share of the recent bindings of the cluster's scheduler (the observer's sliding window) "
    "that the kube-scheduler model agrees with, by schedulerName (NaN before any).",
    ["scheduler_name"],
)
MODEL_AGREEMENT_OBSERVATIONS = Gauge(
    "loadaware_scheduler_model_agreement_observations",
    "Bindings in the observer's sliding window the agreement ratio is taken over, by "
    "schedulerName.",
    ["scheduler_name"],
)
BINDINGS_OBSERVED = Counter(
    "loadaware_scheduler_bindings_observed_total",
    "Bindings of modelled pods the observer compared with the model, by schedulerName and "
    "whether the model agreed (true, false).",
    ["scheduler_name", "agreed"],
)
LEADER = Gauge("loadaware_leader", "1 while this replica holds the leader Lease, else 0.")
WEBHOOK_NOTIFICATIONS = Counter(
    "loadaware_webhook_notifications_total",
    "Alertmanager notifications, by what became of them.",
    ["result"],
)
SKIPPED_TRIGGERS = Counter(
    "loadaware_skipped_triggers_total",
    "Triggers that started no round: round-in-progress (coalesced into the running "
    "one), not-leader, shutting-down.",
    ["trigger", "reason"],
)
SCHEDULE_NEXT_RUN = Gauge(
    "loadaware_schedule_next_run_timestamp_seconds",
    "Unix time a schedule fires next.",
    ["schedule"],
)
BUILD_INFO = Gauge(
    "loadaware_build_info",
    "Always 1; the labels say which version and source revision is running.",
    ["version", "revision"],
)
BUILD_INFO.labels(build_info.VERSION, build_info.revision()).set(1)

# Label values of the per-node gauge set by the previous round, so that nodes that
# left the cluster disappear instead of showing their last value forever.
_utilisation_lock = threading.Lock()
_utilisation_labels: set[tuple[str, str]] = set()


def _unix(moment: datetime.datetime) -> float:
    return moment.timestamp()


def observe_round(finished_round: rounds.RoundResult) -> None:
    """Update the metrics from a finished round: its record, the error it ended
    with, and the usage it read."""
    record, usage, error = finished_round.record, finished_round.usage, finished_round.error
    trigger = record.trigger
    result = record.status if record.status in ROUND_RESULTS else "error"
    ROUNDS.labels(trigger, result).inc()
    finished = record.finished_at or record.started_at
    ROUND_DURATION.labels(trigger).observe(max((finished - record.started_at).total_seconds(), 0.0))
    LAST_ROUND.labels(result).set(_unix(finished))
    if error is None and result != "error":
        LAST_SUCCESS.set(_unix(finished))
    if result == "refused":
        REFUSED.labels(error.reference if error is not None else "unknown").inc()
        if isinstance(error, evict.SuspendedError):
            SUSPENDED.set(1)
    elif record.execution is not None and isinstance(
        record.execution.stopped, evict.BreakerOpenError
    ):
        # Planned, but the open breaker let nothing through: as refused as a stale round.
        REFUSED.labels(evict.BreakerOpenError.reference).inc()
    planned = record.plan
    if planned is not None and planned.nodes:
        counts = dict.fromkeys(NODE_CLASSES, 0)
        for node in planned.nodes:
            counts[node.node_class] = counts.get(node.node_class, 0) + 1
        for node_class, count in counts.items():
            NODES.labels(node_class).set(count)
        _set_utilisation(
            {
                (node.name, resource): value
                for node in planned.nodes
                for resource, value in node.before.items()
            }
        )
    if planned is not None:
        for profile, rules in planned.profiles.items():
            for rule, count in rules.items():
                if count.planned:
                    PROFILE_EVICTIONS.labels(profile, rule, "planned").inc(count.planned)
                if count.skipped:
                    PROFILE_EVICTIONS.labels(profile, rule, "skipped").inc(count.skipped)
    if planned is not None and planned.solver.method != "none":
        SOLVER_SECONDS.clear()
        SOLVER_SECONDS.labels(planned.solver.method).set(planned.solver.seconds)
        gap = solver_gap(planned.solver.objective, planned.solver.lower_bound)
        if gap is not None:
            SOLVER_GAP.set(gap)
    if usage is not None and usage.nodes:
        SAMPLE_AGE.set(
            max((usage.collected_at - s.timestamp).total_seconds() for s in usage.nodes.values())
        )
    _observe_budgets(record)
    execution = record.execution
    if execution is not None:
        if execution.breaker:
            BREAKER_OPEN.set(1)
        if isinstance(execution.stopped, evict.SuspendedError):
            SUSPENDED.set(1)
        for replacement in execution.replacements:
            if replacement.landing in ("source", "hot"):
                BOUNCED.inc()
            if not execution.dry_run:
                LANDINGS.labels(LANDING_WHERE.get(replacement.landing, "pending")).inc()
            if replacement.ready and replacement.seconds_to_ready is not None:
                EVICTION_TO_READY.observe(replacement.seconds_to_ready)
    if not record.dry_run:
        for relief in record.relief:
            RELIEF_NODES.labels(relief.role, relief.verdict.replace(" ", "-")).inc()
            for resource, error in relief.error().items():
                MODEL_ERROR.labels(relief.role, resource).observe(error)


def observe_state(breaker: evict.Breaker, now: datetime.datetime) -> None:
    """The breaker as the state ConfigMap has it (it closes by time, not by a round)."""
    BREAKER_OPEN.set(1 if breaker.is_open(now) else 0)


def observe_suspension(suspension: evict.Suspension) -> None:
    """The suspend switch as the state ConfigMap has it (flipped by people, not rounds)."""
    SUSPENDED.set(1 if suspension.suspended else 0)


def solver_gap(objective: float | None, lower_bound: float | None) -> float | None:
    if objective is None or lower_bound is None:
        return None
    if not (math.isfinite(objective) and math.isfinite(lower_bound)):
        return None
    return max(objective - lower_bound, 0.0) / max(abs(objective), 1e-9)


def _observe_budgets(record: rounds.RoundRecord) -> None:
    window_left = record.budgets.get("windowLeft")
    if isinstance(window_left, int):
        BUDGET_REMAINING.labels("window").set(window_left)
    round_limits = record.budgets.get("round") or {}
    total = round_limits.get("maxNoOfPodsToEvictTotal") if isinstance(round_limits, dict) else None
    if isinstance(total, int):
        used = 0
        if record.execution is not None:
            used = record.execution.count("evicted") + record.execution.count("dry-run")
        BUDGET_REMAINING.labels("round").set(max(total - used, 0))


def _set_utilisation(values: dict[tuple[str, str], float]) -> None:
    with _utilisation_lock:
        for labels in _utilisation_labels - set(values):
            NODE_UTILISATION.remove(*labels)
        for labels, value in values.items():
            NODE_UTILISATION.labels(*labels).set(value)
        _utilisation_labels.clear()
        _utilisation_labels.update(values)


def push_metrics(gateway: str, *, job: str = "loadaware", timeout: float = 10.0) -> None:
    """Push every loadaware metric to a Pushgateway (run --once: a Job that ends
    before any scrape). Replaces what the job pushed last time, as a batch job's
    metrics should be."""
    prometheus_client.push_to_gateway(gateway, job=job, registry=REGISTRY, timeout=timeout)


def render_metrics() -> tuple[bytes, str]:
    """The text exposition of the registry and its content type, for GET /metrics."""
    return prometheus_client.generate_latest(REGISTRY), prometheus_client.CONTENT_TYPE_LATEST


def observe_cache_event(kind: str, event_type: str) -> None:
    CACHE_EVENTS.labels(kind, event_type).inc()


def observe_cache_relist(kind: str, cause: str) -> None:
    CACHE_RELISTS.labels(kind, cause).inc()


def observe_cache_ages(ages: dict[str, float | None]) -> None:
    for kind, age in ages.items():
        CACHE_AGE.labels(kind).set(float("nan") if age is None else age)


def count_binding(binding: scheduling.Binding) -> None:
    BINDINGS_OBSERVED.labels(binding.scheduler_name, "true" if binding.agreed else "false").inc()


def observe_agreement(agreement: scheduling.ModelAgreement, scheduler_names: Iterable[str]) -> None:
    """The window's agreement per schedulerName: every modelled one has a series, NaN
    (and 0 observations) until it has bindings."""
    for name in {*scheduler_names, *agreement.by_profile}:
        seen = agreement.by_profile.get(name)
        ratio = None if seen is None else seen.ratio
        MODEL_AGREEMENT.labels(name).set(float("nan") if ratio is None else ratio)
        MODEL_AGREEMENT_OBSERVATIONS.labels(name).set(0 if seen is None else seen.observed)
        for agreed in ("true", "false"):
            BINDINGS_OBSERVED.labels(name, agreed)  # at 0 from the start
