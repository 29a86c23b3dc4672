"""kube-scheduler profiles: which Score plugins a profile runs, their weights and
the arguments the model reads (`SchedulerProfile`), and the profiles of a
KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) by schedulerName
(`profiles_from_config`). Which of a configuration's settings the model
cannot follow is the policy's to say (`policy.unmodelled_settings`).

A profile's score plugins are merged as kube-scheduler merges them
(`policy.merged_score_weights`, after pkg/scheduler/apis/config/v1/
default_plugins.go and the framework's multiPoint expansion): the default
multiPoint set and its weights, less what `multiPoint.disabled` names ("*":
all of them), plus `multiPoint.enabled`;
then `score.enabled` sets a plugin's weight for scoring and `score.disabled`
takes it out ("*": every plugin `score.enabled` does not name). A weight of 0
counts as 1, as in the framework.

Modelled: the seven Score plugins of the default profile, NodeResourcesFit's
scoringStrategy (LeastAllocated, MostAllocated, RequestedToCapacityRatio over
cpu, memory and extended resources), NodeResourcesBalancedAllocation's
resources, PodTopologySpread's defaultConstraints (ScheduleAnyway ones) and
defaultingType, and percentageOfNodesToScore. VolumeBinding scores every node
alike for pods without volumes the model reads, so its weight is accepted and
left out. Anything else that would change a score or a Filter is said by
`policy.unmodelled_settings`: the model would answer wrong, so loadaware refuses it.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from loadaware import policy
from loadaware.cluster._types import Pod
from loadaware.scheduling import _scores
from loadaware.scheduling._spread import SYSTEM_DEFAULT_SPREAD

# Re-exported: the scheduling package's public name for it.
DEFAULT_SCHEDULER_NAME = policy.DEFAULT_SCHEDULER_NAME

ScoringType = Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]

# The default profile's score plugins and their weights (getDefaultPlugins).
DEFAULT_SCORE_WEIGHTS: Mapping[str, int] = _scores.PLUGIN_WEIGHTS

# MaxNodeScore / MaxCustomPriorityScore: a shape's scores (0-10) scaled to 0-100.
_SHAPE_SCALE = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class ResourceWeight:
    """One resource a resource-scoring plugin reads, and its weight."""

    name: str
    weight: int = 1


DEFAULT_RESOURCES = (ResourceWeight(name="cpu"), ResourceWeight(name="memory"))


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoringStrategy:
    """NodeResourcesFit's scoringStrategy. `shape` is RequestedToCapacityRatio's:
    (utilization percent, score 0-100) points, the score already scaled from the
    configuration's 0-10."""

    type: ScoringType = "LeastAllocated"
    resources: tuple[ResourceWeight, ...] = DEFAULT_RESOURCES
    shape: tuple[tuple[int, int], ...] = ()

    @property
    def is_default(self) -> bool:
        return self.type == "LeastAllocated" and self.resources == DEFAULT_RESOURCES


DEFAULT_STRATEGY = ScoringStrategy()


@dataclass(frozen=True, slots=True, kw_only=True)
class SchedulerProfile:
    """What one kube-scheduler profile scores by. The defaults are the default
    profile's."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    # Enabled score plugins the model runs, by name, with their weights.
    weights: Mapping[str, int] = field(default_factory=lambda: DEFAULT_SCORE_WEIGHTS, hash=False)
    scoring_strategy: ScoringStrategy = DEFAULT_STRATEGY
    balanced_resources: tuple[str, ...] = ("cpu", "memory")
    # PodTopologySpread's constraints for pods without their own: (topology key,
    # maxSkew), ScheduleAnyway.
    default_spread: tuple[tuple[str, int], ...] = SYSTEM_DEFAULT_SPREAD
    # The profile's own or the configuration's percentageOfNodesToScore; None when
    # neither sets one.
    percentage_of_nodes_to_score: int | None = None

    def weight(self, plugin: str) -> int:
        """The plugin's weight, 0 when the profile does not score with it."""
        return self.weights.get(plugin, 0)

    def sample_percentage(self, fallback: int) -> int:
        """The percentageOfNodesToScore its sample is sized by: the profile's (or its
        configuration's), else `fallback` (steering.percentageOfNodesToScore; 0 is
        kube-scheduler's adaptive default)."""
        if self.percentage_of_nodes_to_score is None:
            return fallback
        return self.percentage_of_nodes_to_score


DEFAULT_PROFILE = SchedulerProfile()


