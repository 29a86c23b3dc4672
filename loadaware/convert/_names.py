"""The descheduler's names and defaults the conversion reads: API versions,
plugins and their loadaware strategies, the DefaultEvictor's args, top-level fields."""

from __future__ import annotations

from collections.abc import Mapping

API_V1ALPHA1 = "descheduler/v1alpha1"
API_V1ALPHA2 = "descheduler/v1alpha2"
DEFAULT_EVICTOR = "DefaultEvictor"
# The key the descheduler reads a Prometheus token from in its secretReference.
PROMETHEUS_TOKEN_KEY = "prometheusAuthToken"
# Without authToken the descheduler sends its own service account token.
SERVICE_ACCOUNT_TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token"
# The resource name LowNodeUtilization's thresholds use with a Prometheus query.
METRIC_RESOURCE = "MetricResource"
# descheduler's defaults where loadaware's differ.
FAILED_PODS_MIN_LIFETIME_SECONDS = 3600

BALANCE_PLUGINS = frozenset(
    {
        "LowNodeUtilization",
        "HighNodeUtilization",
        "RemoveDuplicates",
        "RemovePodsViolatingTopologySpreadConstraint",
    }
)
DESCHEDULE_PLUGINS = frozenset(
    {
        "RemovePodsViolatingNodeAffinity",
        "RemovePodsViolatingNodeTaints",
        "RemovePodsViolatingInterPodAntiAffinity",
        "PodLifeTime",
        "RemovePodsHavingTooManyRestarts",
        "RemoveFailedPods",
    }
)
# descheduler plugin -> loadaware strategy (Strategies field, camelCase).
STRATEGY_OF: Mapping[str, str] = {
    "LowNodeUtilization": "loadBalancing",
    "RemovePodsViolatingNodeAffinity": "removePodsViolatingNodeAffinity",
    "RemovePodsViolatingNodeTaints": "removePodsViolatingNodeTaints",
    "RemovePodsViolatingInterPodAntiAffinity": "removePodsViolatingInterPodAntiAffinity",
    "RemoveDuplicates": "removeDuplicates",
    "RemovePodsViolatingTopologySpreadConstraint": "removePodsViolatingTopologySpreadConstraint",
    "PodLifeTime": "podLifeTime",
    "RemovePodsHavingTooManyRestarts": "removePodsHavingTooManyRestarts",
    "RemoveFailedPods": "removeFailedPods",
}
DEPRECATED_EVICTOR_FLAGS: Mapping[str, tuple[str, str]] = {
    # flag: (podProtections list, protection)
    "evictLocalStoragePods": ("defaultDisabled", "PodsWithLocalStorage"),
    "evictDaemonSetPods": ("defaultDisabled", "DaemonSetPods"),
    "evictSystemCriticalPods": ("defaultDisabled", "SystemCriticalPods"),
    "evictFailedBarePods": ("defaultDisabled", "FailedBarePods"),
    "ignorePvcPods": ("extraEnabled", "PodsWithPVC"),
    "ignorePodsWithoutPDB": ("extraEnabled", "PodsWithoutPDB"),
}
EVICTOR_ARGS = frozenset(
    {
        "nodeSelector",
        "labelSelector",
        "namespaceLabelSelector",
        "priorityThreshold",
        "nodeFit",
        "minReplicas",
        "minPodAge",
        "noEvictionPolicy",
        "podProtections",
        *DEPRECATED_EVICTOR_FLAGS,
    }
)
TOP_LEVEL_V1ALPHA2 = frozenset(
    {
        "apiVersion",
        "kind",
        "profiles",
        "nodeSelector",
        "maxNoOfPodsToEvictPerNode",
        "maxNoOfPodsToEvictPerNamespace",
        "maxNoOfPodsToEvictTotal",
        "evictionFailureEventNotification",
        "metricsCollector",
        "metricsProviders",
        "gracePeriodSeconds",
        # Listed in the descheduler README's top-level table.
        "prometheus",
    }
)
TOP_LEVEL_V1ALPHA1 = frozenset(
    {
        "apiVersion",
        "kind",
        "strategies",
        "nodeSelector",
        "evictFailedBarePods",
        "evictLocalStoragePods",
        "evictSystemCriticalPods",
        "evictDaemonSetPods",
        "ignorePvcPods",
        "maxNoOfPodsToEvictPerNode",
        "maxNoOfPodsToEvictPerNamespace",
        "maxNoOfPodsToEvictTotal",
    }
)
