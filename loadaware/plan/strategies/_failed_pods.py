"""RemoveFailedPods: pods in phase Failed still bound to a node in scope.

As the descheduler: minPodLifetimeSeconds (age since creation), `reasons`
(the pod's status reason, or a container's waiting or terminated reason),
`exitCodes` (a terminated container's), excludeOwnerKinds, and
includingInitContainers for the container checks. Failed pods hold nothing
and their replacement, if any, exists already: they need no landing.
"""

from __future__ import annotations

import datetime

from loadaware.cluster._types import ClusterState, Pod
from loadaware.plan.strategies._types import FAILED_PODS, MustMove, StrategyContext, age_reference
from loadaware.policy import FailedPodsStrategy


def matches(pod: Pod, settings: FailedPodsStrategy, now: datetime.datetime) -> bool:
    if settings.min_pod_lifetime_seconds is not None:
        born = age_reference(pod)
        if born is None or now - born < datetime.timedelta(
            seconds=settings.min_pod_lifetime_seconds
        ):
            return False
    if pod.owner is not None and pod.owner.kind in settings.exclude_owner_kinds:
        return False
    containers = [
        c for c in pod.container_statuses if settings.including_init_containers or not c.init
    ]
    if settings.reasons:
        reasons = {pod.status_reason} | {
            r for c in containers for r in (c.waiting_reason, c.terminated_reason)
        }
        if not reasons & set(settings.reasons):
            return False
    if settings.exit_codes:
        codes = {c.exit_code for c in containers if c.exit_code is not None}
        if not codes & set(settings.exit_codes):
            return False
    return True


def find(cluster: ClusterState, context: StrategyContext) -> list[MustMove]:
    settings = context.settings.remove_failed_pods
    return [
        MustMove(pod=pod, reason=FAILED_PODS)
        for pod in sorted(cluster.pods, key=lambda p: p.key)
        if pod.phase == "Failed"
        and pod.node_name in context.nodes
        and pod.deletion_timestamp is None
        and matches(pod, settings, context.now)
    ]
