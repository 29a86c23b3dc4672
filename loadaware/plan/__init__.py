"""Planning: which pods leave which hot nodes, and where their replacements should land.

Pure and deterministic: a ClusterState, a Usage, a Policy and the time go in,
a Plan comes out. No HTTP, no Kubernetes client, no clock, no environment —
which is what makes offline planning, simulation and benchmarks possible.
Solver wall time is measured by the caller.
"""

from loadaware.plan._budget import (
    NO_CARRIED_BUDGET,
    CarriedBudget,
    unavailable_by_workload,
    workload_key,
)
from loadaware.plan._build import allocatable_names, build_plan
from loadaware.plan._candidates import EvictionRules, PodVerdict, judge_pod
from loadaware.plan._classify import NodeTable, classify_nodes, node_scopes, pool_of
from loadaware.plan._closed_loop import SOURCE_NOT_HOT, LandingControl, MoveLanding
from loadaware.plan._fit import Occupancy
from loadaware.plan._output import plan_to_json
from loadaware.plan._placement import HOTSPOT_TAINT
from loadaware.plan._sampling import eligible_needed, num_feasible_nodes_to_find
from loadaware.plan._scheduler import (
    best_nodes,
    feasible_mask,
    predict_node,
    predict_replacement,
    scheduling_replacement,
    spread_filter_mask,
)
from loadaware.plan._types import (
    POD_COUNT,
    RESOURCES,
    Eviction,
    NodeReport,
    Plan,
    Refusal,
    SolverInfo,
)

__all__ = [
    "HOTSPOT_TAINT",
    "NO_CARRIED_BUDGET",
    "POD_COUNT",
    "RESOURCES",
    "SOURCE_NOT_HOT",
    "CarriedBudget",
    "Eviction",
    "EvictionRules",
    "LandingControl",
    "MoveLanding",
    "NodeReport",
    "NodeTable",
    "Occupancy",
    "Plan",
    "PodVerdict",
    "Refusal",
    "SolverInfo",
    "allocatable_names",
    "best_nodes",
    "build_plan",
    "classify_nodes",
    "eligible_needed",
    "feasible_mask",
    "judge_pod",
    "node_scopes",
    "num_feasible_nodes_to_find",
    "plan_to_json",
    "pool_of",
    "predict_node",
    "predict_replacement",
    "scheduling_replacement",
    "spread_filter_mask",
    "unavailable_by_workload",
    "workload_key",
]
