"""A live round against the simulated API, wired the way `run --once` wires it:
the official client, the live cluster reader, the metrics-server provider over
metrics.k8s.io, and the evictor; time is the simulator's (virtual) clock.

    with sim_server("small") as server:
        context = live_context(server, tmp_path, policy)
        record = runtime.run_round(policy, context)
"""

from __future__ import annotations

import pathlib
from typing import Any

import kubernetes.client

from loadaware import cluster, evict, metrics, policy, runtime, sim
from loadaware.cluster import ClientSettings


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
) -> runtime.RoundContext:
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    client = cluster.api_client(ClientSettings(kubeconfig=str(kubeconfig)))
    # loadaware's own namespace, where its state ConfigMap lives, as a deployment has it.
    namespaces = kubernetes.client.CoreV1Api(client)
    if settings.state.namespace not in {n.metadata.name for n in namespaces.list_namespace().items}:
        namespaces.create_namespace({"metadata": {"name": settings.state.namespace}})
    provider = metrics.MetricsServerProvider(settings.metrics, client)

    def read_cluster() -> cluster.ClusterState:
        return cluster.read_cluster(client=client)

    def read_usage(state: cluster.ClusterState) -> metrics.Usage:
        return runtime.fetch_cluster_usage(state, settings, provider, server.clock.now())

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
    return runtime.RoundContext(**defaults)
