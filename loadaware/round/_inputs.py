"""A round's inputs: the usage of the nodes and pods in scope, read from the
policy's metrics source and judged as the planner will judge it, and the one
way a round reads usage (the moment's, or the forecast in its place).

The glue between the cluster and metrics stages lives here: metrics knows node
names and pod keys, not ClusterState.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

from loadaware import cluster, errors, metrics, plan, policy

ApiClientFactory = Callable[[], object]
# Usage for the nodes and pods of a cluster; raises RefusedError when it cannot vouch for it.
UsageReader = Callable[[cluster.ClusterState], metrics.Usage]


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
    metrics.assess_usage(usage, scopes, settings.metrics, now)
    return usage


class UsageReads:
    """The round's one seam to usage. `moment` reads what the nodes use now (the
    relief check judges that); `planning` is what the plan, the re-checks and
    landing control see: the moment's usage, or with a forecast set, the forecast's
    values in its place (with the moment's sample times, so staleness still
    refuses). The first reading is kept: the round's usage summary."""

    def __init__(self, read: UsageReader) -> None:
        self._read = read
        self.forecast: metrics.Forecast | None = None
        self.first: metrics.Usage | None = None

    def moment(self, state: cluster.ClusterState) -> metrics.Usage:
        usage = self._read(state)
        if self.first is None:
            self.first = usage
        return usage

    def planning(self, state: cluster.ClusterState) -> metrics.Usage:
        return self.as_planned(self.moment(state))

    def as_planned(self, usage: metrics.Usage) -> metrics.Usage:
        """`usage` as the plan sees it: with the forecast's values, when there is one."""
        if self.forecast is None:
            return usage
        return metrics.forecast_usage(usage, self.forecast)
