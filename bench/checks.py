"""An independent check of a Plan, for the benchmark's "violations" column.

It recomputes from the inputs alone (ClusterState, Usage, policy, time) which
nodes are hot and what every eviction may do, and shares no code with the
planner's rules: thresholds, protections, budgets, nodeFit and anti-affinity
are re-derived here from the data model. Two groups of rules:

- eviction rules, for every planner: the pod exists, runs on the named node
  and is evicted once; that node is hot; the pod is not protected (the
  DefaultEvictor's protections and loadaware's never-evictable pods); it has a
  fresh usage sample, with a value for every named resource
  (metrics.prometheus.resources) its node's pool judges; the four limits and
  PodDisruptionBudgets hold.
- target rules, for planners that choose where replacements go: the expected
  node exists, is not the source, not hot and in the round; after all moves
  the pod fits it by requests, taints, nodeSelector and required node affinity,
  required pod anti-affinity holds both ways over topology domains, and the
  node stays at or below its targetThresholds.

Named resources are judged as cpu is: a node's capacity is what usage.capacity
gives, else its allocatable of the resource the policy names as capacity
(`nvidia.com/gpu`); a node of a pool judging one without a value or a capacity
for it is out of the round.

Not checked: required pod affinity, host ports and policy.priorityThreshold by
name are left to the planner's own tests; nor are pods thresholds.
"""

from __future__ import annotations

import datetime
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np

from loadaware.cluster import ClusterState, Node, Pod, PodAffinityTerm
from loadaware.metrics import Usage, UsageSample
from loadaware.plan import Plan
from loadaware.policy import SYSTEM_CRITICAL_PRIORITY, LabelSelectorSpec, LoadAwarePolicy, NodePool

EVICT_ANNOTATION: Final = "descheduler.alpha.kubernetes.io/evict"
OPT_OUT_ANNOTATION: Final = "loadaware.io/evict"
MIRROR_ANNOTATION: Final = "kubernetes.io/config.mirror"
CONFIG_SOURCE_ANNOTATION: Final = "kubernetes.io/config.source"
# Float noise in usage sums, not a real excess.
TOLERANCE: Final = 1e-9
BUILTIN: Final = ("cpu", "memory")  # the view's first columns


