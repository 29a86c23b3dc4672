"""`loadaware simulate --api`: the simulation, through the Kubernetes API.

The scenario is served by the simulated API server in-process; everything
after that is the production path of a live round (`run_round`): the cluster is
read through the official client (`cluster.read_cluster`), usage through
metrics.k8s.io (`metrics.MetricsServerProvider`), the plan is built as a live
round builds it, and the evictor carries it out as it does against a real
cluster: the soft taints set and removed, one eviction after the previous
replacement was bound, each move's landing derived again from the cluster as
observed (landing control), and the breaker. The simulated controllers recreate
the pods and the simulated kube-scheduler, sampling nodes as kube-scheduler does,
places the replacements; the result reports where they really landed and what
the nodes use afterwards, read back through the API again.

Grace periods, start-up delays and the evictor's waits pass on the simulated
clock, moved forward rather than waited for, so the command takes seconds.
"""

from __future__ import annotations

import dataclasses
import datetime
import pathlib
import tempfile
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from loadaware import cluster, errors, evict, kube, metrics, plan, policy
from loadaware import round as rounds
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
    record: rounds.RoundRecord | None = None  # the live round, as its audit record has it


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

    clock = sim.SimClock(now or datetime.datetime.now(datetime.UTC), speed=0.0)
    server = sim.start_server(
        scenario=scenario, objects=objects, metrics=metrics_document, clock=clock, ready_delay=1.0
    )
    source = settings.metrics.model_copy(
        update={"prometheus": None, "metrics_server": policy.MetricsServerSource()}
    )
    # The simulated cluster is there to be changed: the round evicts.
    live = settings.model_copy(update={"metrics": source, "dry_run": False})
    with server, tempfile.TemporaryDirectory(prefix="loadaware-sim-") as tmp:
        kubeconfig = server.write_kubeconfig(pathlib.Path(tmp) / "kubeconfig")
        client_settings = kube.ClientSettings(kubeconfig=str(kubeconfig))
        client = kube.api_client(client_settings)
        try:
            provider = metrics.MetricsServerProvider(source, client)
            # loadaware's own namespace, where its state lives, as a deployment has it.
            server.ensure_namespace(live.state.namespace)
            state = cluster.read_cluster(client_settings, client=client)

            def read_usage(snapshot: cluster.ClusterState) -> metrics.Usage:
                return rounds.fetch_cluster_usage(snapshot, live, provider, server.clock.now())

            context = rounds.RoundContext(
                kube=evict.Kube(client),
                read_cluster=lambda: cluster.read_cluster(client_settings, client=client),
                read_usage=read_usage,
                clock=server.clock.now,
                sleep=server.advance,
            )
            record = rounds.run_round(
                live, context, rounds.RoundOptions(trigger="simulate", dry_run=False)
            ).record
            planned = record.plan
            if planned is None or planned.status != "planned" or record.execution is None:
                result = unchanged_result(planned or _refused(record))
                return ApiSimulation(
                    result=result, title=title, refused_by_budget=(), record=record
                )
            _settle(server, client_settings, client)
            after = cluster.read_cluster(client_settings, client=client)
            usage_after = _usage(provider, after, server.clock.now())
        finally:
            client.close()
    outcomes = record.execution.outcomes
    refused = [o.pod for o in outcomes if o.result == "refused-pdb"]
    evicted = {o.pod for o in outcomes if o.result == "evicted"}
    carried_out = dataclasses.replace(
        planned, evictions=tuple(e for e in planned.evictions if e.pod in evicted)
    )
    landed = _landed(state, after, carried_out, refused)
    result = result_after(planned, landed, after, usage_after, settings)
    return ApiSimulation(
        result=result, title=title, refused_by_budget=tuple(refused), record=record
    )


def _refused(record: rounds.RoundRecord) -> plan.Plan:
    """A refused round's plan, as `plan` shows one: no evictions, the reason."""
    return plan.Plan(status="refused", reason=record.reason)


def _usage(
    provider: metrics.MetricsServerProvider, state: cluster.ClusterState, now: datetime.datetime
) -> metrics.Usage:
    pods = [p.key for p in state.pods if p.is_load]
    return provider.fetch_usage([n.name for n in state.nodes], pods, now=now)


def _settle(
    server: Any, client_settings: kube.ClientSettings, client: kubernetes.client.ApiClient
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
