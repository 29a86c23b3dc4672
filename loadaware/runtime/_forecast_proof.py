"""The proof after the peak: was a round's forecast right?

A round planned on a forecast expected each node to reach some utilisation over
[start, start + horizon]: the forecast itself where it moved nothing off or onto
the node (and for every node of a dry run), the forecast after its moves where
it did (the plan's `after`). Once the horizon has passed, what each node really
used at its peak over that window is read back from Prometheus
(PrometheusForecaster.fetch_peak: the same usage expressions, max_over_time
over the horizon) and compared:

- per node and resource, the error: real peak utilisation less the expected one
  (positive: the node used more than the round expected);
- per round, how the hot calls came out: `hit` (expected over its targets and
  it was), `false_alarm` (expected over, it was not), `miss` (expected under,
  it turned hot), `relieved` (hot in the forecast, moved under its targets by
  the round, and it stayed under).

`serve` proves each forecast round at its horizon's end (plus a little for the
last scrape to land); the results are loadaware_forecast_* metrics
(_service_metrics), the dashboard's forecast row and the
LoadawareForecastPersistentlyWrong alert. A one-shot `run --once` has no
forecast schedule and nothing to prove.
"""

from __future__ import annotations

import datetime
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from prometheus_client import Counter, Gauge

from loadaware import cluster, metrics, plan, policy
from loadaware.errors import LoadawareError

log = logging.getLogger(__name__)

OUTCOMES = ("hit", "false_alarm", "miss", "relieved")
# After the horizon's end, wait this long for the last samples of the window to be
# scraped and ingested before reading the peak.
INGEST_DELAY = datetime.timedelta(minutes=2)


PROOFS = Counter(
    "loadaware_forecast_proofs_total",
    "Rounds planned on a forecast whose horizon has passed and whose nodes' real peaks "
    "were compared with it.",
)
PROVED_NODES = Counter(
    "loadaware_forecast_nodes_total",
    "Nodes of proved forecast rounds by how their hot call came out: hit (expected over "
    "targets and was), false_alarm (expected over, was not), miss (expected under, turned "
    "hot), relieved (hot in the forecast, moved under targets, stayed under).",
    ["outcome"],
)
LAST_PROOF_NODES = Gauge(
    "loadaware_forecast_last_proof_nodes",
    "Nodes of the last proved forecast round by outcome (as loadaware_forecast_nodes_total).",
    ["outcome"],
)
NODE_ERROR = Gauge(
    "loadaware_forecast_error_ratio",
    "Per node of the last proved forecast round: real peak utilisation over its horizon "
    "less the utilisation the round expected (0-1 of allocatable; positive: used more).",
    ["node", "resource"],
)
MEAN_ABSOLUTE_ERROR = Gauge(
    "loadaware_forecast_mean_absolute_error_ratio",
    "Mean over the nodes of the last proved forecast round of |real - expected| peak "
    "utilisation (0-1 of allocatable).",
    ["resource"],
)
LAST_PROOF = Gauge(
    "loadaware_forecast_last_proof_timestamp_seconds",
    "Unix time the horizon of the last proved forecast round ended.",
)


def observe_proof(proof: ForecastProof) -> None:
    """Publish a proof as the loadaware_forecast_* metrics."""
    PROOFS.inc()
    counts = dict.fromkeys(OUTCOMES, 0)
    for node in proof.nodes.values():
        if node.outcome is not None:
            counts[node.outcome] += 1
    for outcome, count in counts.items():
        PROVED_NODES.labels(outcome).inc(count)
        LAST_PROOF_NODES.labels(outcome).set(count)
    # Nodes of an earlier round that this one did not judge must not linger.
    NODE_ERROR.clear()
    for name, node in proof.nodes.items():
        for resource, error in node.error.items():
            NODE_ERROR.labels(name, resource).set(error)
    MEAN_ABSOLUTE_ERROR.clear()
    for resource, value in proof.mean_absolute_error().items():
        MEAN_ABSOLUTE_ERROR.labels(resource).set(value)
    LAST_PROOF.set((proof.start + proof.horizon).timestamp())


