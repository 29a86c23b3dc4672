"""The `loadaware` command: parse flags, call the runtime, map outcomes to exit codes.

Exit codes (DESIGN.md): 0 planned or nothing to do; 2 bad input; 3 refused to
act (fail-closed); 1 anything else, a partial round among them (`run --once`
that stopped evicting early or left hot nodes it planned to relieve) and a
`scheduler check` whose agreement is under --min-agreement (or that saw no
binding to judge by). They are
chosen in one place, _exit_code: a command returns what it came to (nothing, a
Plan, a RoundResult, or an error it has already reported) or raises a
LoadawareError, and _run_wrapper turns either into the code, saying an error
on stderr once. The process entry, `entry`, runs main and leaves a one-shot
command's process without tearing it down.
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

import yaml

from loadaware import (
    __version__,
    cluster,
    errors,
    metrics,
    plan,
    policy,
    report,
    runtime,
    scheduling,
)
from loadaware import round as rounds
from loadaware.build_info import VERSION, revision

log = logging.getLogger("loadaware")

EXIT_OK, EXIT_ERROR, EXIT_BAD_INPUT, EXIT_REFUSED = 0, 1, 2, 3

# What a command came to: nothing to report (None), a Plan, a round's result, or an
# error it has already reported on its own output (a refused dump, a conversion
# that is not equivalent).
Outcome = plan.Plan | rounds.RoundResult | errors.LoadawareError | None


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
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="default: INFO for serve, and for run on a terminal (each step, eviction and "
        "round result); else WARNING",
    )
    parser.add_argument(
        "--log-format",
        default="text",
        choices=["text", "json"],
        help="log records as text lines, or one JSON object a line",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sim = commands.add_parser(
        "simulate", help="a full dry-run round against a built-in or given cluster"
    )
    source = sim.add_mutually_exclusive_group()
    source.add_argument("--scenario", help="built-in scenario name (default: peak-hour)")
    source.add_argument("--cluster", help="cluster file (kubectl -o yaml/json output)")
    sim.add_argument("--metrics", help="metrics file (with --cluster)")
    sim.add_argument(
        "--forecast",
        help="plan ahead: a metrics file of the usage forecast for the coming peak "
        "(with --cluster)",
    )
    sim.add_argument(
        "--forecast-horizon",
        type=policy.parse_duration,
        help="the forecast's horizon (default: the policy's first forecast schedule's, else 1h)",
    )
    sim.add_argument("--policy", help="policy file (default: the built-in defaults)")
    sim.add_argument("--now", type=_parse_time, help="RFC 3339 time to judge staleness at")
    sim.add_argument(
        "-o",
        "--output",
        choices=["table", "json"],
        default="table",
        help="the before/after table, or the plan's JSON with the simulation's result",
    )
    sim.add_argument("--all-nodes", action="store_true", help="list unchanged nodes too")
    sim.add_argument("--solver", choices=["milp", "greedy"], help="override optimizer.method")
    sim.add_argument(
        "--api",
        action="store_true",
        help="run it through the simulated Kubernetes API and the real client path",
    )

    pl = commands.add_parser("plan", help="plan offline from files: no cluster, no network")
    pl.add_argument(
        "--cluster",
        required=True,
        metavar="FILE",
        help="cluster file: what `kubectl get nodes,pods,pdb,rs,deploy,sts,ds -A -o yaml` prints",
    )
    pl.add_argument(
        "--metrics",
        required=True,
        metavar="FILE",
        help="metrics file: what `loadaware metrics dump` writes",
    )
    pl.add_argument(
        "--forecast",
        help="plan ahead: a metrics file of the usage forecast for the coming peak "
        "(nodes by name, pods by pod or workload)",
    )
    pl.add_argument(
        "--forecast-horizon",
        type=policy.parse_duration,
        help="the forecast's horizon (default: the policy's first forecast schedule's, else 1h)",
    )
    pl.add_argument(
        "--policy", required=True, metavar="FILE", help="policy file (LoadAwarePolicy YAML)"
    )
    pl.add_argument("--now", type=_parse_time, help="RFC 3339 (default: the current time)")
    pl.add_argument(
        "-o",
        "--output",
        choices=["json", "table", "html"],
        default="table",
        help="the plan's JSON, a table, or a self-contained HTML page",
    )
    pl.add_argument("--all-nodes", action="store_true", help="list unchanged nodes too (table)")
    pl.add_argument("--solver", choices=["milp", "greedy"], help="override optimizer.method")

    val = commands.add_parser("validate", help="check a policy file")
    val.add_argument("--policy", required=True, metavar="FILE", help="policy file to check")

    conv = commands.add_parser(
        "convert",
        help="print the LoadAwarePolicy equivalent to another tool's policy "
        "(exit 2 when something has no equivalent)",
    )
    conv.add_argument(
        "--from-descheduler",
        required=True,
        metavar="FILE",
        help="a kubernetes-sigs/descheduler DeschedulerPolicy (v1alpha2 or v1alpha1)",
    )
    conv.add_argument("-o", "--output", help="file to write (default: standard output)")

    simulator = commands.add_parser("sim", help="the simulated cluster")
    sim_commands = simulator.add_subparsers(dest="sim_command", required=True, metavar="COMMAND")
    sim_serve = sim_commands.add_parser(
        "serve", help="serve a simulated cluster through the Kubernetes API on 127.0.0.1"
    )
    sim_source = sim_serve.add_mutually_exclusive_group(required=True)
    sim_source.add_argument("--scenario", help="built-in scenario name")
    sim_source.add_argument("--cluster", help="cluster file (kubectl -o yaml/json output)")
    sim_serve.add_argument("--metrics", help="metrics file (with --cluster)")
    sim_serve.add_argument("--port", type=int, required=True, help="port (0: a free one)")
    sim_serve.add_argument("--kubeconfig-out", help="write a kubeconfig for this server here")
    sim_serve.add_argument(
        "--ready-delay", type=float, default=2.0, help="seconds from binding to Ready"
    )
    sim_serve.add_argument("--token-file", help="require this bearer token (file content)")
    sim_serve.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the scheduler's random choice among equally scored nodes",
    )
    sim_serve.add_argument(
        "--watch-bookmark-seconds",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how often a watch that allows bookmarks gets one (kube-apiserver: about a minute)",
    )
    sim_serve.add_argument(
        "--percentage-of-nodes-to-score",
        type=int,
        default=0,
        metavar="PERCENT",
        help=(
            "kube-scheduler's percentageOfNodesToScore: from 100 nodes, score only the "
            "feasible nodes its walk finds first (0: adaptive, the default; 100: every node)"
        ),
    )

    sim_serve.add_argument(
        "--scheduler-config",
        metavar="FILE",
        help=(
            "a KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) whose profiles "
            "the simulated scheduler runs, by schedulerName (default: the default profile)"
        ),
    )

    met = commands.add_parser("metrics", help="read the policy's metrics source")
    met_commands = met.add_subparsers(dest="metrics_command", required=True, metavar="COMMAND")
    dump = met_commands.add_parser(
        "dump", help="write a --metrics file from the live source (exit 3 when refused)"
    )
    dump.add_argument(
        "--policy",
        required=True,
        metavar="FILE",
        help="policy file: its metrics source and node pools",
    )
    dump.add_argument(
        "--cluster",
        metavar="FILE",
        help="cluster file (kubectl -o yaml/json output; default: the live cluster)",
    )
    dump.add_argument("-o", "--output", help="file to write (default: standard output)")
    dump.add_argument(
        "--kubeconfig",
        help="kubeconfig file, for the live cluster, Secrets and metrics-server "
        "(default: in-cluster inside a pod, else $KUBECONFIG or ~/.kube/config)",
    )
    dump.add_argument("--context", help="kubeconfig context (default: the current one)")

    run = commands.add_parser("run", help="one live round against a cluster")
    run.add_argument("--once", action="store_true", required=True, help="run one round, then exit")
    run.add_argument(
        "--policy", required=True, metavar="FILE", help="policy file (LoadAwarePolicy YAML)"
    )
    run.add_argument("--dry-run", action="store_true", help="evict with dryRun=All: change nothing")
    run.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster, then ~/.kube)")
    run.add_argument("--context", help="kubeconfig context (default: the current one)")
    run.add_argument("--audit-file", help="write the audit record here (default: standard output)")
    run.add_argument(
        "-o",
        "--output",
        choices=["json", "table"],
        default="json",
        help="standard output: the audit record (json) or a summary and the plan's table "
        "(table; the audit record still goes to --audit-file)",
    )
    run.add_argument("--report", help="also write the round as a self-contained HTML page here")
    run.add_argument("--pushgateway", help="push loadaware's metrics to this Pushgateway URL")
    run.add_argument(
        "--forecast-horizon",
        type=policy.parse_duration,
        help="plan ahead, as a schedule's forecast does: on the usage forecast for this long "
        "from now (needs metrics.prometheus)",
    )

    srv = commands.add_parser(
        "serve", help="long-running: schedules, Alertmanager webhook, /metrics, leader election"
    )
    srv.add_argument(
        "--policy", required=True, metavar="FILE", help="policy file (LoadAwarePolicy YAML)"
    )
    srv.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster, then ~/.kube)")
    srv.add_argument("--context", help="kubeconfig context (default: the current one)")
    srv.add_argument("--listen", help="host:port (default: the policy's serve.listen)")
    srv.add_argument("--identity", help="leader election identity (default: hostname + random)")

    scheduler = commands.add_parser(
        "scheduler", help="the cluster's scheduler against loadaware's model of it"
    )
    scheduler_commands = scheduler.add_subparsers(
        dest="scheduler_command", required=True, metavar="COMMAND"
    )
    check = scheduler_commands.add_parser(
        "check",
        help="watch the cluster's bindings and say how many the model agrees with "
        "(exit 1 under --min-agreement, 3 when the cluster cannot be read)",
    )
    check.add_argument(
        "--policy",
        required=True,
        metavar="FILE",
        help="policy file: the profiles modelled (steering.schedulerConfig, schedulerNames)",
    )
    check.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster, then ~/.kube)")
    check.add_argument("--context", help="kubeconfig context (default: the current one)")
    check.add_argument(
        "--bindings",
        type=int,
        default=runtime.DEFAULT_CHECK_BINDINGS,
        help="stop after this many bindings of modelled pods have been compared",
    )
    check.add_argument(
        "--duration",
        type=policy.parse_duration,
        default="10m",
        help="stop after this long, however many bindings were seen",
    )
    check.add_argument(
        "--min-agreement",
        type=float,
        default=None,
        help=(
            "the share of the bindings (0-1) the model must agree with for exit 0 "
            "(default: the policy's steering.minModelAgreement)"
        ),
    )
    check.add_argument(
        "-o",
        "--output",
        choices=["text", "json"],
        default="text",
        help="standard output: the agreement per profile and the disagreements (text), or "
        "the same as a JSON document (json)",
    )

    for name, does in (
        ("suspend", "stop every eviction from every trigger at once (no deploy)"),
        ("resume", "let evictions go on after `loadaware suspend`"),
    ):
        switch = commands.add_parser(name, help=does)
        switch.add_argument("--policy", required=True, help="names the state ConfigMap")
        switch.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster, ~/.kube)")
        switch.add_argument("--context", help="kubeconfig context (default: the current one)")
        switch.add_argument("--reason", default="", help="why, recorded on the ConfigMap")
        switch.add_argument("--by", help="who, recorded on the ConfigMap (default: user@host)")

    commands.add_parser(
        "version", help="print the version and the source revision it was built from"
    )
    return parser


def _default_log_level(command: str) -> str:
    # A service says what it does as it does it; `run` does so to a person watching
    # it on a terminal (its progress), not to a CronJob's log; the offline commands
    # print their result and nothing else.
    if command == "serve" or (command == "run" and sys.stderr.isatty()):
        return "INFO"
    return "WARNING"


def _configure_logging(level: str, fmt: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(_JsonFormatter())
    else:
        handler.setFormatter(_TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("loadaware")
    root.handlers[:] = [handler]
    root.setLevel(level)


_STANDARD_FIELDS: frozenset[str] = frozenset(
    [*vars(logging.makeLogRecord({})), "message", "asctime"]
)


class _TextFormatter(logging.Formatter):
    """The message, then every `extra=` field as key=value (logfmt quoting), so that a
    warning's reason, pod or node is never lost to the text format."""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        fields = [
            f"{key}={_logfmt(value)}"
            for key, value in vars(record).items()
            if key not in _STANDARD_FIELDS and value is not None
        ]
        if not fields:
            return text
        head, newline, rest = text.partition("\n")  # a traceback stays below the line
        return f"{head} {' '.join(fields)}{newline}{rest}"


