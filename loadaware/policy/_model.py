"""The LoadAwarePolicy file model (pydantic, strict).

Field names are snake_case in Python and camelCase in files. Unknown fields are
errors, so a typo never silently falls back to a default.
"""

from __future__ import annotations

import datetime
import re
import zoneinfo
from typing import Annotated, Literal

from pydantic import (
    AnyHttpUrl,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from loadaware.policy._duration import Duration

Percent = Annotated[float, Field(ge=0, le=100)]
NonNegativeInt = Annotated[int, Field(ge=0)]

SYSTEM_CRITICAL_PRIORITY = 2_000_000_000


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        validate_default=True,
    )


class SecretReference(_Model):
    namespace: str = Field(min_length=1)
    name: str = Field(min_length=1)
    key: str = Field(min_length=1)


class AuthToken(_Model):
    secret_reference: SecretReference


class BasicAuth(_Model):
    """HTTP basic auth, both parts read from Secrets (as prometheus-operator's basicAuth)."""

    username: SecretReference
    password: SecretReference


class PrometheusQueries(_Model):
    """PromQL overrides. Each must return one series per node (or pod) with the identity labels.

    `$window` is replaced by rateWindow. The *Timestamp queries return, per node
    or pod, the unix time of the newest raw sample behind the value (for example
    `timestamp(my_metric)`); when a value query is overridden and its timestamp
    query is not, the default one still judges freshness.

    By default pods are dated without a per-pod answer: a pod takes the time of
    its node's newest cAdvisor scrape (by the `node` label of the pod value
    answers), or its own time when that is older than half of maxSampleAge. An
    overridden podCpuTimestamp or podMemoryTimestamp is asked as given, one
    series per pod; pod value queries overridden without the `node` label make
    the default per-pod query be asked for the pods they leave undated.
    """

    node_cpu: str | None = None
    node_memory: str | None = None
    pod_cpu: str | None = None
    pod_memory: str | None = None
    node_cpu_timestamp: str | None = None
    node_memory_timestamp: str | None = None
    pod_cpu_timestamp: str | None = None
    pod_memory_timestamp: str | None = None


RESOURCE_NAME = r"^[a-z][a-z0-9-]{0,62}$"
BUILTIN_RESOURCES = ("cpu", "memory", "pods")


class NamedResource(_Model):
    """A resource whose usage PromQL gives (GPU, network, disk): judged like cpu once a
    pool's thresholds name it.

    node: usage per node (by nodeLabel); pod: usage per pod (by namespace, pod);
    capacity: per node in the same unit, a PromQL query (by nodeLabel) or the name
    of a node allocatable resource (`nvidia.com/gpu`). nodeTimestamp and
    podTimestamp give the unix time of the newest raw sample behind each value
    (`timestamp()` of the raw series, never of an aggregate: that is the
    evaluation time): staleness is judged from them, as for cpu."""

    node: str = Field(min_length=1)
    pod: str = Field(min_length=1)
    capacity: str = Field(min_length=1)
    node_timestamp: str = Field(min_length=1)
    pod_timestamp: str = Field(min_length=1)
    # The label naming the node on this resource's node series; None: the source's nodeLabel.
    node_label: str | None = None

    @property
    def capacity_is_query(self) -> bool:
        """A node allocatable resource is a bare name (`nvidia.com/gpu`), a query is not."""
        return re.fullmatch(r"[A-Za-z0-9./_-]+", self.capacity) is None


class ForecastSettings(_Model):
    """How a schedule with `forecast` reads the usage to come: for each node and
    workload, the `quantile` across the last `weeks` weeks of the peak over the
    same time-of-week window (see docs/planning-ahead.md)."""

    weeks: int = Field(
        default=4,
        ge=1,
        le=52,
        description="How many past weeks are read: the same time-of-week window of each.",
    )
    min_weeks: int = Field(
        default=3,
        ge=1,
        description=(
            "Weeks with data a node or workload needs for a forecast; with fewer it has "
            "none (fail closed: the node is excluded or the round refused as for stale "
            "metrics, the workload's pods do not move)."
        ),
    )
    quantile: float = Field(
        default=0.9,
        gt=0,
        le=1,
        description=(
            "The quantile across weeks of each week's peak over the window (1: the highest week)."
        ),
    )
    step: Duration = Field(
        default=datetime.timedelta(minutes=5),
        description=(
            "The subquery step inside each week's window: the peak is the highest "
            "value at this resolution."
        ),
    )

    @field_validator("step")
    @classmethod
    def _positive_step(cls, value: datetime.timedelta) -> datetime.timedelta:
        if value <= datetime.timedelta(0):
            raise ValueError("must be a positive duration")
        return value

    @model_validator(mode="after")
    def _min_weeks_within(self) -> ForecastSettings:
        if self.min_weeks > self.weeks:
            raise ValueError(f"minWeeks ({self.min_weeks}) must not exceed weeks ({self.weeks})")
        return self