for _outcome in OUTCOMES:
    PROVED_NODES.labels(_outcome)


@dataclass(frozen=True, kw_only=True)
class PendingProof:
    """What a forecast round expected of each node, kept until its horizon has passed."""

    round_id: str
    start: datetime.datetime
    horizon: datetime.timedelta
    # node -> resource -> allocatable (cores, bytes, named units)
    allocatable: Mapping[str, Mapping[str, float]]
    # node -> resource -> expected utilisation ratio (0-1) over the horizon
    expected: Mapping[str, Mapping[str, float]]
    # node -> resource -> target ratio (the pool's targetThresholds)
    targets: Mapping[str, Mapping[str, float]]
    # Nodes hot in the forecast before any move.
    forecast_hot: frozenset[str] = frozenset()

    @property
    def due(self) -> datetime.datetime:
        return self.start + self.horizon

    @classmethod
    def for_round(
        cls,
        round_id: str,
        state: cluster.ClusterState,
        settings: policy.LoadAwarePolicy,
        planned: plan.Plan,
        *,
        dry_run: bool,
    ) -> PendingProof | None:
        """None when the plan was not made on a forecast (or refused)."""
        info = planned.forecast
        if info is None or planned.status == "refused":
            return None
        moved = not dry_run and bool(planned.evictions)
        names = plan.allocatable_names(settings)
        by_name = {node.name: node for node in state.nodes}
        allocatable: dict[str, dict[str, float]] = {}
        expected: dict[str, dict[str, float]] = {}
        targets: dict[str, dict[str, float]] = {}
        hot: set[str] = set()
        for report in planned.nodes:
            node = by_name.get(report.name)
            if node is None or report.node_class == "excluded" or not report.high:
                continue
            sizes = {
                "cpu": node.allocatable_cpu_millicores / 1000.0,
                "memory": float(node.allocatable_memory_bytes),
            }
            for resource, extended in names.items():
                if extended in node.allocatable_extended:
                    sizes[resource] = float(node.allocatable_extended[extended])
            judged = {r: t for r, t in report.high.items() if r in sizes and sizes[r] > 0}
            if not judged:
                continue
            ratios = report.after if moved else report.before
            allocatable[report.name] = {r: sizes[r] for r in judged}
            expected[report.name] = {r: ratios.get(r, 0.0) for r in judged}
            targets[report.name] = judged
            if report.node_class == "hot":
                hot.add(report.name)
        return cls(
            round_id=round_id,
            start=info.at,
            horizon=info.horizon,
            allocatable=allocatable,
            expected=expected,
            targets=targets,
            forecast_hot=frozenset(hot),
        )


@dataclass(frozen=True, kw_only=True)
class NodeProof:
    expected: Mapping[str, float]  # utilisation ratios the round expected
    actual: Mapping[str, float]  # real peak utilisation ratios over the horizon
    error: Mapping[str, float]  # actual less expected
    outcome: str | None  # one of OUTCOMES, or None (expected and was under its targets)


@dataclass(frozen=True, kw_only=True)
class ForecastProof:
    round_id: str
    start: datetime.datetime
    horizon: datetime.timedelta
    nodes: Mapping[str, NodeProof] = field(default_factory=dict)
    # Nodes the peak could not be read for (no samples over the horizon).
    unread: tuple[str, ...] = ()

    def _with(self, outcome: str) -> list[str]:
        return sorted(n for n, p in self.nodes.items() if p.outcome == outcome)

    @property
    def hits(self) -> list[str]:
        return self._with("hit")

    @property
    def false_alarms(self) -> list[str]:
        return self._with("false_alarm")

    @property
    def misses(self) -> list[str]:
        return self._with("miss")

    @property
    def relieved(self) -> list[str]:
        return self._with("relieved")

    def mean_absolute_error(self) -> dict[str, float]:
        """Per resource, the mean over nodes of |actual - expected| (ratios)."""
        sums: dict[str, list[float]] = {}
        for proof in self.nodes.values():
            for resource, error in proof.error.items():
                sums.setdefault(resource, []).append(abs(error))
        return {r: sum(v) / len(v) for r, v in sorted(sums.items())}


