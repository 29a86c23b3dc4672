"""`loadaware metrics dump`: read the policy's metrics source once, for the nodes
and pods of a cluster, judge it as a round would (round.fetch_cluster_usage), and
hand back the Usage that becomes a `--metrics` file. Not on a live round's path.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable

from loadaware import cluster, kube, metrics, policy
from loadaware import round as rounds

ClusterReader = Callable[[], cluster.ClusterState]


def dump_metrics(
    *,
    policy_file: str | os.PathLike[str],
    cluster_file: str | os.PathLike[str] | None = None,
    read_cluster: ClusterReader | None = None,
    api_client: Callable[[], object] | None = None,
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
    provider = rounds.metrics_provider(settings.metrics, factory)
    return rounds.fetch_cluster_usage(
        state, settings, provider, now or datetime.datetime.now(datetime.UTC)
    )