@dataclass(frozen=True, kw_only=True, eq=False)
class ClusterView:
    """Per-node arrays in cluster.nodes order, derived from the inputs only.

    used and allocatable are (nodes, resources): cpu in cores, memory in bytes,
    then the named resources any pool judges, in their own units (`resources`
    names the columns); high holds the targetThresholds ratio (NaN where a
    resource is not judged or the node is out of the round).
    """

    names: tuple[str, ...]
    index: Mapping[str, int]
    allocatable: np.ndarray
    used: np.ndarray
    high: np.ndarray
    in_round: np.ndarray  # ready, in a pool, with a fresh sample (and its named values)
    resources: tuple[str, ...] = BUILTIN
    pools: tuple[str | None, ...] = ()  # each node's pool, by name
    # Per node, the named resources its pool judges: a pod there without a value for
    # one of them is no candidate.
    judged_named: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def build(
        cls, cluster: ClusterState, usage: Usage, policy: LoadAwarePolicy, now: datetime.datetime
    ) -> ClusterView:
        nodes = cluster.nodes
        count = len(nodes)
        named = sorted(
            {
                r
                for pool in policy.node_pools
                for r in pool.target_thresholds.as_dict()
                if r not in (*BUILTIN, "pods")
            }
        )
        resources = (*BUILTIN, *named)
        source = policy.metrics.prometheus
        defined = source.resources if source is not None else {}
        allocatable_names = {
            r: defined[r].capacity
            for r in named
            if r in defined and not defined[r].capacity_is_query
        }
        allocatable = np.zeros((count, len(resources)))
        allocatable[:, :2] = np.array(
            [(n.allocatable_cpu_millicores / 1000, n.allocatable_memory_bytes) for n in nodes],
            dtype=float,
        ).reshape(count, 2)
        used = np.zeros((count, len(resources)))
        high = np.full((count, len(resources)), np.nan)
        in_round = np.zeros(count, dtype=bool)
        pools: list[NodePool | None] = []
        judged_named: list[tuple[str, ...]] = []
        max_age = policy.metrics.max_sample_age
        for i, node in enumerate(nodes):
            pool = next((p for p in policy.node_pools if _selects(p, node)), None)
            pools.append(pool)
            own = tuple(
                r for r in named if pool is not None and r in pool.target_thresholds.as_dict()
            )
            judged_named.append(own)
            capacity = usage.capacity.get(node.name, {})
            for k, resource in enumerate(named, start=2):
                allocatable[i, k] = capacity.get(resource) or node.allocatable_extended.get(
                    allocatable_names.get(resource, ""), 0.0
                )
            sample = usage.nodes.get(node.name)
            if sample is None:
                continue
            used[i, :2] = (sample.cpu_cores, sample.memory_bytes)
            for k, resource in enumerate(named, start=2):
                used[i, k] = sample.named.get(resource, 0.0)
            fresh = now - sample.timestamp <= max_age
            measured = all(
                r in sample.named and allocatable[i, resources.index(r)] > 0 for r in own
            )
            in_round[i] = pool is not None and node.ready and fresh and measured
        ratios = used / np.where(allocatable > 0, allocatable, 1.0)
        for pool in policy.node_pools:
            members = [i for i, p in enumerate(pools) if p is pool and in_round[i]]
            targets = pool.target_thresholds.as_dict()
            for r, resource in enumerate(resources):
                if resource not in targets or not members:
                    continue
                limit = targets[resource] / 100
                if pool.use_deviation_thresholds:
                    limit = min(1.0, float(np.mean(ratios[members, r])) + limit)
                high[members, r] = limit
        return cls(
            names=tuple(n.name for n in nodes),
            index={n.name: i for i, n in enumerate(nodes)},
            allocatable=allocatable,
            used=used,
            high=high,
            in_round=in_round,
            resources=resources,
            pools=tuple(p.name if p is not None else None for p in pools),
            judged_named=tuple(judged_named),
        )

    def pod_usage(self, sample: UsageSample) -> np.ndarray:
        """What the pod uses, column by column (0 for a named resource it has no value for)."""
        named = [sample.named.get(r, 0.0) for r in self.resources[2:]]
        return np.array([sample.cpu_cores, sample.memory_bytes, *named])

    def lacks_named(self, sample: UsageSample, i: int) -> str | None:
        """A named resource node i is judged by that the pod's sample has no value for."""
        judged = self.judged_named[i] if i < len(self.judged_named) else ()
        return next((r for r in judged if r not in sample.named), None)

    def excess(self, used: np.ndarray | None = None) -> np.ndarray:
        """(nodes, resources) utilisation above targetThresholds, 0 where under or not judged."""
        ratios = (self.used if used is None else used) / np.where(
            self.allocatable > 0, self.allocatable, 1.0
        )
        return np.where(np.isnan(self.high), 0.0, np.maximum(ratios - self.high, 0.0))

    def hot(self, used: np.ndarray | None = None) -> np.ndarray:
        return np.any(self.excess(used) > TOLERANCE, axis=1)

    def hot_by(self, resource: str, used: np.ndarray | None = None) -> np.ndarray:
        """Nodes above their targetThresholds on this resource."""
        return self.excess(used)[:, self.resources.index(resource)] > TOLERANCE


def _selects(pool: NodePool, node: Node) -> bool:
    return all(node.labels.get(k) == v for k, v in pool.node_selector.items())


def _selector_matches(spec: LabelSelectorSpec, labels: Mapping[str, str]) -> bool:
    if any(labels.get(k) != v for k, v in spec.match_labels.items()):
        return False
    for req in spec.match_expressions:
        present = req.key in labels
        ok = {
            "In": present and labels.get(req.key) in req.values,
            "NotIn": not present or labels.get(req.key) not in req.values,
            "Exists": present,
            "DoesNotExist": not present,
        }[req.operator]
        if not ok:
            return False
    return True


