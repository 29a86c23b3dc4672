"""Usage: what nodes and pods really use, and when it was sampled.

Its job: Usage (cpu in cores, memory in bytes, each value with the time of the
newest sample behind it) from a metrics source (PrometheusProvider,
MetricsServerProvider, both MetricsProviders) or a `--metrics` file, writing
that file, and judging whether usage is fresh, complete and plausible enough to
act on (assess_usage, which refuses rather than guesses).

Hotspot confirmation: a Prometheus source also reads node usage over the last
few `hotspotConfirmation.interval`s into Usage.history. The planner, for each
node its instant values classify as hot, computes HotLimits from the node's
pool (targetThresholds percent times allocatable) and keeps the node hot only
if `confirm_hotspots(usage.history, limits, consecutive)` contains it. When
Usage.history is None (metrics-server, a file without history) there is nothing
to confirm against and the instant classification stands.

Forecasts (PrometheusForecaster, forecast_usage): the usage expected over a
coming horizon, from the same hours of past weeks, for rounds that plan ahead of
a peak; see _forecast.

Limits: the file reader checks shape only; NaN or negative values load as they
are, so that the judgement refuses them with its stable reason code. Sources
know node names and pod keys, not the cluster types (metrics does not import
cluster). Nothing here evicts or plans.
"""

from loadaware.metrics._assess import NodeScope, UsageAssessment, assess_usage
from loadaware.metrics._auth import Secret, SecretReader, kubernetes_secret_reader
from loadaware.metrics._file import (
    load_metrics_file,
    usage_from_json,
    usage_to_json,
    write_metrics_file,
)
from loadaware.metrics._forecast import (
    Forecast,
    ForecastValue,
    PrometheusForecaster,
    forecast_from_usage,
    forecast_usage,
    workload_of,
)
from loadaware.metrics._hotspot import HotLimits, confirm_hotspots, history_points
from loadaware.metrics._metrics_server import MetricsServerProvider
from loadaware.metrics._prometheus import PrometheusProvider
from loadaware.metrics._promql import DEFAULT_QUERIES, ResourceQuery
from loadaware.metrics._provider import MetricsProvider
from loadaware.metrics._types import (
    ForecastInfo,
    NodeHistory,
    Usage,
    UsageHistory,
    UsageSample,
)

__all__ = [
    "DEFAULT_QUERIES",
    "Forecast",
    "ForecastInfo",
    "ForecastValue",
    "HotLimits",
    "MetricsProvider",
    "MetricsServerProvider",
    "NodeHistory",
    "NodeScope",
    "PrometheusForecaster",
    "PrometheusProvider",
    "ResourceQuery",
    "Secret",
    "SecretReader",
    "Usage",
    "UsageAssessment",
    "UsageHistory",
    "UsageSample",
    "assess_usage",
    "confirm_hotspots",
    "forecast_from_usage",
    "forecast_usage",
    "history_points",
    "kubernetes_secret_reader",
    "load_metrics_file",
    "usage_from_json",
    "usage_to_json",
    "workload_of",
    "write_metrics_file",
]