class PrometheusSource(_Model):
    url: AnyHttpUrl
    auth_token: AuthToken | None = None
    token_file: str | None = None
    basic_auth: BasicAuth | None = None
    ca_file: str | None = None
    insecure_skip_verify: bool = False
    # Client certificate and its key (PEM files), for Prometheus behind mutual TLS.
    cert_file: str | None = None
    key_file: str | None = None
    timeout: Duration = datetime.timedelta(seconds=10)
    # Sent with every query, e.g. X-Scope-OrgID for Grafana Mimir or Cortex.
    headers: dict[str, str] = Field(default_factory=dict)
    # The label naming the node on node-level series; a `:port` suffix is ignored.
    node_label: str = "instance"
    rate_window: Duration = datetime.timedelta(minutes=5)
    # How often Prometheus scrapes node-exporter and cAdvisor: how often a relief
    # check after a round looks for a newer sample (kube-prometheus-stack: 30s).
    scrape_interval: Duration = datetime.timedelta(seconds=30)
    queries: PrometheusQueries = PrometheusQueries()
    # Further resources by name, usable in nodePools' thresholds (see NamedResource).
    resources: dict[str, NamedResource] = Field(default_factory=dict)
    forecast: ForecastSettings = Field(
        default_factory=ForecastSettings,
        description=(
            "How schedules with `forecast` read the usage to come from the same hours "
            "of past weeks."
        ),
    )

    @field_validator("resources")
    @classmethod
    def _resource_names(cls, value: dict[str, NamedResource]) -> dict[str, NamedResource]:
        for name in value:
            if name in BUILTIN_RESOURCES:
                raise ValueError(f"{name!r} is built in; name the resource otherwise")
            if re.fullmatch(RESOURCE_NAME, name) is None:
                raise ValueError(
                    f"{name!r} is not a resource name: lowercase letters, digits and '-', "
                    "starting with a letter"
                )
        return value

    @field_validator("scrape_interval")
    @classmethod
    def _positive_interval(cls, value: datetime.timedelta) -> datetime.timedelta:
        if value <= datetime.timedelta(0):
            raise ValueError("must be a positive duration")
        return value

    @model_validator(mode="after")
    def _one_token_source(self) -> PrometheusSource:
        if self.auth_token is not None and self.token_file is not None:
            raise ValueError("set at most one of authToken and tokenFile")
        if self.basic_auth is not None and (self.auth_token or self.token_file):
            raise ValueError("set at most one of basicAuth and a bearer token")
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("set certFile and keyFile together")
        return self


class MetricsServerSource(_Model):
    timeout: Duration = datetime.timedelta(seconds=10)


class HotspotConfirmation(_Model):
    """A node counts as hot only after this many consecutive samples `interval` apart."""

    consecutive: Annotated[int, Field(ge=1)] = 3
    interval: Duration = datetime.timedelta(minutes=1)

    @field_validator("interval")
    @classmethod
    def _positive(cls, value: datetime.timedelta) -> datetime.timedelta:
        if value <= datetime.timedelta(0):
            raise ValueError("interval must be longer than 0s")
        return value


