"""A baseline planner: kubernetes-sigs/descheduler LowNodeUtilization's eviction order.

loadaware is measured against what the descheduler would evict on the same
instance. This module re-implements the order and the stop conditions of its
`nodeutilization` package (lownodeutilization.go: Balance; nodeutilization.go:
evictPodsFromSourceNodes, evictPods, sortNodesByUsage,
assessAvailableResourceInNodes, capNodeCapacitiesToThreshold; pod/pods.go:
SortPodsBasedOnPriorityLowToHigh), with actual usage from metrics (the
KubernetesMetrics usage client), and returns the same Plan type as
`loadaware.plan.build_plan`.

The algorithm, as the descheduler runs it:

1. Node usage is (cpu, memory, pods): metrics for cpu and memory, the number of
   non-terminal pods bound to the node for pods. A node is overutilized when
   any judged resource is strictly above its pool's targetThresholds, and
   underutilized when every judged resource is at or below its thresholds and
   the node is schedulable. Nothing happens without an underutilized node,
   when every node is underutilized, or when none is overutilized.
2. The capacity the round may move is summed once over the underutilized
   nodes: per resource, the node's allocatable capped at targetThresholds
   (full allocatable for a resource without a threshold, and for pods) minus
   its usage.
3. Overutilized nodes are visited by the sum of their raw usage values (cpu in
   millicores + memory in bytes + pod count, so in practice by memory bytes),
   highest first.
4. On each, the pods the DefaultEvictor's Filter lets go are sorted by priority,
   lowest first, then QoS class: BestEffort, Burstable, Guaranteed.
5. Pods are taken in that order while the node is still over its capped
   capacity on some resource and every resource of the movable capacity is
   above zero. A pod is skipped when it tolerates the taints of no
   underutilized node, when nodeFit is on and it fits no other ready node, or
   when it has no usage sample. Each eviction subtracts the pod's usage from
   the node and from the movable capacity (and one pod from both).
6. The eviction limits are checked as the PodEvictor does: the total limit ends
   the round, the per-node limit ends the node, the per-namespace limit (and
   loadaware's per-workload limit, which the descheduler does not have) skips
   the pod, and a PodDisruptionBudget with no disruption left refuses the
   eviction (429 from the Eviction API), which also skips the pod.

Where it departs from the descheduler, on purpose:

- Protections are loadaware's `pod_eligibility`, which is the descheduler's
  DefaultEvictor Filter plus the stricter rules DESIGN.md gives (mirror,
  static, bare and non-running pods are never evicted); PodDisruptionBudgets
  are charged per eviction in the round.
- nodeFit asks loadaware's `Occupancy.fit_mask` whether the pod fits some other
  ready node of the snapshot, as PodFitsAnyOtherNode does; fit_mask checks a
  little more than the descheduler's NodeFit (required pod affinity,
  anti-affinity in both directions over topology domains, host ports).
- Ties are broken deterministically where the descheduler's sort.Slice (and Go
  map order) leaves them open: nodes by name, pods by their order on the node.
  A pod with no priority set sorts first in the descheduler; loadaware reads
  it as priority 0.
- Node pools: the descheduler has one set of thresholds per profile; here each
  node is judged against its own pool's, and every underutilized node of any
  pool counts as a destination.
- Named resources (metrics.prometheus.resources, e.g. gpu) are read from the
  metrics like cpu, as if the descheduler's usage client had them: a pool that
  judges one is judged on it, the movable capacity holds a column for it, a
  source node of that pool stops when that column is used up too (a node of
  another pool does not wait for it), and a pod without a value for it on
  such a node has no fresh usage. Their raw values add to the usage sum.

Expected node: the descheduler does not choose one; kube-scheduler places the
replacement. `expected_node` is where loadaware's model of the cluster's
kube-scheduler places it (the profile the pod's schedulerName names in the policy's
steering.schedulerConfig, the default profile without one;
`loadaware.scheduling.predict_replacement`: scored
while the evicted pod terminates, its requests still counted; the first by name
of the nodes tied for the best score), applying the evictions in order, or None
when no node fits. It is a prediction for measuring bounce-back (a replacement
landing on a hot node or back on its source), not a target the baseline chose,
so target rules do not apply to it. The descheduler sets no taints: `steer` is
empty. `NodeReport.after` moves each pod's usage to that predicted node.

The Plan says so: reason "descheduler-order: ...", every eviction's reason is
"descheduler-order", and `solver.method` is "greedy" with no lower bound.
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Sequence
from typing import Final, Literal

import numpy as np

from loadaware import errors, metrics, plan, scheduling
from loadaware.cluster import ClusterState, Pod, Taint
from loadaware.metrics import Usage
from loadaware.policy import LoadAwarePolicy

DESCHEDULER_ORDER: Final = "descheduler-order"

# SortPodsBasedOnPriorityLowToHigh's tiers for pods of equal priority.
QOS_EVICTION_RANK: Final = {"BestEffort": 0, "Burstable": 1, "Guaranteed": 2}

_BUILTIN: Final = ("cpu", "memory", "pods")


def plan_descheduler_order(
    cluster: ClusterState,
    usage: Usage,
    policy: LoadAwarePolicy,
    now: datetime.datetime,
) -> plan.Plan:
    """Evict in LowNodeUtilization's order and stop where it stops (see the module docstring).

    Refuses on stale or implausible metrics exactly as build_plan does, so that
    the two are compared on the same rounds.
    """
    try:
        verdict = metrics.assess_usage(
            usage, plan.node_scopes(cluster, policy.node_pools), policy.metrics, now
        )
    except errors.RefusedError as exc:
        return plan.Plan(status="refused", reason=f"{exc.reference}: {exc.message}")
    table = plan.classify_nodes(
        cluster,
        usage,
        policy.node_pools,
        verdict.excluded_nodes,
        allocatable_names=plan.allocatable_names(policy),
    )
    return _Round(cluster, usage, policy, now, table, verdict.stale_pods).run()


def eviction_order(pods: Sequence[Pod]) -> list[Pod]:
    """Pods in the order LowNodeUtilization tries them: priority low to high, then
    BestEffort, Burstable, Guaranteed; stable, so equal pods keep their order."""
    return sorted(pods, key=lambda p: (p.priority, QOS_EVICTION_RANK.get(p.qos_class, 1)))


def _tolerates_all(pod: Pod, taints: tuple[Taint, ...]) -> bool:
    # utils.PodToleratesTaints: every taint of the node, whatever its effect, and
    # only when the pod has at least as many tolerations as the node has taints.
    if len(pod.tolerations) < len(taints):
        return False
    return all(any(t.tolerates(taint) for t in pod.tolerations) for taint in taints)


def _workload_key(pod: Pod) -> str:
    owner = pod.workload or pod.owner
    if owner is None:
        return f"Pod/{pod.namespace}/{pod.name}"
    return f"{owner.kind}/{pod.namespace}/{owner.name}"


class _RoundLimitError(Exception):
    """maxNoOfPodsToEvictTotal reached: the descheduler's EvictionTotalLimitError."""


