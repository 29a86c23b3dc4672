"""`loadaware simulate`: a full round in dry-run against an in-memory cluster.

The plan is applied the way a cluster would apply it: each evicted pod's
replacement is placed by the kube-scheduler model (by requests, not usage), and
its usage moves with it. The table shows what the nodes look like after.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping
from dataclasses import dataclass

from loadaware import cluster, metrics, plan, policy, scheduling
from loadaware import round as rounds


@dataclass(frozen=True, kw_only=True)
class SimulationResult:
    plan: plan.Plan
    observed: dict[str, dict[str, float]]  # node -> utilisation after the replacements landed
    landed: dict[str, str | None]  # pod key -> node its replacement landed on (None: Pending)
    hot_before: int
    hot_after: int

    @property
    def pending(self) -> int:
        return sum(1 for node in self.landed.values() if node is None)

    @property
    def landed_as_planned(self) -> int:
        expected = {e.pod: e.expected_node for e in self.plan.evictions}
        return sum(1 for pod, node in self.landed.items() if node == expected.get(pod))

    def summary(self) -> str:
        """One line: what the simulated round came to (the CLI prints it as its verdict)."""
        if self.plan.status == "refused":
            return f"refused: {self.plan.reason}"
        return (
            f"hot nodes {self.hot_before} → {self.hot_after}; "
            f"{len(self.plan.evictions)} evictions; "
            f"{self.landed_as_planned}/{len(self.landed)} replacements landed where planned; "
            f"{self.pending} pending"
        )


def simulate_round(
    state: cluster.ClusterState,
    usage: metrics.Usage,
    settings: policy.LoadAwarePolicy,
    now: datetime.datetime,
) -> SimulationResult:
    planned = rounds.timed_plan(state, usage, settings, now)
    if planned.status != "planned":
        return unchanged_result(planned)

    occupancy = scheduling.Occupancy.from_cluster(state)
    pods = {p.key: p for p in state.pods}
    schedulable = [n.name for n in state.nodes if n.ready and not n.unschedulable]
    node_usage = {name: [s.cpu_cores, s.memory_bytes] for name, s in usage.nodes.items()}
    # Named resources (a GPU's utilisation) move with the pod as cpu does.
    node_named = {name: dict(s.named) for name, s in usage.nodes.items()}
    landed: dict[str, str | None] = {}
    # The cluster's scheduler, as the policy describes it (steering.schedulerConfig).
    profiles = scheduling.modelled_profiles(
        settings.steering.scheduler_config, settings.steering.scheduler_names
    )
    for eviction in planned.evictions:
        pod = pods[eviction.pod]
        # The replacement is scheduled while its predecessor terminates, under the
        # eviction's steering taints; among tied nodes the planned one is taken.
        ties = scheduling.predict_replacement(
            pod,
            occupancy,
            schedulable,
            extra_taints={name: (plan.HOTSPOT_TAINT,) for name in eviction.steer},
            profile=profiles.for_pod(pod) or scheduling.DEFAULT_PROFILE,
        )
        target = (
            eviction.expected_node if eviction.expected_node in ties else next(iter(ties), None)
        )
        occupancy.remove(pod)
        node_usage[eviction.node][0] -= eviction.cpu_cores
        node_usage[eviction.node][1] -= eviction.memory_bytes
        _shift(node_named, eviction.node, eviction.named, -1.0)
        landed[pod.key] = target
        if target is not None:
            occupancy.add(pod, target)
            node_usage[target][0] += eviction.cpu_cores
            node_usage[target][1] += eviction.memory_bytes
            _shift(node_named, target, eviction.named, 1.0)

    moved = dataclasses.replace(
        usage,
        nodes={
            name: dataclasses.replace(
                usage.nodes[name], cpu_cores=c, memory_bytes=m, named=node_named[name]
            )
            for name, (c, m) in node_usage.items()
        },
    )
    # The replacements hold pod slots where they landed.
    relocated = {key: node for key, node in landed.items() if node is not None}
    after = dataclasses.replace(
        state,
        pods=tuple(
            dataclasses.replace(p, node_name=relocated[p.key]) if p.key in relocated else p
            for p in state.pods
            if p.key not in landed or p.key in relocated
        ),
    )
    return result_after(planned, landed, after, moved, settings)


def unchanged_result(planned: plan.Plan) -> SimulationResult:
    """A round that planned nothing to carry out: the nodes stay as they were."""
    hot = sum(1 for n in planned.nodes if n.node_class == "hot")
    observed = {n.name: dict(n.before) for n in planned.nodes}
    return SimulationResult(
        plan=planned, observed=observed, landed={}, hot_before=hot, hot_after=hot
    )


def result_after(
    planned: plan.Plan,
    landed: dict[str, str | None],
    after: cluster.ClusterState,
    usage_after: metrics.Usage,
    settings: policy.LoadAwarePolicy,
) -> SimulationResult:
    """The round's result, the nodes classified again as they are once the
    replacements landed (the plan's excluded nodes stay excluded)."""
    excluded = {n.name: n.note for n in planned.nodes if n.node_class == "excluded"}
    table_after = plan.classify_nodes(
        after,
        usage_after,
        settings.node_pools,
        excluded,
        allocatable_names=plan.allocatable_names(settings),
    )
    return SimulationResult(
        plan=planned,
        observed=dict(zip(table_after.names, table_after.utilisation_by_node(), strict=True)),
        landed=landed,
        hot_before=sum(1 for n in planned.nodes if n.node_class == "hot"),
        hot_after=sum(1 for c in table_after.classes if c == "hot"),
    )


def _shift(
    node_named: dict[str, dict[str, float]], node: str, named: Mapping[str, float], sign: float
) -> None:
    values = node_named.get(node)
    if values is None:
        return
    for resource, amount in named.items():
        if resource in values:
            values[resource] += sign * amount