class MetricsSettings(_Model):
    max_sample_age: Duration = datetime.timedelta(minutes=2)
    on_stale_node: Literal["Refuse", "Exclude"] = "Refuse"
    # With Exclude, refuse anyway when more than this fraction of nodes would be excluded.
    max_excluded_fraction: Annotated[float, Field(ge=0, le=1)] = 0.1
    prometheus: PrometheusSource | None = None
    metrics_server: MetricsServerSource | None = None
    hotspot_confirmation: HotspotConfirmation = HotspotConfirmation()

    @model_validator(mode="after")
    def _one_source(self) -> MetricsSettings:
        if self.prometheus is not None and self.metrics_server is not None:
            raise ValueError("set one metrics source: prometheus or metricsServer, not both")
        return self


class ResourcePercents(_Model):
    """Percent of node allocatable per resource. An unset resource is not judged.

    `pods` is the node's pod count against its allocatable pods, as the
    descheduler has it: it needs no metrics source. Any other key names a
    resource of metrics.prometheus.resources (checked by LoadAwarePolicy)."""

    model_config = ConfigDict(**{**_Model.model_config, "extra": "allow"})

    cpu: Percent | None = None
    memory: Percent | None = None
    pods: Percent | None = None

    @model_validator(mode="after")
    def _named_are_percents(self) -> ResourcePercents:
        for name, value in (self.model_extra or {}).items():
            if re.fullmatch(RESOURCE_NAME, name) is None:
                raise ValueError(f"{name!r} is not a resource name")
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name}: expected a percentage, got {value!r}")
            if not 0 <= value <= 100:
                raise ValueError(f"{name}: {value:g} is not a percentage (0-100)")
        return self

    def as_dict(self) -> dict[str, float]:
        pairs = (("cpu", self.cpu), ("memory", self.memory), ("pods", self.pods))
        named = {k: float(v) for k, v in sorted((self.model_extra or {}).items())}
        return {k: v for k, v in pairs if v is not None} | named


class NodePool(_Model):
    name: str = Field(min_length=1)
    node_selector: dict[str, str] = Field(default_factory=dict)  # matchLabels
    thresholds: ResourcePercents = ResourcePercents(cpu=40, memory=50)
    target_thresholds: ResourcePercents = ResourcePercents(cpu=70, memory=80)
    # As descheduler's useDeviationThresholds: the thresholds are distances below
    # and above the pool's mean utilisation rather than absolute percentages.
    use_deviation_thresholds: bool = False

    @model_validator(mode="after")
    def _thresholds_consistent(self) -> NodePool:
        low, high = self.thresholds.as_dict(), self.target_thresholds.as_dict()
        if not high:
            raise ValueError("targetThresholds must set at least one of cpu, memory, pods")
        if set(low) != set(high):
            raise ValueError(
                "thresholds and targetThresholds must name the same resources "
                f"(thresholds: {sorted(low)}, targetThresholds: {sorted(high)})"
            )
        if not self.use_deviation_thresholds:
            for resource in high:
                if low[resource] > high[resource]:
                    raise ValueError(
                        f"thresholds.{resource} ({low[resource]:g}) must not exceed "
                        f"targetThresholds.{resource} ({high[resource]:g})"
                    )
        return self


class PriorityThreshold(_Model):
    value: int | None = None
    name: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> PriorityThreshold:
        if (self.value is None) == (self.name is None):
            raise ValueError("set exactly one of value and name")
        return self


class Namespaces(_Model):
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _not_both(self) -> Namespaces:
        if self.include and self.exclude:
            raise ValueError("set include or exclude, not both")
        return self


class SelectorRequirement(_Model):
    key: str = Field(min_length=1)
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    values: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _values_fit_operator(self) -> SelectorRequirement:
        if self.operator in ("In", "NotIn") and not self.values:
            raise ValueError(f"operator {self.operator} needs at least one value")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise ValueError(f"operator {self.operator} takes no values")
        return self


class LabelSelectorSpec(_Model):
    match_labels: dict[str, str] = Field(default_factory=dict)
    match_expressions: list[SelectorRequirement] = Field(default_factory=list)


DefaultProtection = Literal[
    "PodsWithLocalStorage", "DaemonSetPods", "SystemCriticalPods", "FailedBarePods"
]
ExtraProtection = Literal["PodsWithPVC", "PodsWithoutPDB", "PodsWithResourceClaims"]


class PodProtections(_Model):
    """descheduler's podProtections: names and meanings as there."""

    default_disabled: list[DefaultProtection] = Field(default_factory=list)
    extra_enabled: list[ExtraProtection] = Field(default_factory=list)