def _logfmt(value: object) -> str:
    text = str(value)
    if text and not any(c in text for c in ' "=\\\n\t'):
        return text
    return json.dumps(text)


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


def _cmd_version(args: argparse.Namespace) -> Outcome:
    sys.stdout.write(f"loadaware {VERSION} (revision {revision()})\n")
    return None


def _cmd_validate(args: argparse.Namespace) -> Outcome:
    loaded = policy.load_policy(args.policy)
    sys.stdout.write(yaml.safe_dump(policy.dump_policy(loaded), sort_keys=False))
    return None


def _cmd_convert(args: argparse.Namespace) -> Outcome:
    from loadaware import convert  # the one command that converts; no other loads it

    conversion = convert.load_descheduler_policy(args.from_descheduler)
    text = convert.render_conversion_yaml(conversion, source=args.from_descheduler)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    sys.stderr.write(convert.render_issues_table(conversion.issues))
    # Written either way, so it can be reviewed; exit 2 says it is not equivalent as is.
    if conversion.changes_behaviour:
        return errors.InputError("the converted policy is not equivalent as is")
    return None


def _print_plan(result: plan.Plan, output: str, all_nodes: bool, **extra: object) -> None:
    if output == "json":
        sys.stdout.write(report.json_text(plan.plan_to_json(result)))
    elif output == "html":
        sys.stdout.write(report.render_plan_html(plan.plan_to_json(result)))
    else:
        sys.stdout.write(report.render_plan_table(result, all_nodes=all_nodes, **extra))  # type: ignore[arg-type]


