"""The LoadAwarePolicy: what a policy file may say, checked before anything acts on it.

Its job is the policy's models (pydantic, frozen, camelCase in files), reading a
file into them with every problem reported at once, writing them back normalised,
a short hash of the effective policy, the JSON schema and the reference page
(docs/reference/policy.md) derived from the models. Converting a
kubernetes-sigs/descheduler DeschedulerPolicy into one is loadaware.convert's job.

Limits: models only. Apart from reading the policy file there is no I/O
here, no clock and no Kubernetes; it imports no other loadaware stage, and
everything else imports it.
"""

from loadaware.policy._duration import Duration, format_duration, parse_duration
from loadaware.policy._evictor import (
    SYSTEM_CRITICAL_PRIORITY,
    DefaultProtection,
    EvictionWindow,
    EvictorSettings,
    ExtraProtection,
    LabelSelectorSpec,
    Limits,
    Namespaces,
    PodProtections,
    PriorityThreshold,
    SelectorRequirement,
)
from loadaware.policy._forecast import ForecastSettings, ScheduleForecast
from loadaware.policy._live_round import StateSettings, VerifySettings
from loadaware.policy._load import (
    dump_policy,
    load_policy,
    parse_policy,
    parse_yaml_text,
    policy_hash,
)
from loadaware.policy._metrics import (
    BUILTIN_RESOURCES,
    MetricsServerSource,
    MetricsSettings,
    NamedResource,
    PrometheusQueries,
    PrometheusSource,
)
from loadaware.policy._model import LoadAwarePolicy
from loadaware.policy._pools import ConsolidationSettings, NodePool, ResourcePercents
from loadaware.policy._profiles import (
    DuplicatesStrategy,
    FailedPodsStrategy,
    InterPodAntiAffinityStrategy,
    LoadBalancingStrategy,
    NodeAffinityStrategy,
    NodeTaintsStrategy,
    PodLifeTimeStrategy,
    Profile,
    Strategies,
    TooManyRestartsStrategy,
    TopologySpreadStrategy,
)
from loadaware.policy._scheduler_config import (
    DEFAULT_SCHEDULER_NAME,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginConfig,
    PodTopologySpreadArgs,
    ScoringStrategy,
    UtilizationShapePoint,
    load_scheduler_config,
    merged_score_weights,
    modelled_resource,
    unmodelled_settings,
)
from loadaware.policy._schema import SCHEMA_ID, policy_json_schema
from loadaware.policy._secrets import AuthToken, SecretReference
from loadaware.policy._serve import (
    LeaderElectionSettings,
    Schedule,
    ServeSettings,
    WebhookBasicAuth,
    WebhookSettings,
)
from loadaware.policy._steering import OptimizerSettings, SteeringSettings

__all__ = [
    "BUILTIN_RESOURCES",
    "DEFAULT_SCHEDULER_NAME",
    "SCHEMA_ID",
    "SYSTEM_CRITICAL_PRIORITY",
    "AuthToken",
    "ConsolidationSettings",
    "DefaultProtection",
    "DuplicatesStrategy",
    "Duration",
    "EvictionWindow",
    "EvictorSettings",
    "ExtraProtection",
    "FailedPodsStrategy",
    "ForecastSettings",
    "InterPodAntiAffinityStrategy",
    "KubeSchedulerConfiguration",
    "KubeSchedulerProfile",
    "LabelSelectorSpec",
    "LeaderElectionSettings",
    "Limits",
    "LoadAwarePolicy",
    "LoadBalancingStrategy",
    "MetricsServerSource",
    "MetricsSettings",
    "NamedResource",
    "Namespaces",
    "NodeAffinityStrategy",
    "NodePool",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "NodeTaintsStrategy",
    "OptimizerSettings",
    "PluginConfig",
    "PodLifeTimeStrategy",
    "PodProtections",
    "PodTopologySpreadArgs",
    "PriorityThreshold",
    "Profile",
    "PrometheusQueries",
    "PrometheusSource",
    "ResourcePercents",
    "Schedule",
    "ScheduleForecast",
    "ScoringStrategy",
    "SecretReference",
    "SelectorRequirement",
    "ServeSettings",
    "StateSettings",
    "SteeringSettings",
    "Strategies",
    "TooManyRestartsStrategy",
    "TopologySpreadStrategy",
    "UtilizationShapePoint",
    "VerifySettings",
    "WebhookBasicAuth",
    "WebhookSettings",
    "dump_policy",
    "format_duration",
    "load_policy",
    "load_scheduler_config",
    "merged_score_weights",
    "modelled_resource",
    "parse_duration",
    "parse_policy",
    "parse_yaml_text",
    "policy_hash",
    "policy_json_schema",
    "unmodelled_settings",
]