def compare(pending: PendingProof, peaks: Mapping[str, Mapping[str, float]]) -> ForecastProof:
    """Pure: the proof from what each node really used at its peak (absolute values)."""
    nodes: dict[str, NodeProof] = {}
    unread = []
    for name, expected in sorted(pending.expected.items()):
        peak = peaks.get(name, {})
        sizes, targets = pending.allocatable[name], pending.targets[name]
        actual = {r: peak[r] / sizes[r] for r in expected if r in peak}
        if not actual:
            unread.append(name)
            continue
        predicted_hot = any(expected[r] > targets[r] for r in expected)
        was_hot = any(actual[r] > targets[r] for r in actual)
        outcome: str | None = None
        if predicted_hot:
            outcome = "hit" if was_hot else "false_alarm"
        elif was_hot:
            outcome = "miss"
        elif name in pending.forecast_hot:
            outcome = "relieved"
        nodes[name] = NodeProof(
            expected=dict(expected),
            actual=actual,
            error={r: actual[r] - expected[r] for r in actual},
            outcome=outcome,
        )
    return ForecastProof(
        round_id=pending.round_id,
        start=pending.start,
        horizon=pending.horizon,
        nodes=nodes,
        unread=tuple(unread),
    )


def prove(pending: PendingProof, forecaster: metrics.PrometheusForecaster) -> ForecastProof:
    """Read the real peaks over the round's horizon and compare them with what it expected."""
    peaks = forecaster.fetch_peak(
        list(pending.expected), start=pending.start, horizon=pending.horizon
    )
    return compare(pending, peaks)


class Proofs:
    """serve's pending proofs: each is proved once its horizon has passed (a timer
    per round), and `observe` publishes the result."""

    def __init__(
        self,
        forecaster: metrics.PrometheusForecaster,
        observe: Callable[[ForecastProof], None] = observe_proof,
        *,
        clock: Callable[[], datetime.datetime],
        delay: datetime.timedelta = INGEST_DELAY,
    ) -> None:
        self._forecaster = forecaster
        self._observe = observe
        self._clock = clock
        self._delay = delay
        self._timers: dict[str, threading.Timer] = {}
        self._lock = threading.Lock()

    def add(self, pending: PendingProof) -> None:
        wait = (pending.due + self._delay - self._clock()).total_seconds()
        timer = threading.Timer(max(wait, 0.0), self.run, args=(pending,))
        timer.daemon = True
        timer.name = f"forecast-proof-{pending.round_id}"
        with self._lock:
            self._timers[pending.round_id] = timer
        timer.start()

    def run(self, pending: PendingProof) -> ForecastProof | None:
        with self._lock:
            self._timers.pop(pending.round_id, None)
        try:
            proof = prove(pending, self._forecaster)
        except LoadawareError as exc:
            log.warning(
                "forecast proof failed",
                extra={"round": pending.round_id, "reason": f"{exc.reference}: {exc}"},
            )
            return None
        self._observe(proof)
        log.info(
            "forecast proved",
            extra={
                "round": pending.round_id,
                "hits": len(proof.hits),
                "misses": len(proof.misses),
                "false_alarms": len(proof.false_alarms),
            },
        )
        return proof

    def pending(self) -> list[str]:
        with self._lock:
            return sorted(self._timers)

    def cancel(self) -> None:
        with self._lock:
            timers, self._timers = list(self._timers.values()), {}
        for timer in timers:
            timer.cancel()


def service_proofs(
    settings: policy.LoadAwarePolicy,
    *,
    clock: Callable[[], datetime.datetime],
    read_secret: metrics.SecretReader | None = None,
) -> Proofs | None:
    """serve's Proofs when a schedule plans ahead (and Prometheus is the source), else None."""
    if settings.metrics.prometheus is None or not any(s.forecast for s in settings.schedules):
        return None
    forecaster = metrics.PrometheusForecaster(settings.metrics, read_secret=read_secret)
    return Proofs(forecaster, clock=clock)
