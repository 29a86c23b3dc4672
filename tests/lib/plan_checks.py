"""An independent check of a Plan against the rules every eviction must satisfy.

Used by property tests and generated-cluster tests: it replays the plan and
recomputes, from the inputs alone, what the planner claims.
"""

from __future__ import annotations

import datetime
from collections import Counter

from loadaware.cluster import ClusterState
from loadaware.metrics import Usage
from loadaware.plan import Occupancy, Plan, pool_of
from loadaware.policy import LoadAwarePolicy


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
        if classes.get(e.node) != "hot":
            problems.append(f"{e.pod}: source {e.node} is {classes.get(e.node)}, not hot")
        if pod.is_daemonset_pod or pod.is_mirror or pod.owner is None:
            problems.append(f"{e.pod}: DaemonSet, mirror or ownerless pod planned")
        if pod.deletion_timestamp is not None or pod.phase != "Running":
            problems.append(f"{e.pod}: not a running pod")
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
