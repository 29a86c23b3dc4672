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

A round planned ahead hands back its PendingProof (RoundResult.proof); `serve`
proves it at its horizon's end (runtime's forecast proofs: the
loadaware_forecast_* metrics, the dashboard's forecast row and the
LoadawareForecastPersistentlyWrong alert). A one-shot `run --once` has no
forecast schedule and nothing to prove.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field

from loadaware import cluster, metrics, plan, policy

OUTCOMES = ("hit", "false_alarm", "miss", "relieved")


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
