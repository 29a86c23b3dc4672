"""What a plan does to the cluster, measured by the harness rather than read from the plan.

`replay_plan` applies the evictions in order the way a cluster would: each
evicted pod leaves its node, and kube-scheduler (loadaware's model of the
default profile, `loadaware.plan.predict_node`) places its replacement, by
requests, on the cluster as it is at that moment; the pod's usage moves with
it. Whatever the plan says it expects is only compared against that landing.

`cover_bound` is a lower bound on the evictions any plan needs to bring every
relievable hot node to its targetThresholds, computed from the instance alone:
per hot node and resource, the fewest evictable pods (largest usage first)
whose usage covers the excess; per node the largest of its resources.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import numpy as np

from bench.checks import TOLERANCE, ClusterView
from loadaware import plan
from loadaware.cluster import ClusterState
from loadaware.metrics import Usage
from loadaware.policy import LoadAwarePolicy


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    hot_before: int
    hot_left: int  # nodes above targetThresholds once the replacements have landed
    residual_overload: float  # sum over nodes and resources of utilisation above target
    peak_target_utilisation: float | None  # highest resource ratio on a landing node
    bounce_backs: int  # replacements landing on their source or on a node left hot
    pending: int  # replacements no node can take
    landed_as_planned: int  # replacements landing on the plan's expected node


def replay_plan(
    evictions: tuple[plan.Eviction, ...],
    cluster: ClusterState,
    usage: Usage,
    view: ClusterView,
) -> Outcome:
    """Apply the evictions in order, placing each replacement with the scheduler model."""
    pods = {p.key: p for p in cluster.pods}
    occupancy = plan.Occupancy.from_cluster(cluster)
    names = tuple(occupancy.node_names)
    used = view.used.copy()
    scale = np.where(view.allocatable > 0, view.allocatable, 1.0)
    judged = ~np.isnan(view.high)
    landings: set[int] = set()
    bounce_backs = pending = as_planned = 0
    for e in evictions:
        pod = pods[e.pod]
        sample = usage.pods[e.pod]
        moved = np.array([sample.cpu_cores, sample.memory_bytes])
        occupancy.remove(pod)
        used[view.index[e.node]] -= moved
        # A new pod, unbound: it is scored against the cluster without the evicted one.
        landing = plan.predict_node(pod, occupancy, names)
        if landing is None:
            pending += 1
            continue
        occupancy.add(pod, landing)
        i = view.index[landing]
        used[i] += moved
        landings.add(i)
        ratio = used[i] / scale[i]
        if landing == e.node or np.any(ratio[judged[i]] > view.high[i][judged[i]] + TOLERANCE):
            bounce_backs += 1
        if landing == e.expected_node:
            as_planned += 1
    excess = view.excess(used)
    ratios = used / scale
    peak = max((float(np.max(ratios[i])) for i in landings), default=None)
    return Outcome(
        hot_before=int(view.hot().sum()),
        hot_left=int(np.any(excess > TOLERANCE, axis=1).sum()),
        residual_overload=float(excess.sum()),
        peak_target_utilisation=peak,
        bounce_backs=bounce_backs,
        pending=pending,
        landed_as_planned=as_planned,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CoverBound:
    evictions: int  # lower bound for the relievable hot nodes
    relievable: int  # hot nodes whose evictable pods together can cover the excess
    hot: int


def cover_bound(
    cluster: ClusterState,
    usage: Usage,
    policy: LoadAwarePolicy,
    now: datetime.datetime,
    view: ClusterView,
) -> CoverBound:
    """The per-node cover bound of the module docstring. Evictable means passing
    loadaware's judge_pod with a usage sample; targets are not considered, so the
    bound is optimistic (never above the true minimum)."""
    rules = plan.EvictionRules.from_policy(policy.evictor, cluster)
    hot = np.flatnonzero(view.hot())
    limit = view.high * view.allocatable
    total = relievable = 0
    for i in hot.tolist():
        excess = np.where(np.isnan(limit[i]), 0.0, view.used[i] - np.nan_to_num(limit[i]))
        sizes = np.array(
            [
                (usage.pods[p.key].cpu_cores, usage.pods[p.key].memory_bytes)
                for p in cluster.pods_by_node.get(view.names[i], ())
                if p.key in usage.pods and plan.judge_pod(p, rules, now).evictable
            ]
        ).reshape(-1, 2)
        needed = 0
        coverable = True
        for r in range(2):
            if excess[r] <= TOLERANCE:
                continue
            cumulative = np.cumsum(np.sort(sizes[:, r])[::-1])
            reach = int(np.searchsorted(cumulative, excess[r] - TOLERANCE)) + 1
            if reach > len(cumulative):
                coverable = False
                break
            needed = max(needed, reach)
        if coverable:
            relievable += 1
            total += needed
    return CoverBound(evictions=total, relievable=relievable, hot=len(hot))