def _cmd_plan(args: argparse.Namespace) -> Outcome:
    now = args.now or datetime.datetime.now(datetime.UTC)
    result = runtime.plan_from_files(
        cluster_file=args.cluster,
        metrics_file=args.metrics,
        policy_file=args.policy,
        now=now,
        solver=args.solver,
        freeze_loaded=True,
        forecast_file=args.forecast,
        forecast_horizon=args.forecast_horizon,
    )
    _print_plan(result, args.output, args.all_nodes)
    return result


def _cmd_simulate(args: argparse.Namespace) -> Outcome:
    from loadaware import sim  # only the CLI and runtime may reach the simulator

    settings = policy.load_policy(args.policy) if args.policy else policy.LoadAwarePolicy()
    settings = runtime.with_solver(settings, args.solver)
    if args.cluster:
        if not args.metrics:
            raise errors.InputError("--cluster needs --metrics")
        state = cluster.load_cluster_file(args.cluster)
        usage = metrics.load_metrics_file(args.metrics)
        title = f"cluster {args.cluster}"
        if args.forecast:
            if args.api:
                raise errors.InputError("--forecast goes without --api")
            usage = runtime.with_forecast_file(
                usage, settings, args.forecast, args.forecast_horizon
            )
            title += f", planned on the forecast {args.forecast}"
    else:
        if args.metrics or args.forecast:
            raise errors.InputError(
                "--metrics and --forecast go with --cluster, not with --scenario"
            )
        name = args.scenario or sim.DEFAULT_SCENARIO
        scenario = sim.builtin_scenario(name, now=args.now or datetime.datetime.now(datetime.UTC))
        state = cluster.cluster_state_from_objects(scenario.objects)
        usage = metrics.usage_from_json(scenario.metrics)
        title = f"scenario {scenario.name}: {scenario.description}"
    # Replaying files: judge staleness at the time they were collected unless told otherwise.
    now = args.now or usage.collected_at
    if args.api:
        simulated = runtime.simulate_through_api(
            settings=settings,
            scenario=None if args.cluster else (args.scenario or sim.DEFAULT_SCENARIO),
            objects=sim.load_objects_file(args.cluster) if args.cluster else None,
            metrics_document=sim.load_metrics_document(args.metrics) if args.cluster else None,
            now=args.now if args.cluster is None else now,
        )
        result = simulated.result
        title += " (through the simulated Kubernetes API)"
    else:
        result = runtime.simulate_round(state, usage, settings, now)
    if args.output == "json":
        body = plan.plan_to_json(result.plan)
        body["simulation"] = {
            "landed": result.landed,
            "observed": result.observed,
            "hotBefore": result.hot_before,
            "hotAfter": result.hot_after,
            "verdict": result.summary(),
        }
        sys.stdout.write(report.json_text(body))
    else:
        sys.stdout.write(f"{title}\n\n")
        sys.stdout.write(
            report.render_plan_table(
                result.plan, observed=result.observed, all_nodes=args.all_nodes
            )
        )
        sys.stdout.write(f"\nverdict: {result.summary()}\n")
    return result.plan


