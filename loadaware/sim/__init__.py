"""Simulation: built-in scenarios, generators of realistic clusters (raw Kubernetes
objects and metrics documents), and a simulated cluster behind a Kubernetes-compatible
API (`loadaware sim serve`): storage with the API's semantics, evictions, controllers,
a kube-scheduler model, usage that follows the pods, and fault injection.

The simulated kube-scheduler samples nodes as kube-scheduler does by default: from
100 nodes it scores only the feasible nodes its walk over the nodeTree finds first
(`loadaware.scheduling`'s `NodeTree` and `NodeSampler`; `sim serve
--percentage-of-nodes-to-score 100` scores every feasible node).

Only the CLI, the runtime and tests use it; nothing here takes part in a real round.
"""

from loadaware.sim._clock import SimClock
from loadaware.sim._faults import Fault, Faults
from loadaware.sim._scenarios import (
    DEFAULT_SCENARIO,
    SCENARIO_NAMES,
    Scenario,
    builtin_scenario,
    generate_cluster,
)
from loadaware.sim._server import (
    SimCluster,
    SimServer,
    build_cluster,
    load_metrics_document,
    load_objects_file,
    serve,
    start_server,
)
from loadaware.sim._status import ApiError

__all__ = [
    "DEFAULT_SCENARIO",
    "SCENARIO_NAMES",
    "ApiError",
    "Fault",
    "Faults",
    "Scenario",
    "SimClock",
    "SimCluster",
    "SimServer",
    "build_cluster",
    "builtin_scenario",
    "generate_cluster",
    "load_metrics_document",
    "load_objects_file",
    "serve",
    "start_server",
]
