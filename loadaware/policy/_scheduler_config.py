"""The KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) loadaware reads
to predict where kube-scheduler places a pod: its profiles by schedulerName, their
score plugins and the plugin arguments the model follows.

Only what changes a score is read; kube-scheduler's own runtime settings
(leaderElection, clientConnection, parallelism, ...) are accepted and ignored.
`unmodelled_settings` says what a configuration asks that the model cannot
follow (a plugin it does not know scoring with a weight, an extender that
prioritizes, a Filter plugin disabled), so that loadaware refuses to predict
landings it would get wrong.
"""

from __future__ import annotations

import itertools
import pathlib
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

SCHEDULER_CONFIG_API_VERSION = "kubescheduler.config.k8s.io/v1"
# The schedulerName of kube-scheduler's default profile: what the API server sets a
# pod's spec.schedulerName to when it names none.
DEFAULT_SCHEDULER_NAME = "default-scheduler"

# The Score plugins the model computes (the default profile's, pkg/scheduler/apis/
# config/v1/default_plugins.go), with their default weights.
MODELLED_SCORE_PLUGINS: Mapping[str, int] = {
    "NodeResourcesFit": 1,
    "NodeResourcesBalancedAllocation": 1,
    "TaintToleration": 3,
    "NodeAffinity": 2,
    "PodTopologySpread": 2,
    "InterPodAffinity": 2,
    "ImageLocality": 1,
}
# Default plugins with no Score the model needs: VolumeBinding scores only with
# StorageCapacityScoring, on volumes the model does not read; the rest have none.
SCORELESS_PLUGINS = frozenset(
    {
        "PrioritySort",
        "NodeUnschedulable",
        "NodeName",
        "NodePorts",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "EBSLimits",
        "GCEPDLimits",
        "AzureDiskLimits",
        "VolumeBinding",
        "VolumeZone",
        "DefaultPreemption",
        "SchedulingGates",
        "DefaultBinder",
        "DynamicResources",
    }
)
# Default plugins whose being disabled changes only scores the model computes.
_SCORE_ONLY_PLUGINS = frozenset({"ImageLocality", "NodeResourcesBalancedAllocation"})


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        validate_default=True,
    )


class Plugin(_Model):
    name: str = Field(min_length=1, description="The plugin's name; `*` means every plugin.")
    weight: Annotated[int, Field(ge=0, le=100)] = Field(
        default=0,
        description="Its weight at the score extension point; 0 counts as 1.",
    )


class PluginSet(_Model):
    enabled: list[Plugin] = Field(default_factory=list, description="Plugins added.")
    disabled: list[Plugin] = Field(default_factory=list, description="Plugins taken out.")


class Plugins(_Model):
    """A profile's plugins per extension point, merged with the defaults."""

    pre_enqueue: PluginSet | None = Field(
        default=None,
        description="preEnqueue plugins; they do not change where a pod lands.",
    )
    queue_sort: PluginSet | None = Field(
        default=None,
        description="queueSort plugins; they do not change where a pod lands.",
    )
    pre_filter: PluginSet | None = Field(
        default=None,
        description=(
            "preFilter plugins; loadaware filters as the default profile does, so "
            "changes here are not modelled."
        ),
    )
    filter: PluginSet | None = Field(
        default=None,
        description=(
            "filter plugins; loadaware filters as the default profile does, so "
            "changes here are not modelled."
        ),
    )
    post_filter: PluginSet | None = Field(
        default=None,
        description="postFilter plugins; they do not change where a pod lands.",
    )
    pre_score: PluginSet | None = Field(
        default=None,
        description="preScore plugins; they do not change where a pod lands.",
    )
    score: PluginSet | None = Field(
        default=None,
        description="Score plugins and their weights.",
    )
    reserve: PluginSet | None = Field(
        default=None,
        description="reserve plugins; they do not change where a pod lands.",
    )
    permit: PluginSet | None = Field(
        default=None,
        description="permit plugins; they do not change where a pod lands.",
    )
    pre_bind: PluginSet | None = Field(
        default=None,
        description="preBind plugins; they do not change where a pod lands.",
    )
    bind: PluginSet | None = Field(
        default=None,
        description="bind plugins; they do not change where a pod lands.",
    )
    post_bind: PluginSet | None = Field(
        default=None,
        description="postBind plugins; they do not change where a pod lands.",
    )
    multi_point: PluginSet | None = Field(
        default=None,
        description=(
            "Plugins at every extension point they implement; the default plugins are here."
        ),
    )


class ResourceSpec(_Model):
    name: str = Field(min_length=1, description="A resource name: cpu, memory, or extended.")
    weight: Annotated[int, Field(ge=1, le=100)] = Field(default=1, description="Its weight.")


