"""What the strategies share: the context they read and the MustMove they return."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass

from loadaware.cluster._types import ClusterState, Node, Pod
from loadaware.plan._candidates import PodEligibility
from loadaware.plan._problem import LandingCheck
from loadaware.policy import Strategies

NODE_AFFINITY = "RemovePodsViolatingNodeAffinity"
NODE_TAINTS = "RemovePodsViolatingNodeTaints"
INTER_POD_ANTI_AFFINITY = "RemovePodsViolatingInterPodAntiAffinity"
DUPLICATES = "RemoveDuplicates"
TOPOLOGY_SPREAD = "RemovePodsViolatingTopologySpreadConstraint"
POD_LIFE_TIME = "PodLifeTime"
TOO_MANY_RESTARTS = "RemovePodsHavingTooManyRestarts"
FAILED_PODS = "RemoveFailedPods"


@dataclass(frozen=True, slots=True, kw_only=True)
class MustMove:
    """A pod that should leave its node, and the strategy (plugin name) that says so."""

    pod: Pod
    reason: str
    # Whether a replacement landing on a node (by name) no longer breaks the rule,
    # given the moves applied before it; None: any landing that passes nodeFit does.
    landing_check: LandingCheck | None = None


@dataclass(frozen=True, kw_only=True, eq=False)
class StrategyContext:
    """One profile's view for one round.

    `nodes` are the nodes the profile acts on: in its node pools, not excluded
    (stale, not Ready, in no pool) and, for an alert-triggered round, named by
    the alert. `eligibility` is the profile's evictor (descheduler's DefaultEvictor
    narrowed by the profile's namespaces and labelSelector), memoised per pod.
    """

    profile: str
    settings: Strategies
    now: datetime.datetime
    nodes: frozenset[str]
    eligibility: Callable[[Pod], PodEligibility]
    # Nodes any pod could be sent to: neither excluded from the round nor cordoned.
    schedulable: tuple[Node, ...] = ()

    def pods_in_scope(self, cluster: ClusterState) -> list[Pod]:
        """Pods that occupy a node the profile acts on, in node then cluster order."""
        found: list[Pod] = []
        for name in sorted(self.nodes):
            found.extend(cluster.pods_by_node.get(name, ()))
        return found

    def is_evictable(self, pod: Pod) -> bool:
        return self.eligibility(pod).evictable


Strategy = Callable[[ClusterState, StrategyContext], list[MustMove]]


def owner_key(pod: Pod) -> tuple[str, str, str] | None:
    """The pod's controlling owner as (namespace, kind, name); None for a bare pod."""
    if pod.owner is None:
        return None
    return (pod.namespace, pod.owner.kind, pod.owner.name)


def low_priority_first(pods: list[Pod], context: StrategyContext) -> list[Pod]:
    """Evictable pods first, then lower priority, then name: which of several pods
    that could resolve a violation goes, as descheduler sorts them."""
    return sorted(pods, key=lambda p: (not context.is_evictable(p), p.priority, p.key))


def age_reference(pod: Pod) -> datetime.datetime | None:
    return pod.creation_timestamp or pod.start_time
