"""What a round decided: the Plan and its parts (the `-o json` contract of DESIGN.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from loadaware.metrics import ForecastInfo

PlanStatus = Literal["planned", "noop", "refused"]
NodeClass = Literal["hot", "cold", "normal", "excluded"]
SolverMethod = Literal["milp", "greedy", "none"]
RESOURCES: tuple[str, ...] = ("cpu", "memory")
# A node's pod count against its allocatable pods: judged when a pool names it,
# after RESOURCES on the resource axis (NodeTable.resources).
POD_COUNT = "pods"


@dataclass(frozen=True, slots=True, kw_only=True)
class Eviction:
    pod: str  # namespace/name
    node: str
    expected_node: str | None
    cpu_cores: float
    memory_bytes: float
    reason: str = "hotspot"
    uid: str = ""
    workload: str | None = None  # Kind/namespace/name of the top owner
    # Nodes that carry the soft taint (HOTSPOT_TAINT) when this eviction is sent;
    # expected_node is predicted under them.
    steer: tuple[str, ...] = ()
    # Every node the replacement may land on when kube-scheduler scores only a
    # sample of the nodes, all of them good landings; expected_node is the best.
    landing_set: tuple[str, ...] = ()
    # Usage of the named resources (metrics.prometheus.resources) the round judges.
    named: Mapping[str, float] = field(default_factory=dict, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeReport:
    name: str
    node_class: NodeClass
    pool: str | None
    before: Mapping[str, float]  # utilisation ratio (0-1) of allocatable per resource
    after: Mapping[str, float]
    note: str = ""  # why excluded, or why a hot node could not be relieved
    # The pool's thresholds and targetThresholds as ratios, for the judged resources only.
    low: Mapping[str, float] = field(default_factory=dict)
    high: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class SolverInfo:
    method: SolverMethod
    seconds: float = 0.0
    objective: float | None = None
    lower_bound: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StrategyCount:
    """What one rule of one profile did in a round."""

    planned: int = 0
    skipped: int = 0  # pods the rule named that were not evicted
    skipped_reasons: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsolidationReport:
    """HighNodeUtilization: the nodes planned to be emptied, and at what cost."""

    nodes: tuple[str, ...] = ()
    evictions: int = 0
    node_hours_saved_per_day: float = 0.0
    candidates: int = 0  # nodes under the consolidation thresholds
    note: str = ""  # why fewer nodes than allowed, if so


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """Why a plan was refused, as data: the stable code (stale-metrics, ...) and
    what to act on. The plan's reason reads `{code}: {message}`."""

    code: str
    message: str


@dataclass(frozen=True, kw_only=True)
class Plan:
    status: PlanStatus
    reason: str
    evictions: tuple[Eviction, ...] = ()
    nodes: tuple[NodeReport, ...] = ()
    solver: SolverInfo = SolverInfo(method="none")
    # Why pods on hot nodes were not candidates: protection or rule name -> count.
    skipped: Mapping[str, int] = field(default_factory=dict)
    # Profile name -> rule (an eviction reason: "hotspot" or a strategy's name) -> counts.
    profiles: Mapping[str, Mapping[str, StrategyCount]] = field(default_factory=dict)
    consolidation: ConsolidationReport | None = None  # None: consolidation is off
    # With steering.softTaint off: how many more hot nodes steering would relieve.
    steering_would_relieve: int | None = None
    # Planned on a forecast (a schedule's `forecast`): what it was; None: on the moment's usage.
    forecast: ForecastInfo | None = None
    # Set when status is "refused".
    refusal: Refusal | None = None
