"""One round: read its inputs (the cluster, the usage of the nodes and pods in
scope, the forecast when it plans ahead), plan, carry the plan out through the
evictor with a re-check before each eviction, prove the relief and work out
what the round did of its plan. run_round() hands back a frozen RoundResult,
whose audit record (RoundRecord) report renders and the triggers read.

Below the triggers (runtime: once, serve, schedules, webhook) and above the
evictor. Stages hand each other typed outcomes (the re-check's Proceed, Skip
or Stop; errors; a plan's Refusal), never strings to parse. No exit codes here:
the CLI maps a result's error to one.
"""

from loadaware.round._completion import (
    NodeCompletion,
    NodeResult,
    RoundCompletion,
    completion_to_json,
    describe_completion,
    name_nodes,
)
from loadaware.round._forecast import ForecastReader, forecast_reader
from loadaware.round._forecast_proof import OUTCOMES as PROOF_OUTCOMES
from loadaware.round._forecast_proof import ForecastProof, NodeProof, PendingProof, prove
from loadaware.round._inputs import UsageReader, fetch_cluster_usage, metrics_provider
from loadaware.round._planning import timed_plan
from loadaware.round._record import (
    LANDING_WHERE,
    LANDINGS_WHERE,
    RoundRecord,
    relief_rows,
    relief_to_json,
    round_verdict,
)
from loadaware.round._relief import NodeRelief
from loadaware.round._round import (
    PartialRoundError,
    RoundContext,
    RoundOptions,
    RoundResult,
    run_round,
)

__all__ = [
    "LANDINGS_WHERE",
    "LANDING_WHERE",
    "PROOF_OUTCOMES",
    "ForecastProof",
    "ForecastReader",
    "NodeCompletion",
    "NodeProof",
    "NodeRelief",
    "NodeResult",
    "PartialRoundError",
    "PendingProof",
    "RoundCompletion",
    "RoundContext",
    "RoundOptions",
    "RoundRecord",
    "RoundResult",
    "UsageReader",
    "completion_to_json",
    "describe_completion",
    "fetch_cluster_usage",
    "forecast_reader",
    "metrics_provider",
    "name_nodes",
    "prove",
    "relief_rows",
    "relief_to_json",
    "round_verdict",
    "run_round",
    "timed_plan",
]
