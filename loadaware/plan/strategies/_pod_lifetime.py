"""PodLifeTime: pods older than maxPodLifeTimeSeconds, oldest first.

Age counts from creation (start time when a dump lacks it). `states`, when
set, keeps only pods whose phase, status reason or a container's waiting
reason (CrashLoopBackOff, ContainerCreating, ...) is listed; init containers
count too. Only running pods hold a node and are evicted by this round.
"""

from __future__ import annotations

import datetime

from loadaware.cluster._types import ClusterState, Pod
from loadaware.plan.strategies._types import POD_LIFE_TIME, MustMove, StrategyContext, age_reference


def in_states(pod: Pod, states: frozenset[str], *, init_containers: bool = True) -> bool:
    if pod.phase in states or (pod.status_reason and pod.status_reason in states):
        return True
    return any(
        c.waiting_reason in states
        for c in pod.container_statuses
        if c.waiting_reason and (init_containers or not c.init)
    )


def find(cluster: ClusterState, context: StrategyContext) -> list[MustMove]:
    settings = context.settings.pod_life_time
    limit = datetime.timedelta(seconds=settings.max_pod_life_time_seconds)
    states = frozenset(settings.states)
    old: list[tuple[datetime.datetime, Pod]] = []
    for pod in context.pods_in_scope(cluster):
        born = age_reference(pod)
        if born is None or context.now - born <= limit:
            continue
        if states and not in_states(pod, states):
            continue
        old.append((born, pod))
    old.sort(key=lambda item: (item[0], item[1].key))
    return [MustMove(pod=pod, reason=POD_LIFE_TIME) for _, pod in old]
