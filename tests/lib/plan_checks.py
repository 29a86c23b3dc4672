"""An independent check of a Plan against the rules every eviction must satisfy.

Used by property tests and generated-cluster tests: it replays the plan and
recomputes, from the inputs alone, what the planner claims. A hotspot eviction
must leave a hot node; one whose reason names a deschedule strategy must be of
a pod that really breaks that strategy's rule (its source need not be hot); a
HighNodeUtilization one must leave a node the plan empties, which no other
eviction lands on.
"""

from __future__ import annotations

import datetime
import itertools
from collections import Counter

import numpy as np

from loadaware import scheduling
from loadaware.cluster import ClusterState, Pod
from loadaware.metrics import Usage
from loadaware.plan import Plan, pool_of
from loadaware.policy import LoadAwarePolicy
from loadaware.scheduling import Occupancy


def check_plan(
    plan: Plan, cluster: ClusterState, usage: Usage, policy: LoadAwarePolicy, now: datetime.datetime
) -> list[str]:
    """Every violated rule, as text; empty when the plan is sound."""
    problems: list[str] = []
    if plan.status != "planned":
        if plan.evictions:
            problems.append(f"status {plan.status} with evictions")
        return problems
    classes = {n.name: n.node_class for n in plan.nodes}
    nodes = cluster.nodes_by_name
    pods = {p.key: p for p in cluster.pods}
    used = {name: [s.cpu_cores, s.memory_bytes] for name, s in usage.nodes.items()}
    occupancy = Occupancy.from_cluster(cluster)
    per_node: Counter[str] = Counter()
    per_ns: Counter[str] = Counter()
    per_workload: Counter[str] = Counter()
    per_pdb: Counter[str] = Counter()
    seen: set[str] = set()

    for e in plan.evictions:
        pod = pods.get(e.pod)
        if pod is None:
            problems.append(f"{e.pod}: not in the cluster")
            continue
        if e.pod in seen:
            problems.append(f"{e.pod}: evicted twice")
        seen.add(e.pod)
        if pod.node_name != e.node:
            problems.append(f"{e.pod}: on {pod.node_name}, plan says {e.node}")
        if e.reason == "hotspot":
            if classes.get(e.node) != "hot":
                problems.append(f"{e.pod}: source {e.node} is {classes.get(e.node)}, not hot")
        elif e.reason == "HighNodeUtilization":
            emptied = plan.consolidation.nodes if plan.consolidation else ()
            if e.node not in emptied:
                problems.append(f"{e.pod}: consolidation eviction from {e.node}, not emptied")
        elif (why := _strategy_violation(e.reason, pod, cluster, policy, now)) is not None:
            problems.append(f"{e.pod}: {e.reason} planned, but {why}")
        if classes.get(e.node) == "excluded":
            problems.append(f"{e.pod}: source {e.node} is excluded")
        failed = e.reason == "RemoveFailedPods" and pod.phase == "Failed"
        if pod.is_daemonset_pod or pod.is_mirror or (pod.owner is None and not failed):
            problems.append(f"{e.pod}: DaemonSet, mirror or ownerless pod planned")
        if pod.deletion_timestamp is not None or (pod.phase != "Running" and not failed):
            problems.append(f"{e.pod}: not a running pod")
        if failed:
            # A failed pod holds nothing and has no replacement to place.
            per_node[e.node] += 1
            per_ns[pod.namespace] += 1
            continue
        target = e.expected_node
        if target is None or target not in nodes:
            problems.append(f"{e.pod}: no valid expected node")
            continue
        if classes.get(target) in ("hot", "excluded") or target == e.node:
            problems.append(f"{e.pod}: target {target} is {classes.get(target)}")
        occupancy.remove(pod)
        if policy.evictor.node_fit and (why := occupancy.fit_failure(pod, target)):
            problems.append(f"{e.pod}: does not fit {target}: {why}")
        occupancy.add(pod, target)
        sample = usage.pods[e.pod]
        used[e.node][0] -= sample.cpu_cores
        used[e.node][1] -= sample.memory_bytes
        used[target][0] += sample.cpu_cores
        used[target][1] += sample.memory_bytes
        per_node[e.node] += 1
        per_ns[pod.namespace] += 1
        owner = pod.workload or pod.owner
        per_workload[f"{owner.kind}/{pod.namespace}/{owner.name}" if owner else e.pod] += 1
        for pdb in cluster.pdbs:
            if pdb.covers(pod):
                per_pdb[pdb.key] += 1

    targets = {e.expected_node for e in plan.evictions if e.expected_node in nodes}
    if plan.consolidation is not None:
        for name in plan.consolidation.nodes:
            if name in targets:
                problems.append(f"consolidated node {name} is a landing target")
            left = [
                p.key
                for p in cluster.pods_by_node.get(name, ())
                if not (p.is_daemonset_pod or p.is_mirror) and p.key not in seen
            ]
            if left:
                problems.append(f"consolidated node {name} keeps {left}")
    for name in targets:
        node = nodes[name]
        pool = pool_of(node, policy.node_pools)
        if pool is None:
            problems.append(f"target {name} is in no pool")
            continue
        high = pool.target_thresholds.as_dict()
        if pool.use_deviation_thresholds:
            continue  # the limit depends on the pool mean; checked by the planner's own tests
        ratios = {
            "cpu": used[name][0] / (node.allocatable_cpu_millicores / 1000),
            "memory": used[name][1] / node.allocatable_memory_bytes,
        }
        for resource, percent in high.items():
            if ratios[resource] > percent / 100 + 1e-9:
                problems.append(
                    f"target {name} ends at {ratios[resource]:.3f} {resource}, over {percent}%"
                )

    limits = policy.limits
    for counter, limit, label in (
        (per_node, limits.max_no_of_pods_to_evict_per_node, "per node"),
        (per_ns, limits.max_no_of_pods_to_evict_per_namespace, "per namespace"),
        (per_workload, limits.max_no_of_pods_to_evict_per_workload, "per workload"),
    ):
        if limit is not None and counter and max(counter.values()) > limit:
            problems.append(f"limit {label} {limit} exceeded: {counter.most_common(1)}")
    total = limits.max_no_of_pods_to_evict_total
    if total is not None and len(plan.evictions) > total:
        problems.append(f"total limit {total} exceeded: {len(plan.evictions)}")
    allowed = {p.key: p.disruptions_allowed for p in cluster.pdbs}
    for key, count in per_pdb.items():
        if count > allowed[key]:
            problems.append(f"PDB {key}: {count} evictions, {allowed[key]} allowed")
    return problems


