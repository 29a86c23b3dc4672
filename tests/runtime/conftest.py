"""Shared pieces of the service tests: a clock tests move, a round runner tests
hold and release, a Service on a real loopback socket, notification builders."""

from __future__ import annotations

import datetime
import json
import pathlib
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from loadaware import policy, runtime
from loadaware import round as rounds
from tests.lib.serve import ServeClient

TOKEN = "s3cret-token-value"
START = datetime.datetime(2026, 11, 30, 7, 59, 0, tzinfo=datetime.UTC)  # a Monday


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name == "KUBECONFIG" or name.startswith("LOADAWARE_"):
            monkeypatch.delenv(name)


class FakeClock:
    def __init__(self, start: datetime.datetime = START) -> None:
        self.now = start
        self.seconds = 0.0
        self._lock = threading.Lock()

    def __call__(self) -> datetime.datetime:
        with self._lock:
            return self.now

    def monotonic(self) -> float:
        with self._lock:
            return self.seconds

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += datetime.timedelta(seconds=seconds)
            self.seconds += seconds


class StubKube:
    """The state ConfigMap never exists: no breaker, no history; no node carries a taint."""

    def read_config_map(self, namespace: str, name: str) -> None:
        return None

    def list_nodes(self) -> list[dict[str, Any]]:
        return []


class FakeRounds:
    """A run_round that records its calls and, when held, waits until released."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.calls: list[rounds.RoundOptions] = []
        self.active = 0
        self.max_active = 0
        self.started = threading.Event()
        self.release = threading.Event()
        self.release.set()
        self._lock = threading.Lock()

    def hold(self) -> None:
        self.release.clear()

    def __call__(
        self,
        settings: policy.LoadAwarePolicy,
        context: rounds.RoundContext,
        options: rounds.RoundOptions,
    ) -> rounds.RoundResult:
        with self._lock:
            self.calls.append(options)
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        if options.on_phase is not None:
            # Where a real round waits longest: for evidence of relief.
            options.on_phase("verifying")
        self.started.set()
        try:
            assert self.release.wait(30), "test never released the round"
            return rounds.RoundResult(
                record=rounds.RoundRecord(
                    round_id=options.round_id,
                    trigger=options.trigger,
                    started_at=self.clock(),
                    finished_at=self.clock(),
                    dry_run=bool(options.dry_run),
                    policy_hash="test",
                    status="noop",
                    reason="no hot node",
                )
            )
        finally:
            with self._lock:
                self.active -= 1


def make_settings(tmp_path: pathlib.Path, **serve: Any) -> policy.LoadAwarePolicy:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    webhook: dict[str, Any] = {"tokenFile": str(token_file), "cooldown": "5m"}
    webhook.update(serve.pop("webhook", {}))
    body: dict[str, Any] = {
        "serve": {"listen": "127.0.0.1:0", "webhook": webhook, **serve},
    }
    return policy.parse_policy(body)


class SwitchLeader:
    """An elector a test flips."""

    def __init__(self, leading: bool = True) -> None:
        self.identity = "test"
        self.leading = leading
        self.error: str | None = None  # why lease calls fail, as LeaseElector reports it

    def is_leader(self) -> bool:
        return self.leading

    def start(self) -> None:
        pass

    def stop(self) -> None:
        self.leading = False

    def status(self) -> dict[str, Any]:
        return {
            "enabled": True,
            "identity": self.identity,
            "isLeader": self.leading,
            "error": self.error,
        }


@dataclass
class Running:
    service: runtime.Service
    http: runtime.HttpServer
    rounds: FakeRounds
    clock: FakeClock
    leader: SwitchLeader
    settings: policy.LoadAwarePolicy
    secrets: dict[tuple[str, str, str], str] = field(default_factory=dict)

    def post(
        self,
        body: bytes | Mapping[str, Any],
        *,
        token: str | None = TOKEN,
        headers: Mapping[str, str] | None = None,
        path: str = "/alertmanager",
    ) -> tuple[int, dict[str, Any]]:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        sent = {"Content-Type": "application/json"}
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        sent.update(headers or {})
        status, text = ServeClient(self.http.port).request("POST", path, data, sent)
        return status, (json.loads(text) if text.strip() else {})

    def get(self, path: str) -> tuple[int, bytes]:
        return ServeClient(self.http.port).get(path)


ServiceFactory = Callable[..., Running]


@pytest.fixture
def tmp_path_settings(tmp_path: pathlib.Path) -> policy.LoadAwarePolicy:
    return make_settings(tmp_path)


@pytest.fixture
def running_service(tmp_path: pathlib.Path) -> Iterator[ServiceFactory]:
    started: list[Running] = []

    def start(
        settings: policy.LoadAwarePolicy | None = None,
        *,
        leading: bool = True,
        ready_checks: Mapping[str, Callable[[], None]] | None = None,
        secrets: Mapping[tuple[str, str, str], str] | None = None,
        clock: FakeClock | None = None,
        read_cluster: Callable[[], Any] | None = None,
    ) -> Running:
        settings = settings or make_settings(tmp_path)
        clock = clock or FakeClock()
        fake_rounds = FakeRounds(clock)
        leader = SwitchLeader(leading)
        known = dict(secrets or {})

        def read_secret(namespace: str, name: str, key: str) -> str:
            return known[(namespace, name, key)]

        context = rounds.RoundContext(
            kube=StubKube(),  # type: ignore[arg-type]
            read_cluster=read_cluster or (lambda: pytest.fail("the stub round reads no cluster")),
            read_usage=lambda state: pytest.fail("the stub round reads no usage"),
            clock=clock,
        )
        service = runtime.Service(
            settings,
            context,
            elector=leader,
            read_secret=read_secret,
            ready_checks=ready_checks,
            clock=clock,
            monotonic=clock.monotonic,
            run_round=fake_rounds,
        )
        server = runtime.HttpServer(service, "127.0.0.1:0").start()
        run = Running(service, server, fake_rounds, clock, leader, settings, known)
        started.append(run)
        return run

    yield start
    for run in started:
        run.rounds.release.set()
        run.service.stop(round_timeout=10)
        run.http.stop()


def alert(
    status: str = "firing",
    *,
    node: str | None = "node-a",
    instance: str | None = None,
    action: str | None = "rebalance",
    fingerprint: str | None = None,
    **labels: str,
) -> dict[str, Any]:
    all_labels = {"alertname": "NodeHotspot", **labels}
    if node is not None:
        all_labels["node"] = node
    if instance is not None:
        all_labels["instance"] = instance
    if action is not None:
        all_labels["loadaware_action"] = action
    body: dict[str, Any] = {
        "status": status,
        "labels": all_labels,
        "annotations": {"summary": "node is hot"},
        "startsAt": "2026-11-30T07:50:00Z",
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": "http://prometheus/graph",
    }
    body["fingerprint"] = fingerprint or f"fp-{node or instance or 'none'}"
    return body


def notification(
    *alerts: dict[str, Any], group_key: str = '{}:{alertname="NodeHotspot"}', **extra: Any
) -> dict[str, Any]:
    alerts = alerts or (alert(),)
    firing = any(a["status"] == "firing" for a in alerts)
    body = {
        "version": "4",
        "groupKey": group_key,
        "truncatedAlerts": 0,
        "status": "firing" if firing else "resolved",
        "receiver": "loadaware",
        "groupLabels": {"alertname": "NodeHotspot"},
        "commonLabels": {"alertname": "NodeHotspot"},
        "commonAnnotations": {},
        "externalURL": "http://alertmanager:9093",
        "alerts": list(alerts),
    }
    body.update(extra)
    return body
