"""`loadaware metrics dump`: read the policy's metrics source once, for the nodes
and pods of a cluster, judge it as a round would, and hand back the Usage that
becomes a `--metrics` file.

Also the glue between the cluster and metrics stages (metrics knows node names
and pod keys, not ClusterState) and the choice of provider for a policy.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable

from loadaware import cluster, errors, kube, metrics, plan, policy

ClusterReader = Callable[[], cluster.ClusterState]
ApiClientFactory = Callable[[], object]


def metrics_provider(
    settings: policy.MetricsSettings, api_client: ApiClientFactory
) -> metrics.MetricsProvider:
    """The provider the policy names. api_client is called only if the source needs
    the Kubernetes API (a Secret reference, metrics-server), at most once per Secret read."""
    if settings.prometheus is not None:

        def read_secret(namespace: str, name: str, key: str) -> str:
            return metrics.kubernetes_secret_reader(api_client())(namespace, name, key)

        return metrics.PrometheusProvider(settings, read_secret=read_secret)
    if settings.metrics_server is not None:
        return metrics.MetricsServerProvider(settings, api_client())
    raise errors.PolicyError(
        "the policy names no metrics source",
        problems=["metrics: set prometheus or metricsServer"],
    )


def fetch_cluster_usage(
    state: cluster.ClusterState,
    settings: policy.LoadAwarePolicy,
    provider: metrics.MetricsProvider,
    now: datetime.datetime,
) -> metrics.Usage:
    """Usage for the nodes of `state` and the pods bound to them, judged as a round
    would judge it: raises RefusedError when a round would refuse."""
    scopes = plan.node_scopes(state, settings.node_pools)
    pod_keys = [key for scope in scopes.values() for key in scope.pod_keys]
    usage = provider.fetch_usage(list(scopes), pod_keys, now=now)
    metrics.judge_usage(usage, scopes, settings.metrics, now)
    return usage


def dump_metrics(
    *,
    policy_file: str | os.PathLike[str],
    cluster_file: str | os.PathLike[str] | None = None,
    read_cluster: ClusterReader | None = None,
    api_client: ApiClientFactory | None = None,
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
    now: datetime.datetime | None = None,
) -> metrics.Usage:
    """The `metrics dump` round. The cluster comes from cluster_file, else read_cluster,
    else the live API (`kubeconfig` and `context`, as `run` reads them)."""
    settings = policy.load_policy(policy_file)
    factory = api_client or (lambda: kube.api_client(kubeconfig=kubeconfig, context=context))
    if cluster_file is not None:
        state = cluster.load_cluster_file(cluster_file)
    elif read_cluster is not None:
        state = read_cluster()
    else:
        state = cluster.read_cluster(client=factory())  # type: ignore[arg-type]
    provider = metrics_provider(settings.metrics, factory)
    return fetch_cluster_usage(
        state, settings, provider, now or datetime.datetime.now(datetime.UTC)
    )