def _strategy_violation(
    reason: str, pod: Pod, cluster: ClusterState, policy: LoadAwarePolicy, now: datetime.datetime
) -> str | None:
    """None when the pod breaks the rule `reason` names, else what is wrong; recomputed
    from the inputs with the strategies' simplest reading (any profile's arguments)."""
    node = cluster.nodes_by_name.get(pod.node_name or "")
    if node is None:
        return "the pod is on no known node"
    settings = [p.strategies for p in policy.profiles]
    if reason == "RemovePodsViolatingNodeAffinity":
        labels = node.labels
        required_ok = all(labels.get(k) == v for k, v in pod.node_selector.items()) and (
            not pod.required_node_affinity
            or any(t.matches(node) for t in pod.required_node_affinity)
        )
        if pod.required_node_affinity and not required_ok:
            return None
        if pod.preferred_node_affinity:
            return None  # a better-scoring node exists; checked by the strategy's own tests
        return "its node matches its required node affinity"
    if reason == "RemovePodsViolatingNodeTaints":
        prefer = any(
            s.remove_pods_violating_node_taints.include_prefer_no_schedule for s in settings
        )
        effects = {"NoSchedule", "PreferNoSchedule"} if prefer else {"NoSchedule"}
        if any(
            t.effect in effects and not any(tol.tolerates(t) for tol in pod.tolerations)
            for t in node.taints
        ):
            return None
        return "it tolerates every taint of its node"
    if reason == "RemovePodsViolatingInterPodAntiAffinity":
        for term in pod.required_pod_anti_affinity:
            value = node.labels.get(term.topology_key)
            for other in cluster.pods:
                if other.key == pod.key or not other.is_load or other.node_name is None:
                    continue
                there = cluster.nodes_by_name[other.node_name].labels.get(term.topology_key)
                if there == value and term.selects(
                    pod.namespace, other.namespace, other.labels, cluster.namespace_labels
                ):
                    return None
        return "no pod in its domain matches its anti-affinity"
    if reason == "RemoveDuplicates":
        same = [
            p
            for p in cluster.pods_by_node.get(node.name, ())
            if p.owner is not None
            and pod.owner is not None
            and (p.namespace, p.owner.kind, p.owner.name)
            == (pod.namespace, pod.owner.kind, pod.owner.name)
        ]
        return None if len(same) > 1 else "no other pod of its owner shares its node"
    if reason == "RemovePodsViolatingTopologySpreadConstraint":
        for constraint in pod.topology_spread_constraints:
            counts: Counter[str] = Counter()
            for n in cluster.nodes:
                if constraint.topology_key in n.labels and n.ready:
                    counts[n.labels[constraint.topology_key]] += 0
            for other in cluster.pods:
                if (
                    other.is_load
                    and other.namespace == pod.namespace
                    and constraint.label_selector is not None
                    and constraint.label_selector.matches(other.labels)
                ):
                    labels = cluster.nodes_by_name[other.node_name or ""].labels
                    if constraint.topology_key in labels:
                        counts[labels[constraint.topology_key]] += 1
            if counts and max(counts.values()) - min(counts.values()) > constraint.max_skew:
                return None
        return "no spread constraint of it is skewed"
    if reason == "PodLifeTime":
        born = pod.creation_timestamp or pod.start_time
        limits = [s.pod_life_time.max_pod_life_time_seconds for s in settings]
        if born is not None and limits and (now - born).total_seconds() > min(limits):
            return None
        return "it is not older than maxPodLifeTimeSeconds"
    if reason == "RemovePodsHavingTooManyRestarts":
        thresholds = [
            s.remove_pods_having_too_many_restarts.pod_restart_threshold for s in settings
        ]
        total = sum(c.restart_count for c in pod.container_statuses) or pod.restart_count
        if thresholds and total >= min(thresholds):
            return None
        return "it did not restart often enough"
    if reason == "RemoveFailedPods":
        return None if pod.phase == "Failed" else "it has not failed"
    return f"unknown rule {reason!r}"


