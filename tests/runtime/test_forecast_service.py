"""serve and rounds planned ahead: a schedule with `forecast` starts its round with
the horizon; the service keeps the round's pending proof and proves it once the
horizon has passed, publishing loadaware_forecast_* (hit, false_alarm, miss,
relieved; per-node error; mean absolute error)."""

from __future__ import annotations

import datetime
import pathlib
import threading
from typing import Any

from prometheus_client import REGISTRY

from loadaware import policy
from loadaware import round as rounds
from loadaware.runtime import _forecast_proofs
from tests.runtime.conftest import ServiceFactory, make_settings

START = datetime.datetime(2026, 11, 30, 8, 30, tzinfo=datetime.UTC)
HOUR = datetime.timedelta(hours=1)


def _value(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


def test_a_forecast_schedule_starts_its_round_with_the_horizon(
    running_service: ServiceFactory, tmp_path: pathlib.Path
) -> None:
    base = make_settings(tmp_path)
    settings = policy.parse_policy(
        {
            **policy.dump_policy(base),
            "metrics": {"prometheus": {"url": "http://127.0.0.1:9"}},
            "schedules": [
                {"name": "before-peak", "cron": "30 8 * * mon-fri", "forecast": {"horizon": "1h"}},
                {"name": "daytime", "cron": "*/15 10-18 * * mon-fri"},
            ],
        }
    )
    run = running_service(settings)
    assert run.service.proofs is not None
    for schedule in settings.schedules:
        run.service._on_schedule(schedule)
        assert run.service.wait_idle(10)
    assert [o.forecast_horizon for o in run.rounds.calls] == [HOUR, None]


class _Peaks:
    def __init__(self, peaks: dict[str, dict[str, float]]) -> None:
        self.peaks = peaks
        self.asked: list[tuple[list[str], datetime.datetime, datetime.timedelta]] = []

    def fetch_peak(self, nodes: Any, *, start: datetime.datetime, horizon: Any) -> Any:
        self.asked.append((sorted(nodes), start, horizon))
        return self.peaks


def test_a_pending_proof_is_proved_after_its_horizon_and_published() -> None:
    pending = rounds.PendingProof(
        round_id="r1",
        start=START,
        horizon=HOUR,
        allocatable={n: {"cpu": 4.0} for n in ("hit", "alarm", "miss", "relieved", "calm")},
        expected={
            "hit": {"cpu": 0.9},
            "alarm": {"cpu": 0.8},
            "miss": {"cpu": 0.3},
            "relieved": {"cpu": 0.5},
            "calm": {"cpu": 0.2},
        },
        targets={n: {"cpu": 0.7} for n in ("hit", "alarm", "miss", "relieved", "calm")},
        forecast_hot=frozenset({"relieved"}),
    )
    peaks = _Peaks(
        {
            "hit": {"cpu": 3.6},
            "alarm": {"cpu": 1.0},
            "miss": {"cpu": 3.4},
            "relieved": {"cpu": 2.0},
            "calm": {"cpu": 0.8},
        }
    )
    proved = threading.Event()
    seen: list[rounds.ForecastProof] = []

    def observe(proof: rounds.ForecastProof) -> None:
        _forecast_proofs.observe_proof(proof)
        seen.append(proof)
        proved.set()

    before = _value("loadaware_forecast_nodes_total", {"outcome": "miss"})
    proofs = _forecast_proofs.Proofs(
        peaks,  # type: ignore[arg-type]
        observe,
        clock=lambda: START + 2 * HOUR,  # the horizon has passed: proved at once
    )
    proofs.add(pending)
    assert proved.wait(10)
    proof = seen[0]
    assert (proof.hits, proof.false_alarms, proof.misses, proof.relieved) == (
        ["hit"],
        ["alarm"],
        ["miss"],
        ["relieved"],
    )
    assert peaks.asked == [(["alarm", "calm", "hit", "miss", "relieved"], START, HOUR)]
    assert _value("loadaware_forecast_nodes_total", {"outcome": "miss"}) == before + 1
    assert _value("loadaware_forecast_last_proof_nodes", {"outcome": "hit"}) == 1
    assert _value("loadaware_forecast_error_ratio", {"node": "miss", "resource": "cpu"}) == (
        3.4 / 4 - 0.3
    )
    assert _value("loadaware_forecast_last_proof_timestamp_seconds") == (START + HOUR).timestamp()
    assert _value("loadaware_forecast_mean_absolute_error_ratio", {"resource": "cpu"}) > 0
    assert proofs.pending() == []
