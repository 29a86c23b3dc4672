"""Planning: which pods leave which hot nodes, and where their replacements should land.

Pure and deterministic: a ClusterState, a Usage, a Policy and the time go in,
a Plan comes out. No HTTP, no Kubernetes client, no clock, no environment —
which is what makes offline planning, simulation and benchmarks possible.
Solver wall time is measured by the caller. Where a replacement lands is
`loadaware.scheduling`'s kube-scheduler model.
"""

from loadaware.plan._basis import LandingBasis
from loadaware.plan._budget import NO_CARRIED_BUDGET, CarriedBudget, unavailable_by_workload
from loadaware.plan._build import allocatable_names, build_plan, plan_with_basis
from loadaware.plan._candidates import EvictionRules, pod_eligibility
from loadaware.plan._classify import NodeTable, classify_nodes, node_scopes, pool_of
from loadaware.plan._closed_loop import SOURCE_NOT_HOT, LandingControl
from loadaware.plan._output import plan_to_json
from loadaware.plan._placement import HOTSPOT_TAINT, TAINT_CAP, taint_cap
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
    "TAINT_CAP",
    "CarriedBudget",
    "Eviction",
    "EvictionRules",
    "LandingBasis",
    "LandingControl",
    "NodeReport",
    "NodeTable",
    "Plan",
    "Refusal",
    "SolverInfo",
    "allocatable_names",
    "build_plan",
    "classify_nodes",
    "node_scopes",
    "plan_to_json",
    "plan_with_basis",
    "pod_eligibility",
    "pool_of",
    "taint_cap",
    "unavailable_by_workload",
]
