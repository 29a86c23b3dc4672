"""What a plan does to the cluster, measured by the harness rather than read from the plan.

`replay_plan` applies the evictions in order the way a cluster would. For each
eviction, the nodes the eviction names in `steer` carry loadaware's soft taint
(`plan.HOTSPOT_TAINT`) while kube-scheduler places the replacement; the
replacement is scored while its predecessor terminates, so the predecessor's
requests still count on its node (`scheduling.scheduling_replacement`). The
cluster's kube-scheduler is loadaware's model of the profile the pod's
spec.schedulerName names among `profiles` (the default profile unless given; a
pod naming none of them stays pending, as it would in the cluster). The pod's
requests and usage move to where it lands. What the plan says it expects is only
compared against that landing.

Two scoring regimes:

- full: kube-scheduler scores every feasible node, as one configured with
  percentageOfNodesToScore 100 does. Among the nodes with the best score it
  picks at random: the replay lands on the plan's expectedNode when it is one
  of them, else on a seeded-random one.
- sampled: kube-scheduler's default (the simulated cluster's scheduler,
  `loadaware.scheduling.NodeSampler`). From 100 nodes only the feasible nodes its
  walk finds first are scored: nodes in nodeTree order (zones round-robin,
  each zone's nodes by name, as a scheduler that listed them from the API
  adds them), from a start index that moves on with every replacement, until
  numFeasibleNodesToFind are found (the profile's percentageOfNodesToScore
  when it sets one, else the adaptive default). The walk starts at a seeded-random index
  (the scheduler's depends on every pod it placed before), and the replacement
  lands on a seeded-random one of the sample's best nodes, whatever the plan
  expected: kube-scheduler does not know the plan.

A landing is bad when it is the source, a node hot before the round or out of
it, or a node above its targetThresholds with the pod there: what the planner
never chooses and verification opens the breaker on.

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
from loadaware import plan, scheduling
from loadaware.cluster import ClusterState, Pod, Taint
from loadaware.metrics import Usage
from loadaware.policy import LoadAwarePolicy

FULL = "full"
SAMPLED = "sampled"
SCORINGS = (FULL, SAMPLED)


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    hot_before: int
    hot_left: int  # nodes above targetThresholds once the replacements have landed
    residual_overload: float  # sum over nodes and resources of utilisation above target
    peak_target_utilisation: float | None  # highest resource ratio on a landing node
    bounce_backs: int  # replacements landing on their source or on a node left hot
    pending: int  # replacements no node can take
    # Replacements landing on the plan's expected node with no other node tied for the
    # best score (of the sample, when sampled): the plan's prediction held whatever the
    # scheduler's random pick.
    landed_as_planned: int
    # Replacements whose best-score tie includes, next to others, a bad landing (see
    # the module docstring).
    tied_with_bad: int
    bad_landings: int  # replacements that landed where a landing is bad
    # Good landings outside the eviction's landingSet, of the evictions that have one;
    # None when none has.
    off_set_landings: int | None
    nodes_tainted: int  # nodes any eviction steered away from (union of the steer sets)
    # Node taint changes (one node's taint added or removed) from one eviction's steer
    # set to the next, from no taint before the first to none after the last.
    taint_patches: int
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
    scoring: str = FULL,
    profiles: scheduling.SchedulerProfiles = scheduling.DEFAULT_PROFILES,
) -> Outcome:
    """Apply the evictions in order, placing each replacement with the scheduler model
    of the cluster's `profiles` under the eviction's steering taints, scoring every
    feasible node or a sample as kube-scheduler's default does (`scoring`, see the
    module docstring)."""
    if scoring not in SCORINGS:
        raise ValueError(f"scoring must be one of {', '.join(SCORINGS)}, not {scoring!r}")
    pods = {p.key: p for p in cluster.pods}
    occupancy = scheduling.Occupancy.from_cluster(cluster)
    names = tuple(occupancy.node_names)
    pick = random.Random(seed)
    sampler = _sampler(cluster, pick) if scoring == SAMPLED else None
    used = view.used.copy()
    scale = np.where(view.allocatable > 0, view.allocatable, 1.0)
    judged = ~np.isnan(view.high)
    hot_before = view.hot()
    landings: set[int] = set()
    tainted: set[str] = set()
    bounce_backs = pending = as_planned = tied_bad = bad = off_set = with_set = 0
    for e in evictions:
        pod = pods[e.pod]
        sample = usage.pods[e.pod]
        moved = view.pod_usage(sample)
        source = view.index[e.node]
        tainted.update(e.steer)
        extra_taints = {name: (plan.HOTSPOT_TAINT,) for name in e.steer}
        profile = profiles.for_pod(pod)
        if profile is None:
            ties: tuple[str, ...] = ()
        elif sampler is None:
            ties = scheduling.predict_replacement(
                pod, occupancy, names, extra_taints=extra_taints, profile=profile
            )
        else:
            ties = _sampled_ties(pod, occupancy, sampler, extra_taints, profile)
        occupancy.remove(pod)
        used[source] -= moved
        if not ties:
            pending += 1
            continue
        if len(ties) > 1 and any(
            _is_bad_landing(view.index[name], source, moved, used, view, hot_before)
            for name in ties
        ):
            tied_bad += 1
        if sampler is None and e.expected_node in ties:
            landing = e.expected_node
        else:
            landing = pick.choice(ties)
        if ties == (e.expected_node,):
            as_planned += 1
        occupancy.add(pod, landing)
        i = view.index[landing]
        landed_bad = _is_bad_landing(i, source, moved, used, view, hot_before)
        bad += landed_bad
        if e.landing_set:
            with_set += 1
            off_set += not landed_bad and landing not in e.landing_set
        used[i] += moved
        landings.add(i)
        ratio = used[i] / scale[i]
        if i == source or np.any(ratio[judged[i]] > view.high[i][judged[i]] + TOLERANCE):
            bounce_backs += 1
    excess = view.excess(used)
    ratios = used / scale
    peak = max((float(np.max(ratios[i])) for i in landings), default=None)
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
        bad_landings=bad,
        off_set_landings=off_set if with_set else None,
        nodes_tainted=len(tainted),
        taint_patches=taint_patches(evictions),
        named_hot_before={r: int(view.hot_by(r).sum()) for r in view.resources[2:]},
        named_hot_left={r: int(view.hot_by(r, used).sum()) for r in view.resources[2:]},
        hot_before_by_pool=_by_pool(view, np.flatnonzero(hot_before)),
        hot_left_by_pool=_by_pool(view, np.flatnonzero(hot_after)),
        evictions_by_pool=_by_pool(view, [view.index[e.node] for e in evictions]),
    )


def taint_patches(evictions: Iterable[plan.Eviction]) -> int:
    """Node taint changes from each eviction's steer set to the next, from and back to
    no taint: what the evictor must patch if it keeps exactly each eviction's set."""
    patches = 0
    previous: frozenset[str] = frozenset()
    for e in evictions:
        current = frozenset(e.steer)
        patches += len(previous ^ current)
        previous = current
    return patches + len(previous)