@dataclass(frozen=True, slots=True, kw_only=True)
class SchedulerProfiles:
    """The profiles of a configuration by schedulerName, in its order."""

    by_name: Mapping[str, SchedulerProfile] = field(
        default_factory=lambda: MappingProxyType({DEFAULT_SCHEDULER_NAME: DEFAULT_PROFILE}),
        hash=False,
    )

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.by_name)

    def get(self, scheduler_name: str) -> SchedulerProfile | None:
        return self.by_name.get(scheduler_name)

    def for_pod(self, pod: Pod) -> SchedulerProfile | None:
        """The profile that schedules `pod` (by its spec.schedulerName); None when the
        pod names a scheduler the model does not know, whose landings it cannot
        predict."""
        return self.by_name.get(pod.scheduler_name)


DEFAULT_PROFILES = SchedulerProfiles()


def profiles_from_config(config: policy.KubeSchedulerConfiguration | None) -> SchedulerProfiles:
    """The configuration's profiles by schedulerName; the default profile alone for
    None. What `policy.unmodelled_settings` reports is left out here."""
    if config is None:
        return DEFAULT_PROFILES
    entries = config.profiles or [policy.KubeSchedulerProfile()]
    found = {e.scheduler_name: _profile(e, config.percentage_of_nodes_to_score) for e in entries}
    return SchedulerProfiles(by_name=MappingProxyType(found))


def modelled_profiles(
    config: policy.KubeSchedulerConfiguration | None,
    scheduler_names: Sequence[str] | None = None,
) -> SchedulerProfiles:
    """The profiles the model predicts landings with (steering.schedulerConfig and
    steering.schedulerNames): the configuration's, or only those `scheduler_names`
    lists; without a configuration, the default profile under each name listed
    (default-scheduler when none is)."""
    profiles = profiles_from_config(config)
    if scheduler_names is None:
        return profiles
    found = {
        name: profiles.by_name.get(name)
        or dataclasses.replace(DEFAULT_PROFILE, scheduler_name=name)
        for name in scheduler_names
    }
    return SchedulerProfiles(by_name=MappingProxyType(found))


def _profile(entry: policy.KubeSchedulerProfile, global_percentage: int | None) -> SchedulerProfile:
    weights = {
        name: weight
        for name, weight in policy.merged_score_weights(entry).items()
        if name in DEFAULT_SCORE_WEIGHTS
    }
    strategy = DEFAULT_STRATEGY
    balanced: tuple[str, ...] = ("cpu", "memory")
    spread = SYSTEM_DEFAULT_SPREAD
    for config in entry.plugin_config:
        args = config.typed_args()
        if isinstance(args, policy.NodeResourcesFitArgs):
            strategy = _strategy(args.scoring_strategy)
        elif isinstance(args, policy.NodeResourcesBalancedAllocationArgs):
            balanced = tuple(r.name for r in args.resources if policy.modelled_resource(r.name))
        elif isinstance(args, policy.PodTopologySpreadArgs):
            spread = _default_spread(args)
    percentage = entry.percentage_of_nodes_to_score
    if percentage is None:
        percentage = global_percentage
    profile = SchedulerProfile(
        scheduler_name=entry.scheduler_name,
        weights=MappingProxyType(weights),
        scoring_strategy=strategy,
        balanced_resources=balanced,
        default_spread=spread,
        percentage_of_nodes_to_score=percentage,
    )
    if profile == DEFAULT_PROFILE and weights == dict(DEFAULT_SCORE_WEIGHTS):
        # The default profile under its own name: the same object, whose scores the
        # model computes on its fastest paths.
        return DEFAULT_PROFILE
    return profile


def _strategy(spec: policy.ScoringStrategy) -> ScoringStrategy:
    resources = tuple(
        ResourceWeight(name=r.name, weight=r.weight)
        for r in spec.resources
        if policy.modelled_resource(r.name)
    )
    shape: tuple[tuple[int, int], ...] = ()
    if spec.type == "RequestedToCapacityRatio":
        points = (
            spec.requested_to_capacity_ratio.shape
            if spec.requested_to_capacity_ratio is not None
            else _DEFAULT_SHAPE
        )
        shape = tuple((p.utilization, p.score * _SHAPE_SCALE) for p in points)
    strategy = ScoringStrategy(type=spec.type, resources=resources, shape=shape)
    return DEFAULT_STRATEGY if strategy == DEFAULT_STRATEGY else strategy


# kube-scheduler's default shape for RequestedToCapacityRatio: bin packing.
_DEFAULT_SHAPE = (
    policy.UtilizationShapePoint(utilization=0, score=0),
    policy.UtilizationShapePoint(utilization=100, score=10),
)


def _default_spread(
    args: policy.PodTopologySpreadArgs,
) -> tuple[tuple[str, int], ...]:
    if args.defaulting_type != "List":
        return SYSTEM_DEFAULT_SPREAD
    return tuple(
        (c.topology_key, c.max_skew)
        for c in args.default_constraints
        if c.when_unsatisfiable == "ScheduleAnyway"
    )
