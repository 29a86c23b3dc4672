"""Evicting: the only part of loadaware that changes a cluster.

It carries out a Plan through the policy/v1 Eviction API within budgets that
hold across rounds and restarts (kept in a ConfigMap it owns), re-checks each
eviction just before it, paces evictions per workload, steers each replacement
to its planned landing with a soft taint on the few nodes that would outscore
it (the eviction's `steer` set), and verifies that replacements
become Ready on cooler nodes, opening a circuit breaker when they do not. A
suspend switch on the same ConfigMap stops every eviction at once. The re-check
before each eviction answers Proceed, Skip or Stop; why the executor stopped is
an error (ExecutionReport.stopped), never a string to parse. Replacements
bound outside the landing set the model predicted stop the round past a bound
(ModelDisagreesError, scheduler-model-disagrees).

Its calls to the API server are loadaware.kube's (`Kube`, re-exported here as the
evictor's client).
"""

from loadaware.evict._execution_report import ExecutionReport, ReplacementReport
from loadaware.evict._executor import Executor
from loadaware.evict._outcome import EvictionOutcome, record_outcome
from loadaware.evict._recheck import PROCEED, Proceed, Recheck, RecheckOutcome, Skip, Stop
from loadaware.evict._state import (
    Breaker,
    BudgetExhaustedError,
    EvictionRecord,
    StateStore,
    SuspendedError,
    Suspension,
    parse_rfc3339,
    rfc3339,
)
from loadaware.evict._stops import (
    BreakerOpenedError,
    BreakerOpenError,
    EvictionFailedError,
    ModelDisagreesError,
    StopRequestedError,
)
from loadaware.evict._taint import (
    HOTSPOT_TAINT_KEY,
    add_hotspot_taint,
    remove_hotspot_taint,
    remove_leftover_taints,
)
from loadaware.kube import Kube, RawObject

__all__ = [
    "HOTSPOT_TAINT_KEY",
    "PROCEED",
    "Breaker",
    "BreakerOpenError",
    "BreakerOpenedError",
    "BudgetExhaustedError",
    "EvictionFailedError",
    "EvictionOutcome",
    "EvictionRecord",
    "ExecutionReport",
    "Executor",
    "Kube",
    "ModelDisagreesError",
    "Proceed",
    "RawObject",
    "Recheck",
    "RecheckOutcome",
    "ReplacementReport",
    "Skip",
    "StateStore",
    "Stop",
    "StopRequestedError",
    "SuspendedError",
    "Suspension",
    "add_hotspot_taint",
    "parse_rfc3339",
    "record_outcome",
    "remove_hotspot_taint",
    "remove_leftover_taints",
    "rfc3339",
]