def _sampler(cluster: ClusterState, pick: random.Random) -> scheduling.NodeSampler:
    """kube-scheduler's walk over the cluster's nodes, added in name order (the API
    lists them so), starting at a random index."""
    ordered = sorted(cluster.nodes, key=lambda n: n.name)
    sampler = scheduling.NodeSampler(scheduling.NodeTree((n.name, n.labels) for n in ordered))
    if ordered:
        sampler.next_start_index = pick.randrange(len(ordered))
    return sampler


def _sampled_ties(
    pod: Pod,
    occupancy: scheduling.Occupancy,
    sampler: scheduling.NodeSampler,
    extra_taints: dict[str, tuple[Taint, ...]],
    profile: scheduling.SchedulerProfile,
) -> tuple[str, ...]:
    """The best-scoring nodes of the sample kube-scheduler's `profile` scores for
    `pod`'s replacement, sorted by name; empty when none fits."""
    # One walk for every profile, as kube-scheduler keeps one start index; the
    # sample's size is the profile's.
    sampler.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score or 0
    with scheduling.scheduling_replacement(pod, occupancy) as (incoming, terminating):
        sample = sampler.sample(
            incoming, occupancy, extra_taints=extra_taints, terminating=terminating
        )
        if not sample:
            return ()
        return scheduling.best_nodes(
            incoming,
            occupancy,
            sample,
            extra_taints=extra_taints,
            terminating=terminating,
            profile=profile,
        )


def _by_pool(view: ClusterView, indexes: Iterable[int]) -> dict[str, int]:
    """How many of the nodes (or evictions off them) are in each pool, by pool name."""
    names = view.pools
    counts = Counter(names[i] or "" for i in indexes) if names else Counter()
    return dict(sorted(counts.items()))


def _is_bad_landing(
    i: int,
    source: int,
    moved: np.ndarray,
    used: np.ndarray,
    view: ClusterView,
    hot_before: np.ndarray,
) -> bool:
    """Whether node i is a bad place for the pod: its source, hot before the round, out
    of the round, or above its targets once the pod is there (`used` without it)."""
    if i == source or hot_before[i] or not view.in_round[i]:
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
    loadaware's pod_eligibility with a usage sample; targets are not considered, so the
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
                and plan.pod_eligibility(p, rules, now).evictable
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
