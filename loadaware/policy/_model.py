"""The LoadAwarePolicy file model (pydantic, strict): the root of the policy, its sections
(one module each) and the checks that span sections.

Field names are snake_case in Python and camelCase in files. Unknown fields are
errors, so a typo never silently falls back to a default.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from loadaware.policy import (
    _evictor,
    _live_round,
    _metrics,
    _pools,
    _profiles,
    _serve,
    _steering,
    _strict,
)


def _default_pools() -> list[_pools.NodePool]:
    return [_pools.NodePool(name="default")]


class LoadAwarePolicy(_strict.StrictModel):
    api_version: Literal["loadaware.io/v1alpha1"] = Field(
        default="loadaware.io/v1alpha1",
        description="The policy's API version.",
    )
    kind: Literal["LoadAwarePolicy"] = Field(
        default="LoadAwarePolicy",
        description="The policy's kind.",
    )
    metrics: _metrics.MetricsSettings = Field(
        default=_metrics.MetricsSettings(),
        description="Where usage comes from, and when it is too old to act on.",
    )
    node_pools: list[_pools.NodePool] = Field(
        default_factory=_default_pools,
        min_length=1,
        description=(
            "Node pools with their thresholds; the first whose nodeSelector matches a "
            "node holds it, and a node in no pool is excluded."
        ),
    )
    evictor: _evictor.EvictorSettings = Field(
        default=_evictor.EvictorSettings(),
        description="Which pods may be evicted: the descheduler's DefaultEvictor settings.",
    )
    limits: _evictor.Limits = Field(
        default=_evictor.Limits(),
        description="Eviction budgets per round, per window and per workload.",
    )
    optimizer: _steering.OptimizerSettings = Field(
        default=_steering.OptimizerSettings(),
        description="How the round's evictions are chosen.",
    )
    steering: _steering.SteeringSettings = Field(
        default=_steering.SteeringSettings(),
        description="Where replacements are expected to land, and steering them there.",
    )
    verify: _live_round.VerifySettings = Field(
        default=_live_round.VerifySettings(),
        description="How a round proves relief after evicting.",
    )
    state: _live_round.StateSettings = Field(
        default=_live_round.StateSettings(),
        description="Where loadaware keeps what must survive a restart.",
    )
    cluster_cache: _live_round.ClusterCacheSettings = Field(
        default=_live_round.ClusterCacheSettings(),
        description=(
            "How `run --once` and `serve` read the cluster: listed once, then kept "
            "current by watches, and how old that view may be."
        ),
    )
    dry_run: bool = Field(
        default=False,
        description=(
            "Send every eviction with dryRun=All: the API checks it, nothing changes, "
            "no budget is used."
        ),
    )
    schedules: list[_serve.Schedule] = Field(
        default_factory=list,
        description="When `loadaware serve` starts rounds by itself.",
    )
    serve: _serve.ServeSettings = Field(
        default=_serve.ServeSettings(),
        description=(
            "The HTTP server, the Alertmanager webhook and leader election of `loadaware serve`."
        ),
    )
    profiles: list[_profiles.Profile] = Field(
        default_factory=list,
        description=(
            "Named scopes and the strategies run in them; none given: one implicit "
            "profile `default` (the evictor's scope, every pool, loadBalancing only)."
        ),
    )
    consolidation: _pools.ConsolidationSettings = Field(
        default=_pools.ConsolidationSettings(),
        description=(
            "descheduler's HighNodeUtilization: empty the least-used nodes so that a "
            "cluster autoscaler can remove them."
        ),
    )

    # A field validator, not a model one, so that a repeated name is reported
    # together with problems elsewhere in the file rather than only once they are fixed.
    @field_validator("node_pools")
    @classmethod
    def _pool_names_unique(cls, pools: list[_pools.NodePool]) -> list[_pools.NodePool]:
        names = [p.name for p in pools]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"nodePools names must be unique; repeated: {', '.join(dupes)}")
        return pools

    @field_validator("profiles")
    @classmethod
    def _profile_names_unique(cls, profiles: list[_profiles.Profile]) -> list[_profiles.Profile]:
        names = [p.name for p in profiles]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"profiles names must be unique; repeated: {', '.join(dupes)}")
        return profiles

    @field_validator("schedules")
    @classmethod
    def _schedule_names_unique(cls, schedules: list[_serve.Schedule]) -> list[_serve.Schedule]:
        # serve tells schedules apart by name: on /status, in metrics and in its jobs.
        names = [s.name for s in schedules]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError("; ".join(f"repeated name {n!r}" for n in repeated))
        return schedules

    @model_validator(mode="after")
    def _schedule_pools_exist(self) -> LoadAwarePolicy:
        known = {pool.name for pool in self.node_pools}
        unknown = [
            f"schedules[{s.name}].pools: unknown pool {p!r}"
            for s in self.schedules
            for p in s.pools or []
            if p not in known
        ]
        if unknown:
            raise ValueError("; ".join(unknown))
        return self

    @model_validator(mode="after")
    def _named_resources_have_a_source(self) -> LoadAwarePolicy:
        source = self.metrics.prometheus
        defined = sorted(source.resources) if source is not None else []
        judged = [
            (f"nodePools[{i}].{part}", percents)
            for i, pool in enumerate(self.node_pools)
            for part, percents in (
                ("thresholds", pool.thresholds),
                ("targetThresholds", pool.target_thresholds),
            )
        ]
        judged.append(("consolidation.thresholds", self.consolidation.thresholds))
        for place, percents in judged:
            for name in percents.as_dict():
                if name in _metrics.BUILTIN_RESOURCES or name in defined:
                    continue
                where = f"{place}.{name}"
                if self.metrics.metrics_server is not None:
                    raise ValueError(
                        f"{where}: metrics-server has only cpu and memory; a resource "
                        "of its own needs metrics.prometheus.resources"
                    )
                raise ValueError(
                    f"{where}: no resource of that name; allowed: "
                    + ", ".join([*_metrics.BUILTIN_RESOURCES, *defined])
                    + f" (define it under metrics.prometheus.resources.{name})"
                )
        return self

    @model_validator(mode="after")
    def _forecast_has_a_source(self) -> LoadAwarePolicy:
        # Only Prometheus keeps the past weeks a forecast is read from.
        if self.metrics.prometheus is None:
            for index, schedule in enumerate(self.schedules):
                if schedule.forecast is not None:
                    source = (
                        "metrics-server keeps no history"
                        if self.metrics.metrics_server is not None
                        else "the policy has no metrics source"
                    )
                    raise ValueError(
                        f"schedules[{index}].forecast: a forecast is read from past weeks "
                        f"in Prometheus and {source}; set metrics.prometheus or remove "
                        "the forecast"
                    )
        return self

    @model_validator(mode="after")
    def _profile_pools_exist(self) -> LoadAwarePolicy:
        known = {pool.name for pool in self.node_pools}
        for profile in self.profiles:
            unknown = sorted(set(profile.node_pools or ()) - known)
            if unknown:
                raise ValueError(
                    f"profile {profile.name!r}: nodePools {', '.join(unknown)} "
                    f"not in nodePools (known: {', '.join(sorted(known))})"
                )
        return self
