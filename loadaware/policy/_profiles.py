"""Profiles (`profiles`): named scopes and the descheduler strategies run in them."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from loadaware.policy import _evictor, _strict

NodeAffinityType = Literal[
    "requiredDuringSchedulingIgnoredDuringExecution",
    "preferredDuringSchedulingIgnoredDuringExecution",
]
SpreadConstraintKind = Literal["DoNotSchedule", "ScheduleAnyway"]


class LoadBalancingStrategy(_strict.StrictModel):
    """Hotspot relief: moving pods off nodes above their targetThresholds."""

    enabled: bool = Field(
        default=True,
        description="Relieve hot nodes in this profile's scope.",
    )


class NodeAffinityStrategy(_strict.StrictModel):
    """descheduler's RemovePodsViolatingNodeAffinity."""

    enabled: bool = Field(
        default=False,
        description="Evict pods whose node no longer passes their node affinity.",
    )
    node_affinity_type: list[NodeAffinityType] = Field(
        default_factory=lambda: ["requiredDuringSchedulingIgnoredDuringExecution"],
        min_length=1,
        description=(
            "Which affinity to check: required, and with "
            "preferredDuringSchedulingIgnoredDuringExecution also moves to a node the "
            "pod prefers."
        ),
    )


class NodeTaintsStrategy(_strict.StrictModel):
    """descheduler's RemovePodsViolatingNodeTaints. Taints are named `key` or `key=value`."""

    enabled: bool = Field(
        default=False,
        description="Evict pods whose node has a NoSchedule taint they do not tolerate.",
    )
    include_prefer_no_schedule: bool = Field(
        default=False,
        description="Count PreferNoSchedule taints too.",
    )
    excluded_taints: list[str] = Field(
        default_factory=list,
        description="Taints to ignore (`key` or `key=value`).",
    )
    included_taints: list[str] = Field(
        default_factory=list,
        description="Only these taints count (`key` or `key=value`); empty: all.",
    )


class InterPodAntiAffinityStrategy(_strict.StrictModel):
    """descheduler's RemovePodsViolatingInterPodAntiAffinity."""

    enabled: bool = Field(
        default=False,
        description=(
            "Evict pods whose required anti-affinity selects another pod in their topology domain."
        ),
    )


class DuplicatesStrategy(_strict.StrictModel):
    """descheduler's RemoveDuplicates."""

    enabled: bool = Field(
        default=False,
        description="Evict pods of one owner piled on a node beyond their fair share.",
    )
    exclude_owner_kinds: list[str] = Field(
        default_factory=list,
        description="Owner kinds to leave alone.",
    )


class TopologySpreadStrategy(_strict.StrictModel):
    """descheduler's RemovePodsViolatingTopologySpreadConstraint."""

    enabled: bool = Field(
        default=False,
        description="Evict pods whose topology spread constraints are violated.",
    )
    constraints: list[SpreadConstraintKind] = Field(
        default_factory=lambda: ["DoNotSchedule"],
        min_length=1,
        description=(
            "Which constraints to enforce: DoNotSchedule, and ScheduleAnyway when listed."
        ),
    )


class PodLifeTimeStrategy(_strict.StrictModel):
    """descheduler's PodLifeTime. `states` match the pod phase, the pod's status
    reason or a container's waiting reason; empty matches every pod."""

    enabled: bool = Field(
        default=False,
        description="Evict pods older than maxPodLifeTimeSeconds, oldest first.",
    )
    max_pod_life_time_seconds: _strict.NonNegativeInt = Field(
        default=86400,
        description="Pods older than this are evicted.",
    )
    states: list[str] = Field(
        default_factory=list,
        description=(
            "Only pods in these states: the pod phase, the pod's status reason or a "
            "container's waiting reason; empty: every pod."
        ),
    )