class _Round:
    """One LowNodeUtilization Balance call, with the state it mutates."""

    def __init__(
        self,
        cluster: ClusterState,
        usage: Usage,
        policy: LoadAwarePolicy,
        now: datetime.datetime,
        table: plan.NodeTable,
        stale_pods: frozenset[str],
    ) -> None:
        self.cluster = cluster
        self.usage = usage
        self.policy = policy
        self.now = now
        self.table = table
        self.stale_pods = stale_pods
        self.nodes = cluster.nodes_by_name
        count = len(table.names)
        pods_on = np.array(
            [len(cluster.pods_by_node.get(name, ())) for name in table.names], dtype=float
        )
        alloc_pods = np.array(
            [self.nodes[name].allocatable_pods for name in table.names], dtype=float
        )
        # (cpu cores, memory bytes, the table's other columns, pods) per node, and what
        # each may hold: allocatable capped at targetThresholds
        # (capNodeCapacitiesToThreshold; uncapped where a resource has no threshold,
        # which is the case for pods unless a pool judges them).
        capped = np.where(np.isnan(table.high), 1.0, table.high) * table.allocatable
        self.resources = table.resources
        if plan.POD_COUNT in table.resources:
            self.used = table.usage.copy()
            self.capacity = capped
            self.pods_column: int | None = None  # pods are one of the table's columns
        else:
            self.used = np.column_stack([table.usage, pods_on])
            self.capacity = np.column_stack([capped, alloc_pods])
            self.pods_column = len(table.resources)
        # Per node, the columns whose movable capacity must be left to go on: cpu,
        # memory and pods, and the named resources its pool judges.
        width = self.used.shape[1]
        builtin = np.array(
            [k >= len(self.resources) or self.resources[k] in _BUILTIN for k in range(width)]
        )
        judged = np.zeros((count, width), dtype=bool)
        judged[:, : len(self.resources)] = ~np.isnan(table.high)
        self.checked = judged | builtin
        self.after = table.usage.copy()  # the table's columns after the predicted landings
        self.in_round = np.array([c != "excluded" for c in table.classes], dtype=bool)
        ratios = table.utilisation()
        self.hot = [i for i in range(count) if table.classes[i] == "hot"]
        self.low = [i for i in range(count) if self._is_underutilized(i, ratios[i])]
        self.available = np.zeros(width)  # movable capacity left, per column
        self.skipped: Counter[str] = Counter()
        self.notes: dict[int, str] = {}
        self.evictions: list[plan.Eviction] = []
        limits = policy.limits
        self.limit_total = limits.max_no_of_pods_to_evict_total
        self.limit_node = limits.max_no_of_pods_to_evict_per_node
        self.limit_namespace = limits.max_no_of_pods_to_evict_per_namespace
        self.limit_workload = limits.max_no_of_pods_to_evict_per_workload
        self.per_node: Counter[str] = Counter()
        self.per_namespace: Counter[str] = Counter()
        self.per_workload: Counter[str] = Counter()
        self.pdb_left = {p.key: p.disruptions_allowed for p in cluster.pdbs}

    def _is_underutilized(self, i: int, ratios: np.ndarray) -> bool:
        # isNodeBelowThreshold is inclusive (usage <= threshold), unlike loadaware's
        # cold class, and an unschedulable node is never a destination.
        table = self.table
        if table.classes[i] in ("excluded", "hot") or self.nodes[table.names[i]].unschedulable:
            return False
        judged = ~np.isnan(table.low[i])
        return bool(np.all(ratios[judged] <= table.low[i][judged]))

    def run(self) -> plan.Plan:
        in_round = int(self.in_round.sum())
        summary = (
            f"{DESCHEDULER_ORDER}: {len(self.hot)} overutilized, "
            f"{len(self.low)} underutilized of {in_round} nodes"
        )
        why_not = None
        if not self.low:
            why_not = "no node is underutilized"
        elif len(self.low) == in_round:
            why_not = "all nodes are underutilized"
        elif not self.hot:
            why_not = "no node is above targetThresholds"
        if why_not is not None:
            return self._plan("noop", f"{summary}; {why_not}")

        self.available = (self.capacity[self.low] - self.used[self.low]).sum(axis=0)
        destination_taints = {self.nodes[self.table.names[i]].taints for i in self.low}
        self.destination_taints = tuple(destination_taints)
        self.rules = plan.EvictionRules.from_policy(self.policy.evictor, self.cluster)
        # nodeFit looks at the snapshot, as the descheduler's informer cache does
        # during a round; where replacements land is tracked separately.
        self.snapshot = scheduling.Occupancy.from_cluster(self.cluster)
        self.all_nodes = self.snapshot.node_indexes(self.snapshot.node_names)
        self.snapshot_position = {name: p for p, name in enumerate(self.snapshot.node_names)}
        self.landing = scheduling.Occupancy.from_cluster(self.cluster)
        self.landing_names = tuple(self.landing.node_names)
        self.profiles = scheduling.profiles_from_config(self.policy.steering.scheduler_config)

        for i in sorted(self.hot, key=self._usage_sum_key):
            try:
                self._evict_from(i)
            except _RoundLimitError:
                self.skipped["maxNoOfPodsToEvictTotal"] += 1
                if self._above_target(i):
                    self.notes[i] = "still hot: maxNoOfPodsToEvictTotal reached"
                break
        for i in self.hot:
            if i not in self.notes and self._above_target(i):
                self.notes[i] = "still hot: not visited, the round ended first"
        status = "planned" if self.evictions else "noop"
        return self._plan(status, f"{summary}; {len(self.evictions)} evictions")

    def _usage_sum_key(self, i: int) -> tuple[float, str]:
        # sortNodesByUsage adds up raw values: cpu millicores + memory bytes + pods,
        # then any named resource's.
        cpu, memory = self.used[i, :2]
        pods = self.used[i, self._pods_index]
        named = [self.used[i, k] for k, r in enumerate(self.resources) if r not in _BUILTIN]
        return (-(cpu * 1000 + memory + pods + sum(named)), self.table.names[i])

    @property
    def _pods_index(self) -> int:
        if self.pods_column is not None:
            return self.pods_column
        return self.resources.index(plan.POD_COUNT)

    def _above_target(self, i: int) -> bool:
        return bool(np.any(self.used[i] > self.capacity[i]))

    def _may_continue(self, i: int) -> bool:
        return self._above_target(i) and bool(np.all(self.available[self.checked[i]] > 0))

    def _moved(self, sample: metrics.UsageSample) -> np.ndarray:
        """What the pod takes off its node, per column: its usage, and one pod."""
        values = [
            1.0 if r == plan.POD_COUNT else sample.named.get(r, 0.0) for r in self.resources[2:]
        ]
        pods = [1.0] if self.pods_column is not None else []
        return np.array([sample.cpu_cores, sample.memory_bytes, *values, *pods])

    def _evict_from(self, i: int) -> None:
        name = self.table.names[i]
        removable: list[Pod] = []
        pdbs: dict[str, tuple[str, ...]] = {}  # pod key -> PDBs its eviction is charged to
        for pod in self.cluster.pods_by_node.get(name, ()):
            verdict = plan.pod_eligibility(pod, self.rules, self.now)
            if verdict.evictable:
                removable.append(pod)
                pdbs[pod.key] = tuple(p.key for p in verdict.pdbs)
            else:
                self.skipped[verdict.reason or "protected"] += 1
        if not removable:
            self.notes[i] = "still hot: no removable pods"
            return
        if not self._may_continue(i):
            self.notes[i] = "still hot: underutilized nodes' capacity used up"
            return
        for pod in eviction_order(removable):
            if self.limit_node is not None and self.per_node[name] >= self.limit_node:
                self.notes[i] = "still hot: maxNoOfPodsToEvictPerNode reached"
                return
            if not any(_tolerates_all(pod, taints) for taints in self.destination_taints):
                self.skipped["untolerated-destination-taints"] += 1
                continue
            if self.policy.evictor.node_fit and not self._fits_another_node(pod, i):
                self.skipped["no-other-node-fits"] += 1
                continue
            sample = self.usage.pods.get(pod.key)
            if sample is None or pod.key in self.stale_pods:
                self.skipped["no-fresh-usage"] += 1
                continue
            refused = self._refused_by_budget(pod, name, pdbs[pod.key])
            if refused == "node":
                self.notes[i] = "still hot: maxNoOfPodsToEvictPerNode reached"
                return
            if refused is not None:
                self.skipped[refused] += 1
                continue
            self._record(pod, i, sample, pdbs[pod.key])
            if not self._may_continue(i):
                break
        if self._above_target(i):
            self.notes[i] = (
                "still hot: underutilized nodes' capacity used up"
                if not np.all(self.available[self.checked[i]] > 0)
                else "still hot: removable pods exhausted"
            )

    def _fits_another_node(self, pod: Pod, i: int) -> bool:
        mask = self.snapshot.fit_mask(pod, self.all_nodes)
        mask[self.snapshot_position[self.table.names[i]]] = False
        return bool(mask.any())

    def _refused_by_budget(self, pod: Pod, node: str, pdbs: tuple[str, ...]) -> str | None:
        """PodEvictor.EvictPod's limit checks, then the Eviction API's PDB check."""
        if self.limit_total is not None and len(self.evictions) >= self.limit_total:
            raise _RoundLimitError
        if self.limit_node is not None and self.per_node[node] >= self.limit_node:
            return "node"
        if (
            self.limit_namespace is not None
            and self.per_namespace[pod.namespace] >= self.limit_namespace
        ):
            return "maxNoOfPodsToEvictPerNamespace"
        if (
            self.limit_workload is not None
            and self.per_workload[_workload_key(pod)] >= self.limit_workload
        ):
            return "maxNoOfPodsToEvictPerWorkload"
        if any(self.pdb_left.get(key, 0) <= 0 for key in pdbs):
            return "podDisruptionBudget"
        return None

    def _record(self, pod: Pod, i: int, sample: metrics.UsageSample, pdbs: tuple[str, ...]) -> None:
        name = self.table.names[i]
        self.per_node[name] += 1
        self.per_namespace[pod.namespace] += 1
        self.per_workload[_workload_key(pod)] += 1
        for key in pdbs:
            self.pdb_left[key] -= 1
        moved = self._moved(sample)
        width = len(self.resources)
        self.used[i] -= moved
        self.available -= moved
        self.after[i] -= moved[:width]

        # The replacement is scheduled while the evicted pod terminates, with every
        # earlier replacement placed.
        profile = self.profiles.for_pod(pod)
        ties = (
            ()
            if profile is None
            else scheduling.predict_replacement(
                pod, self.landing, self.landing_names, profile=profile
            )
        )
        expected = ties[0] if ties else None
        self.landing.remove(pod)
        if expected is not None:
            self.landing.add(pod, expected)
            self.after[self.table.index[expected]] += moved[:width]
        self.evictions.append(
            plan.Eviction(
                pod=pod.key,
                uid=pod.uid,
                node=name,
                expected_node=expected,
                cpu_cores=sample.cpu_cores,
                memory_bytes=sample.memory_bytes,
                reason=DESCHEDULER_ORDER,
                workload=_workload_key(pod),
                named={
                    r: float(moved[k]) for k, r in enumerate(self.resources) if r not in _BUILTIN
                },
            )
        )

    def _plan(self, status: Literal["planned", "noop"], reason: str) -> plan.Plan:
        table = self.table
        before = table.utilisation()
        after = table.utilisation(self.after)
        resources = table.resources
        reports = tuple(
            plan.NodeReport(
                name=name,
                node_class=table.classes[i],
                pool=table.pools[i],
                before={r: round(float(before[i, k]), 4) for k, r in enumerate(resources)},
                after={r: round(float(after[i, k]), 4) for k, r in enumerate(resources)},
                note=self.notes.get(i, table.notes[i]),
            )
            for i, name in enumerate(table.names)
        )
        return plan.Plan(
            status=status,
            reason=reason,
            evictions=tuple(self.evictions),
            nodes=reports,
            solver=plan.SolverInfo(method="greedy", objective=float(len(self.evictions))),
            skipped=dict(sorted(self.skipped.items())),
        )
