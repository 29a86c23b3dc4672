"""The `loadaware` command: parse flags, call the runtime, map errors to exit codes.

Exit codes (DESIGN.md): 0 planned or nothing to do; 2 bad input; 3 refused to
act (fail-closed); 1 anything else.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import sys
from collections.abc import Sequence

import yaml

from loadaware import __version__, cluster, errors, metrics, plan, policy, report, runtime

log = logging.getLogger("loadaware")

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT, EXIT_REFUSED = 0, 1, 2, 3


def _parse_time(text: str) -> datetime.datetime:
    try:
        value = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not an RFC 3339 time: {text!r}") from exc
    if value.tzinfo is None:
        raise argparse.ArgumentTypeError(f"time needs a zone (e.g. Z): {text!r}")
    return value.astimezone(datetime.UTC)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="loadaware", description="Load-aware rebalancer for Kubernetes."
    )
    parser.add_argument("--version", action="version", version=f"loadaware {__version__}")
    parser.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    parser.add_argument("--log-format", default="text", choices=["text", "json"])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sim = commands.add_parser(
        "simulate", help="a full dry-run round against a built-in or given cluster"
    )
    source = sim.add_mutually_exclusive_group()
    source.add_argument("--scenario", help="built-in scenario name (default: peak-hour)")
    source.add_argument("--cluster", help="cluster file (kubectl -o yaml/json output)")
    sim.add_argument("--metrics", help="metrics file (with --cluster)")
    sim.add_argument("--policy", help="policy file (default: the built-in defaults)")
    sim.add_argument("--now", type=_parse_time, help="RFC 3339 time to judge staleness at")
    sim.add_argument("-o", "--output", choices=["table", "json"], default="table")
    sim.add_argument("--all-nodes", action="store_true", help="list unchanged nodes too")
    sim.add_argument("--solver", choices=["milp", "greedy"], help="override optimizer.method")

    pl = commands.add_parser("plan", help="plan offline from files: no cluster, no network")
    pl.add_argument("--cluster", required=True)
    pl.add_argument("--metrics", required=True)
    pl.add_argument("--policy", required=True)
    pl.add_argument("--now", type=_parse_time, help="RFC 3339 (default: the current time)")
    pl.add_argument("-o", "--output", choices=["json", "table"], default="table")
    pl.add_argument("--all-nodes", action="store_true", help="list unchanged nodes too (table)")
    pl.add_argument("--solver", choices=["milp", "greedy"], help="override optimizer.method")

    val = commands.add_parser("validate", help="check a policy file")
    val.add_argument("--policy", required=True)
    return parser


def _configure_logging(level: str, fmt: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(_JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("loadaware")
    root.handlers[:] = [handler]
    root.setLevel(level)


class _JsonFormatter(logging.Formatter):
    _STANDARD: frozenset[str] = frozenset(vars(logging.makeLogRecord({})))

    def format(self, record: logging.LogRecord) -> str:
        body = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        body.update({k: v for k, v in vars(record).items() if k not in self._STANDARD})
        return json.dumps(body, default=str)


def _cmd_validate(args: argparse.Namespace) -> int:
    loaded = policy.load_policy(args.policy)
    sys.stdout.write(yaml.safe_dump(policy.dump_policy(loaded), sort_keys=False))
    return EXIT_OK


def _print_plan(result: plan.Plan, output: str, all_nodes: bool, **extra: object) -> None:
    if output == "json":
        sys.stdout.write(json.dumps(plan.plan_to_json(result), indent=2) + "\n")
    else:
        sys.stdout.write(report.render_plan_table(result, all_nodes=all_nodes, **extra))  # type: ignore[arg-type]


def _plan_exit_code(result: plan.Plan) -> int:
    return EXIT_REFUSED if result.status == "refused" else EXIT_OK


def _cmd_plan(args: argparse.Namespace) -> int:
    now = args.now or datetime.datetime.now(datetime.UTC)
    result = runtime.plan_from_files(
        cluster_file=args.cluster,
        metrics_file=args.metrics,
        policy_file=args.policy,
        now=now,
        solver=args.solver,
    )
    _print_plan(result, args.output, args.all_nodes)
    return _plan_exit_code(result)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from loadaware import sim  # only the CLI and runtime may reach the simulator

    settings = policy.load_policy(args.policy) if args.policy else policy.LoadAwarePolicy()
    settings = runtime.with_solver(settings, args.solver)
    if args.cluster:
        if not args.metrics:
            raise errors.InputError("--cluster needs --metrics")
        state = cluster.load_cluster_file(args.cluster)
        usage = metrics.load_metrics_file(args.metrics)
        title = f"cluster {args.cluster}"
    else:
        if args.metrics:
            raise errors.InputError("--metrics goes with --cluster, not with --scenario")
        name = args.scenario or sim.DEFAULT_SCENARIO
        scenario = sim.builtin_scenario(name, now=args.now or datetime.datetime.now(datetime.UTC))
        state = cluster.cluster_state_from_objects(scenario.objects)
        usage = metrics.usage_from_json(scenario.metrics)
        title = f"scenario {scenario.name}: {scenario.description}"
    # Replaying files: judge staleness at the time they were collected unless told otherwise.
    now = args.now or usage.collected_at
    result = runtime.simulate_round(state, usage, settings, now)
    if args.output == "json":
        body = plan.plan_to_json(result.plan)
        body["simulation"] = {
            "landed": result.landed,
            "observed": result.observed,
            "hotBefore": result.hot_before,
            "hotAfter": result.hot_after,
            "verdict": result.verdict(),
        }
        sys.stdout.write(json.dumps(body, indent=2) + "\n")
    else:
        sys.stdout.write(f"{title}\n\n")
        sys.stdout.write(
            report.render_plan_table(
                result.plan, observed=result.observed, all_nodes=args.all_nodes
            )
        )
        sys.stdout.write(f"\nverdict: {result.verdict()}\n")
    return _plan_exit_code(result.plan)


_COMMANDS = {"validate": _cmd_validate, "plan": _cmd_plan, "simulate": _cmd_simulate}


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad flags, 0 on --help
        return int(exc.code or 0)
    _configure_logging(args.log_level, args.log_format)
    try:
        return _COMMANDS[args.command](args)
    except errors.LoadawareError as exc:
        sys.stderr.write(f"error: {exc}\n")
        if exc.hint:
            sys.stderr.write(f"hint: {exc.hint}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        return EXIT_ERROR
    except Exception:
        log.debug("unexpected error", exc_info=True)
        sys.stderr.write(
            "error: unexpected failure; run with --log-level DEBUG for the traceback\n"
        )
        return EXIT_ERROR