def protection_of(
    pod: Pod,
    policy: LoadAwarePolicy,
    cluster: ClusterState,
    now: datetime.datetime,
    owner_counts: Mapping[tuple[str, str, str], int],
) -> str | None:
    """Why the pod must not be evicted, or None."""
    annotations = pod.annotations
    if pod.is_mirror or MIRROR_ANNOTATION in annotations:
        return "mirror pod"
    if (pod.owner is not None and pod.owner.kind == "Node") or annotations.get(
        CONFIG_SOURCE_ANNOTATION, "api"
    ) != "api":
        return "static pod"
    if pod.deletion_timestamp is not None or pod.phase != "Running" or pod.node_name is None:
        return "not a running pod"
    if annotations.get(OPT_OUT_ANNOTATION, "").strip().lower() == "never":
        return "opted out"
    if pod.owner is None:
        return "no owner"
    evictor = policy.evictor
    namespaces = evictor.namespaces
    if namespaces.include and pod.namespace not in namespaces.include:
        return "namespace not included"
    if pod.namespace in namespaces.exclude and not namespaces.include:
        return "namespace excluded"
    if EVICT_ANNOTATION in annotations:
        return None
    disabled = set(evictor.pod_protections.default_disabled)
    enabled = set(evictor.pod_protections.extra_enabled)
    if "DaemonSetPods" not in disabled and pod.owner.kind == "DaemonSet":
        return "DaemonSet pod"
    if "SystemCriticalPods" not in disabled:
        if pod.priority >= SYSTEM_CRITICAL_PRIORITY:
            return "system-critical priority"
        threshold = evictor.priority_threshold
        if threshold is not None:
            value = threshold.value
            if value is None and threshold.name is not None:
                value = cluster.priority_classes.get(threshold.name)
            if value is not None and pod.priority >= value:
                return "priority at or above priorityThreshold"
    if "PodsWithLocalStorage" not in disabled and pod.has_local_storage:
        return "local storage"
    if "PodsWithPVC" in enabled and pod.has_pvc:
        return "PVC"
    if "PodsWithoutPDB" in enabled and not any(p.covers(pod) for p in cluster.pdbs):
        return "no PDB"
    if "PodsWithResourceClaims" in enabled and pod.has_resource_claims:
        return "resource claims"
    if not _selector_matches(evictor.label_selector, pod.labels):
        return "outside labelSelector"
    if evictor.min_replicas > 1:
        key = (pod.namespace, pod.owner.kind, pod.owner.name)
        if owner_counts.get(key, 1) < evictor.min_replicas:
            return "below minReplicas"
    if evictor.min_pod_age > datetime.timedelta(0) and (
        pod.creation_timestamp is None or now - pod.creation_timestamp < evictor.min_pod_age
    ):
        return "younger than minPodAge"
    return None


