"""Which pods may be evicted (`evictor`, the descheduler's DefaultEvictor settings) and
how many (`limits`: budgets per round, per window and per workload).
"""

from __future__ import annotations

import datetime
from typing import Annotated, Literal

from pydantic import Field, model_validator

from loadaware.policy import _strict
from loadaware.policy._duration import Duration

SYSTEM_CRITICAL_PRIORITY = 2_000_000_000


class PriorityThreshold(_strict.StrictModel):
    value: int | None = Field(
        default=None,
        description=(
            "Pods with a priority at or above this value are protected as system-critical."
        ),
    )
    name: str | None = Field(
        default=None,
        description="A PriorityClass whose value is the threshold.",
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> PriorityThreshold:
        if (self.value is None) == (self.name is None):
            raise ValueError("set exactly one of value and name")
        return self


class Namespaces(_strict.StrictModel):
    include: list[str] = Field(
        default_factory=list,
        description="Only pods in these namespaces are considered.",
    )
    exclude: list[str] = Field(
        default_factory=list,
        description="Pods in these namespaces are never considered.",
    )

    @model_validator(mode="after")
    def _not_both(self) -> Namespaces:
        if self.include and self.exclude:
            raise ValueError("set include or exclude, not both")
        return self


class SelectorRequirement(_strict.StrictModel):
    key: str = Field(
        min_length=1,
        description="The label key.",
    )
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"] = Field(
        description="How the label's value is matched against values.",
    )
    values: list[str] = Field(
        default_factory=list,
        description="Values for In and NotIn; empty for Exists and DoesNotExist.",
    )

    @model_validator(mode="after")
    def _values_fit_operator(self) -> SelectorRequirement:
        if self.operator in ("In", "NotIn") and not self.values:
            raise ValueError(f"operator {self.operator} needs at least one value")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise ValueError(f"operator {self.operator} takes no values")
        return self


class LabelSelectorSpec(_strict.StrictModel):
    match_labels: dict[str, str] = Field(
        default_factory=dict,
        description="Labels a pod must have, with these values.",
    )
    match_expressions: list[SelectorRequirement] = Field(
        default_factory=list,
        description="Label requirements a pod must meet, all of them.",
    )


DefaultProtection = Literal[
    "PodsWithLocalStorage", "DaemonSetPods", "SystemCriticalPods", "FailedBarePods"
]
ExtraProtection = Literal["PodsWithPVC", "PodsWithoutPDB", "PodsWithResourceClaims"]


class PodProtections(_strict.StrictModel):
    """descheduler's podProtections: names and meanings as there."""

    default_disabled: list[DefaultProtection] = Field(
        default_factory=list,
        description="Default protections to turn off, so that such pods may be evicted.",
    )
    extra_enabled: list[ExtraProtection] = Field(
        default_factory=list,
        description=("Protections off by default to turn on, so that such pods are not evicted."),
    )


class EvictorSettings(_strict.StrictModel):
    node_fit: bool = Field(
        default=True,
        description=(
            "Evict a pod only if another node can take it (its requests, taints, "
            "affinity), as the descheduler's nodeFit."
        ),
    )
    min_replicas: _strict.NonNegativeInt = Field(
        default=0,
        description="Evict a pod only if its owner has at least this many replicas.",
    )
    min_pod_age: Duration = Field(
        default=datetime.timedelta(0),
        description=("Evict a pod only if it started (status.startTime) at least this long ago."),
    )
    priority_threshold: PriorityThreshold | None = Field(
        default=None,
        description=(
            "Pods at or above this priority are system-critical and protected; unset: "
            "2000000000 (system-cluster-critical)."
        ),
    )
    namespaces: Namespaces = Field(
        default=Namespaces(),
        description="Namespaces whose pods may be evicted: include or exclude, not both.",
    )
    label_selector: LabelSelectorSpec = Field(
        default=LabelSelectorSpec(),
        description="Only pods matching this selector may be evicted.",
    )
    pod_protections: PodProtections = Field(
        default=PodProtections(),
        description=(
            "Which pods are protected from eviction: the descheduler's "
            "podProtections, same names and meanings."
        ),
    )
    grace_period_seconds: _strict.NonNegativeInt | None = Field(
        default=None,
        description=(
            "Grace period passed with each eviction; unset keeps each pod's own "
            "terminationGracePeriodSeconds."
        ),
    )


class EvictionWindow(_strict.StrictModel):
    """A budget over a sliding window that holds across rounds, restarts and triggers."""

    duration: Duration = Field(
        default=datetime.timedelta(hours=1),
        description="Length of the sliding window.",
    )
    max_evictions: _strict.NonNegativeInt | None = Field(
        default=None,
        description="Evictions allowed within the window, across rounds; unset: no limit.",
    )
    max_evictions_per_namespace: _strict.NonNegativeInt | None = Field(
        default=None,
        description="Evictions allowed within the window per namespace; unset: no limit.",
    )


class Limits(_strict.StrictModel):
    """Eviction budgets. The four maxNoOfPods* hold per round; None means no limit."""

    max_no_of_pods_to_evict_per_node: _strict.NonNegativeInt | None = Field(
        default=None,
        description="Evictions from one node per round; unset: no limit.",
    )
    max_no_of_pods_to_evict_per_namespace: _strict.NonNegativeInt | None = Field(
        default=None,
        description="Evictions from one namespace per round; unset: no limit.",
    )
    max_no_of_pods_to_evict_per_workload: _strict.NonNegativeInt | None = Field(
        default=None,
        description="Evictions from one workload per round; unset: no limit.",
    )
    max_no_of_pods_to_evict_total: _strict.NonNegativeInt | None = Field(
        default=None,
        description="Evictions per round; unset: no limit.",
    )
    window: EvictionWindow | None = Field(
        default=None,
        description=(
            "A budget over a sliding window, kept in the state ConfigMap so that it "
            "holds across rounds, restarts and triggers."
        ),
    )
    max_unavailable_per_workload: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description=(
            "Pods of one workload that may be unavailable at once (not Ready, Pending "
            "or being evicted count), on top of its PodDisruptionBudget; unset: no "
            "limit."
        ),
    )
    cooldown: Duration = Field(
        default=datetime.timedelta(minutes=30),
        description=(
            "A workload moved in one round is not moved again by a later round within this."
        ),
    )
