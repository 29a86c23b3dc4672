"""Runtime: wires rounds (loadaware.round) to their triggers: `run --once`, and
`serve` (schedules, the Alertmanager webhook, leader election, the service's own
metrics and forecast proofs); also the CLI's offline commands, simulation and
`metrics dump`."""

from loadaware.runtime._leader import AlwaysLeader, Elector, LeaseElector
from loadaware.runtime._live import (
    cache_check,
    cached_reader,
    live_round_context,
    run_once,
)
from loadaware.runtime._metrics_dump import dump_metrics
from loadaware.runtime._offline import plan_from_files, with_forecast_file, with_solver
from loadaware.runtime._schedule import Schedules, crontab_day_of_week, next_fire_time
from loadaware.runtime._scheduler_check import (
    DEFAULT_CHECK_BINDINGS,
    DEFAULT_CHECK_DURATION,
    SchedulerCheck,
    agreement_document,
    binding_observer,
    check_scheduler,
)
from loadaware.runtime._service import Service
from loadaware.runtime._service_http import HttpServer
from loadaware.runtime._service_metrics import observe_round, push_metrics
from loadaware.runtime._service_wiring import build_service, serve, serve_policy
from loadaware.runtime._simulate import SimulationResult, simulate_round
from loadaware.runtime._simulate_api import ApiSimulation, simulate_through_api
from loadaware.runtime._suspend import set_suspended
from loadaware.runtime._webhook import RawAlert, RawNotification, Webhook

__all__ = [
    "DEFAULT_CHECK_BINDINGS",
    "DEFAULT_CHECK_DURATION",
    "AlwaysLeader",
    "ApiSimulation",
    "Elector",
    "HttpServer",
    "LeaseElector",
    "RawAlert",
    "RawNotification",
    "SchedulerCheck",
    "Schedules",
    "Service",
    "SimulationResult",
    "Webhook",
    "agreement_document",
    "binding_observer",
    "build_service",
    "cache_check",
    "cached_reader",
    "check_scheduler",
    "crontab_day_of_week",
    "dump_metrics",
    "live_round_context",
    "next_fire_time",
    "observe_round",
    "plan_from_files",
    "push_metrics",
    "run_once",
    "serve",
    "serve_policy",
    "set_suspended",
    "simulate_round",
    "simulate_through_api",
    "with_forecast_file",
    "with_solver",
]
