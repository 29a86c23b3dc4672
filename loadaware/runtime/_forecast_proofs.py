"""serve's forecast proofs: each round planned ahead is proved once its horizon
has passed (a timer per round, plus a little for the last scrape to land), and
the result published as the loadaware_forecast_* metrics (the dashboard's
forecast row, the LoadawareForecastPersistentlyWrong alert). What a proof is
and how it is judged: round's forecast proof."""

from __future__ import annotations

import datetime
import logging
import threading
from collections.abc import Callable

from prometheus_client import Counter, Gauge

from loadaware import metrics, policy
from loadaware import round as rounds
from loadaware.errors import LoadawareError

log = logging.getLogger(__name__)

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


def observe_proof(proof: rounds.ForecastProof) -> None:
    """Publish a proof as the loadaware_forecast_* metrics."""
    PROOFS.inc()
    counts = dict.fromkeys(rounds.PROOF_OUTCOMES, 0)
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


for _outcome in rounds.PROOF_OUTCOMES:
    PROVED_NODES.labels(_outcome)


class Proofs:
    """serve's pending proofs: each is proved once its horizon has passed (a timer
    per round), and `observe` publishes the result."""

    def __init__(
        self,
        forecaster: metrics.PrometheusForecaster,
        observe: Callable[[rounds.ForecastProof], None] = observe_proof,
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

    def add(self, pending: rounds.PendingProof) -> None:
        wait = (pending.due + self._delay - self._clock()).total_seconds()
        timer = threading.Timer(max(wait, 0.0), self.run, args=(pending,))
        timer.daemon = True
        timer.name = f"forecast-proof-{pending.round_id}"
        with self._lock:
            self._timers[pending.round_id] = timer
        timer.start()

    def run(self, pending: rounds.PendingProof) -> rounds.ForecastProof | None:
        with self._lock:
            self._timers.pop(pending.round_id, None)
        try:
            proof = rounds.prove(pending, self._forecaster)
        except LoadawareError as exc:
            log.warning(
                "forecast proof failed",
                extra={"round": pending.round_id, "reason": exc.summary()},
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