def check_plan(
    plan: Plan,
    cluster: ClusterState,
    usage: Usage,
    policy: LoadAwarePolicy,
    now: datetime.datetime,
    *,
    check_targets: bool = True,
) -> list[str]:
    """Every rule the plan breaks, as text; empty when it is sound."""
    problems: list[str] = []
    if plan.status != "planned":
        if plan.evictions:
            problems.append(f"status {plan.status} with {len(plan.evictions)} evictions")
        return problems
    view = ClusterView.build(cluster, usage, policy, now)
    hot = view.hot()
    pods = {p.key: p for p in cluster.pods}
    owner_counts: Counter[tuple[str, str, str]] = Counter(
        (p.namespace, p.owner.kind, p.owner.name) for p in cluster.pods if p.owner is not None
    )
    pdbs_of: dict[str, list[str]] = {}
    placement = {p.key: p.node_name for p in cluster.pods if p.is_load}
    used = view.used.copy()
    moved: list[tuple[Pod, str]] = []
    seen: set[str] = set()
    per_node: Counter[str] = Counter()
    per_namespace: Counter[str] = Counter()
    per_workload: Counter[str] = Counter()
    per_pdb: Counter[str] = Counter()
    max_age = policy.metrics.max_sample_age

    for e in plan.evictions:
        pod = pods.get(e.pod)
        if pod is None:
            problems.append(f"{e.pod}: not in the cluster")
            continue
        if e.pod in seen:
            problems.append(f"{e.pod}: evicted twice")
            continue
        seen.add(e.pod)
        if pod.node_name != e.node or e.node not in view.index:
            problems.append(f"{e.pod}: runs on {pod.node_name}, the plan says {e.node}")
            continue
        source = view.index[e.node]
        if not hot[source] or not view.in_round[source]:
            problems.append(f"{e.pod}: source {e.node} is not a hot node")
        why = protection_of(pod, policy, cluster, now, owner_counts)
        if why is not None:
            problems.append(f"{e.pod}: protected ({why})")
        sample = usage.pods.get(e.pod)
        if sample is None or now - sample.timestamp > max_age:
            problems.append(f"{e.pod}: no fresh usage sample")
            continue
        lacking = view.lacks_named(sample, source)
        if lacking is not None:
            problems.append(f"{e.pod}: no {lacking} value, and {e.node} is judged by {lacking}")
        covering = pdbs_of.setdefault(e.pod, [p.key for p in cluster.pdbs if p.covers(pod)])
        if len(covering) > 1:
            problems.append(f"{e.pod}: covered by {len(covering)} PDBs (the API refuses it)")
        per_pdb.update(covering)
        per_node[e.node] += 1
        per_namespace[pod.namespace] += 1
        owner = pod.workload or pod.owner
        per_workload[f"{owner.kind}/{pod.namespace}/{owner.name}" if owner else e.pod] += 1
        moved_usage = view.pod_usage(sample)
        used[source] -= moved_usage
        target = e.expected_node
        if target is None or target not in view.index:
            if check_targets:
                problems.append(f"{e.pod}: no valid expected node ({target})")
            continue
        used[view.index[target]] += moved_usage
        placement[e.pod] = target
        moved.append((pod, target))

    problems.extend(_budget_problems(policy, cluster, per_node, per_namespace, per_workload))
    for key, count in per_pdb.items():
        allowed = next(p.disruptions_allowed for p in cluster.pdbs if p.key == key)
        if count > allowed:
            problems.append(f"PDB {key}: {count} evictions, {allowed} disruptions allowed")
    if check_targets:
        problems.extend(_target_problems(cluster, view, hot, used, moved, placement, pods))
    return problems


def _budget_problems(
    policy: LoadAwarePolicy,
    cluster: ClusterState,
    per_node: Counter[str],
    per_namespace: Counter[str],
    per_workload: Counter[str],
) -> list[str]:
    problems = []
    limits = policy.limits
    for counter, limit, label in (
        (per_node, limits.max_no_of_pods_to_evict_per_node, "maxNoOfPodsToEvictPerNode"),
        (
            per_namespace,
            limits.max_no_of_pods_to_evict_per_namespace,
            "maxNoOfPodsToEvictPerNamespace",
        ),
        (
            per_workload,
            limits.max_no_of_pods_to_evict_per_workload,
            "maxNoOfPodsToEvictPerWorkload",
        ),
    ):
        if limit is not None and counter and max(counter.values()) > limit:
            problems.append(f"{label} {limit} exceeded: {counter.most_common(1)[0]}")
    total = limits.max_no_of_pods_to_evict_total
    if total is not None and sum(per_node.values()) > total:
        problems.append(f"maxNoOfPodsToEvictTotal {total} exceeded: {sum(per_node.values())}")
    return problems