class EvictorSettings(_Model):
    node_fit: bool = True
    min_replicas: NonNegativeInt = 0
    min_pod_age: Duration = datetime.timedelta(0)
    priority_threshold: PriorityThreshold | None = None
    namespaces: Namespaces = Namespaces()
    label_selector: LabelSelectorSpec = LabelSelectorSpec()
    pod_protections: PodProtections = PodProtections()
    # Passed with each eviction; None keeps each pod's own terminationGracePeriodSeconds.
    grace_period_seconds: NonNegativeInt | None = None


class EvictionWindow(_Model):
    """A budget over a sliding window that holds across rounds, restarts and triggers."""

    duration: Duration = datetime.timedelta(hours=1)
    max_evictions: NonNegativeInt | None = None
    max_evictions_per_namespace: NonNegativeInt | None = None


class Limits(_Model):
    """Eviction budgets. The four maxNoOfPods* hold per round; None means no limit."""

    max_no_of_pods_to_evict_per_node: NonNegativeInt | None = None
    max_no_of_pods_to_evict_per_namespace: NonNegativeInt | None = None
    max_no_of_pods_to_evict_per_workload: NonNegativeInt | None = None
    max_no_of_pods_to_evict_total: NonNegativeInt | None = None
    window: EvictionWindow | None = None
    # Pods of one workload that may be unavailable at once (not Ready, Pending or
    # being evicted count), on top of its PodDisruptionBudget.
    max_unavailable_per_workload: Annotated[int, Field(ge=1)] | None = None
    # A workload moved in one round is not moved again by a later round within this.
    cooldown: Duration = datetime.timedelta(minutes=30)


class VerifySettings(_Model):
    """How a round proves relief after evicting."""

    # How long to wait for each replacement to be Ready (and between pods of one workload).
    timeout: Duration = datetime.timedelta(minutes=5)
    # After a failed verification no round evicts for this long.
    breaker_cooldown: Duration = datetime.timedelta(minutes=30)
    # How long, once the replacements are Ready and the evicted pods gone, to wait
    # for samples that cover only the time after the moves. None: derived from the
    # source (Prometheus: rateWindow plus two scrapeIntervals; metrics-server: two
    # of its resolutions, read from the samples' window).
    relief_timeout: Duration | None = None

    @field_validator("relief_timeout")
    @classmethod
    def _positive_timeout(cls, value: datetime.timedelta | None) -> datetime.timedelta | None:
        if value is not None and value <= datetime.timedelta(0):
            raise ValueError("must be a positive duration (or unset: derived from the source)")
        return value


class StateSettings(_Model):
    """Where loadaware keeps what must survive a restart: the eviction history behind
    window budgets and cooldowns, and the breaker (a ConfigMap it owns)."""

    namespace: str = Field(default="loadaware", min_length=1)
    config_map: str = Field(default="loadaware-state", min_length=1)


# A forecast looks at most this far ahead: beyond it the windows of past weeks
# would overlap the next week's.
MAX_FORECAST_HORIZON = datetime.timedelta(days=1)


class ScheduleForecast(_Model):
    """A round that plans on the usage forecast for the coming `horizon` rather than
    the usage of the moment (needs metrics.prometheus; see its `forecast`)."""

    horizon: Duration = Field(
        description=(
            "How far ahead the round plans, from its start: nodes are classified and "
            "moves chosen on the usage expected over [start, start + horizon]."
        ),
    )

    @field_validator("horizon")
    @classmethod
    def _horizon_range(cls, value: datetime.timedelta) -> datetime.timedelta:
        if not datetime.timedelta(0) < value <= MAX_FORECAST_HORIZON:
            raise ValueError("must be a positive duration of at most 24h")
        return value


