"""Simulation: built-in scenarios and generators of realistic clusters, as raw
Kubernetes objects and metrics documents (and, later, a simulated API server).

Only the CLI, the runtime and tests use it; nothing here takes part in a real round.
"""

from loadaware.sim._scenarios import (
    DEFAULT_SCENARIO,
    SCENARIO_NAMES,
    Scenario,
    builtin_scenario,
    generate_cluster,
)

__all__ = ["DEFAULT_SCENARIO", "SCENARIO_NAMES", "Scenario", "builtin_scenario", "generate_cluster"]
