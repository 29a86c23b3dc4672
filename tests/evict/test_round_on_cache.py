"""A live round wired as `run --once` is: planned from the watched cluster cache, the
evictor's checks, waits and landings read from it, its writes sent to the API.

Covers: the round does what the same round reading fresh lists does, on two
identical simulated clusters; while it runs it lists and gets nothing (the
simulator's request log): only its writes, the state ConfigMap, metrics and the
cache's watches; a cut watch, a 410 and an API server restart in the middle of
the round each end in a relist and change none of its decisions; a cache that
cannot be kept current past its bound stops the round before its next eviction
(exit 3, stale-cluster-cache), with its taints removed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import pathlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from loadaware import cluster, report, sim
from loadaware import round as rounds
from tests.lib.cache import caught_up
from tests.lib.live import cached_live_context, live_context, metrics_server_policy
from tests.lib.sim import sim_server
from tests.lib.wait import poll

# What the cache reads; during a round on the cache none is listed or got.
CLUSTER_KINDS = frozenset(
    {
        "pods",
        "nodes",
        "namespaces",
        "poddisruptionbudgets.policy",
        "replicasets.apps",
        "deployments.apps",
        "statefulsets.apps",
        "daemonsets.apps",
        "jobs.batch",
        "priorityclasses.scheduling.k8s.io",
    }
)


# Every list and watch path the cache reads.
STALE_PATHS = r"^/api/v1/(pods|nodes|namespaces)$|^/apis/[a-z.]+/v1/[a-z]+$"


@pytest.fixture
def servers() -> Iterator[Callable[[], sim.SimServer]]:
    with contextlib.ExitStack() as started:

        def start() -> sim.SimServer:
            return started.enter_context(
                sim_server("warm-idle", ready_delay=5.0, watch_bookmark_seconds=0.2)
            )

        yield start


def _policy(**overrides: Any):
    return metrics_server_policy(
        metrics={"metricsServer": {}, "onStaleNode": "Exclude"}, **overrides
    )


def _decisions(audit: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(e["pod"], e["result"], e["reason"]) for e in audit["evictions"]]


def _landings(audit: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    return [(r["pod"], r["node"], r["landing"]) for r in audit["verification"]["replacements"]]


def _fresh_round(server: sim.SimServer, tmp_path: pathlib.Path) -> dict[str, Any]:
    policy = _policy()
    record = rounds.run_round(policy, live_context(server, tmp_path / "fresh", policy)).record
    return report.round_to_json(record)


def _cached_round(
    server: sim.SimServer,
    tmp_path: pathlib.Path,
    *,
    during: Callable[[sim.SimServer, cluster.ClusterCache, int], None] | None = None,
    policy: Any = None,
) -> tuple[dict[str, Any], cluster.ClusterCache, dict[tuple[str, str], int]]:
    """The round on a cache; `during(server, cache, n)` is called at the n-th virtual
    wait, before the clock moves. Returns the audit, the cache and the requests the
    round sent."""
    policy = policy or _policy()
    waits = [0]
    with cached_live_context(server, tmp_path / "cached", policy) as (context, cache):

        def sleep(seconds: float) -> None:
            waits[0] += 1
            if during is not None:
                during(server, cache, waits[0])
            server.advance(seconds)
            caught_up(cache, server)

        server.sim.requests.clear()
        record = rounds.run_round(
            policy, context.__class__(**{**context.__dict__, "sleep": sleep})
        ).record
        requests = server.sim.requests.counts()
        return report.round_to_json(record), cache, requests


def _tainted(server: sim.SimServer) -> list[str]:
    return [
        n["metadata"]["name"]
        for n in server.list("nodes")
        if any(t["key"].startswith("loadaware.io/") for t in n["spec"].get("taints") or [])
    ]


def test_a_round_on_the_cache_decides_as_one_on_fresh_lists_and_lists_nothing(
    servers: Callable[[], sim.SimServer], tmp_path: pathlib.Path
) -> None:
    fresh = _fresh_round(servers(), tmp_path)
    audit, cache, requests = _cached_round(servers(), tmp_path)
    assert fresh["status"] == "executed", fresh["reason"]
    assert audit["exitCode"] == 0, audit["reason"]
    assert _decisions(audit) == _decisions(fresh)
    assert _landings(audit) == _landings(fresh)
    assert [e["pod"] for e in audit["plan"]["evictions"]] == [
        e["pod"] for e in fresh["plan"]["evictions"]
    ]
    # Read from memory: no list and no get of what the cache holds, not even of a
    # node whose taints are written (the write names the resourceVersion the cache
    # holds, which is current here: the round waits for it at every pause).
    reads = {
        (verb, resource): n
        for (verb, resource), n in requests.items()
        if verb in ("list", "get") and resource in CLUSTER_KINDS
    }
    taint_writes = requests.get(("patch", "nodes"), 0) + requests.get(("update", "nodes"), 0)
    assert taint_writes > 0
    assert reads == {}
    assert all(s["relists"] == {} for s in cache.stats().values())


@pytest.mark.parametrize("fault", ["cut", "expired", "restart"])
def test_a_watch_fault_mid_round_relists_and_changes_no_decision(
    servers: Callable[[], sim.SimServer], tmp_path: pathlib.Path, fault: str
) -> None:
    fresh = _fresh_round(servers(), tmp_path)
    # A cut that meets a watch being opened again fails that call instead.
    causes = {
        "cut": ("dropped", "failed"),
        "expired": ("expired",),
        "restart": ("dropped", "failed"),
    }[fault]

    def relisted(cache: cluster.ClusterCache) -> int:
        relists = cache.stats()["pods"]["relists"]
        return sum(relists.get(cause, 0) for cause in causes)

    def inject(server: sim.SimServer, cache: cluster.ClusterCache, n: int) -> None:
        if n != 3:
            return
        if fault == "cut":
            server.sim.close_watches()
        elif fault == "expired":
            server.sim.expire_watches()
        else:
            server.restart()
        # Nothing changes meanwhile, so the cache is caught up by resourceVersion
        # whether or not it has seen the fault: the round goes on once it relisted.
        poll(lambda: relisted(cache), f"the pods' relist after the {fault} watch")

    audit, cache, requests = _cached_round(servers(), tmp_path, during=inject)
    assert audit["exitCode"] == 0, audit["reason"]
    assert _decisions(audit) == _decisions(fresh)
    assert _landings(audit) == _landings(fresh)
    assert relisted(cache) >= 1, cache.stats()["pods"]["relists"]
    # The relist, and only it, lists pods again.
    assert requests.get(("list", "pods"), 0) >= 1
    assert requests.get(("get", "pods"), 0) == 0


def test_a_cache_that_goes_stale_stops_the_round_before_its_next_eviction(
    servers: Callable[[], sim.SimServer], tmp_path: pathlib.Path
) -> None:
    server = servers()
    policy = _policy(clusterCache={"maxAge": "1s"})
    broken = [False]

    def sleep_then_break(cache: cluster.ClusterCache) -> Callable[[float], None]:
        waits = [0]

        def sleep(seconds: float) -> None:
            waits[0] += 1
            if waits[0] == 3:
                # From here on every list and watch of what the cache reads fails; the
                # evictor's own calls (on named objects) still succeed.
                server.faults.add(path=STALE_PATHS, method="GET", status=503)
                server.sim.close_watches()
                broken[0] = True
            server.advance(seconds)
            if broken[0]:
                server.wait_for(lambda: (cache.age() or 0) > 1.2, timeout=20)
            else:
                caught_up(cache, server)

        return sleep

    with cached_live_context(server, tmp_path, policy) as (context, cache):
        context = dataclasses.replace(context, sleep=sleep_then_break(cache))
        record = rounds.run_round(policy, context).record
        server.faults.clear()
    audit = report.round_to_json(record)
    assert broken[0]
    assert audit["exitCode"] == 3, audit["reason"]
    assert audit["status"] == "partial"
    results = [e["result"] for e in audit["evictions"]]
    stopped = [e for e in audit["evictions"] if e["result"] == "skipped"]
    assert "evicted" in results
    assert stopped
    assert all(
        e["reason"].removeprefix("round stopped: ").startswith("stale-cluster-cache")
        for e in stopped
    )
    # Nothing evicted after the first refusal.
    first = results.index("skipped")
    assert "evicted" not in results[first:]
    assert audit["completion"]["stopped"].startswith("stale-cluster-cache")
    assert _tainted(server) == []


def test_a_stale_cache_refuses_the_round_before_it_plans(
    servers: Callable[[], sim.SimServer], tmp_path: pathlib.Path
) -> None:
    server = servers()
    policy = _policy(clusterCache={"maxAge": "1s"})
    with cached_live_context(server, tmp_path, policy) as (context, cache):
        server.faults.add(path=STALE_PATHS, method="GET", status=503)
        server.sim.close_watches()
        server.wait_for(lambda: (cache.age() or 0) > 1.5, timeout=20)
        record = rounds.run_round(policy, context).record
    audit = report.round_to_json(record)
    assert audit["status"] == "refused"
    assert audit["exitCode"] == 3
    assert audit["reason"].startswith("stale-cluster-cache: the cluster cache is older than 1s")
    assert audit["evictions"] == []
    assert _tainted(server) == []