def _target_problems(
    cluster: ClusterState,
    view: ClusterView,
    hot: np.ndarray,
    used: np.ndarray,
    moved: list[tuple[Pod, str]],
    placement: dict[str, str | None],
    pods: Mapping[str, Pod],
) -> list[str]:
    problems: list[str] = []
    nodes = cluster.nodes_by_name
    for pod, target in moved:
        i = view.index[target]
        if target == pod.node_name:
            problems.append(f"{pod.key}: expected back on its source {target}")
        elif hot[i] or not view.in_round[i]:
            problems.append(f"{pod.key}: target {target} is hot or out of the round")
        node = nodes[target]
        if node.unschedulable or not node.ready:
            problems.append(f"{pod.key}: target {target} is unschedulable or not ready")
        for taint in node.taints:
            if taint.effect in ("NoSchedule", "NoExecute") and not any(
                t.tolerates(taint) for t in pod.tolerations
            ):
                problems.append(f"{pod.key}: does not tolerate {taint.key} on {target}")
        if any(node.labels.get(k) != v for k, v in pod.node_selector.items()):
            problems.append(f"{pod.key}: nodeSelector does not match {target}")
        if pod.required_node_affinity and not any(
            term.matches(node) for term in pod.required_node_affinity
        ):
            problems.append(f"{pod.key}: required node affinity does not match {target}")

    # Requests and pod counts on every node that received a pod, after all moves.
    targets = {t for _, t in moved}
    requested: dict[str, list[int]] = {t: [0, 0, 0] for t in targets}
    for key, where in placement.items():
        if where in requested:
            pod = pods[key]
            totals = requested[where]
            totals[0] += pod.cpu_request_millicores
            totals[1] += pod.memory_request_bytes
            totals[2] += 1
    for name in sorted(targets):
        node = nodes[name]
        cpu, memory, count = requested[name]
        if cpu > node.allocatable_cpu_millicores or memory > node.allocatable_memory_bytes:
            problems.append(f"target {name}: requests exceed allocatable after the moves")
        if count > node.allocatable_pods:
            problems.append(f"target {name}: {count} pods, allocatable {node.allocatable_pods}")
    over = view.excess(used)
    for name in sorted(targets):
        i = view.index[name]
        if np.any(over[i] > TOLERANCE):
            problems.append(f"target {name} ends above its targetThresholds")
    problems.extend(_anti_affinity_problems(cluster, moved, placement, pods))
    return problems


def _anti_affinity_problems(
    cluster: ClusterState,
    moved: list[tuple[Pod, str]],
    placement: dict[str, str | None],
    pods: Mapping[str, Pod],
) -> list[str]:
    """Required pod anti-affinity after all moves, for every moved pod, both ways."""
    nodes = cluster.nodes_by_name
    ns_labels = cluster.namespace_labels
    keys = {t.topology_key for p in pods.values() for t in p.required_pod_anti_affinity}
    if not keys:
        return []
    # topology key -> domain value -> pods placed there (after the moves)
    members: dict[str, defaultdict[str, list[Pod]]] = {k: defaultdict(list) for k in keys}
    holders: dict[str, defaultdict[str, list[tuple[Pod, PodAffinityTerm]]]] = {
        k: defaultdict(list) for k in keys
    }
    for key, where in placement.items():
        if where is None or where not in nodes:
            continue
        pod = pods[key]
        labels = nodes[where].labels
        for k in keys:
            value = labels.get(k)
            if value is not None:
                members[k][value].append(pod)
        for term in pod.required_pod_anti_affinity:
            value = labels.get(term.topology_key)
            if value is not None:
                holders[term.topology_key][value].append((pod, term))
    problems = []
    for pod, target in moved:
        labels = nodes[target].labels
        for term in pod.required_pod_anti_affinity:
            value = labels.get(term.topology_key)
            if value is None:
                continue
            for other in members[term.topology_key][value]:
                if other.key != pod.key and term.selects(
                    pod.namespace, other.namespace, other.labels, ns_labels
                ):
                    problems.append(
                        f"{pod.key}: its anti-affinity selects {other.key} near {target}"
                    )
                    break
        for k in keys:
            value = labels.get(k)
            if value is None:
                continue
            for holder, term in holders[k][value]:
                if holder.key != pod.key and term.selects(
                    holder.namespace, pod.namespace, pod.labels, ns_labels
                ):
                    problems.append(f"{pod.key}: {holder.key}'s anti-affinity excludes it")
                    break
    return problems
