"""`serve` measures how well the scheduler model agrees with the cluster's bindings.

Covers: with the service running on `sim serve`, pods bound by the simulated
scheduler show on /status (`schedulerModel`: per schedulerName observed, agreed
and ratio) and on /metrics (loadaware_scheduler_model_agreement_ratio and its
observations per scheduler_name, loadaware_scheduler_bindings_observed_total by
agreed); the service's observer reads back the same figure as a ModelAgreement;
a packing (MostAllocated) simulated scheduler shows as disagreements on
/status, each naming the pod, the bound node, the predicted set and the reason;
and once they are many enough, a round is refused (scheduler-model-disagrees)
before a taint or an eviction.
"""

from __future__ import annotations

import contextlib
import logging
import pathlib
import re
from typing import Any

import pytest

from loadaware import scheduling, sim
from tests.fidelity.test_observer_live import MOST_ALLOCATED
from tests.lib.bindings import scale_up
from tests.lib.serve import SimService
from tests.lib.sim import sim_server
from tests.lib.wait import poll

POLICY: dict[str, Any] = {
    "metrics": {"metricsServer": {}, "onStaleNode": "Exclude"},
    "state": {"namespace": "default"},
    "dryRun": True,
    "serve": {
        "listen": "127.0.0.1:0",
        "webhook": {"allowUnauthenticated": True},
        "leaderElection": {"enabled": False},
    },
}


def _model_status(run: SimService, observed: int) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        model = run.request("GET", "/status")[1]["schedulerModel"]
        return model if model["observed"] >= observed else None

    return poll(found, f"{observed} bindings on /status", 60)


def _sample(page: str, name: str, **labels: str) -> float:
    wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    match = re.search(rf"^{name}\{{{re.escape(wanted)}\}} (\S+)$", page, re.MULTILINE)
    assert match, f"{name}{{{wanted}}} not on /metrics"
    return float(match.group(1))


def _serving(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, profiles: scheduling.SchedulerProfiles
) -> contextlib.AbstractContextManager[sim.SimServer]:
    monkeypatch.setattr(logging.getLogger("loadaware"), "handlers", [])
    return sim_server("peak-hour", wall_clock=True, scheduler_profiles=profiles)


def test_status_and_metrics_show_the_agreement(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _serving(tmp_path, monkeypatch, scheduling.DEFAULT_PROFILES) as server:
        run = SimService(server, tmp_path, POLICY)
        try:
            run.ready()
            assert run.service.observer is not None
            assert run.service.observer.wait_idle(60)
            before = _sample(
                run.get("/metrics")[1].decode(),
                "loadaware_scheduler_bindings_observed_total",
                scheduler_name="default-scheduler",
                agreed="true",
            )
            scale_up(server, 40)
            model = _model_status(run, 40)
            page = run.get("/metrics")[1].decode()
            agreement = run.service.observer.snapshot()
        finally:
            run.stop()
    assert model["profiles"]["default-scheduler"] == {"observed": 40, "agreed": 40, "ratio": 1.0}
    assert model["disagreements"] == []
    assert model["observer"]["compared"] == 40
    labels = {"scheduler_name": "default-scheduler"}
    assert _sample(page, "loadaware_scheduler_model_agreement_ratio", **labels) == 1.0
    assert _sample(page, "loadaware_scheduler_model_agreement_observations", **labels) == 40
    counted = _sample(page, "loadaware_scheduler_bindings_observed_total", agreed="true", **labels)
    assert counted - before == 40
    assert agreement.observed == 40
    assert agreement.ratio == 1.0


def test_status_names_the_disagreements(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _serving(tmp_path, monkeypatch, MOST_ALLOCATED) as server:
        run = SimService(server, tmp_path, POLICY)
        try:
            run.ready()
            assert run.service.observer is not None
            assert run.service.observer.wait_idle(60)
            scale_up(server, 40)
            model = _model_status(run, 40)
            page = run.get("/metrics")[1].decode()
            bound = {
                f"{p['metadata']['namespace']}/{p['metadata']['name']}": p["spec"]["nodeName"]
                for p in server.list("pods")
            }
        finally:
            run.stop()
    assert model["ratio"] < 0.5
    ratio = _sample(
        page, "loadaware_scheduler_model_agreement_ratio", scheduler_name="default-scheduler"
    )
    assert ratio == pytest.approx(model["ratio"], abs=1e-4)
    assert model["disagreements"]
    for example in model["disagreements"]:
        assert bound[example["pod"]] == example["node"]
        assert example["schedulerName"] == "default-scheduler"
        assert example["predicted"]
        assert example["node"] not in example["predicted"]
        assert example["reason"]


def test_a_round_after_disagreeing_bindings_is_refused_and_changes_nothing(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = {
        **POLICY,
        "dryRun": False,
        "steering": {"minAgreementObservations": 20},
    }
    with _serving(tmp_path, monkeypatch, MOST_ALLOCATED) as server:
        run = SimService(server, tmp_path, live)
        try:
            run.ready()
            assert run.service.observer is not None
            assert run.service.observer.wait_idle(60)
            scale_up(server, 30)
            _model_status(run, 30)
            evictions = server.sim.requests.counts().get(("create", "pods/eviction"), 0)
            assert run.service.try_start_round("manual") == "started"
            assert run.service.wait_idle(60)
            recent = run.service.recent_rounds()[0]
            after = server.sim.requests.counts().get(("create", "pods/eviction"), 0)
            tainted = [
                n["metadata"]["name"]
                for n in server.list("nodes")
                if any(t["key"] == "loadaware.io/hotspot" for t in n["spec"].get("taints") or [])
            ]
        finally:
            run.stop()
    assert recent["status"] == "refused", recent
    assert recent["reason"].startswith("scheduler-model-disagrees: "), recent["reason"]
    assert after == evictions
    assert tainted == []
