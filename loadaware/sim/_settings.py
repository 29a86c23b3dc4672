"""The settings of one simulated cluster, given once (`sim serve`'s options) and
passed down to the parts that use them."""

from __future__ import annotations

import dataclasses

from loadaware import scheduling


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SimSettings:
    # Simulated seconds from a pod's binding to its Ready condition (the kubelet).
    ready_delay: float = 2.0
    # The bearer token every request but the open paths must carry; None: no authentication.
    token: str | None = dataclasses.field(default=None, repr=False)
    # Seed of the scheduler's random choice among equally best-scored nodes.
    scheduler_seed: int = 0
    # kube-scheduler's percentageOfNodesToScore: 0 adaptive, 100 every feasible node.
    percentage_of_nodes_to_score: int = 0
    # The scheduler's profiles by schedulerName (`sim serve --scheduler-config`); a
    # pod naming another scheduler stays Pending, as nothing would bind it.
    scheduler_profiles: scheduling.SchedulerProfiles = scheduling.DEFAULT_PROFILES
    # Real seconds between a watch's bookmarks; kube-apiserver sends one about a minute.
    watch_bookmark_seconds: float = 60.0
