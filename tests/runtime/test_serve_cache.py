"""`serve` keeps one watched cluster cache for all its rounds.

Covers: /readyz is not ready until the cache's first list of every kind, then
ready; a round on the warm cache lists and gets none of what the cache holds (the
simulator's request log) and plans what a fresh list gives; /metrics shows the
cache's events, relists and age; a cache that cannot be kept current makes the
service unready, naming the cause, and ready again once it can.
"""

from __future__ import annotations

import json
import logging
import pathlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from loadaware import cluster, sim
from loadaware.runtime import _service_status
from tests.lib.cache import all_watching, caught_up
from tests.lib.serve import SimService
from tests.lib.sim import sim_server
from tests.lib.wait import poll

POLICY: dict[str, Any] = {
    "metrics": {"metricsServer": {}, "onStaleNode": "Exclude"},
    "state": {"namespace": "default"},
    "dryRun": True,
    "clusterCache": {"maxAge": "2s"},
    "serve": {
        "listen": "127.0.0.1:0",
        "webhook": {"allowUnauthenticated": True},
        "leaderElection": {"enabled": False},
    },
}
LIST_PATHS = r"^/api/v1/(pods|nodes|namespaces)$|^/apis/[a-z.]+/v1/[a-z]+$"
CACHED = ("pods", "nodes", "namespaces", "replicasets.apps", "deployments.apps")


@pytest.fixture
def served(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[sim.SimServer, Callable[[], SimService]]]:
    monkeypatch.setattr(_service_status, "READY_CACHE_SECONDS", 0.0)
    monkeypatch.setattr(logging.getLogger("loadaware"), "handlers", [])
    # The service reads metrics on the wall clock: the simulated one keeps time with it.
    started: list[SimService] = []
    with sim_server("small", wall_clock=True, watch_bookmark_seconds=0.2) as server:

        def start() -> SimService:
            started.append(SimService(server, tmp_path, POLICY))
            return started[-1]

        try:
            yield server, start
        finally:
            for one in started:
                one.stop()


def test_not_ready_until_the_first_list_then_ready(
    served: tuple[sim.SimServer, Callable[[], SimService]],
) -> None:
    server, start = served
    slow = server.faults.add(path=r"^/api/v1/pods$", method="GET", latency=1.5, times=1)
    run = start()
    status, checks = run.readyz()
    assert status == 503
    assert checks["clusterCache"].startswith("stale-cluster-cache: ")
    assert "pods never listed" in checks["clusterCache"]
    poll(lambda: run.readyz()[0] == 200, "ready after the first list")
    assert run.readyz()[1]["clusterCache"] == "ok"
    assert slow.times is None or slow.times <= 0


def test_a_round_on_the_warm_cache_lists_nothing_and_plans_as_a_fresh_list(
    served: tuple[sim.SimServer, Callable[[], SimService]],
) -> None:
    server, start = served
    run = start()
    cache = run.ready()
    caught_up(cache, server)
    server.sim.requests.clear()
    assert run.service.try_start_round("manual") == "started"
    assert run.service.wait_idle(60)
    recent = run.service.recent_rounds()[0]
    assert recent["status"] == "executed", recent["reason"]
    counts = server.sim.requests.counts()
    assert {k: n for k, n in counts.items() if k[0] in ("list", "get") and k[1] in CACHED} == {}
    assert cache.snapshot() == cluster.read_cluster(client=run.api)


def test_metrics_show_events_relists_and_age(
    served: tuple[sim.SimServer, Callable[[], SimService]],
) -> None:
    server, start = served
    run = start()
    cache = run.ready()
    pod = next(p for p in server.list("pods") if p["metadata"].get("ownerReferences"))
    server.sim.evict(pod["metadata"]["namespace"], pod["metadata"]["name"])
    server.advance(5)
    caught_up(cache, server)
    all_watching(cache, server)
    server.sim.close_watches()

    def page() -> str:
        return run.get("/metrics")[1].decode()

    poll(lambda: 'loadaware_cluster_cache_relists_total{cause="dropped",kind="pods"}' in page(),
         "the relist counted")  # fmt: skip
    text = page()
    assert 'loadaware_cluster_cache_events_total{kind="pods",type=' in text
    status = json.loads(run.get("/status")[1])["clusterCache"]
    assert status["synced"] is True
    assert status["kinds"]["pods"]["relists"] == {"dropped": 1}
    assert status["kinds"]["pods"]["events"] >= 1
    assert status["kinds"]["pods"]["ageSeconds"] is not None
    ages = [
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith('loadaware_cluster_cache_age_seconds{kind="pods"}')
    ]
    assert ages
    assert 0 <= ages[0] < 2


def test_a_stale_cache_makes_the_service_unready_until_it_recovers(
    served: tuple[sim.SimServer, Callable[[], SimService]],
) -> None:
    server, start = served
    run = start()
    all_watching(run.ready(), server)
    broken = server.faults.add(path=LIST_PATHS, method="GET", status=503)
    server.sim.close_watches()
    status, checks = poll(
        lambda: (r := run.readyz())[1]["clusterCache"] != "ok" and r, "unready when stale"
    )
    assert status == 503
    assert checks["clusterCache"].startswith("stale-cluster-cache: the cluster cache is older")
    # A round now is refused, with the reason, and nothing is read to plan on.
    assert run.service.try_start_round("manual") == "started"
    assert run.service.wait_idle(60)
    recent = run.service.recent_rounds()[0]
    assert recent["status"] == "refused"
    assert recent["reason"].startswith("stale-cluster-cache")
    server.faults.remove(broken.id)
    poll(lambda: run.readyz()[0] == 200, "ready once the cache is current again", timeout=30)
