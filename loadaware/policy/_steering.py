"""How the round's evictions are chosen (`optimizer`) and where the replacements are
expected to land (`steering`).
"""

from __future__ import annotations

import datetime
from typing import Annotated, Literal

from pydantic import Field, model_validator

from loadaware.policy import _scheduler_config, _strict
from loadaware.policy._duration import Duration


class OptimizerSettings(_strict.StrictModel):
    """How the round's evictions are chosen."""

    method: Literal["milp", "greedy"] = Field(
        default="milp",
        description=(
            "milp: the whole round at once (HiGHS), with a lower bound, the greedy "
            "plan kept if better and used when HiGHS finds nothing in time; greedy: "
            "hot node by hot node."
        ),
    )
    time_limit: Duration = Field(
        default=datetime.timedelta(seconds=10),
        description="Time limit of the MILP solve.",
    )
    mip_rel_gap: Annotated[float, Field(ge=0, le=1)] = Field(
        default=0.01,
        description=(
            "Relative gap between the plan and the lower bound at which the MILP solve stops."
        ),
    )


class SteeringSettings(_strict.StrictModel):
    """Where replacements are expected to land."""

    soft_taint: bool = Field(
        default=True,
        description=(
            "Steer each replacement to its planned landing: while an eviction is "
            "sent, loadaware.io/hotspot=true:PreferNoSchedule sits on the few nodes "
            "that would otherwise outscore it (plan JSON `steer`). Off: only moves "
            "whose natural landing is good are planned."
        ),
    )
    percentage_of_nodes_to_score: Annotated[int, Field(ge=0, le=100)] = Field(
        default=0,
        description=(
            "kube-scheduler's percentageOfNodesToScore: from 100 nodes it scores only "
            "a sample of the feasible ones. 0 is its adaptive default (50% less 1% "
            "per 125 nodes, at least 5% and 100 nodes), which managed control planes "
            "keep; 100 scores every node. Each eviction's landing set is sized for "
            "that sample."
        ),
    )
    miss_probability: Annotated[float, Field(gt=0, lt=1)] = Field(
        default=1e-6,
        description=(
            "The largest chance, without trusting kube-scheduler's node order, that "
            "its sample misses every node of an eviction's landing set. A round of "
            "N evictions misses somewhere with a chance up to N times this; a miss "
            "lands on the best node the sample holds, which may be a hot node just "
            "relieved (its requests freed make it score well)."
        ),
    )
    max_tainted_fraction: Annotated[float, Field(ge=0, le=1)] = Field(
        default=0.1,
        description=(
            "The largest share of the cluster's nodes that may carry loadaware's soft "
            "taint at once (0-1; never fewer than 10 nodes): every pod the cluster "
            "schedules meanwhile is pushed off them. A move whose steer set, with the "
            "taints still held for replacements not yet bound, would need more is "
            "planned with another pod or not at all (reason taint-cap). A round holds "
            "far fewer most of the time: only the current move's rivals."
        ),
    )
    lookahead: Annotated[int, Field(ge=0, le=1000)] = Field(
        default=16,
        description=(
            "How many of the plan's next evictions the evictor may take first, when "
            "one's steer set needs fewer taint changes from the taints set now than "
            "the next one's. Each change is a node update that every watcher of nodes "
            "receives; consecutive moves in relief order share few of their rivals. "
            "An eviction is passed over at most this many times, and only for one of "
            "the same reason whose workload is not awaiting a replacement. 0 or 1: "
            "the plan's order exactly."
        ),
    )
    scheduler_config: _scheduler_config.SchedulerConfigField = Field(
        default=None,
        description=(
            "The cluster's KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), "
            "inline or as the path of its file: landings are predicted with its "
            "profiles (score plugins and weights, NodeResourcesFit's scoringStrategy, "
            "BalancedAllocation's resources, PodTopologySpread's defaults, "
            "percentageOfNodesToScore, which overrides the one above). Omitted: "
            "kube-scheduler's default profile. Settings loadaware cannot model (a "
            "score plugin it does not know, a prioritizing extender) are errors "
            "unless softTaint is off."
        ),
    )

    scheduler_names: list[Annotated[str, Field(min_length=1)]] | None = Field(
        default=None,
        description=(
            "The schedulerNames whose pods loadaware predicts landings for; a pod that "
            "names another scheduler has no landing prediction and is not moved (the "
            "plan counts it as unmodelled-scheduler). Omitted: the profiles of "
            "schedulerConfig, else default-scheduler. Without schedulerConfig every "
            "name listed is modelled with the default profile."
        ),
    )

    min_model_agreement: Annotated[float, Field(ge=0, le=1)] = Field(
        default=0.95,
        description=(
            "The least share of recent bindings the model must have predicted (the "
            "agreement `serve` measures on every binding it sees) for a round to act "
            "on its landings: below it, once minAgreementObservations bindings were "
            "seen, a live round is refused before it plans (scheduler-model-disagrees), "
            "softTaint on or off, as both rest on the predicted landings. During a "
            "round, off-set landings beyond maxOffSetLandings that are also more than "
            "1 - minModelAgreement of its landings stop it. 0 turns the guard off."
        ),
    )
    min_agreement_observations: Annotated[int, Field(ge=1)] = Field(
        default=20,
        description=(
            "How many recent bindings the agreement must rest on before "
            "minModelAgreement refuses a round: fewer say too little either way."
        ),
    )
    max_off_set_landings: Annotated[int, Field(ge=0)] = Field(
        default=2,
        description=(
            "Replacements a round lets land on a good node outside their landing set "
            "(off-set: the model predicted otherwise) before it stops: one more, when "
            "off-set landings are also more than 1 - minModelAgreement of the "
            "round's landings, ends it partial (scheduler-model-disagrees), its "
            "taints removed. A single unlucky landing does not stop a round; a model "
            "that disagrees is caught within a few evictions."
        ),
    )

    @model_validator(mode="after")
    def _scheduler_names_have_profiles(self) -> SteeringSettings:
        if self.scheduler_config is None or self.scheduler_names is None:
            return self
        missing = sorted(set(self.scheduler_names) - set(self.scheduler_config.scheduler_names))
        if missing:
            raise ValueError(
                f"schedulerNames {', '.join(missing)} have no profile in schedulerConfig "
                f"(its profiles: {', '.join(self.scheduler_config.scheduler_names)})"
            )
        return self

    @model_validator(mode="after")
    def _scheduler_config_modelled(self) -> SteeringSettings:
        if self.scheduler_config is None or not self.soft_taint:
            return self
        problems = _scheduler_config.unmodelled_settings(self.scheduler_config)
        if problems:
            raise ValueError(
                "schedulerConfig asks what loadaware cannot model: " + "; ".join(problems)
            )
        return self
