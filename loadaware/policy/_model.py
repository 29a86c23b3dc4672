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

from loadaware.policy import _scheduler_config
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
    namespace: str = Field(
        min_length=1,
        description="Namespace of the Secret.",
    )
    name: str = Field(
        min_length=1,
        description="Name of the Secret.",
    )
    key: str = Field(
        min_length=1,
        description="Key in the Secret's data whose value is used.",
    )


class AuthToken(_Model):
    secret_reference: SecretReference = Field(
        description=(
            "The Kubernetes Secret holding the bearer token, read through the "
            "Kubernetes API at the start of every round and never kept past it."
        ),
    )


class BasicAuth(_Model):
    """HTTP basic auth, both parts read from Secrets (as prometheus-operator's basicAuth)."""

    username: SecretReference = Field(
        description="The Secret key holding the user name.",
    )
    password: SecretReference = Field(
        description="The Secret key holding the password.",
    )


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

    node_cpu: str | None = Field(
        default=None,
        description=(
            "Node CPU usage in cores, one series per node (by nodeLabel). Default: "
            "`sum without (cpu, mode) "
            '(rate(node_cpu_seconds_total{mode!="idle"}[$window]))`.'
        ),
    )
    node_memory: str | None = Field(
        default=None,
        description=(
            "Node memory usage in bytes, one series per node. Default: "
            "`node_memory_MemTotal_bytes - node_memory_MemAvailable_bytes`."
        ),
    )
    pod_cpu: str | None = Field(
        default=None,
        description=(
            "Pod CPU usage in cores, one series per pod, labelled by namespace and "
            "pod (and node, which dates the pod by its node's scrape). Default: `sum "
            "by (namespace, pod, node) "
            '(rate(container_cpu_usage_seconds_total{container!=""}[$window]))`.'
        ),
    )
    pod_memory: str | None = Field(
        default=None,
        description=(
            "Pod memory usage in bytes, one series per pod. Default: `sum by "
            "(namespace, pod, node) "
            '(container_memory_working_set_bytes{container!=""})`.'
        ),
    )
    node_cpu_timestamp: str | None = Field(
        default=None,
        description=(
            "Unix time of the newest raw sample behind each node's CPU value. "
            "Default: `min without (cpu, mode) "
            '(timestamp(node_cpu_seconds_total{mode="idle"}))`.'
        ),
    )
    node_memory_timestamp: str | None = Field(
        default=None,
        description=(
            "Unix time of the newest raw sample behind each node's memory value. "
            "Default: `timestamp(node_memory_MemAvailable_bytes)`."
        ),
    )
    pod_cpu_timestamp: str | None = Field(
        default=None,
        description=(
            "Unix time of the newest raw sample behind each pod's CPU value, asked as "
            "given, one series per pod. Unset: pods are dated by their node's newest "
            "cAdvisor scrape."
        ),
    )
    pod_memory_timestamp: str | None = Field(
        default=None,
        description=(
            "Unix time of the newest raw sample behind each pod's memory value, asked "
            "as given, one series per pod. Unset: pods are dated by their node's "
            "newest cAdvisor scrape."
        ),
    )


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

    node: str = Field(
        min_length=1,
        description=(
            "PromQL giving the resource's usage per node, labelled by nodeLabel, in "
            "the resource's own unit."
        ),
    )
    pod: str = Field(
        min_length=1,
        description=("PromQL giving the resource's usage per pod, labelled by namespace and pod."),
    )
    capacity: str = Field(
        min_length=1,
        description=(
            "Each node's capacity in the same unit: the name of a node allocatable "
            "resource (`nvidia.com/gpu`) or a PromQL query by nodeLabel."
        ),
    )
    node_timestamp: str = Field(
        min_length=1,
        description=(
            "PromQL giving, per node, the unix time of the newest raw sample behind "
            "its value (`timestamp()` of the raw series)."
        ),
    )
    pod_timestamp: str = Field(
        min_length=1,
        description=(
            "PromQL giving, per pod, the unix time of the newest raw sample behind "
            "its value (`timestamp()` of the raw series)."
        ),
    )
    node_label: str | None = Field(
        default=None,
        description=(
            "The label naming the node on this resource's node series; unset: the "
            "source's nodeLabel."
        ),
    )

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
    url: AnyHttpUrl = Field(
        description=(
            "Base URL of the Prometheus HTTP API (Prometheus, Thanos Querier or "
            "Grafana Mimir); a path prefix is kept."
        ),
    )
    auth_token: AuthToken | None = Field(
        default=None,
        description=(
            "Bearer token from a Kubernetes Secret. At most one of authToken, "
            "tokenFile and basicAuth."
        ),
    )
    token_file: str | None = Field(
        default=None,
        description=(
            "File holding the bearer token, read again every round (a projected "
            "service account token, a mounted Secret)."
        ),
    )
    basic_auth: BasicAuth | None = Field(
        default=None,
        description="HTTP basic auth, both parts read from Secrets.",
    )
    ca_file: str | None = Field(
        default=None,
        description="PEM file of the CA that signs Prometheus' certificate.",
    )
    insecure_skip_verify: bool = Field(
        default=False,
        description="Do not verify Prometheus' TLS certificate.",
    )
    cert_file: str | None = Field(
        default=None,
        description=(
            "Client certificate (PEM) for Prometheus behind mutual TLS; set with keyFile."
        ),
    )
    key_file: str | None = Field(
        default=None,
        description="Key of the client certificate (PEM); set with certFile.",
    )
    timeout: Duration = Field(
        default=datetime.timedelta(seconds=10),
        description=(
            "Timeout of each query; an expired one refuses the round with metrics-unreachable."
        ),
    )
    headers: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "HTTP headers sent with every query, e.g. X-Scope-OrgID for Grafana Mimir or Cortex."
        ),
    )
    node_label: str = Field(
        default="instance",
        description=(
            "The label naming the node on node-level series (`instance` or `node`); a "
            "`:port` suffix is ignored."
        ),
    )
    rate_window: Duration = Field(
        default=datetime.timedelta(minutes=5),
        description=(
            "The window of the rate() behind CPU usage (`$window` in queries): longer "
            "is smoother but slower to react."
        ),
    )
    scrape_interval: Duration = Field(
        default=datetime.timedelta(seconds=30),
        description=(
            "How often Prometheus scrapes node-exporter and cAdvisor: how often the "
            "relief check after a round looks for a newer sample."
        ),
    )
    queries: PrometheusQueries = Field(
        default=PrometheusQueries(),
        description="PromQL overrides of the default queries.",
    )
    resources: dict[str, NamedResource] = Field(
        default_factory=dict,
        description=(
            "Further resources by name (GPU, network, disk), usable beside cpu and "
            "memory in nodePools' thresholds and targetThresholds."
        ),
    )
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
    timeout: Duration = Field(
        default=datetime.timedelta(seconds=10),
        description="Timeout of each request to the metrics.k8s.io API.",
    )


