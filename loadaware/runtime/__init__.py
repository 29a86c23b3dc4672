"""Runtime: wires rounds to their triggers (the CLI's offline commands, simulation;
later the live round, schedules, the Alertmanager webhook and leader election)."""

from loadaware.runtime._offline import plan_from_files, timed_plan, with_solver
from loadaware.runtime._simulate import SimulationResult, simulate_round

__all__ = ["SimulationResult", "plan_from_files", "simulate_round", "timed_plan", "with_solver"]