class UtilizationShapePoint(_Model):
    utilization: Annotated[int, Field(ge=0, le=100)] = Field(description="Utilization, percent.")
    score: Annotated[int, Field(ge=0, le=10)] = Field(description="Score there, 0-10.")


class RequestedToCapacityRatioParam(_Model):
    shape: list[UtilizationShapePoint] = Field(
        min_length=1,
        description="Points of the score function, utilization strictly increasing.",
    )

    @field_validator("shape")
    @classmethod
    def _increasing(cls, shape: list[UtilizationShapePoint]) -> list[UtilizationShapePoint]:
        for before, after in itertools.pairwise(shape):
            if after.utilization <= before.utilization:
                raise ValueError("utilization values must be sorted in increasing order")
        return shape


def _default_resources() -> list[ResourceSpec]:
    return [ResourceSpec(name="cpu"), ResourceSpec(name="memory")]


class ScoringStrategy(_Model):
    type: Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"] = Field(
        default="LeastAllocated", description="How NodeResourcesFit scores requested resources."
    )
    resources: list[ResourceSpec] = Field(
        default_factory=_default_resources, description="Resources scored, with weights."
    )
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = Field(
        default=None, description="The shape, for RequestedToCapacityRatio."
    )


class NodeResourcesFitArgs(_Model):
    model_config = ConfigDict(**{**_Model.model_config, "extra": "allow"})
    kind: str | None = None
    api_version: str | None = None
    scoring_strategy: ScoringStrategy = Field(default_factory=ScoringStrategy)


class NodeResourcesBalancedAllocationArgs(_Model):
    kind: str | None = None
    api_version: str | None = None
    resources: list[ResourceSpec] = Field(default_factory=_default_resources)


class DefaultConstraint(_Model):
    max_skew: Annotated[int, Field(ge=1)]
    topology_key: str = Field(min_length=1)
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]


class PodTopologySpreadArgs(_Model):
    kind: str | None = None
    api_version: str | None = None
    default_constraints: list[DefaultConstraint] = Field(default_factory=list)
    defaulting_type: Literal["System", "List"] = "System"


class InterPodAffinityArgs(_Model):
    kind: str | None = None
    api_version: str | None = None
    hard_pod_affinity_weight: Annotated[int, Field(ge=0, le=100)] = 1
    ignore_preferred_terms_of_existing_pods: bool = False


class NodeAffinityArgs(_Model):
    model_config = ConfigDict(**{**_Model.model_config, "extra": "allow"})
    kind: str | None = None
    api_version: str | None = None
    added_affinity: dict[str, Any] | None = None


_ARGS_MODELS: Mapping[str, type[BaseModel]] = {
    "NodeResourcesFit": NodeResourcesFitArgs,
    "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs,
    "PodTopologySpread": PodTopologySpreadArgs,
    "InterPodAffinity": InterPodAffinityArgs,
    "NodeAffinity": NodeAffinityArgs,
}


class PluginConfig(_Model):
    """One plugin's arguments. Those of NodeResourcesFit (scoringStrategy),
    NodeResourcesBalancedAllocation (resources), PodTopologySpread
    (defaultConstraints, defaultingType), InterPodAffinity and NodeAffinity are
    checked as kube-scheduler checks them; other plugins' are kept as written."""

    name: str = Field(min_length=1, description="The plugin's name.")
    args: dict[str, Any] | None = Field(default=None, description="Its arguments.")

    @model_validator(mode="after")
    def _known_args_valid(self) -> PluginConfig:
        self.typed_args()
        return self

    def typed_args(self) -> BaseModel | None:
        """The arguments of a plugin the model reads, validated; None for others."""
        model = _ARGS_MODELS.get(self.name)
        if model is None:
            return None
        try:
            return model.model_validate(self.args or {}, by_alias=True, by_name=False)
        except ValidationError as exc:
            details = "; ".join(f"args{_spelt(e['loc'])}: {e['msg']}" for e in exc.errors())
            raise ValueError(f"{self.name} {details}") from None


class KubeSchedulerProfile(_Model):
    scheduler_name: str = Field(
        default=DEFAULT_SCHEDULER_NAME,
        min_length=1,
        description="The schedulerName pods name to be scheduled by this profile.",
    )
    percentage_of_nodes_to_score: Annotated[int, Field(ge=0, le=100)] | None = Field(
        default=None, description="This profile's percentageOfNodesToScore."
    )
    plugins: Plugins | None = Field(default=None, description="Plugins enabled and disabled.")
    plugin_config: list[PluginConfig] = Field(
        default_factory=list, description="Arguments of plugins, by name."
    )