class HotspotConfirmation(_Model):
    """A node counts as hot only after this many consecutive samples `interval` apart."""

    consecutive: Annotated[int, Field(ge=1)] = Field(
        default=3,
        description=(
            "Points in a row over its targets before a node counts as hot (Prometheus "
            "only); 1 turns confirmation off."
        ),
    )
    interval: Duration = Field(
        default=datetime.timedelta(minutes=1),
        description="Time between the points, read in one range query.",
    )

    @field_validator("interval")
    @classmethod
    def _positive(cls, value: datetime.timedelta) -> datetime.timedelta:
        if value <= datetime.timedelta(0):
            raise ValueError("interval must be longer than 0s")
        return value


class MetricsSettings(_Model):
    max_sample_age: Duration = Field(
        default=datetime.timedelta(minutes=2),
        description=(
            "Samples older than this are stale: the round is refused (or the node "
            "excluded, with onStaleNode: Exclude)."
        ),
    )
    on_stale_node: Literal["Refuse", "Exclude"] = Field(
        default="Refuse",
        description=(
            "What a node with stale or missing metrics does: Refuse the whole round, "
            "or Exclude the node (neither source nor target)."
        ),
    )
    max_excluded_fraction: Annotated[float, Field(ge=0, le=1)] = Field(
        default=0.1,
        description=(
            "With onStaleNode: Exclude, refuse the round anyway when more than this "
            "fraction of the nodes would be excluded."
        ),
    )
    prometheus: PrometheusSource | None = Field(
        default=None,
        description=(
            "Read usage from Prometheus (or Thanos, Mimir). Set one of prometheus and "
            "metricsServer."
        ),
    )
    metrics_server: MetricsServerSource | None = Field(
        default=None,
        description=(
            "Read usage from the metrics.k8s.io API (metrics-server): cpu and memory "
            "only, no history."
        ),
    )
    hotspot_confirmation: HotspotConfirmation = Field(
        default=HotspotConfirmation(),
        description="How long a node must be over its targets before it counts as hot.",
    )

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

    cpu: Percent | None = Field(
        default=None,
        description="CPU usage, percent of the node's allocatable CPU.",
    )
    memory: Percent | None = Field(
        default=None,
        description="Memory usage, percent of the node's allocatable memory.",
    )
    pods: Percent | None = Field(
        default=None,
        description=(
            "Bound, unfinished pods, percent of the node's allocatable pods (needs no metrics)."
        ),
    )

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
    name: str = Field(
        min_length=1,
        description="Name of the pool, unique in the policy.",
    )
    node_selector: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Labels a node must have to be in the pool (matchLabels); empty matches "
            "every node. The first matching pool wins; a node in no pool is excluded."
        ),
    )
    thresholds: ResourcePercents = Field(
        default=ResourcePercents(cpu=40, memory=50),
        description="A node under all of these is cold: a landing for evicted pods.",
    )
    target_thresholds: ResourcePercents = Field(
        default=ResourcePercents(cpu=70, memory=80),
        description=(
            "A node over any of these is hot: pods are moved off it. A landing must "
            "stay at or under them with the pod's usage added."
        ),
    )
    use_deviation_thresholds: bool = Field(
        default=False,
        description=(
            "As descheduler's useDeviationThresholds: read the thresholds as "
            "distances below and above the pool's mean utilisation rather than "
            "absolute percentages."
        ),
    )

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
    value: int | None = Field(
        default=None,
        description=(
            "Pods with a priority at or above this value are protected as system-critical."
        ),
    )
    name: str | None = Field(
        default=None,
        description="A PriorityClass whose value is the threshold.",
    )

    @model_validator(mode="after")
    def _exactly_one(self) -> PriorityThreshold:
        if (self.value is None) == (self.name is None):
            raise ValueError("set exactly one of value and name")
        return self