def hottest_first_problems(plan: Plan) -> list[str]:
    """Where the plan's evictions are out of relief order: must-moves (a deschedule
    strategy's) before the hotspot evictions, each hot node's hotspot evictions
    together, hot nodes furthest above their targets first (max over the judged
    resources of before minus targetThreshold, from the plan's own node reports,
    rounded as they are: near-ties may come either way)."""
    problems: list[str] = []
    reasons = [e.reason for e in plan.evictions if e.reason != "HighNodeUtilization"]
    first_hotspot = next((k for k, r in enumerate(reasons) if r == "hotspot"), len(reasons))
    if any(r != "hotspot" for r in reasons[first_hotspot:]):
        problems.append("a must-move comes after a hotspot eviction")
    nodes = {n.name: n for n in plan.nodes}
    runs: list[str] = []
    for e in plan.evictions:
        if e.reason == "hotspot" and (not runs or runs[-1] != e.node):
            runs.append(e.node)
    if len(runs) != len(set(runs)):
        problems.append(f"a hot node's evictions are not together: {runs}")

    def excess(name: str) -> float:
        node = nodes[name]
        return max(node.before[r] - limit for r, limit in node.high.items())

    for hotter, cooler in itertools.pairwise(runs):
        if excess(hotter) < excess(cooler) - 1e-3:
            problems.append(
                f"{hotter} ({excess(hotter):.4f} over) before {cooler} ({excess(cooler):.4f} over)"
            )
    return problems


def landing_replay_problems(plan: Plan, cluster: ClusterState) -> list[str]:
    """Replays the evictions in the plan's order through the kube-scheduler model,
    each replacement scored under its eviction's steering taints with the moves
    before it applied, as kube-scheduler places them when every feasible node is
    scored (percentageOfNodesToScore 100): the best-scoring nodes must be the
    eviction's landingSet, with expectedNode among them."""
    problems: list[str] = []
    pods = {p.key: p for p in cluster.pods}
    occupancy = Occupancy.from_cluster(cluster)
    names = occupancy.node_names
    every = np.arange(len(names), dtype=np.int64)
    for e in plan.evictions:
        pod = pods[e.pod]
        if pod.phase == "Failed":
            continue
        steered = {name: [scheduling.STEERING_TAINT] for name in e.steer}
        best = scheduling.score_replacement(pod, occupancy, every, extra_taints=steered).best_names(
            names
        )
        if set(best) != set(e.landing_set) or e.expected_node not in best:
            problems.append(
                f"{e.pod}: best {best}, planned landing set {e.landing_set}, "
                f"expected {e.expected_node}"
            )
        occupancy.remove(pod)
        if e.expected_node is not None:
            occupancy.add(pod, e.expected_node)
    return problems
