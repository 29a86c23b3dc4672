"""Simulation: built-in scenarios, generators of realistic clusters (raw Kubernetes
objects and metrics documents), and a simulated cluster behind a Kubernetes-compatible
API (`loadaware sim serve`): storage with the API's semantics, evictions, controllers,
a kube-scheduler model, usage that follows the pods, and fault injection.

The simulated kube-scheduler samples nodes as kube-scheduler does by default: from
100 nodes it scores only the feasible nodes its walk over the nodeTree finds first
(`loadaware.scheduling`'s `NodeTree` and `NodeSampler`; `sim serve
--percentage-of-nodes-to-score 100` scores every feasible node).

Only the CLI, the runtime and tests use it; nothing here takes part in a real round.

By job: the HTTP front (`_server`, `_handlers`, `_response`, `_status`, `_watches`,
`_discovery`, `_openapi`, `_tables`, `_metrics_api`, the admin API `_admin`), the
cluster without HTTP (`_cluster`: `_store` on `_storage`, `_usage`, `_faults`,
`_clock`), the control plane (`controllers/`, one module per controller), the
generated clusters (`scenarios/`), and `SimSettings`, the options of `sim serve`.
"""

from loadaware.sim._clock import SimClock
from loadaware.sim._cluster import SimCluster, build_cluster
from loadaware.sim._faults import Fault, Faults
from loadaware.sim._files import load_metrics_document, load_objects_file
from loadaware.sim._server import SimServer, serve, start_server
from loadaware.sim._settings import SimSettings
from loadaware.sim._status import ApiError
from loadaware.sim.scenarios import (
    DEFAULT_SCENARIO,
    SCENARIO_NAMES,
    Scenario,
    builtin_scenario,
    generate_cluster,
)

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
    "SimSettings",
    "build_cluster",
    "builtin_scenario",
    "generate_cluster",
    "load_metrics_document",
    "load_objects_file",
    "serve",
    "start_server",
]