class Namespaces(_Model):
    include: list[str] = Field(
        default_factory=list,
        description="Only pods in these namespaces are considered.",
    )
    exclude: list[str] = Field(
        default_factory=list,
        description="Pods in these namespaces are never considered.",
    )

    @model_validator(mode="after")
    def _not_both(self) -> Namespaces:
        if self.include and self.exclude:
            raise ValueError("set include or exclude, not both")
        return self


class SelectorRequirement(_Model):
    key: str = Field(
        min_length=1,
        description="The label key.",
    )
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"] = Field(
        description="How the label's value is matched against values.",
    )
    values: list[str] = Field(
        default_factory=list,
        description="Values for In and NotIn; empty for Exists and DoesNotExist.",
    )

    @model_validator(mode="after")
    def _values_fit_operator(self) -> SelectorRequirement:
        if self.operator in ("In", "NotIn") and not self.values:
            raise ValueError(f"operator {self.operator} needs at least one value")
        if self.operator in ("Exists", "DoesNotExist") and self.values:
            raise ValueError(f"operator {self.operator} takes no values")
        return self


class LabelSelectorSpec(_Model):
    match_labels: dict[str, str] = Field(
        default_factory=dict,
        description="Labels a pod must have, with these values.",
    )
    match_expressions: list[SelectorRequirement] = Field(
        default_factory=list,
        description="Label requirements a pod must meet, all of them.",
    )