class Extender(_Model):
    model_config = ConfigDict(**{**_Model.model_config, "extra": "allow"})
    url_prefix: str = Field(default="", description="The extender's URL.")
    prioritize_verb: str = Field(
        default="", description="Its prioritize verb; an extender with one scores nodes."
    )
    weight: int = Field(default=0, description="The weight of its scores.")


class KubeSchedulerConfiguration(_Model):
    """kube-scheduler's configuration file; the fields loadaware does not read are
    kube-scheduler's own runtime settings and are ignored."""

    model_config = ConfigDict(**{**_Model.model_config, "extra": "allow"})

    api_version: Literal["kubescheduler.config.k8s.io/v1"] = Field(
        default=SCHEDULER_CONFIG_API_VERSION, description="The configuration's API version."
    )
    kind: Literal["KubeSchedulerConfiguration"] = Field(
        default="KubeSchedulerConfiguration", description="The configuration's kind."
    )
    percentage_of_nodes_to_score: Annotated[int, Field(ge=0, le=100)] | None = Field(
        default=None, description="percentageOfNodesToScore of every profile without its own."
    )
    profiles: list[KubeSchedulerProfile] = Field(
        default_factory=list,
        description="The scheduler's profiles; none: the default profile alone.",
    )
    extenders: list[Extender] = Field(default_factory=list, description="Scheduler extenders.")

    @field_validator("profiles")
    @classmethod
    def _names_unique(cls, profiles: list[KubeSchedulerProfile]) -> list[KubeSchedulerProfile]:
        seen: set[str] = set()
        for profile in profiles:
            if profile.scheduler_name in seen:
                raise ValueError(f"schedulerName {profile.scheduler_name!r} is repeated")
            seen.add(profile.scheduler_name)
        return profiles

    @model_validator(mode="after")
    def _names_given(self) -> KubeSchedulerConfiguration:
        if len(self.profiles) > 1 and any(
            "scheduler_name" not in p.model_fields_set for p in self.profiles
        ):
            raise ValueError("with more than one profile, each must set schedulerName")
        return self

    @property
    def scheduler_names(self) -> tuple[str, ...]:
        return tuple(p.scheduler_name for p in self.profiles) or (DEFAULT_SCHEDULER_NAME,)


def _spelt(loc: Sequence[int | str]) -> str:
    """An error's location as a file spells it: `.scoringStrategy.resources[0].weight`."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)


def read_scheduler_config(value: Any) -> Any:
    """A schedulerConfig given as a file path: the file's content, parsed (YAML or
    JSON), for the model to validate; anything else as it is."""
    if not isinstance(value, str):
        return value
    path = pathlib.Path(value)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read scheduler configuration {path}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(f"scheduler configuration {path} is not YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"scheduler configuration {path} must be a mapping")
    try:
        return KubeSchedulerConfiguration.model_validate(data, by_alias=True, by_name=False)
    except ValidationError as exc:
        details = "; ".join(f"{_spelt(e['loc'])[1:]}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"scheduler configuration {path} is invalid: {details}") from None


def load_scheduler_config(path: str | pathlib.Path) -> KubeSchedulerConfiguration:
    """Read a KubeSchedulerConfiguration file; ValueError naming the file and the
    problems when it cannot be read or is invalid."""
    config = read_scheduler_config(str(path))
    assert isinstance(config, KubeSchedulerConfiguration)
    return config


def merged_score_weights(profile: KubeSchedulerProfile) -> dict[str, int]:
    """Every plugin the profile scores with and its weight, merged with the default
    plugins as kube-scheduler merges them: the default multiPoint set less what
    multiPoint.disabled names ("*": all), plus multiPoint.enabled; then
    score.enabled sets weights and score.disabled takes plugins out ("*": all that
    score.enabled does not name). A weight of 0 counts as 1."""
    multi = dict(MODELLED_SCORE_PLUGINS)
    plugins = profile.plugins
    if plugins is None:
        return multi
    if plugins.multi_point is not None:
        disabled = {p.name for p in plugins.multi_point.disabled}
        if "*" in disabled:
            multi.clear()
        for name in disabled:
            multi.pop(name, None)
        for plugin in plugins.multi_point.enabled:
            if plugin.name not in SCORELESS_PLUGINS:
                multi[plugin.name] = plugin.weight or 1
    score = plugins.score
    if score is None:
        return multi
    disabled = {p.name for p in score.disabled}
    merged = {} if "*" in disabled else {n: w for n, w in multi.items() if n not in disabled}
    merged.update({p.name: p.weight or 1 for p in score.enabled})
    return merged


def modelled_resource(name: str) -> bool:
    """cpu, memory and extended resources (domain-qualified names outside
    kubernetes.io) are the resources the model knows a pod's requests of."""
    if name in ("cpu", "memory"):
        return True
    return "/" in name and not name.split("/", 1)[0].endswith("kubernetes.io")