class Schedule(_Model):
    name: str = Field(min_length=1)
    cron: str = Field(min_length=1)
    timezone: str = "UTC"
    dry_run: bool | None = None
    pools: list[str] | None = None
    forecast: ScheduleForecast | None = Field(
        default=None,
        description=(
            "Plan ahead: the round classifies nodes and chooses moves on the usage "
            "forecast for the coming horizon, from the same hours of past weeks "
            "(metrics.prometheus.forecast). Unset: on the usage of the moment."
        ),
    )

    @field_validator("cron")
    @classmethod
    def _five_fields(cls, value: str) -> str:
        # Only the shape is checked here; the scheduler parses the fields themselves.
        if len(value.split()) != 5:
            raise ValueError(
                f"cron {value!r} must have 5 fields: minute hour day-of-month month day-of-week"
            )
        return value

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        # A misspelt zone would otherwise only surface when `serve` starts.
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown time zone {value!r}; use an IANA name such as UTC or Europe/Berlin"
            ) from None
        return value


class WebhookBasicAuth(_Model):
    """HTTP basic auth Alertmanager sends (its `http_config.basic_auth`). The password
    comes from a file (read again for each request) or a Kubernetes Secret."""

    username: str = Field(min_length=1)
    password_file: str | None = None
    password: SecretReference | None = None

    @model_validator(mode="after")
    def _one_password_source(self) -> WebhookBasicAuth:
        if (self.password_file is None) == (self.password is None):
            raise ValueError("set exactly one of passwordFile and password")
        return self


class WebhookSettings(_Model):
    """The Alertmanager webhook (`POST /alertmanager`).

    The credential Alertmanager must send: a bearer token from tokenFile (read
    again for each request, so a rotated Secret volume is picked up) or from a
    Kubernetes Secret (authToken), or basic auth. With none set every
    notification is refused (401) unless allowUnauthenticated says otherwise.
    """

    token_file: str | None = None
    auth_token: AuthToken | None = None
    basic_auth: WebhookBasicAuth | None = None
    allow_unauthenticated: bool = False
    action_label: dict[str, str] = Field(default_factory=lambda: {"loadaware_action": "rebalance"})
    cooldown: Duration = datetime.timedelta(minutes=5)
    # Larger bodies are answered 413 without being parsed. Alertmanager's payload for
    # a group of a few hundred alerts stays well under 1 MiB.
    max_body_bytes: Annotated[int, Field(ge=1024)] = 1024 * 1024

    @model_validator(mode="after")
    def _one_credential(self) -> WebhookSettings:
        given = [
            name
            for name, value in (
                ("tokenFile", self.token_file),
                ("authToken", self.auth_token),
                ("basicAuth", self.basic_auth),
            )
            if value is not None
        ]
        if len(given) > 1:
            raise ValueError(f"set at most one webhook credential; got {', '.join(given)}")
        if given and self.allow_unauthenticated:
            raise ValueError("allowUnauthenticated contradicts the credential given")
        return self


class LeaderElectionSettings(_Model):
    """A coordination.k8s.io/v1 Lease so that only one replica starts rounds.

    The timings are client-go's defaults and keep its invariants: a leader that
    cannot renew within renewDeadline stops acting before any other replica may
    take the lease (leaseDuration after its last renewal)."""

    enabled: bool = True
    lease_name: str = Field(default="loadaware", min_length=1)
    lease_namespace: str = Field(default="loadaware", min_length=1)
    lease_duration: Duration = datetime.timedelta(seconds=15)
    renew_deadline: Duration = datetime.timedelta(seconds=10)
    retry_period: Duration = datetime.timedelta(seconds=2)

    @model_validator(mode="after")
    def _ordered(self) -> LeaderElectionSettings:
        if self.retry_period <= datetime.timedelta(0):
            raise ValueError("retryPeriod must be longer than 0s")
        if not self.retry_period < self.renew_deadline < self.lease_duration:
            raise ValueError("need retryPeriod < renewDeadline < leaseDuration")
        return self


class ServeSettings(_Model):
    listen: str = "0.0.0.0:8080"
    webhook: WebhookSettings = WebhookSettings()
    leader_election: LeaderElectionSettings = LeaderElectionSettings()


def _default_pools() -> list[NodePool]:
    return [NodePool(name="default")]


class OptimizerSettings(_Model):
    """How the round's evictions are chosen."""

    # milp: the whole round at once (HiGHS), with a lower bound; falls back to the
    # greedy when the solver has no incumbent in time. greedy: hot node by hot node.
    method: Literal["milp", "greedy"] = "milp"
    time_limit: Duration = datetime.timedelta(seconds=10)
    mip_rel_gap: Annotated[float, Field(ge=0, le=1)] = 0.01


