"""Usage: what nodes and pods really use, and when it was sampled.

Its job: Usage (cpu in cores, memory in bytes, each value with the time of the
newest sample behind it) from a metrics source or a `--metrics` file, writing
that file, and judging whether usage is fresh, complete and plausible enough to
act on (judge_usage, which refuses rather than guesses).

Limits: the file reader checks shape only; NaN or negative values load as they
are, so that the judgement refuses them with its stable reason code. Nothing
here evicts or plans.
"""

from loadaware.metrics._file import (
    load_metrics_file,
    usage_from_json,
    usage_to_json,
    write_metrics_file,
)
from loadaware.metrics._judge import NodeScope, UsageVerdict, judge_usage
from loadaware.metrics._types import Usage, UsageSample

__all__ = [
    "NodeScope",
    "Usage",
    "UsageSample",
    "UsageVerdict",
    "judge_usage",
    "load_metrics_file",
    "usage_from_json",
    "usage_to_json",
    "write_metrics_file",
]