DefaultProtection = Literal[
    "PodsWithLocalStorage", "DaemonSetPods", "SystemCriticalPods", "FailedBarePods"
]
ExtraProtection = Literal["PodsWithPVC", "PodsWithoutPDB", "PodsWithResourceClaims"]


class PodProtections(_Model):
    """descheduler's podProtections: names and meanings as there."""

    default_disabled: list[DefaultProtection] = Field(
        default_factory=list,
        description="Default protections to turn off, so that such pods may be evicted.",
    )
    extra_enabled: list[ExtraProtection] = Field(
        default_factory=list,
        description=("Protections off by default to turn on, so that such pods are not evicted."),
    )


class EvictorSettings(_Model):
    node_fit: bool = Field(
        default=True,
        description=(
            "Evict a pod only if another node can take it (its requests, taints, "
            "affinity), as the descheduler's nodeFit."
        ),
    )
    min_replicas: NonNegativeInt = Field(
        default=0,
        description="Evict a pod only if its owner has at least this many replicas.",
    )
    min_pod_age: Duration = Field(
        default=datetime.timedelta(0),
        description=("Evict a pod only if it started (status.startTime) at least this long ago."),
    )
    priority_threshold: PriorityThreshold | None = Field(
        default=None,
        description=(
            "Pods at or above this priority are system-critical and protected; unset: "
            "2000000000 (system-cluster-critical)."
        ),
    )
    namespaces: Namespaces = Field(
        default=Namespaces(),
        description="Namespaces whose pods may be evicted: include or exclude, not both.",
    )
    label_selector: LabelSelectorSpec = Field(
        default=LabelSelectorSpec(),
        description="Only pods matching this selector may be evicted.",
    )
    pod_protections: PodProtections = Field(
        default=PodProtections(),
        description=(
            "Which pods are protected from eviction: the descheduler's "
            "podProtections, same names and meanings."
        ),
    )
    grace_period_seconds: NonNegativeInt | None = Field(
        default=None,
        description=(
            "Grace period passed with each eviction; unset keeps each pod's own "
            "terminationGracePeriodSeconds."
        ),
    )


class EvictionWindow(_Model):
    """A budget over a sliding window that holds across rounds, restarts and triggers."""

    duration: Duration = Field(
        default=datetime.timedelta(hours=1),
        description="Length of the sliding window.",
    )
    max_evictions: NonNegativeInt | None = Field(
        default=None,
        description="Evictions allowed within the window, across rounds; unset: no limit.",
    )
    max_evictions_per_namespace: NonNegativeInt | None = Field(
        default=None,
        description="Evictions allowed within the window per namespace; unset: no limit.",
    )


class Limits(_Model):
    """Eviction budgets. The four maxNoOfPods* hold per round; None means no limit."""

    max_no_of_pods_to_evict_per_node: NonNegativeInt | None = Field(
        default=None,
        description="Evictions from one node per round; unset: no limit.",
    )
    max_no_of_pods_to_evict_per_namespace: NonNegativeInt | None = Field(
        default=None,
        description="Evictions from one namespace per round; unset: no limit.",
    )
    max_no_of_pods_to_evict_per_workload: NonNegativeInt | None = Field(
        default=None,
        description="Evictions from one workload per round; unset: no limit.",
    )
    max_no_of_pods_to_evict_total: NonNegativeInt | None = Field(
        default=None,
        description="Evictions per round; unset: no limit.",
    )
    window: EvictionWindow | None = Field(
        default=None,
        description=(
            "A budget over a sliding window, kept in the state ConfigMap so that it "
            "holds across rounds, restarts and triggers."
        ),
    )
    max_unavailable_per_workload: Annotated[int, Field(ge=1)] | None = Field(
        default=None,
        description=(
            "Pods of one workload that may be unavailable at once (not Ready, Pending "
            "or being evicted count), on top of its PodDisruptionBudget; unset: no "
            "limit."
        ),
    )
    cooldown: Duration = Field(
        default=datetime.timedelta(minutes=30),
        description=(
            "A workload moved in one round is not moved again by a later round within this."
        ),
    )


