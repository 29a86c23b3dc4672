"""What a live round keeps and checks: proving relief (`verify`), the state that survives a
restart (`state`) and the cluster cache (`clusterCache`).
"""

from __future__ import annotations

import datetime

from pydantic import Field, field_validator

from loadaware.policy import _strict
from loadaware.policy._duration import Duration


class VerifySettings(_strict.StrictModel):
    """How a round proves relief after evicting."""

    timeout: Duration = Field(
        default=datetime.timedelta(minutes=5),
        description=(
            "How long to wait for each replacement to be Ready (and between pods of "
            "one workload); longer opens the breaker."
        ),
    )
    breaker_cooldown: Duration = Field(
        default=datetime.timedelta(minutes=30),
        description="After a failed verification no round evicts for this long.",
    )
    relief_timeout: Duration | None = Field(
        default=None,
        description=(
            "How long, once the replacements are Ready and the evicted pods gone, to "
            "wait for samples that cover only the time after the moves. Unset: "
            "derived from the source (Prometheus: rateWindow plus two "
            "scrapeIntervals; metrics-server: two of its resolutions)."
        ),
    )

    @field_validator("relief_timeout")
    @classmethod
    def _positive_timeout(cls, value: datetime.timedelta | None) -> datetime.timedelta | None:
        if value is not None and value <= datetime.timedelta(0):
            raise ValueError("must be a positive duration (or unset: derived from the source)")
        return value


class StateSettings(_strict.StrictModel):
    """Where loadaware keeps what must survive a restart: the eviction history behind
    window budgets and cooldowns, and the breaker (a ConfigMap it owns)."""

    namespace: str = Field(
        default="loadaware",
        min_length=1,
        description="Namespace of the state ConfigMap; it must exist.",
    )
    config_map: str = Field(
        default="loadaware-state",
        min_length=1,
        description="Name of the state ConfigMap, created if missing.",
    )


class ClusterCacheSettings(_strict.StrictModel):
    """How the cluster is read in `run --once` and `serve`: listed once, then kept
    current by watches (the cluster cache)."""

    max_age: Duration = Field(
        default=datetime.timedelta(minutes=2),
        description=(
            "A round refuses (exit 3, stale-cluster-cache) when any kind in the cluster "
            "cache has had no event, bookmark or watch start for longer than this."
        ),
    )
    sync_timeout: Duration = Field(
        default=datetime.timedelta(minutes=5),
        description="How long a round waits for the cache's first list of every kind.",
    )

    @field_validator("max_age", "sync_timeout")
    @classmethod
    def _positive(cls, value: datetime.timedelta) -> datetime.timedelta:
        if value <= datetime.timedelta(0):
            raise ValueError("must be a positive duration")
        return value
