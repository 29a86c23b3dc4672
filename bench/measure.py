"""What a plan does to the cluster, measured by the harness rather than read from the plan.

`replay_plan` applies the evictions in order the way a cluster would. For each
eviction, the nodes the eviction names in `steer` carry loadaware's soft taint
(`plan.HOTSPOT_TAINT`) while kube-scheduler places the replacement; the
replacement is scored while its predecessor terminates, so the predecessor's
requests still count on its node (`plan.predict_replacement`, loadaware's model
of the default profile). Among the nodes with the best score kube-scheduler
picks at random: the replay lands on the plan's expectedNode when it is one of
them, else on a seeded-random one, and the pod's requests and usage move there.
What the plan says it expects is only compared against that landing.

`cover_bound` is a lower bound on the evictions any plan needs to bring every
relievable hot node to its targetThresholds, computed from the instance alone:
per hot node and resource, the fewest evictable pods (largest usage first)
whose usage covers the excess; per node the largest of its resources.

Named resources (metrics.prometheus.resources, e.g. gpu) are columns of the
view like cpu and memory: a pod's usage of them moves with it, and a pod without
a value for one its node's pool judges is not evictable there.
"""

from __future__ import annotations

import datetime
import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

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
    # Replacements landing on the plan's expected node with no other node tied for the
    # best score: the plan's prediction held whatever the scheduler's random pick.
    landed_as_planned: int
    # Replacements whose best-score tie includes, next to others, a bad landing: the
    # source, a hot or excluded node, or a node the pod would take above its targets.
    tied_with_bad: int
    nodes_tainted: int  # nodes any eviction steered away from (union of the steer sets)
    # Per named resource (e.g. gpu): nodes above their target on it, before and after.
    named_hot_before: dict[str, int] = field(default_factory=dict)
    named_hot_left: dict[str, int] = field(default_factory=dict)
    # Per node pool: hot nodes before and after, and evictions off its nodes.
    hot_before_by_pool: dict[str, int] = field(default_factory=dict)
    hot_left_by_pool: dict[str, int] = field(default_factory=dict)
    evictions_by_pool: dict[str, int] = field(default_factory=dict)


def replay_plan(
    evictions: tuple[plan.Eviction, ...],
    cluster: ClusterState,
    usage: Usage,
    view: ClusterView,
    *,
    seed: int = 0,
) -> Outcome:
    """Apply the evictions in order, placing each replacement with the scheduler model
    under the eviction's steering taints (see the module docstring)."""
    pods = {p.key: p for p in cluster.pods}
    occupancy = plan.Occupancy.from_cluster(cluster)
    names = tuple(occupancy.node_names)
    pick = random.Random(seed)
    used = view.used.copy()
    scale = np.where(view.allocatable > 0, view.allocatable, 1.0)
    judged = ~np.isnan(view.high)
    landings: set[int] = set()
    tainted: set[str] = set()
    bounce_backs = pending = as_planned = tied_bad = 0
    for e in evictions:
        pod = pods[e.pod]
        sample = usage.pods[e.pod]
        moved = view.pod_usage(sample)
        source = view.index[e.node]
        tainted.update(e.steer)
        extra_taints = {name: (plan.HOTSPOT_TAINT,) for name in e.steer}
        ties = plan.predict_replacement(pod, occupancy, names, extra_taints=extra_taints)
        occupancy.remove(pod)
        used[source] -= moved
        if not ties:
            pending += 1
            continue
        if len(ties) > 1 and any(
            _is_bad_landing(view.index[name], source, moved, used, view) for name in ties
        ):
            tied_bad += 1
        if e.expected_node in ties:
            landing = e.expected_node
            if ties == (landing,):
                as_planned += 1
        else:
            landing = pick.choice(ties)
        occupancy.add(pod, landing)
        i = view.index[landing]
        used[i] += moved
        landings.add(i)
        ratio = used[i] / scale[i]
        if i == source or np.any(ratio[judged[i]] > view.high[i][judged[i]] + TOLERANCE):
            bounce_backs += 1
    excess = view.excess(used)
    ratios = used / scale
    peak = max((float(np.max(ratios[i])) for i in landings), default=None)
    hot_before = view.hot()
    hot_after = np.any(excess > TOLERANCE, axis=1)
    return Outcome(
        hot_before=int(hot_before.sum()),
        hot_left=int(hot_after.sum()),
        residual_overload=float(excess.sum()),
        peak_target_utilisation=peak,
        bounce_backs=bounce_backs,
        pending=pending,
        landed_as_planned=as_planned,
        tied_with_bad=tied_bad,
        nodes_tainted=len(tainted),
        named_hot_before={r: int(view.hot_by(r).sum()) for r in view.resources[2:]},
        named_hot_left={r: int(view.hot_by(r, used).sum()) for r in view.resources[2:]},
        hot_before_by_pool=_by_pool(view, np.flatnonzero(hot_before)),
        hot_left_by_pool=_by_pool(view, np.flatnonzero(hot_after)),
        evictions_by_pool=_by_pool(view, [view.index[e.node] for e in evictions]),
    )


def _by_pool(view: ClusterView, indexes: Iterable[int]) -> dict[str, int]:
    """How many of the nodes (or evictions off them) are in each pool, by pool name."""
    names = view.pools
    counts = Counter(names[i] or "" for i in indexes) if names else Counter()
    return dict(sorted(counts.items()))


def _is_bad_landing(
    i: int, source: int, moved: np.ndarray, used: np.ndarray, view: ClusterView
) -> bool:
    """Whether node i is a bad place for the pod: its source, out of the round, or above
    its targets once the pod is there (which a node hot already always is)."""
    if i == source or not view.in_round[i]:
        return True
    judged = ~np.isnan(view.high[i])
    scale = np.where(view.allocatable[i] > 0, view.allocatable[i], 1.0)
    after = (used[i] + moved) / scale
    return bool(np.any(after[judged] > view.high[i][judged] + TOLERANCE))


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
    width = len(view.resources)
    for i in hot.tolist():
        excess = np.where(np.isnan(limit[i]), 0.0, view.used[i] - np.nan_to_num(limit[i]))
        sizes = np.array(
            [
                view.pod_usage(usage.pods[p.key])
                for p in cluster.pods_by_node.get(view.names[i], ())
                if p.key in usage.pods
                and view.lacks_named(usage.pods[p.key], i) is None
                and plan.judge_pod(p, rules, now).evictable
            ]
        ).reshape(-1, width)
        needed = 0
        coverable = True
        for r in range(width):
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