def unmodelled_settings(config: KubeSchedulerConfiguration) -> list[str]:
    """What in the configuration the model cannot follow, one line each, naming the
    profile and the plugin or field."""
    problems = [
        f"extenders: {e.url_prefix or 'an extender'} prioritizes nodes (weight {e.weight}) "
        "outside kube-scheduler, which loadaware cannot predict"
        for e in config.extenders
        if e.prioritize_verb and e.weight
    ]
    for index, profile in enumerate(config.profiles):
        where = f"profiles[{index}] ({profile.scheduler_name})"
        problems.extend(f"{where}: {p}" for p in _unmodelled_in_profile(profile))
    return problems


def _unmodelled_in_profile(profile: KubeSchedulerProfile) -> list[str]:
    problems = [
        f"score plugin {name} (weight {weight}) is not one loadaware models; disable it "
        "at the score extension point, or turn steering.softTaint off"
        for name, weight in merged_score_weights(profile).items()
        if name not in MODELLED_SCORE_PLUGINS and name not in SCORELESS_PLUGINS
    ]
    plugins = profile.plugins
    if plugins is not None:
        for point, spelt in ((plugins.pre_filter, "preFilter"), (plugins.filter, "filter")):
            if point is not None and (point.enabled or point.disabled):
                names = ", ".join(p.name for p in (*point.enabled, *point.disabled))
                problems.append(
                    f"plugins.{spelt} changes Filter plugins ({names}); loadaware filters "
                    "nodes as the default profile does"
                )
        if plugins.multi_point is not None:
            unknown = [
                p.name
                for p in plugins.multi_point.enabled
                if p.name not in MODELLED_SCORE_PLUGINS and p.name not in SCORELESS_PLUGINS
            ]
            if unknown:
                problems.append(
                    f"plugins.multiPoint.enabled adds plugins loadaware does not model: "
                    f"{', '.join(unknown)}"
                )
            filters = [
                p.name
                for p in plugins.multi_point.disabled
                if p.name not in _SCORE_ONLY_PLUGINS and p.name != "VolumeBinding"
            ]
            if filters:
                problems.append(
                    f"plugins.multiPoint.disabled takes out Filter plugins loadaware runs: "
                    f"{', '.join(filters)}"
                )
    for entry in profile.plugin_config:
        problems.extend(_unmodelled_args(entry))
    return problems


def _unmodelled_args(entry: PluginConfig) -> list[str]:
    args = entry.typed_args()
    if isinstance(args, NodeResourcesFitArgs):
        return [
            f"NodeResourcesFit scoringStrategy resource {r.name}: not modelled (cpu, memory "
            "and extended resources are)"
            for r in args.scoring_strategy.resources
            if not modelled_resource(r.name)
        ]
    if isinstance(args, NodeResourcesBalancedAllocationArgs):
        return [
            f"NodeResourcesBalancedAllocation resource {r.name}: not modelled (cpu, memory "
            "and extended resources are)"
            for r in args.resources
            if not modelled_resource(r.name)
        ]
    if isinstance(args, PodTopologySpreadArgs) and args.defaulting_type == "List":
        return [
            f"PodTopologySpread defaultConstraints on {c.topology_key} with DoNotSchedule: "
            "only ScheduleAnyway defaults are modelled"
            for c in args.default_constraints
            if c.when_unsatisfiable == "DoNotSchedule"
        ]
    if isinstance(args, InterPodAffinityArgs):
        problems = []
        if args.hard_pod_affinity_weight != 1:
            problems.append("InterPodAffinity hardPodAffinityWeight: only 1 is modelled")
        if args.ignore_preferred_terms_of_existing_pods:
            problems.append("InterPodAffinity ignorePreferredTermsOfExistingPods: not modelled")
        return problems
    if isinstance(args, NodeAffinityArgs) and args.added_affinity:
        return ["NodeAffinity addedAffinity: not modelled"]
    return []


def _accept_a_path(schema: dict[str, Any]) -> None:
    schema.setdefault("anyOf", []).insert(
        1, {"type": "string", "description": "The path of a KubeSchedulerConfiguration file."}
    )


# steering.schedulerConfig: a configuration inline, or the path of its file (read
# when the policy is loaded, relative to the working directory).
SchedulerConfigField = Annotated[
    KubeSchedulerConfiguration | None,
    BeforeValidator(read_scheduler_config),
    Field(json_schema_extra=_accept_a_path),
]