class SteeringSettings(_Model):
    """Where replacements are expected to land."""

    # Steer each replacement to its planned landing: while an eviction is sent,
    # loadaware.io/hotspot=true:PreferNoSchedule sits on the few nodes that would
    # otherwise outscore that landing (plan JSON `steer`). Off: only moves whose
    # natural landing is good are planned.
    soft_taint: bool = True
    # kube-scheduler's percentageOfNodesToScore (KubeSchedulerConfiguration): from
    # 100 nodes it scores only a sample of the feasible ones. 0 is its adaptive
    # default (50% less 1% per 125 nodes, at least 5% and 100 nodes), which managed
    # control planes keep; 100 scores every node. The landing set of each eviction
    # is sized for that sample.
    percentage_of_nodes_to_score: Annotated[int, Field(ge=0, le=100)] = 0
    # The largest chance, without trusting kube-scheduler's node order, that its
    # sample misses every node of an eviction's landing set.
    miss_probability: Annotated[float, Field(gt=0, lt=1)] = 0.001


NodeAffinityType = Literal[
    "requiredDuringSchedulingIgnoredDuringExecution",
    "preferredDuringSchedulingIgnoredDuringExecution",
]
SpreadConstraintKind = Literal["DoNotSchedule", "ScheduleAnyway"]


class LoadBalancingStrategy(_Model):
    """Hotspot relief: moving pods off nodes above their targetThresholds."""

    enabled: bool = True


class NodeAffinityStrategy(_Model):
    """descheduler's RemovePodsViolatingNodeAffinity."""

    enabled: bool = False
    node_affinity_type: list[NodeAffinityType] = Field(
        default_factory=lambda: ["requiredDuringSchedulingIgnoredDuringExecution"], min_length=1
    )


class NodeTaintsStrategy(_Model):
    """descheduler's RemovePodsViolatingNodeTaints. Taints are named `key` or `key=value`."""

    enabled: bool = False
    include_prefer_no_schedule: bool = False
    excluded_taints: list[str] = Field(default_factory=list)
    included_taints: list[str] = Field(default_factory=list)


class InterPodAntiAffinityStrategy(_Model):
    """descheduler's RemovePodsViolatingInterPodAntiAffinity."""

    enabled: bool = False


class DuplicatesStrategy(_Model):
    """descheduler's RemoveDuplicates."""

    enabled: bool = False
    exclude_owner_kinds: list[str] = Field(default_factory=list)


class TopologySpreadStrategy(_Model):
    """descheduler's RemovePodsViolatingTopologySpreadConstraint."""

    enabled: bool = False
    constraints: list[SpreadConstraintKind] = Field(
        default_factory=lambda: ["DoNotSchedule"], min_length=1
    )


class PodLifeTimeStrategy(_Model):
    """descheduler's PodLifeTime. `states` match the pod phase, the pod's status
    reason or a container's waiting reason; empty matches every pod."""

    enabled: bool = False
    max_pod_life_time_seconds: NonNegativeInt = 86400
    states: list[str] = Field(default_factory=list)


class TooManyRestartsStrategy(_Model):
    """descheduler's RemovePodsHavingTooManyRestarts."""

    enabled: bool = False
    pod_restart_threshold: Annotated[int, Field(ge=1)] = 100
    including_init_containers: bool = False
    states: list[str] = Field(default_factory=list)


class FailedPodsStrategy(_Model):
    """descheduler's RemoveFailedPods."""

    enabled: bool = False
    min_pod_lifetime_seconds: NonNegativeInt | None = None
    reasons: list[str] = Field(default_factory=list)
    exit_codes: list[int] = Field(default_factory=list)
    exclude_owner_kinds: list[str] = Field(default_factory=list)
    including_init_containers: bool = False