def _cmd_metrics(args: argparse.Namespace) -> Outcome:
    usage = runtime.dump_metrics(
        policy_file=args.policy,
        cluster_file=args.cluster,
        kubeconfig=args.kubeconfig,
        context=args.context,
    )
    metrics.write_metrics_file(usage, args.output or sys.stdout)
    return None


def _cmd_run(args: argparse.Namespace) -> Outcome:
    result = runtime.run_once(
        policy_file=args.policy,
        kubeconfig=args.kubeconfig,
        context=args.context,
        dry_run=True if args.dry_run else None,
        forecast_horizon=args.forecast_horizon,
    )
    record = result.record
    audit = report.round_to_json(record)
    text = json.dumps(audit, indent=2) + "\n"
    if args.report:
        with open(args.report, "w", encoding="utf-8") as page:
            page.write(report.render_round_html(audit))
    if args.audit_file:
        with open(args.audit_file, "w", encoding="utf-8") as out:
            out.write(text)
    if args.output == "table":
        sys.stdout.write(report.render_round_table(record))
    elif not args.audit_file:
        sys.stdout.write(text)
    if record.reason and result.error is not None:
        sys.stderr.write(f"{record.status}: {record.reason}\n")
    if args.pushgateway:
        try:
            runtime.push_metrics(args.pushgateway)
        except OSError as exc:
            # The round's outcome stands; a lost push is reported, not turned into a failure.
            sys.stderr.write(f"warning: push to {args.pushgateway} failed: {exc}\n")
    return result