class VerifySettings(_Model):
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


class StateSettings(_Model):
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


class ClusterCacheSettings(_Model):
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
    name: str = Field(
        min_length=1,
        description="Name of the schedule, shown on /status and in metrics.",
    )
    cron: str = Field(
        min_length=1,
        description=(
            "When rounds start: crontab, 5 fields (minute hour day-of-month month "
            "day-of-week; 0 and 7 are Sunday; names work too)."
        ),
    )
    timezone: str = Field(
        default="UTC",
        description="IANA time zone the cron is read in.",
    )
    dry_run: bool | None = Field(
        default=None,
        description=(
            "Overrides the policy's dryRun for this schedule's rounds; unset: the policy's."
        ),
    )
    pools: list[str] | None = Field(
        default=None,
        description="Only these pools' nodes are sources; unset: every pool.",
    )
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

    username: str = Field(
        min_length=1,
        description="The user name Alertmanager sends.",
    )
    password_file: str | None = Field(
        default=None,
        description="File holding the password, read again for each request.",
    )
    password: SecretReference | None = Field(
        default=None,
        description="The Secret key holding the password.",
    )

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

    token_file: str | None = Field(
        default=None,
        description=(
            "File holding the bearer token Alertmanager must send, read again for each request."
        ),
    )
    auth_token: AuthToken | None = Field(
        default=None,
        description=(
            "The bearer token Alertmanager must send, from a Kubernetes Secret (read "
            "at most every 10 seconds)."
        ),
    )
    basic_auth: WebhookBasicAuth | None = Field(
        default=None,
        description="Basic auth Alertmanager must send instead of a bearer token.",
    )
    allow_unauthenticated: bool = Field(
        default=False,
        description=(
            "Accept notifications without a credential. Without a credential and "
            "without this, every notification is refused (401)."
        ),
    )
    action_label: dict[str, str] = Field(
        default_factory=lambda: {"loadaware_action": "rebalance"},
        description=(
            "Labels a firing alert must have to start a round (the opt-in label on the alert rule)."
        ),
    )
    cooldown: Duration = Field(
        default=datetime.timedelta(minutes=5),
        description=(
            "Notifications of the same group and alerts that started a round within "
            "this are coalesced."
        ),
    )
    # Alertmanager's payload for a group of a few hundred alerts stays well under
    # 1 MiB, so the default leaves room and still bounds what is read.
    max_body_bytes: Annotated[int, Field(ge=1024)] = Field(
        default=1024 * 1024,
        description="Larger bodies are answered 413 without being parsed.",
    )

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

    enabled: bool = Field(
        default=True,
        description=(
            "Campaign for the Lease; off (for a single replica): the replica starts "
            "rounds without one."
        ),
    )
    lease_name: str = Field(
        default="loadaware",
        min_length=1,
        description="Name of the coordination.k8s.io/v1 Lease.",
    )
    lease_namespace: str = Field(
        default="loadaware",
        min_length=1,
        description="Namespace of the Lease; it must exist.",
    )
    lease_duration: Duration = Field(
        default=datetime.timedelta(seconds=15),
        description=(
            "How long a Lease is held after its last renewal before another replica may take it."
        ),
    )
    renew_deadline: Duration = Field(
        default=datetime.timedelta(seconds=10),
        description="A leader that cannot renew within this stops acting.",
    )
    retry_period: Duration = Field(
        default=datetime.timedelta(seconds=2),
        description="Time between attempts to take or renew the Lease.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> LeaderElectionSettings:
        if self.retry_period <= datetime.timedelta(0):
            raise ValueError("retryPeriod must be longer than 0s")
        if not self.retry_period < self.renew_deadline < self.lease_duration:
            raise ValueError("need retryPeriod < renewDeadline < leaseDuration")
        return self


class ServeSettings(_Model):
    listen: str = Field(
        default="0.0.0.0:8080",
        description=(
            "host:port of the HTTP server: /alertmanager, /metrics, /healthz, /readyz, /status."
        ),
    )
    webhook: WebhookSettings = Field(
        default=WebhookSettings(),
        description="The Alertmanager webhook (POST /alertmanager).",
    )
    leader_election: LeaderElectionSettings = Field(
        default=LeaderElectionSettings(),
        description="Leader election among replicas: only the leader starts rounds.",
    )


def _default_pools() -> list[NodePool]:
    return [NodePool(name="default")]


class OptimizerSettings(_Model):
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


class SteeringSettings(_Model):
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
        default=0.001,
        description=(
            "The largest chance, without trusting kube-scheduler's node order, that "
            "its sample misses every node of an eviction's landing set."
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


NodeAffinityType = Literal[
    "requiredDuringSchedulingIgnoredDuringExecution",
    "preferredDuringSchedulingIgnoredDuringExecution",
]
SpreadConstraintKind = Literal["DoNotSchedule", "ScheduleAnyway"]


class LoadBalancingStrategy(_Model):
    """Hotspot relief: moving pods off nodes above their targetThresholds."""

    enabled: bool = Field(
        default=True,
        description="Relieve hot nodes in this profile's scope.",
    )


class NodeAffinityStrategy(_Model):
    """descheduler's RemovePodsViolatingNodeAffinity."""

    enabled: bool = Field(
        default=False,
        description="Evict pods whose node no longer passes their node affinity.",
    )
    node_affinity_type: list[NodeAffinityType] = Field(
        default_factory=lambda: ["requiredDuringSchedulingIgnoredDuringExecution"],
        min_length=1,
        description=(
            "Which affinity to check: required, and with "
            "preferredDuringSchedulingIgnoredDuringExecution also moves to a node the "
            "pod prefers."
        ),
    )


class NodeTaintsStrategy(_Model):
    """descheduler's RemovePodsViolatingNodeTaints. Taints are named `key` or `key=value`."""

    enabled: bool = Field(
        default=False,
        description="Evict pods whose node has a NoSchedule taint they do not tolerate.",
    )
    include_prefer_no_schedule: bool = Field(
        default=False,
        description="Count PreferNoSchedule taints too.",
    )
    excluded_taints: list[str] = Field(
        default_factory=list,
        description="Taints to ignore (`key` or `key=value`).",
    )
    included_taints: list[str] = Field(
        default_factory=list,
        description="Only these taints count (`key` or `key=value`); empty: all.",
    )


class InterPodAntiAffinityStrategy(_Model):
    """descheduler's RemovePodsViolatingInterPodAntiAffinity."""

    enabled: bool = Field(
        default=False,
        description=(
            "Evict pods whose required anti-affinity selects another pod in their topology domain."
        ),
    )


class DuplicatesStrategy(_Model):
    """descheduler's RemoveDuplicates."""

    enabled: bool = Field(
        default=False,
        description="Evict pods of one owner piled on a node beyond their fair share.",
    )
    exclude_owner_kinds: list[str] = Field(
        default_factory=list,
        description="Owner kinds to leave alone.",
    )


class TopologySpreadStrategy(_Model):
    """descheduler's RemovePodsViolatingTopologySpreadConstraint."""

    enabled: bool = Field(
        default=False,
        description="Evict pods whose topology spread constraints are violated.",
    )
    constraints: list[SpreadConstraintKind] = Field(
        default_factory=lambda: ["DoNotSchedule"],
        min_length=1,
        description=(
            "Which constraints to enforce: DoNotSchedule, and ScheduleAnyway when listed."
        ),
    )


class PodLifeTimeStrategy(_Model):
    """descheduler's PodLifeTime. `states` match the pod phase, the pod's status
    reason or a container's waiting reason; empty matches every pod."""

    enabled: bool = Field(
        default=False,
        description="Evict pods older than maxPodLifeTimeSeconds, oldest first.",
    )
    max_pod_life_time_seconds: NonNegativeInt = Field(
        default=86400,
        description="Pods older than this are evicted.",
    )
    states: list[str] = Field(
        default_factory=list,
        description=(
            "Only pods in these states: the pod phase, the pod's status reason or a "
            "container's waiting reason; empty: every pod."
        ),
    )


class TooManyRestartsStrategy(_Model):
    """descheduler's RemovePodsHavingTooManyRestarts."""

    enabled: bool = Field(
        default=False,
        description="Evict pods whose containers restarted too often.",
    )
    pod_restart_threshold: Annotated[int, Field(ge=1)] = Field(
        default=100,
        description="Restarts at which a pod is evicted.",
    )
    including_init_containers: bool = Field(
        default=False,
        description="Count init containers' restarts too.",
    )
    states: list[str] = Field(
        default_factory=list,
        description="Only pods in these states (as in podLifeTime); empty: every pod.",
    )


class FailedPodsStrategy(_Model):
    """descheduler's RemoveFailedPods."""

    enabled: bool = Field(
        default=False,
        description="Evict pods in phase Failed.",
    )
    min_pod_lifetime_seconds: NonNegativeInt | None = Field(
        default=None,
        description="Only failed pods at least this old; unset: any age.",
    )
    reasons: list[str] = Field(
        default_factory=list,
        description="Only pods failed for these reasons; empty: any.",
    )
    exit_codes: list[int] = Field(
        default_factory=list,
        description="Only pods whose containers exited with these codes; empty: any.",
    )
    exclude_owner_kinds: list[str] = Field(
        default_factory=list,
        description="Owner kinds to leave alone.",
    )
    including_init_containers: bool = Field(
        default=False,
        description="Look at init containers' reasons and exit codes too.",
    )


class Strategies(_Model):
    """What a profile does. The deschedule strategies (every one but loadBalancing)
    name pods that must move; loadBalancing relieves hotspots."""

    load_balancing: LoadBalancingStrategy = Field(
        default=LoadBalancingStrategy(),
        description="Hotspot relief.",
    )
    remove_pods_violating_node_affinity: NodeAffinityStrategy = Field(
        default=NodeAffinityStrategy(),
        description="descheduler's RemovePodsViolatingNodeAffinity.",
    )
    remove_pods_violating_node_taints: NodeTaintsStrategy = Field(
        default=NodeTaintsStrategy(),
        description="descheduler's RemovePodsViolatingNodeTaints.",
    )
    remove_pods_violating_inter_pod_anti_affinity: InterPodAntiAffinityStrategy = Field(
        default=(InterPodAntiAffinityStrategy()),
        description="descheduler's RemovePodsViolatingInterPodAntiAffinity.",
    )
    remove_duplicates: DuplicatesStrategy = Field(
        default=DuplicatesStrategy(),
        description="descheduler's RemoveDuplicates.",
    )
    remove_pods_violating_topology_spread_constraint: TopologySpreadStrategy = Field(
        default=(TopologySpreadStrategy()),
        description="descheduler's RemovePodsViolatingTopologySpreadConstraint.",
    )
    pod_life_time: PodLifeTimeStrategy = Field(
        default=PodLifeTimeStrategy(),
        description="descheduler's PodLifeTime.",
    )
    remove_pods_having_too_many_restarts: TooManyRestartsStrategy = Field(
        default=TooManyRestartsStrategy(),
        description="descheduler's RemovePodsHavingTooManyRestarts.",
    )
    remove_failed_pods: FailedPodsStrategy = Field(
        default=FailedPodsStrategy(),
        description="descheduler's RemoveFailedPods.",
    )


class Profile(_Model):
    """A named scope (namespaces, labels, node pools) and the strategies run in it.

    namespaces and labelSelector narrow the evictor's: a pod must pass both.
    """

    name: str = Field(
        min_length=1,
        description="Name of the profile, unique in the policy.",
    )
    namespaces: Namespaces = Field(
        default=Namespaces(),
        description="Narrows evictor.namespaces: a pod must pass both.",
    )
    label_selector: LabelSelectorSpec = Field(
        default=LabelSelectorSpec(),
        description="Narrows evictor.labelSelector: a pod must match both.",
    )
    node_pools: list[str] | None = Field(
        default=None,
        description="Names of nodePools whose nodes this profile acts on; unset: every pool.",
    )
    strategies: Strategies = Field(
        default=Strategies(),
        description="What the profile does.",
    )


class ConsolidationSettings(_Model):
    """descheduler's HighNodeUtilization: empty the least-used nodes so that a cluster
    autoscaler can remove them."""

    enabled: bool = Field(
        default=False,
        description=(
            "Empty the least-used nodes, after the rest of the plan and on what is "
            "left of its budgets."
        ),
    )
    max_nodes_per_round: Annotated[int, Field(ge=1)] = Field(
        default=1,
        description="Nodes emptied per round at most.",
    )
    thresholds: ResourcePercents = Field(
        default=ResourcePercents(cpu=20, memory=20),
        description="A node under every one of these (percent of allocatable) may be emptied.",
    )

    @model_validator(mode="after")
    def _some_threshold(self) -> ConsolidationSettings:
        if not self.thresholds.as_dict():
            raise ValueError("thresholds must set at least one of cpu, memory, pods")
        return self


class LoadAwarePolicy(_Model):
    api_version: Literal["loadaware.io/v1alpha1"] = Field(
        default="loadaware.io/v1alpha1",
        description="The policy's API version.",
    )
    kind: Literal["LoadAwarePolicy"] = Field(
        default="LoadAwarePolicy",
        description="The policy's kind.",
    )
    metrics: MetricsSettings = Field(
        default=MetricsSettings(),
        description="Where usage comes from, and when it is too old to act on.",
    )
    node_pools: list[NodePool] = Field(
        default_factory=_default_pools,
        min_length=1,
        description=(
            "Node pools with their thresholds; the first whose nodeSelector matches a "
            "node holds it, and a node in no pool is excluded."
        ),
    )
    evictor: EvictorSettings = Field(
        default=EvictorSettings(),
        description="Which pods may be evicted: the descheduler's DefaultEvictor settings.",
    )
    limits: Limits = Field(
        default=Limits(),
        description="Eviction budgets per round, per window and per workload.",
    )
    optimizer: OptimizerSettings = Field(
        default=OptimizerSettings(),
        description="How the round's evictions are chosen.",
    )
    steering: SteeringSettings = Field(
        default=SteeringSettings(),
        description="Where replacements are expected to land, and steering them there.",
    )
    verify: VerifySettings = Field(
        default=VerifySettings(),
        description="How a round proves relief after evicting.",
    )
    state: StateSettings = Field(
        default=StateSettings(),
        description="Where loadaware keeps what must survive a restart.",
    )
    cluster_cache: ClusterCacheSettings = Field(
        default=ClusterCacheSettings(),
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
    schedules: list[Schedule] = Field(
        default_factory=list,
        description="When `loadaware serve` starts rounds by itself.",
    )
    serve: ServeSettings = Field(
        default=ServeSettings(),
        description=(
            "The HTTP server, the Alertmanager webhook and leader election of `loadaware serve`."
        ),
    )
    profiles: list[Profile] = Field(
        default_factory=list,
        description=(
            "Named scopes and the strategies run in them; none given: one implicit "
            "profile `default` (the evictor's scope, every pool, loadBalancing only)."
        ),
    )
    consolidation: ConsolidationSettings = Field(
        default=ConsolidationSettings(),
        description=(
            "descheduler's HighNodeUtilization: empty the least-used nodes so that a "
            "cluster autoscaler can remove them."
        ),
    )

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
