"""`loadaware serve`: the long-running service, wired from the policy.

build_service puts together what `loadaware serve` runs: live rounds on one
watched cluster cache, the binding observer on that cache (how well the
scheduler model agrees with the cluster's bindings), the leader Lease (unless
disabled) and the readiness checks of the API, the metrics source and the
state. serve() runs it behind its HTTP endpoints (_service_http) until told to
stop, and serve_policy is the command: policy file in, SIGTERM or SIGINT to
stop. The rounds, triggers and shutdown order are the service's (_service);
what it answers about itself is _service_status's.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from loadaware import cluster, evict, kube, policy
from loadaware.runtime import (
    _leader,
    _live,
    _scheduler_check,
    _service,
    _service_http,
    _service_metrics,
)

if TYPE_CHECKING:
    import kubernetes.client

log = logging.getLogger(__name__)


def serve(
    service: _service.Service,
    listen: str,
    stop: threading.Event,
    *,
    ready: Callable[[_service_http.HttpServer], None] | None = None,
) -> None:
    """Run until `stop` is set (the CLI sets it on SIGTERM or SIGINT), then shut down
    in order: triggers off, the running round finishes, lease released, HTTP closed."""
    with _service_http.HttpServer(service, listen) as http_server:
        log.info("listening", extra={"address": http_server.url})
        service.start_background()
        if ready is not None:
            ready(http_server)
        stop.wait()
        log.info("shutting down: no new rounds; waiting for the running one")
        service.stop()


def build_service(
    settings: policy.LoadAwarePolicy,
    api: kubernetes.client.ApiClient,
    *,
    identity: str | None = None,
) -> _service.Service:
    """The Service `loadaware serve` runs: live rounds, the Lease (unless disabled),
    and readiness checks of the API, the metrics source and the state."""
    elector: _leader.Elector
    if settings.serve.leader_election.enabled:
        elector = _leader.LeaseElector(
            api,
            settings.serve.leader_election,
            identity=identity,
            on_change=lambda leading: _service_metrics.LEADER.set(1 if leading else 0),
        )
    else:
        elector = _leader.AlwaysLeader(identity or _leader.default_identity())
    cache = cluster.ClusterCache(
        api,
        sync_timeout=settings.cluster_cache.sync_timeout.total_seconds(),
        on_event=_service_metrics.observe_cache_event,
        on_relist=_service_metrics.observe_cache_relist,
    )
    context = _live.live_round_context(settings, api, cache=cache)
    observer = _scheduler_check.binding_observer(
        settings, cache, on_binding=_service_metrics.count_binding
    )
    # A round refuses to make landing claims while the observed agreement is low.
    context = dataclasses.replace(context, model_agreement=observer.snapshot)

    def check_state() -> None:
        # As a round checks it: a policy that only dry-runs needs no namespace.
        evict.StateStore(context.kube, settings, _service.utc_now).check_access(
            write=not settings.dry_run
        )

    return _service.Service(
        settings,
        context,
        elector=elector,
        read_secret=_live.secret_reader(api),
        cache=cache,
        observer=observer,
        ready_checks={
            # Not ready until the first list of every kind, nor while the cache is stale.
            "clusterCache": _live.cache_check(settings, cache),
            "api": lambda: _live.check_api(api),
            "metrics": _live.metrics_check(settings, api),
            "state": check_state,
        },
    )


def serve_policy(
    *,
    policy_file: str | os.PathLike[str],
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
    listen: str | None = None,
    identity: str | None = None,
) -> int:
    """`loadaware serve`: build everything from the policy and serve until SIGTERM/SIGINT."""
    settings = policy.load_policy(policy_file)
    api = kube.api_client(kubeconfig=kubeconfig, context=context)
    service = build_service(settings, api, identity=identity)
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        log.info("signal received", extra={"signal": signal.Signals(signum).name})
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    serve(service, listen or settings.serve.listen, stop)
    return 0
