"""A live round against the simulated API, wired the way `run --once` wires it:
the official client, the live cluster reader, the metrics-server provider over
metrics.k8s.io, and the evictor; time is the simulator's (virtual) clock.

    with sim_server("small") as server:
        context = live_context(server, tmp_path, policy)
        record = rounds.run_round(policy, context).record
"""

from __future__ import annotations

import dataclasses
import pathlib
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import kubernetes.client
import pytest

from bench.prometheus import free_port
from loadaware import cluster, evict, kube, metrics, policy, runtime, sim
from loadaware import round as rounds
from loadaware.kube import ClientSettings
from tests.lib import alertmanager
from tests.lib.cache import caught_up
from tests.lib.sim import sim_server
from tests.lib.wait import poll


def metrics_server_policy(**overrides: Any) -> policy.LoadAwarePolicy:
    document: dict[str, Any] = {"metrics": {"metricsServer": {}}}
    for key, value in overrides.items():
        document[key] = value
    return policy.parse_policy(document)


def live_context(
    server: sim.SimServer,
    tmp_path: pathlib.Path,
    settings: policy.LoadAwarePolicy,
    **fields: Any,
) -> rounds.RoundContext:
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    client = kube.api_client(ClientSettings(kubeconfig=str(kubeconfig)))
    # loadaware's own namespace, where its state ConfigMap lives, as a deployment has it.
    namespaces = kubernetes.client.CoreV1Api(client)
    if settings.state.namespace not in {n.metadata.name for n in namespaces.list_namespace().items}:
        namespaces.create_namespace({"metadata": {"name": settings.state.namespace}})
    provider = metrics.MetricsServerProvider(settings.metrics, client)

    def read_cluster() -> cluster.ClusterState:
        return cluster.read_cluster(client=client)

    def read_usage(state: cluster.ClusterState) -> metrics.Usage:
        return rounds.fetch_cluster_usage(state, settings, provider, server.clock.now())

    defaults: dict[str, Any] = {
        "kube": evict.Kube(client),
        "read_cluster": read_cluster,
        "read_usage": read_usage,
        "clock": server.clock.now,
        # Waiting is virtual: the simulator's clock moves and its controllers catch up.
        "sleep": server.advance,
        "poll_seconds": 1.0,
        "recheck_reuse_seconds": 0.0,
    }
    defaults.update(fields)
    return rounds.RoundContext(**defaults)


@contextmanager
def cached_live_context(
    server: sim.SimServer,
    tmp_path: pathlib.Path,
    settings: policy.LoadAwarePolicy,
    **fields: Any,
) -> Iterator[tuple[rounds.RoundContext, cluster.ClusterCache]]:
    """live_context, wired as `run --once` is: the round plans from a watched cluster
    cache and the evictor reads it. Each virtual wait moves the simulator's clock
    and then waits until the cache has heard of everything that changed."""
    base = live_context(server, tmp_path, settings, **fields)
    kubeconfig = tmp_path / "kubeconfig"
    client = kube.api_client(ClientSettings(kubeconfig=str(kubeconfig)))
    with cluster.ClusterCache(client) as cache:
        assert cache.wait_synced(60), "the cluster cache did not sync"

        def sleep(seconds: float) -> None:
            server.advance(seconds)
            caught_up(cache, server)

        context = dataclasses.replace(
            base,
            kube=evict.Kube(client, reads=cache),
            read_cluster=runtime.cached_reader(settings, cache),
            check_cluster=runtime.cache_check(settings, cache),
            sleep=fields.get("sleep", sleep),
        )
        yield context, cache


def prometheus_context(
    server: sim.SimServer,
    tmp_path: pathlib.Path,
    settings: policy.LoadAwarePolicy,
    prometheus_query: Callable[[str], list[Any]],
    *,
    rate_window_seconds: int,
    timeout: float = 30.0,
) -> rounds.RoundContext:
    """A live round reading usage from a real Prometheus that scrapes `server` (in
    real time: Prometheus does not follow the virtual clock). Returns once every
    node can be read and Prometheus holds a whole rate window of samples: before
    that, rate() sees only part of its window and reads low."""
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    client = kube.api_client(ClientSettings(kubeconfig=str(kubeconfig)))
    provider = metrics.PrometheusProvider(settings.metrics)

    def read_usage(state: cluster.ClusterState) -> metrics.Usage:
        return rounds.fetch_cluster_usage(state, settings, provider, server.clock.now())

    context = rounds.RoundContext(
        kube=evict.Kube(client),
        read_cluster=lambda: cluster.read_cluster(client=client),
        read_usage=read_usage,
        clock=server.clock.now,
        poll_seconds=0.5,
    )

    def scraped() -> bool:
        try:
            read_usage(context.read_cluster())
        except Exception:
            return False
        return True

    covered = (
        f"min(count_over_time(node_memory_MemAvailable_bytes[{rate_window_seconds + 2}s]))"
        f" >= {rate_window_seconds + 1}"
    )
    poll(scraped, "Prometheus to have every node", timeout, interval=0.2)
    poll(lambda: prometheus_query(covered), "a whole rate window of samples", timeout, interval=0.2)
    return context


@contextmanager
def scraped_simulation(tmp_path: pathlib.Path, scenario: str) -> Iterator[ScrapedSimulation]:
    """`scenario` served by the simulated API, and a real Prometheus scraping it;
    both stopped at the end."""
    if not alertmanager.tools_available():
        pytest.fail("prometheus is needed: run `make system-deps`")
    with sim_server(scenario, wall_clock=True, ready_delay=0.5) as server:
        (tmp_path / "prom").mkdir()
        prometheus = alertmanager.ScrapingPrometheus(
            tmp_path / "prom",
            targets=[f"127.0.0.1:{server.port}"],
            rules="groups: []\n",
            alertmanager=f"127.0.0.1:{free_port()}",
        )
        try:
            prometheus.start()
            yield ScrapedSimulation(server=server, prometheus=prometheus)
        finally:
            prometheus.stop()


@dataclass(frozen=True)
class ScrapedSimulation:
    server: sim.SimServer
    prometheus: alertmanager.ScrapingPrometheus

    def query(self, promql: str) -> list[dict[str, Any]]:
        """An instant query's result vector."""
        quoted = urllib.parse.quote(promql)
        return list(self.prometheus.get_json(f"/api/v1/query?query={quoted}")["data"]["result"])
