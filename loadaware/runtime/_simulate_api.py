"""`loadaware simulate --api`: the simulation, through the Kubernetes API.

The scenario is served by the simulated API server in-process; everything
after that is the production path: the cluster is read through the official
client (`cluster.read_cluster`), usage through metrics.k8s.io
(`metrics.MetricsServerProvider`), the plan is built as a live round builds
it, and each planned pod is evicted with a policy/v1 Eviction. The simulated
controllers then recreate the pods and the simulated kube-scheduler places the
replacements; the result reports where they really landed and what the nodes
use afterwards, read back through the API again.

Grace periods and start-up delays pass on the simulated clock, moved forward
rather than waited for, so the command takes seconds.
"""

from __future__ import annotations

import dataclasses
import datetime
import pathlib
import tempfile
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from loadaware import cluster, errors, metrics, plan, policy
from loadaware.runtime._offline import timed_plan
from loadaware.runtime._simulate import SimulationResult, result_after, unchanged_result

if TYPE_CHECKING:
    import kubernetes.client

_SETTLE_STEP_SECONDS = 35.0  # past the default 30 s grace period
_SETTLE_ROUNDS = 10


@dataclasses.dataclass(frozen=True, kw_only=True)
class ApiSimulation:
    result: SimulationResult
    title: str
    refused_by_budget: tuple[str, ...]  # pods whose eviction a PDB refused (429)


def simulate_through_api(
    *,
    settings: policy.LoadAwarePolicy,
    scenario: str | None = None,
    objects: list[Mapping[str, Any]] | None = None,
    metrics_document: Mapping[str, Any] | None = None,
    now: datetime.datetime | None = None,
    title: str = "",
) -> ApiSimulation:
    from loadaware import sim  # only the CLI and runtime may reach the simulator

    server = sim.start_server(
        scenario=scenario, objects=objects, metrics=metrics_document, now=now, ready_delay=1.0
    )
    with server, tempfile.TemporaryDirectory(prefix="loadaware-sim-") as tmp:
        kubeconfig = server.write_kubeconfig(pathlib.Path(tmp) / "kubeconfig")
        client_settings = cluster.ClientSettings(kubeconfig=str(kubeconfig))
        client = cluster.api_client(client_settings)
        try:
            source = settings.metrics.model_copy(
                update={"prometheus": None, "metrics_server": policy.MetricsServerSource()}
            )
            provider = metrics.MetricsServerProvider(source, client)
            state = cluster.read_cluster(client_settings, client=client)
            moment = server.clock.now()
            usage = _usage(provider, state, moment)
            planned = timed_plan(state, usage, settings, moment)
            if planned.status != "planned":
                result = unchanged_result(planned)
                return ApiSimulation(result=result, title=title, refused_by_budget=())
            refused = _evict(client, planned)
            _settle(server, client_settings, client)
            after = cluster.read_cluster(client_settings, client=client)
            moment = server.clock.now()
            usage_after = _usage(provider, after, moment)
        finally:
            client.close()
    landed = _landed(state, after, planned, refused)
    result = result_after(planned, landed, after, usage_after, settings)
    return ApiSimulation(result=result, title=title, refused_by_budget=tuple(refused))


def _usage(
    provider: metrics.MetricsServerProvider, state: cluster.ClusterState, now: datetime.datetime
) -> metrics.Usage:
    pods = [p.key for p in state.pods if p.is_load]
    return provider.fetch_usage([n.name for n in state.nodes], pods, now=now)


def _evict(client: kubernetes.client.ApiClient, planned: plan.Plan) -> list[str]:
    import kubernetes.client

    core = kubernetes.client.CoreV1Api(client)
    refused: list[str] = []
    for eviction in planned.evictions:
        namespace, name = eviction.pod.split("/", 1)
        body = kubernetes.client.V1Eviction(
            metadata=kubernetes.client.V1ObjectMeta(name=name, namespace=namespace)
        )
        try:
            core.create_namespaced_pod_eviction(name, namespace, body, _request_timeout=30)
        except kubernetes.client.ApiException as exc:
            if exc.status == 429:
                refused.append(eviction.pod)
                continue
            raise cluster.translate_api_exception(exc, f"evicting {eviction.pod}") from exc
    return refused


def _settle(
    server: Any, client_settings: cluster.ClientSettings, client: kubernetes.client.ApiClient
) -> None:
    """Move the simulated clock on until no pod is terminating, Pending on a node or unready."""
    for _ in range(_SETTLE_ROUNDS):
        server.advance(_SETTLE_STEP_SECONDS)
        state = cluster.read_cluster(client_settings, client=client)
        busy = [
            p
            for p in state.pods
            if p.deletion_timestamp is not None
            or (p.node_name is not None and (p.phase == "Pending" or not p.ready))
        ]
        if not busy:
            return
        time.sleep(0.05)  # let the controllers' thread run its round
    raise errors.ClusterError(
        "the simulated cluster did not settle after the evictions", reference="sim-not-settled"
    )


def _landed(
    before: cluster.ClusterState,
    after: cluster.ClusterState,
    planned: plan.Plan,
    refused: list[str],
) -> dict[str, str | None]:
    """Evicted pod -> the node its replacement runs on (None: Pending), matched by owner."""
    known = {p.uid for p in before.pods}
    fresh: dict[tuple[str, str], list[cluster.Pod]] = {}
    for pod in after.pods:
        if pod.uid not in known and pod.owner is not None:
            fresh.setdefault((pod.namespace, pod.owner.uid), []).append(pod)
    old = {p.key: p for p in before.pods}
    landed: dict[str, str | None] = {}
    for eviction in planned.evictions:
        if eviction.pod in refused:
            continue
        pod = old[eviction.pod]
        if pod.owner is None:
            landed[eviction.pod] = None
            continue
        candidates = fresh.get((pod.namespace, pod.owner.uid)) or []
        # A StatefulSet pod comes back under its own name with a new uid.
        same_name = [p for p in candidates if p.name == pod.name]
        chosen = same_name[0] if same_name else (candidates[0] if candidates else None)
        if chosen is not None:
            candidates.remove(chosen)
        landed[eviction.pod] = None if chosen is None or not chosen.ready else chosen.node_name
    return landed