def _cmd_serve(args: argparse.Namespace) -> Outcome:
    runtime.serve_policy(
        policy_file=args.policy,
        kubeconfig=args.kubeconfig,
        context=args.context,
        listen=args.listen,
        identity=args.identity,
    )
    return None


def _cmd_suspend(args: argparse.Namespace) -> Outcome:
    state = runtime.set_suspended(
        args.command == "suspend",
        policy_file=args.policy,
        kubeconfig=args.kubeconfig,
        context=args.context,
        reason=args.reason,
        by=args.by,
    )
    sys.stdout.write(json.dumps(state, indent=2) + "\n")
    return None


def _cmd_scheduler(args: argparse.Namespace) -> Outcome:
    if args.bindings < 1:
        raise errors.InputError(f"--bindings must be 1 or more, not {args.bindings}")
    if args.min_agreement is not None and not 0 <= args.min_agreement <= 1:
        raise errors.InputError(
            f"--min-agreement must be a share from 0 to 1, not {args.min_agreement}"
        )
    if args.duration <= datetime.timedelta(0):
        raise errors.InputError("--duration must be longer than 0s")
    found = runtime.check_scheduler(
        policy_file=args.policy,
        kubeconfig=args.kubeconfig,
        context=args.context,
        bindings=args.bindings,
        duration=args.duration,
        min_agreement=args.min_agreement,
    )
    if args.output == "json":
        sys.stdout.write(json.dumps(found.document(), indent=2) + "\n")
    else:
        sys.stdout.write(found.text())
    if found.passed:
        return None
    ratio = found.agreement.ratio
    if ratio is None:
        why = f"no binding of a modelled pod seen in {found.seconds:.0f}s"
    else:
        why = f"the model agrees with {ratio:.1%} of {found.agreement.observed} bindings"
    error = errors.LoadawareError(
        f"{why}, under the minimum {found.min_agreement:.0%}",
        reference="scheduler-model-disagrees",
    )
    sys.stderr.write(f"{error.summary()}\n")
    return error


