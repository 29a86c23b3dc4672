"""The LoadAwarePolicy: what a policy file may say, checked before anything acts on it.

Its job is the policy's models (pydantic, frozen, camelCase in files), reading a
file into them with every problem reported at once, writing them back normalised,
a short hash of the effective policy, and the JSON schema derived from the models.

Limits: models only. Apart from reading the policy file itself there is no I/O
here, no clock and no Kubernetes; it imports no other loadaware stage, and
everything else imports it.
"""

from loadaware.policy._duration import Duration, format_duration, parse_duration
from loadaware.policy._load import dump_policy, load_policy, parse_policy, policy_hash
from loadaware.policy._model import (
    SYSTEM_CRITICAL_PRIORITY,
    AuthToken,
    DefaultProtection,
    EvictionWindow,
    EvictorSettings,
    ExtraProtection,
    LabelSelectorSpec,
    LeaderElectionSettings,
    Limits,
    LoadAwarePolicy,
    MetricsServerSource,
    MetricsSettings,
    Namespaces,
    NodePool,
    OptimizerSettings,
    PodProtections,
    PriorityThreshold,
    PrometheusQueries,
    PrometheusSource,
    ResourcePercents,
    Schedule,
    SecretReference,
    SelectorRequirement,
    ServeSettings,
    StateSettings,
    SteeringSettings,
    VerifySettings,
    WebhookBasicAuth,
    WebhookSettings,
)
from loadaware.policy._schema import SCHEMA_ID, policy_json_schema

__all__ = [
    "SCHEMA_ID",
    "SYSTEM_CRITICAL_PRIORITY",
    "AuthToken",
    "DefaultProtection",
    "Duration",
    "EvictionWindow",
    "EvictorSettings",
    "ExtraProtection",
    "LabelSelectorSpec",
    "LeaderElectionSettings",
    "Limits",
    "LoadAwarePolicy",
    "MetricsServerSource",
    "MetricsSettings",
    "Namespaces",
    "NodePool",
    "OptimizerSettings",
    "PodProtections",
    "PriorityThreshold",
    "PrometheusQueries",
    "PrometheusSource",
    "ResourcePercents",
    "Schedule",
    "SecretReference",
    "SelectorRequirement",
    "ServeSettings",
    "StateSettings",
    "SteeringSettings",
    "VerifySettings",
    "WebhookBasicAuth",
    "WebhookSettings",
    "dump_policy",
    "format_duration",
    "load_policy",
    "parse_duration",
    "parse_policy",
    "policy_hash",
    "policy_json_schema",
]
