"""The service around the triggers: single flight, stopping, and the read-only endpoints.

Covered: never two rounds at once whatever the mix of triggers (webhook,
schedule, direct), a non-leader or a stopping service starting nothing, a
running round asked to stop on SIGTERM and on lost leadership, /healthz,
/readyz (each check named, lease failures among them, 503 while one fails or
while stopping), /status (running round, recent rounds, schedules, breaker,
leader), /metrics, a round that raises counted as an error without stopping
the service, listen addresses.
"""

from __future__ import annotations

import json
import threading

import pytest
from prometheus_client import REGISTRY

from loadaware import errors, runtime
from loadaware.runtime import _service_http
from tests.runtime.conftest import ServiceFactory, notification


def sample(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


def test_single_flight_across_triggers(running_service: ServiceFactory) -> None:
    run = running_service()
    run.rounds.hold()
    assert run.service.try_start_round("schedule", label="peak") == "started"
    assert run.rounds.started.wait(10)
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(run.service.try_start_round("schedule")))
        for _ in range(20)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["round-in-progress"] * 20
    assert run.post(notification())[1]["result"] == "coalesced"
    run.rounds.release.set()
    assert run.service.wait_idle(10)
    assert len(run.rounds.calls) == 1
    assert run.rounds.max_active == 1


def test_non_leader_starts_nothing(running_service: ServiceFactory) -> None:
    run = running_service(leading=False)
    before = sample(
        "loadaware_skipped_triggers_total", {"trigger": "schedule", "reason": "not-leader"}
    )
    assert run.service.try_start_round("schedule") == "not-leader"
    assert (
        sample("loadaware_skipped_triggers_total", {"trigger": "schedule", "reason": "not-leader"})
        == before + 1
    )
    assert run.rounds.calls == []


def test_stop_asks_the_running_round_to_stop_and_waits_for_it(
    running_service: ServiceFactory,
) -> None:
    run = running_service()
    run.rounds.hold()
    assert run.service.try_start_round("alertmanager") == "started"
    assert run.rounds.started.wait(10)
    options = run.rounds.calls[0]
    assert options.stop_requested is not None
    assert options.stop_requested() is None
    stopper = threading.Thread(target=run.service.stop)
    stopper.start()
    # The round is told at once; the service waits for it to finish.
    deadline_ok = run.service.wait_idle(0.2)
    assert not deadline_ok
    assert options.stop_requested() == "shutting-down"
    assert run.service.try_start_round("schedule") == "shutting-down"
    ready, checks = run.service.readiness()
    assert not ready
    assert checks["service"] == "shutting down"
    run.rounds.release.set()
    stopper.join(10)
    assert not stopper.is_alive()
    assert not run.leader.leading  # the elector was stopped: the lease released


def test_lost_leadership_stops_the_running_round(running_service: ServiceFactory) -> None:
    run = running_service()
    run.rounds.hold()
    assert run.service.try_start_round("alertmanager") == "started"
    assert run.rounds.started.wait(10)
    options = run.rounds.calls[0]
    run.leader.leading = False
    assert options.stop_requested is not None
    assert options.stop_requested() == "lost-leadership"
    assert run.service.try_start_round("schedule") == "not-leader"
    run.rounds.release.set()
    assert run.service.wait_idle(10)


def test_a_round_that_raises_is_counted_and_the_service_goes_on(
    running_service: ServiceFactory,
) -> None:
    run = running_service()
    before = sample("loadaware_rounds_total", {"trigger": "alertmanager", "result": "error"})

    def broken(*args: object) -> None:
        raise RuntimeError("bug")

    run.service._run_round = broken  # type: ignore[assignment]
    assert run.service.try_start_round("alertmanager") == "started"
    assert run.service.wait_idle(10)
    assert sample("loadaware_rounds_total", {"trigger": "alertmanager", "result": "error"}) == (
        before + 1
    )
    assert run.service.recent_rounds()[0]["status"] == "error"
    assert run.service.try_start_round("alertmanager") == "started"
    assert run.service.wait_idle(10)


def test_healthz_and_metrics(running_service: ServiceFactory) -> None:
    run = running_service()
    assert run.get("/healthz") == (200, b"ok\n")
    status, body = run.get("/metrics")
    assert status == 200
    text = body.decode()
    assert "loadaware_leader 1.0" in text
    assert 'loadaware_webhook_notifications_total{result="unauthorized"}' in text
    assert run.get("/nope")[0] == 404


def test_readyz_names_each_check(running_service: ServiceFactory) -> None:
    state = {"metrics": True}

    def metrics_check() -> None:
        if not state["metrics"]:
            raise errors.RefusedError("Prometheus unreachable", reference="metrics-unreachable")

    run = running_service(ready_checks={"api": lambda: None, "metrics": metrics_check})
    status, body = run.get("/readyz")
    assert status == 200
    assert json.loads(body)["checks"] == {"api": "ok", "metrics": "ok", "leaderElection": "ok"}
    state["metrics"] = False
    run.clock.advance(10)  # past the readiness cache
    status, body = run.get("/readyz")
    assert status == 503
    assert json.loads(body)["checks"]["metrics"].startswith("metrics-unreachable")
    state["metrics"] = True
    run.leader.error = 'missing-namespace: namespace "loadaware" not found'
    run.clock.advance(10)
    status, body = run.get("/readyz")
    assert status == 503
    assert json.loads(body)["checks"]["leaderElection"].startswith("missing-namespace")


def test_status_reports_rounds_schedules_breaker_and_leader(
    running_service: ServiceFactory,
) -> None:
    run = running_service()
    run.rounds.hold()
    assert run.post(notification(group_key="g1"))[0] == 202
    assert run.rounds.started.wait(10)
    status = json.loads(run.get("/status")[1])
    assert status["running"]["trigger"] == "alertmanager"
    assert status["running"]["label"] == "g1"
    # The service answers while the round waits for evidence of relief.
    assert status["running"]["phase"] == "verifying"
    assert status["leader"]["isLeader"] is True
    assert status["breaker"] == {"open": False, "openUntil": None, "reason": None}
    run.rounds.release.set()
    assert run.service.wait_idle(10)
    status = json.loads(run.get("/status")[1])
    assert status["running"] is None
    assert status["rounds"][0]["status"] == "noop"
    assert status["rounds"][0]["trigger"] == "alertmanager"
    assert status["roundsStarted"] == 1
    assert status["webhook"]["groupsInCooldown"] == 1
    assert status["schedules"] == []


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("0.0.0.0:8080", ("0.0.0.0", 8080)),
        (":9000", ("0.0.0.0", 9000)),
        ("[::1]:8080", ("::1", 8080)),
        ("127.0.0.1:0", ("127.0.0.1", 0)),
    ],
)
def test_listen_addresses(address: str, expected: tuple[str, int]) -> None:
    assert _service_http.parse_listen(address) == expected


@pytest.mark.parametrize("address", ["8080", "host:", "host:http", "host:70000"])
def test_bad_listen_address(address: str) -> None:
    with pytest.raises(errors.PolicyError):
        _service_http.parse_listen(address)


def test_runtime_exports_are_pinned() -> None:
    for name in runtime.__all__:
        assert hasattr(runtime, name), name
