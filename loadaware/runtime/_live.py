"""What a live round reads and writes through: the Kubernetes API (kubeconfig or
in-cluster) and the policy's metrics source, put together as a RoundContext.

Each part can be injected (read_cluster, provider, api_client), so `run --once`
and `serve` run unchanged against a real cluster, the simulated one, or stubs.
"""

from __future__ import annotations

import datetime
import logging
import os
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from loadaware import cluster, errors, evict, kube, metrics, policy
from loadaware import round as rounds
from loadaware.runtime import _service_metrics

if TYPE_CHECKING:
    import kubernetes.client

log = logging.getLogger(__name__)

ClusterReader = Callable[[], cluster.ClusterState]


def check_api(api: kubernetes.client.ApiClient) -> None:
    """Raises ClusterError unless the API server answers a cheap authorised read; the
    error names the server and the cause (connection refused, TLS, 401, 403)."""
    import kubernetes.client

    with kube.translated("listing nodes", kube.server_of(api)):
        kubernetes.client.CoreV1Api(api).list_node(
            limit=1, _preload_content=False, _request_timeout=5.0
        )


def secret_reader(api: kubernetes.client.ApiClient) -> metrics.SecretReader:
    return metrics.kubernetes_secret_reader(api)


def live_round_context(
    settings: policy.LoadAwarePolicy,
    api: kubernetes.client.ApiClient,
    *,
    read_cluster: ClusterReader | None = None,
    provider: metrics.MetricsProvider | None = None,
    clock: Callable[[], datetime.datetime] | None = None,
    poll_seconds: float = 1.0,
    cache: cluster.ClusterCache | None = None,
) -> rounds.RoundContext:
    """The RoundContext of a live round against the cluster `api` talks to: with
    `cache`, the round plans from it and the evictor reads it (see cached_reader)."""
    now = clock or (lambda: datetime.datetime.now(datetime.UTC))
    source = provider or rounds.metrics_provider(settings.metrics, lambda: api)

    def read_usage(state: cluster.ClusterState) -> metrics.Usage:
        return rounds.fetch_cluster_usage(state, settings, source, now())

    read_forecast = None
    if settings.metrics.prometheus is not None:
        forecaster = metrics.PrometheusForecaster(settings.metrics, read_secret=secret_reader(api))
        read_forecast = rounds.forecast_reader(settings, forecaster)
    if cache is not None:
        check = cache_check(settings, cache)
        return rounds.RoundContext(
            kube=evict.Kube(api, reads=cache),
            read_cluster=read_cluster or cached_reader(settings, cache),
            read_usage=read_usage,
            clock=now,
            poll_seconds=poll_seconds,
            check_cluster=check,
            read_forecast=read_forecast,
        )
    return rounds.RoundContext(
        kube=evict.Kube(api),
        read_cluster=read_cluster or (lambda: cluster.read_cluster(client=api)),
        read_usage=read_usage,
        clock=now,
        poll_seconds=poll_seconds,
        read_forecast=read_forecast,
    )


def cache_check(
    settings: policy.LoadAwarePolicy, cache: cluster.ClusterCache
) -> Callable[[], None]:
    """RefusedError (exit 3, stale-cluster-cache) when the cache is older than
    clusterCache.maxAge, or has not listed every kind."""
    bound = settings.cluster_cache.max_age

    def check() -> None:
        cache.check_fresh(bound)

    return check


def cached_reader(settings: policy.LoadAwarePolicy, cache: cluster.ClusterCache) -> ClusterReader:
    """The cluster as the cache holds it, after waiting (up to clusterCache.syncTimeout)
    for its first list and refusing a view older than its bound."""
    check = cache_check(settings, cache)
    timeout = settings.cluster_cache.sync_timeout.total_seconds()

    def read() -> cluster.ClusterState:
        cache.wait_synced(timeout)
        check()
        return cache.snapshot()

    return read


def metrics_check(
    settings: policy.LoadAwarePolicy,
    api: kubernetes.client.ApiClient,
    provider: metrics.MetricsProvider | None = None,
    clock: Callable[[], datetime.datetime] | None = None,
) -> Callable[[], None]:
    """A readiness check: the metrics source answers (any RefusedError says why not)."""
    source = provider or rounds.metrics_provider(settings.metrics, lambda: api)
    now = clock or (lambda: datetime.datetime.now(datetime.UTC))

    def check() -> None:
        source.fetch_usage([], [], now=now())

    return check


def run_once(
    *,
    policy_file: str | os.PathLike[str],
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
    dry_run: bool | None = None,
    api: kubernetes.client.ApiClient | None = None,
    read_cluster: ClusterReader | None = None,
    provider: metrics.MetricsProvider | None = None,
    forecast_horizon: datetime.timedelta | None = None,
) -> rounds.RoundResult:
    """`loadaware run --once`: one live round; its record says what happened.
    forecast_horizon: plan ahead, as a schedule with `forecast` does."""
    settings = policy.load_policy(policy_file)
    if forecast_horizon is not None and settings.metrics.prometheus is None:
        raise errors.InputError(
            "--forecast-horizon needs metrics.prometheus: a forecast is read from past weeks"
        )
    client = api or kube.api_client(kubeconfig=kubeconfig, context=context)
    # The round plans from a watched cache, and the evictor's checks and waits read
    # it: one list of each kind, then events, whatever the number of evictions.
    cache = (
        cluster.ClusterCache(
            client, sync_timeout=settings.cluster_cache.sync_timeout.total_seconds()
        )
        if read_cluster is None
        else None
    )
    round_context = live_round_context(
        settings, client, read_cluster=read_cluster, provider=provider, cache=cache
    )
    # A Job's pod gets SIGTERM when it is deleted or its node drains: stop evicting,
    # stop waiting, remove the round's taints and still print the record.
    terminated: list[str] = []

    def on_sigterm(signum: int, _frame: object) -> None:
        terminated.append(signal.Signals(signum).name)

    previous = (
        signal.signal(signal.SIGTERM, on_sigterm)
        if threading.current_thread() is threading.main_thread()
        else None
    )
    if cache is not None:
        cache.start()
    try:
        result = rounds.run_round(
            settings,
            round_context,
            rounds.RoundOptions(
                trigger="once",
                dry_run=dry_run,
                forecast_horizon=forecast_horizon,
                stop_requested=lambda: f"{terminated[0]} received" if terminated else None,
                on_phase=lambda step: log.info("round step", extra={"step": step}),
            ),
        )
    finally:
        if cache is not None:
            cache.stop()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    _service_metrics.observe_round(result)
    log_round_result(result.record)
    return result


def log_round_result(record: rounds.RoundRecord, label: str = "") -> None:
    """A round's result, one line at INFO, whatever its trigger: what it did of its
    plan and, when it did not finish as planned, why."""
    execution = record.execution
    log.info(
        "round result",
        extra={
            "round": record.round_id,
            "trigger": record.trigger,
            "label": label or None,
            "status": record.status,
            "evicted": execution.count("evicted") if execution else 0,
            "planned": len(record.plan.evictions) if record.plan else 0,
            "dry_run": record.dry_run,
            "reason": record.reason or None,
        },
    )
