"""The policy's `metrics` section: where usage comes from (Prometheus or metrics-server),
the queries, resources of their own, and when usage is too old to act on.
"""

from __future__ import annotations

import datetime
import re
from typing import Annotated, Literal

from pydantic import AnyHttpUrl, Field, field_validator, model_validator

from loadaware.policy import _forecast, _secrets, _strict
from loadaware.policy._duration import Duration


class PrometheusQueries(_strict.StrictModel):
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


class NamedResource(_strict.StrictModel):
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


class PrometheusSource(_strict.StrictModel):
    url: AnyHttpUrl = Field(
        description=(
            "Base URL of the Prometheus HTTP API (Prometheus, Thanos Querier or "
            "Grafana Mimir); a path prefix is kept."
        ),
    )
    auth_token: _secrets.AuthToken | None = Field(
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
    basic_auth: _secrets.BasicAuth | None = Field(
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
    forecast: _forecast.ForecastSettings = Field(
        default_factory=_forecast.ForecastSettings,
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


class MetricsServerSource(_strict.StrictModel):
    timeout: Duration = Field(
        default=datetime.timedelta(seconds=10),
        description="Timeout of each request to the metrics.k8s.io API.",
    )


class HotspotConfirmation(_strict.StrictModel):
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


class MetricsSettings(_strict.StrictModel):
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