class TooManyRestartsStrategy(_strict.StrictModel):
    """descheduler's RemovePodsHavingTooManyRestarts."""

    enabled: bool = Field(
        default=False,
        description="Evict pods whose containers restarted too often.",
    )
    pod_restart_threshold: Annotated[int, Field(ge=1)] = Field(
        default=100,
        description="Restarts at which a pod is evicted.",
    )
    including_init_containers: bool = Field(
        default=False,
        description="Count init containers' restarts too.",
    )
    states: list[str] = Field(
        default_factory=list,
        description="Only pods in these states (as in podLifeTime); empty: every pod.",
    )


class FailedPodsStrategy(_strict.StrictModel):
    """descheduler's RemoveFailedPods."""

    enabled: bool = Field(
        default=False,
        description="Evict pods in phase Failed.",
    )
    min_pod_lifetime_seconds: _strict.NonNegativeInt | None = Field(
        default=None,
        description="Only failed pods at least this old; unset: any age.",
    )
    reasons: list[str] = Field(
        default_factory=list,
        description="Only pods failed for these reasons; empty: any.",
    )
    exit_codes: list[int] = Field(
        default_factory=list,
        description="Only pods whose containers exited with these codes; empty: any.",
    )
    exclude_owner_kinds: list[str] = Field(
        default_factory=list,
        description="Owner kinds to leave alone.",
    )
    including_init_containers: bool = Field(
        default=False,
        description="Look at init containers' reasons and exit codes too.",
    )


class Strategies(_strict.StrictModel):
    """What a profile does. The deschedule strategies (every one but loadBalancing)
    name pods that must move; loadBalancing relieves hotspots."""

    load_balancing: LoadBalancingStrategy = Field(
        default=LoadBalancingStrategy(),
        description="Hotspot relief.",
    )
    remove_pods_violating_node_affinity: NodeAffinityStrategy = Field(
        default=NodeAffinityStrategy(),
        description="descheduler's RemovePodsViolatingNodeAffinity.",
    )
    remove_pods_violating_node_taints: NodeTaintsStrategy = Field(
        default=NodeTaintsStrategy(),
        description="descheduler's RemovePodsViolatingNodeTaints.",
    )
    remove_pods_violating_inter_pod_anti_affinity: InterPodAntiAffinityStrategy = Field(
        default=(InterPodAntiAffinityStrategy()),
        description="descheduler's RemovePodsViolatingInterPodAntiAffinity.",
    )
    remove_duplicates: DuplicatesStrategy = Field(
        default=DuplicatesStrategy(),
        description="descheduler's RemoveDuplicates.",
    )
    remove_pods_violating_topology_spread_constraint: TopologySpreadStrategy = Field(
        default=(TopologySpreadStrategy()),
        description="descheduler's RemovePodsViolatingTopologySpreadConstraint.",
    )
    pod_life_time: PodLifeTimeStrategy = Field(
        default=PodLifeTimeStrategy(),
        description="descheduler's PodLifeTime.",
    )
    remove_pods_having_too_many_restarts: TooManyRestartsStrategy = Field(
        default=TooManyRestartsStrategy(),
        description="descheduler's RemovePodsHavingTooManyRestarts.",
    )
    remove_failed_pods: FailedPodsStrategy = Field(
        default=FailedPodsStrategy(),
        description="descheduler's RemoveFailedPods.",
    )


class Profile(_strict.StrictModel):
    """A named scope (namespaces, labels, node pools) and the strategies run in it.

    namespaces and labelSelector narrow the evictor's: a pod must pass both.
    """

    name: str = Field(
        min_length=1,
        description="Name of the profile, unique in the policy.",
    )
    namespaces: _evictor.Namespaces = Field(
        default=_evictor.Namespaces(),
        description="Narrows evictor.namespaces: a pod must pass both.",
    )
    label_selector: _evictor.LabelSelectorSpec = Field(
        default=_evictor.LabelSelectorSpec(),
        description="Narrows evictor.labelSelector: a pod must match both.",
    )
    node_pools: list[str] | None = Field(
        default=None,
        description="Names of nodePools whose nodes this profile acts on; unset: every pool.",
    )
    strategies: Strategies = Field(
        default=Strategies(),
        description="What the profile does.",
    )