def _cmd_sim(args: argparse.Namespace) -> Outcome:
    from loadaware import sim  # only the CLI and runtime may reach the simulator

    if args.cluster and not args.metrics:
        raise errors.InputError("--cluster needs --metrics")
    if args.metrics and not args.cluster:
        raise errors.InputError("--metrics goes with --cluster, not with --scenario")
    if not 0 <= args.percentage_of_nodes_to_score <= 100:
        raise errors.InputError(
            "--percentage-of-nodes-to-score must be 0 (adaptive) to 100, "
            f"not {args.percentage_of_nodes_to_score}"
        )
    profiles = scheduling.DEFAULT_PROFILES
    if args.scheduler_config:
        try:
            config = policy.load_scheduler_config(args.scheduler_config)
        except ValueError as exc:
            raise errors.InputError(f"--scheduler-config: {exc}") from None
        unmodelled = policy.unmodelled_settings(config)
        if unmodelled:
            raise errors.InputError(
                f"--scheduler-config {args.scheduler_config} asks what the simulated "
                "scheduler cannot run: " + "; ".join(unmodelled)
            )
        profiles = scheduling.profiles_from_config(config)
    token = None
    if args.token_file:
        with open(args.token_file, encoding="utf-8") as stream:
            token = stream.read().strip()
    settings = sim.SimSettings(
        ready_delay=args.ready_delay,
        token=token,
        scheduler_seed=args.seed,
        percentage_of_nodes_to_score=args.percentage_of_nodes_to_score,
        scheduler_profiles=profiles,
        watch_bookmark_seconds=args.watch_bookmark_seconds,
    )
    if args.cluster:
        cluster_sim = sim.build_cluster(
            objects=sim.load_objects_file(args.cluster),
            metrics=sim.load_metrics_document(args.metrics),
            settings=settings,
        )
    else:
        cluster_sim = sim.build_cluster(scenario=args.scenario, settings=settings)
    server = sim.SimServer(cluster_sim, port=args.port)

    def announce(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    sim.serve(server, kubeconfig_out=args.kubeconfig_out, announce=announce)
    return None


_COMMANDS: dict[str, Callable[[argparse.Namespace], Outcome]] = {
    "sim": _cmd_sim,
    "run": _cmd_run,
    "serve": _cmd_serve,
    "validate": _cmd_validate,
    "convert": _cmd_convert,
    "plan": _cmd_plan,
    "simulate": _cmd_simulate,
    "metrics": _cmd_metrics,
    "suspend": _cmd_suspend,
    "resume": _cmd_suspend,
    "scheduler": _cmd_scheduler,
    "version": _cmd_version,
}


# Commands that read their input, print and end, with no thread, connection or
# file of theirs left open: entry ends their process at once.
_ONE_SHOT = frozenset({"plan", "simulate", "validate", "convert", "version"})


def main(argv: Sequence[str] | None = None) -> int:
    return _main(argv)[0]


def entry() -> NoReturn:
    """The process entry (`loadaware`, `python -m loadaware`): main, then exit. A
    one-shot command's process leaves with os._exit once its output is flushed, so
    what it built is never torn down object by object: after a 150,000-pod plan
    that (the cluster freed pod by pod, then the interpreter's teardown) took about
    a second. main itself returns, for callers whose process goes on."""
    code, one_shot = _main(None)
    if one_shot:
        _exit_now(code)
    sys.exit(code)


def _exit_now(code: int) -> None:
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:  # None: started with the descriptor closed
                stream.flush()
        except (OSError, ValueError):
            # Output that cannot be written (a closed pipe): the interpreter's own
            # exit reports it, with its own exit code, as it always has.
            return
    os._exit(code)


def _main(argv: Sequence[str] | None) -> tuple[int, bool]:
    """The exit code, and whether the command was a one-shot one."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad flags, 0 on --help
        return int(exc.code or 0), False
    _configure_logging(args.log_level or _default_log_level(args.command), args.log_format)
    return _run_wrapper(_COMMANDS[args.command], args), args.command in _ONE_SHOT


def _run_wrapper(command: Callable[[argparse.Namespace], Outcome], args: argparse.Namespace) -> int:
    """Run a command; its outcome, or the error it raised, becomes the exit code. A
    raised error is said here, once; anything else is a bug."""
    try:
        outcome = command(args)
    except errors.LoadawareError as exc:
        _say_error(exc)
        return _exit_code(exc)
    except KeyboardInterrupt:
        return EXIT_ERROR
    except Exception:
        log.debug("unexpected error", exc_info=True)
        sys.stderr.write(
            "error: unexpected failure; run with --log-level DEBUG for the traceback\n"
        )
        return EXIT_ERROR
    return _exit_code(outcome)


def _exit_code(outcome: Outcome) -> int:
    """The one place an outcome becomes an exit code."""
    if isinstance(outcome, rounds.RoundResult):
        outcome = outcome.error
    if isinstance(outcome, plan.Plan):
        return EXIT_REFUSED if outcome.refusal is not None else EXIT_OK
    if isinstance(outcome, errors.LoadawareError):
        # Each kind of error carries its code (the tree in errors.py); a round's
        # audit record states the same one.
        return outcome.exit_code
    return EXIT_OK


def _say_error(exc: errors.LoadawareError) -> None:
    if isinstance(exc, errors.RefusedError):
        # As in a plan's reason: the stable code first, then what to act on.
        sys.stderr.write(f"refused: {exc.summary()}\n")
    else:
        sys.stderr.write(f"error: {exc}\n")
    if exc.hint:
        sys.stderr.write(f"hint: {exc.hint}\n")