class Strategies(_Model):
    """What a profile does. The deschedule strategies (every one but loadBalancing)
    name pods that must move; loadBalancing relieves hotspots."""

    load_balancing: LoadBalancingStrategy = LoadBalancingStrategy()
    remove_pods_violating_node_affinity: NodeAffinityStrategy = NodeAffinityStrategy()
    remove_pods_violating_node_taints: NodeTaintsStrategy = NodeTaintsStrategy()
    remove_pods_violating_inter_pod_anti_affinity: InterPodAntiAffinityStrategy = (
        InterPodAntiAffinityStrategy()
    )
    remove_duplicates: DuplicatesStrategy = DuplicatesStrategy()
    remove_pods_violating_topology_spread_constraint: TopologySpreadStrategy = (
        TopologySpreadStrategy()
    )
    pod_life_time: PodLifeTimeStrategy = PodLifeTimeStrategy()
    remove_pods_having_too_many_restarts: TooManyRestartsStrategy = TooManyRestartsStrategy()
    remove_failed_pods: FailedPodsStrategy = FailedPodsStrategy()


class Profile(_Model):
    """A named scope (namespaces, labels, node pools) and the strategies run in it.

    namespaces and labelSelector narrow the evictor's: a pod must pass both.
    """

    name: str = Field(min_length=1)
    namespaces: Namespaces = Namespaces()
    label_selector: LabelSelectorSpec = LabelSelectorSpec()
    # Names of nodePools whose nodes this profile acts on; None: every pool.
    node_pools: list[str] | None = None
    strategies: Strategies = Strategies()


class ConsolidationSettings(_Model):
    """descheduler's HighNodeUtilization: empty the least-used nodes so that a cluster
    autoscaler can remove them."""

    enabled: bool = False
    max_nodes_per_round: Annotated[int, Field(ge=1)] = 1
    # A node under every one of these (percent of allocatable) may be emptied.
    thresholds: ResourcePercents = ResourcePercents(cpu=20, memory=20)

    @model_validator(mode="after")
    def _some_threshold(self) -> ConsolidationSettings:
        if not self.thresholds.as_dict():
            raise ValueError("thresholds must set at least one of cpu, memory, pods")
        return self


class LoadAwarePolicy(_Model):
    api_version: Literal["loadaware.io/v1alpha1"] = "loadaware.io/v1alpha1"
    kind: Literal["LoadAwarePolicy"] = "LoadAwarePolicy"
    metrics: MetricsSettings = MetricsSettings()
    node_pools: list[NodePool] = Field(default_factory=_default_pools, min_length=1)
    evictor: EvictorSettings = EvictorSettings()
    limits: Limits = Limits()
    optimizer: OptimizerSettings = OptimizerSettings()
    steering: SteeringSettings = SteeringSettings()
    verify: VerifySettings = VerifySettings()
    state: StateSettings = StateSettings()
    dry_run: bool = False
    schedules: list[Schedule] = Field(default_factory=list)
    serve: ServeSettings = ServeSettings()
    # None given: one implicit profile "default" (the evictor's scope, every pool,
    # loadBalancing only).
    profiles: list[Profile] = Field(default_factory=list)
    consolidation: ConsolidationSettings = ConsolidationSettings()

    # A field validator, not a model one, so that a repeated name is reported
    # together with problems elsewhere in the file rather than only once they are fixed.
    @field_validator("node_pools")
    @classmethod
    def _pool_names_unique(cls, pools: list[NodePool]) -> list[NodePool]:
        names = [p.name for p in pools]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"nodePools names must be unique; repeated: {', '.join(dupes)}")
        return pools

    @field_validator("profiles")
    @classmethod
    def _profile_names_unique(cls, profiles: list[Profile]) -> list[Profile]:
        names = [p.name for p in profiles]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"profiles names must be unique; repeated: {', '.join(dupes)}")
        return profiles

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
                if name in BUILTIN_RESOURCES or name in defined:
                    continue
                where = f"{place}.{name}"
                if self.metrics.metrics_server is not None:
                    raise ValueError(
                        f"{where}: metrics-server has only cpu and memory; a resource "
                        "of its own needs metrics.prometheus.resources"
                    )
                raise ValueError(
                    f"{where}: no resource of that name; allowed: "
                    + ", ".join([*BUILTIN_RESOURCES, *defined])
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


__all__ = ["SYSTEM_CRITICAL_PRIORITY", "LoadAwarePolicy", "SecretStr"]
