"""RemovePodsHavingTooManyRestarts: pods whose containers restarted podRestartThreshold
times or more (init containers too with includingInitContainers).

`states`, when set, keeps only pods whose phase or a container's waiting
reason is listed (Running, CrashLoopBackOff). The pods restarting most go first.
"""

from __future__ import annotations

from loadaware.cluster._types import ClusterState, Pod
from loadaware.plan.strategies._pod_lifetime import in_states
from loadaware.plan.strategies._types import TOO_MANY_RESTARTS, MustMove, StrategyContext


def restarts(pod: Pod, *, init_containers: bool) -> int:
    if not pod.container_statuses:
        return pod.restart_count  # a pod built without statuses keeps the total only
    return sum(c.restart_count for c in pod.container_statuses if init_containers or not c.init)


def find(cluster: ClusterState, context: StrategyContext) -> list[MustMove]:
    settings = context.settings.remove_pods_having_too_many_restarts
    states = frozenset(settings.states)
    hits: list[tuple[int, Pod]] = []
    for pod in context.pods_in_scope(cluster):
        count = restarts(pod, init_containers=settings.including_init_containers)
        if count < settings.pod_restart_threshold:
            continue
        if states and not in_states(
            pod, states, init_containers=settings.including_init_containers
        ):
            continue
        hits.append((count, pod))
    hits.sort(key=lambda item: (-item[0], item[1].key))
    return [MustMove(pod=pod, reason=TOO_MANY_RESTARTS) for _, pod in hits]
