"""The benchmark: loadaware's planners against the descheduler's order, on generated clusters.

    python -m bench                      # 100, 1,000 and 5,000 nodes, loose and tight
    python -m bench --quick              # 100 and 1,000 nodes
    python -m bench --sizes 20,200 --capacity tight --solvers milp,descheduler-order
    python -m bench --sizes 1000 --families usage-independent
    python -m bench --sizes 1000 --scoring sampled
    python -m bench --sizes 1000 --families most-allocated,requested-to-capacity-ratio

For every size, capacity and family it generates a cluster
(`loadaware.sim.generate_cluster`, about 30 pods per node; the "proportional"
family's usage follows requests, the "usage-independent" family's does not and
has a pool of GPU nodes on top, about 5 % of the size, some of them hot by GPU
utilisation alone: bench.gpu_pool, which also gives the policy that family is
planned with, judging gpu on those nodes; `--no-gpu-pool` leaves it out). The
"most-allocated" and "requested-to-capacity-ratio" families are the
usage-independent instance on a cluster whose kube-scheduler scores with that
NodeResourcesFit strategy (bench.scheduler_families); loadaware is given the
same KubeSchedulerConfiguration. By default they run up to 1,000 nodes
(`--scheduler-families-max-size`), at every size when named in `--families`.
It converts the instance in memory, and plans it with each solver:
loadaware with `optimizer.method: milp`, loadaware with `greedy`, the
descheduler-order baseline (`bench.descheduler_baseline`), and in the families
whose scheduler is not the default profile, loadaware with milp left on the
default profile ("milp-default-profile"). Each plan runs in a process of its
own, which reads the instance back from a pickle, resets its RSS high-water
mark, plans, and reports the rise: the planner's peak memory on top of the
cluster it was given. Solve seconds are the wall time around the
planner call, measured by the harness, not what the plan says.

Everything else in a row is recomputed by the harness from the inputs and the
plan's evictions (`bench.measure`, `bench.checks`): the replacements are placed
in order by loadaware's kube-scheduler model, each under the soft taints its
eviction's `steer` names, scored by the profiles of the family's cluster. Each
plan is replayed twice, one row each: with every feasible node scored ("full":
landing on a random one of the nodes tied for the best score unless the plan's
expected node is among them), and with
kube-scheduler's default node sampling ("sampled": the best of the nodes its
walk scores, a seeded-random one of them if tied; `--scoring` picks one). Hot
nodes, residual overload, peak utilisation of the landing nodes, bounce-backs,
bad landings, landings off the plan's landing set, how many landings the plan
predicted without a tie and how many tied with a bad node are read off the
result, and the taint patches the steer sets take; an independent checker
counts broken rules. Loading is measured apart: once per size, the cluster is
written as a `kubectl get -o json` file and read back with `load_cluster_file`
(the planner's time does not include it).

Prints Markdown tables and writes the full results as JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import datetime
import gc
import json
import multiprocessing
import multiprocessing.connection
import os
import pathlib
import pickle
import platform
import resource
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final

import numpy as np
import scipy

from bench import checks, descheduler_baseline, gpu_pool, measure, scheduler_families
from loadaware import cluster, metrics, plan, policy
from loadaware.sim import Scenario, generate_cluster
from loadaware.sim import scenarios as _scenarios

# Fixed, so that a run is reproducible: the metrics are stamped relative to it.
NOW: Final = datetime.datetime(2026, 11, 29, 8, 0, 0, tzinfo=datetime.UTC)
MILP: Final = "milp"
GREEDY: Final = "greedy"
BASELINE: Final = descheduler_baseline.DESCHEDULER_ORDER
# milp on a cluster whose scheduler loadaware was not told about: its policy has no
# steering.schedulerConfig; run only in families whose scheduler has one.
MILP_DEFAULT_PROFILE: Final = "milp-default-profile"
SOLVERS: Final = (MILP, GREEDY, BASELINE, MILP_DEFAULT_PROFILE)
FAMILIES: Final = (*_scenarios.FAMILIES, *scheduler_families.FAMILIES)
DEFAULT_SIZES: Final = (100, 1000, 5000)
QUICK_SIZES: Final = (100, 1000)
# The largest size the families of other scheduler profiles run at by default.
SCHEDULER_FAMILIES_MAX_SIZE: Final = 1000
CAPACITIES: Final = ("loose", "tight")
RESULTS_DIR: Final = pathlib.Path(__file__).resolve().parent / "results"

COLUMNS: Final = (
    "size",
    "capacity",
    "family",
    "solver",
    "scoring",
    "evictions",
    "hot nodes before",
    "hot nodes left",
    "gpu hot left",
    "nodes tainted",
    "residual overload",
    "peak target util",
    "lower bound",
    "gap %",
    "solve s",
    "peak MiB",
    "bounce-backs",
    "bad landings",
    "off-set landings",
    "pending",
    "as planned %",
    "bad ties",
    "taint patches per eviction",
    "violations",
    "evictions vs descheduler order",
    "time vs descheduler order",
)
LEGEND: Final = """\
- family: how the instance's usage relates to its requests (loadaware.sim.generate_cluster):
  proportional, or usage-independent (warm nodes that request little, idle nodes that
  request much) with a GPU pool on top (bench.gpu_pool: about 5% more nodes, pool
  "gpu" judged on gpu too, some hot by GPU utilisation alone); size counts the nodes
  without the GPU pool. most-allocated, requested-to-capacity-ratio: the
  usage-independent instance on a cluster whose kube-scheduler scores with that
  NodeResourcesFit strategy (bench.scheduler_families; MostAllocated over cpu and
  memory; RequestedToCapacityRatio over cpu, memory and nvidia.com/gpu weighted 1, 1
  and 3, shape 0 -> 0, 100 -> 10), loadaware told so (steering.schedulerConfig); the
  replay scores with that profile. Other families' clusters run the default profile.
- solver: the method the plan reports; "(asked milp)" when the policy asked for another;
  ", default profile": loadaware left on the default profile (no schedulerConfig) while
  the cluster's scheduler runs the family's: the landings of the wrong model.
- scoring: how the replay's kube-scheduler scores. full: every feasible node; among tied
  best nodes the plan's expected node if it is one, else a seeded-random one. sampled:
  kube-scheduler's default (percentageOfNodesToScore adaptive; below 100 nodes it scores
  every feasible node too): only the numFeasibleNodesToFind feasible nodes its walk
  finds first, in nodeTree order (zones round-robin) from a start index that moves on
  with every replacement (starting at a seeded-random one); among tied best nodes of
  that sample a seeded-random one, the plan's expected node or not.
- hot nodes left, residual overload (sum over nodes and resources of utilisation above
  targetThresholds), peak target util (highest resource utilisation of a node that
  received a replacement): after the harness places every replacement, in order, with
  loadaware's kube-scheduler model, under the soft taints of the eviction's steer set,
  its predecessor's requests still counted.
- gpu hot left: nodes above their gpu target after the replay, of those above it before;
  "-" where no pool judges gpu.
- nodes tainted: size of the union of the evictions' steer sets (none for the baseline).
- lower bound: the plan's solver.lowerBound; gap %: (solver.objective - lowerBound) /
  lowerBound, the objective being the evictions when the plan reports none.
- solve s: wall time around the planner call; peak MiB: rise of the planning process's
  peak RSS during the call.
- bounce-backs: replacements landing back on their source or on a node above its
  targetThresholds; bad landings: replacements landing on a bad node: their source, a
  node hot before the round or out of it, or one that ends above its targetThresholds
  (the bounce-backs and more); off-set landings: replacements landing on a good node
  outside their eviction's landingSet ("-" when no eviction has one); pending:
  replacements no node can take; as planned %: replacements whose best score (of the
  sample, when sampled) only the plan's expected node has; bad ties: replacements whose
  tie of best nodes holds another node and one of them is bad.
- taint patches per eviction: node taint changes (a node's soft taint added or removed)
  to go from one eviction's steer set to the next, from no taint before the first to
  none after the last, divided by the evictions; the same in both scorings.
- violations: rules broken per bench/checks.py (target rules only for loadaware's plans:
  the baseline names no target).
- evictions (time) vs descheduler order: ratio to the descheduler-order row of the same
  size, capacity, family and scoring."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    sizes: tuple[int, ...] = DEFAULT_SIZES
    capacities: tuple[str, ...] = CAPACITIES
    families: tuple[str, ...] = FAMILIES
    # Families of bench.scheduler_families run at sizes up to this (None: every size).
    scheduler_families_max_size: int | None = SCHEDULER_FAMILIES_MAX_SIZE
    seed: int = 1
    pods_per_node: int = 30
    solvers: tuple[str, ...] = SOLVERS
    scorings: tuple[str, ...] = measure.SCORINGS  # the replay's, one row each
    out: pathlib.Path | None = RESULTS_DIR  # None: write no JSON
    isolate: bool = True  # a fresh process per planner run (and per loading)
    timeout_seconds: float = 900.0
    policy_file: pathlib.Path | None = None
    gpu_pool: bool = True  # the usage-independent family's GPU pool (bench.gpu_pool)


@dataclass(frozen=True, slots=True, kw_only=True)
class Isolated:
    """What a call returned in its own process, with its wall time and peak memory."""

    value: Any = None
    seconds: float = 0.0
    peak_bytes: int | None = None
    error: str | None = None


@dataclass(kw_only=True)
class Results:
    options: dict[str, Any]
    environment: dict[str, Any]
    instances: list[dict[str, Any]] = field(default_factory=list)
    loading: list[dict[str, Any]] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)
    total_seconds: float = 0.0


# --- running a call in its own process ---------------------------------------------------------


def status_bytes(name: str) -> int | None:
    """A VmRSS / VmHWM line of /proc/self/status, in bytes (Linux only)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(name + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _reset_peak_rss() -> int | None:
    """Reset the peak-RSS mark (Linux's clear_refs "5") and return the current RSS."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
    except OSError:
        return None
    return status_bytes("VmRSS")


def _release_free_memory() -> None:
    """Hand freed heap pages back to the OS (glibc's malloc_trim), best effort: memory
    the inputs' reading freed would otherwise be reused without showing in the RSS."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


def _call_measured(work: Callable[[], Any]) -> Isolated:
    gc.collect()
    _release_free_memory()
    base = _reset_peak_rss()
    started = time.perf_counter()
    value = work()
    seconds = time.perf_counter() - started
    peak = status_bytes("VmHWM") if base is not None else None
    rise = max(0, peak - base) if peak is not None and base is not None else None
    return Isolated(value=value, seconds=seconds, peak_bytes=rise)


def _child(
    conn: multiprocessing.connection.Connection,
    setup: Callable[..., Callable[[], Any]],
    args: tuple[Any, ...],
) -> None:
    try:
        result = _call_measured(setup(*args))
    except BaseException:
        result = Isolated(error=traceback.format_exc(limit=8))
    conn.send(result)
    conn.close()


def run_isolated(
    setup: Callable[..., Callable[[], Any]],
    args: tuple[Any, ...],
    *,
    isolate: bool,
    timeout_seconds: float,
) -> Isolated:
    """Call setup(*args) (untimed: it reads the inputs) and time the call it returns.

    Isolated: in a fresh interpreter ("spawn", not fork), so that the peak memory
    is the planner's own. A forked child would inherit the parent's heap with the
    generator's freed objects in it, and the planner would grow into that free
    memory without raising its RSS. setup, args and the result must pickle.
    Not isolated: here, and the peak memory is not measured.
    """
    if not isolate:
        try:
            work = setup(*args)
            started = time.perf_counter()
            value = work()
            return Isolated(value=value, seconds=time.perf_counter() - started)
        except Exception:
            return Isolated(error=traceback.format_exc(limit=8))
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(sender, setup, args), daemon=True)
    child.start()
    sender.close()
    try:
        # Receive before joining: a large result would block the child's send.
        if not receiver.poll(timeout_seconds):
            child.kill()
            return Isolated(error=f"no result within {timeout_seconds:.0f}s")
        result: Isolated = receiver.recv()
    except EOFError:
        result = Isolated(error=f"the child process died (exit code {child.exitcode})")
    finally:
        receiver.close()
        child.join()
    return result


# --- the work done in the children -------------------------------------------------------------

Instance = tuple[cluster.ClusterState, metrics.Usage, policy.LoadAwarePolicy]


def _read_instance(source: pathlib.Path | Instance) -> Instance:
    if isinstance(source, pathlib.Path):
        with source.open("rb") as data:
            instance: Instance = pickle.load(data)
        return instance
    return source


def _prepare_solve(solver: str, source: pathlib.Path | Instance) -> Callable[[], plan.Plan]:
    state, usage, settings = _read_instance(source)
    if solver == BASELINE:
        return lambda: descheduler_baseline.plan_descheduler_order(state, usage, settings, NOW)
    if solver == MILP_DEFAULT_PROFILE:
        settings = scheduler_families.with_scheduler_config(settings, None)
        solver = MILP
    asked = with_method(settings, solver)
    return lambda: plan.build_plan(state, usage, asked, NOW)


def _prepare_write(
    size: int,
    capacity: str,
    family: str,
    options: Options,
    files: tuple[pathlib.Path, pathlib.Path],
) -> Callable[[], dict[str, Any]]:
    """Generate the instance; the timed part writes it as a cluster and a metrics file."""
    scenario, _ = _build_instance(size, capacity, family, options)

    def write() -> dict[str, Any]:
        for path, body in zip(files, (scenario.cluster_document(), scenario.metrics), strict=True):
            with path.open("w", encoding="utf-8") as out:
                json.dump(body, out, separators=(",", ":"))
        return {"cluster_file_bytes": files[0].stat().st_size}

    return write


def _prepare_load(cluster_file: pathlib.Path, metrics_file: pathlib.Path) -> Callable[[], Any]:
    def load() -> dict[str, Any]:
        started = time.perf_counter()
        state = cluster.load_cluster_file(cluster_file)
        loaded = time.perf_counter()
        metrics.load_metrics_file(metrics_file)
        done = time.perf_counter()
        return {
            "cluster_seconds": loaded - started,
            "metrics_seconds": done - loaded,
            "pods": len(state.pods),
        }

    return load


def family_policy(family: str, options: Options) -> policy.LoadAwarePolicy:
    """The policy a family is planned with: --policy for every family if given, else the
    defaults, with the GPU pool's resource and pool for the family that has it; in a
    family of bench.scheduler_families, its cluster's KubeSchedulerConfiguration as
    steering.schedulerConfig. The replay's cluster runs that policy's profiles."""
    config = scheduler_families.scheduler_config(family)
    if options.policy_file is not None:
        settings = policy.load_policy(options.policy_file)
        if config is None:
            return settings
        return scheduler_families.with_scheduler_config(settings, config)
    document: dict[str, Any] = {"apiVersion": "loadaware.io/v1alpha1", "kind": "LoadAwarePolicy"}
    if _has_gpu_pool(family, options):
        document.update(gpu_pool.policy_document())
    if config is not None:
        document["steering"] = {"schedulerConfig": scheduler_families.CONFIGS[family]}
    return policy.parse_policy(document)


def _has_gpu_pool(family: str, options: Options) -> bool:
    return options.gpu_pool and scheduler_families.base_family(family) == gpu_pool.FAMILY


def _runs_at(family: str, size: int, options: Options) -> bool:
    """Whether the family runs at this size (see Options.scheduler_families_max_size)."""
    limit = options.scheduler_families_max_size
    return family not in scheduler_families.FAMILIES or limit is None or size <= limit


def with_method(settings: policy.LoadAwarePolicy, method: str) -> policy.LoadAwarePolicy:
    optimizer = settings.optimizer.model_copy(update={"method": method})
    return settings.model_copy(update={"optimizer": optimizer})


# --- one instance ------------------------------------------------------------------------------


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _gap_percent(report: plan.Plan) -> float | None:
    bound = report.solver.lower_bound
    if bound is None:
        return None
    objective = report.solver.objective
    value = float(len(report.evictions)) if objective is None else objective
    if bound <= 0:
        return 0.0 if value <= 0 else None
    return (value - bound) / bound * 100


def _rows(
    *,
    size: int,
    capacity: str,
    family: str,
    solver: str,
    run: Isolated,
    state: cluster.ClusterState,
    usage: metrics.Usage,
    settings: policy.LoadAwarePolicy,
    view: checks.ClusterView,
    seed: int,
    scorings: Sequence[str],
) -> list[dict[str, Any]]:
    """One row per scoring regime of the replay, or one row saying the plan failed."""
    row: dict[str, Any] = {
        "size": size,
        "capacity": capacity,
        "family": family,
        "requested": solver,
    }
    if run.error is not None:
        return [
            {**row, "solver": solver, "scoring": "-", "error": run.error, "seconds": run.seconds}
        ]
    report: plan.Plan = run.value
    reported = BASELINE if solver == BASELINE else report.solver.method
    asked = MILP if solver == MILP_DEFAULT_PROFILE else solver
    label = reported if asked in (reported, BASELINE) else f"{reported} (asked {asked})"
    if solver == MILP_DEFAULT_PROFILE:
        label += ", default profile"
    profiles = scheduler_families.cluster_profiles(settings)
    problems = checks.check_plan(
        report, state, usage, settings, NOW, check_targets=solver != BASELINE
    )
    planned = {
        **row,
        "solver": label,
        "method": report.solver.method,
        "status": report.status,
        "reason": report.reason,
        "evictions": len(report.evictions),
    }
    rest = {
        "objective": report.solver.objective,
        "lower_bound": report.solver.lower_bound,
        "gap_percent": _gap_percent(report),
        "seconds": run.seconds,
        "peak_bytes": run.peak_bytes,
        "violations": len(problems),
        "violation_examples": problems[:10],
        "skipped": dict(report.skipped),
    }
    return [
        {
            **planned,
            "scoring": scoring,
            **asdict(
                measure.replay_plan(
                    report.evictions,
                    state,
                    usage,
                    view,
                    seed=seed,
                    scoring=scoring,
                    profiles=profiles,
                )
            ),
            **rest,
        }
        for scoring in scorings
    ]


def _build_instance(
    size: int, capacity: str, family: str, options: Options
) -> tuple[Scenario, dict[str, float]]:
    started = time.perf_counter()
    scenario = generate_cluster(
        nodes=size,
        pods_per_node=options.pods_per_node,
        seed=options.seed,
        capacity=capacity,  # type: ignore[arg-type]
        family=scheduler_families.base_family(family),  # type: ignore[arg-type]
        now=NOW,
    )
    if _has_gpu_pool(family, options):
        scenario = gpu_pool.add_gpu_pool(scenario, seed=options.seed, now=NOW)
    return scenario, {"generate_seconds": time.perf_counter() - started}


def _measure_loading(
    size: int, capacity: str, family: str, workdir: pathlib.Path, options: Options
) -> dict[str, Any]:
    """Time load_cluster_file (and load_metrics_file) on the instance written as files.

    One process generates and writes the files, another reads them, while the
    harness holds no instance: on this kind of VM, memory no process has
    touched yet is slow to fault in, and reading took twice as long when
    another process held a few GiB. Memory a finished process gave back is
    reused at normal speed.
    """
    files = (workdir / f"cluster-{size}.json", workdir / f"metrics-{size}.json")
    entry: dict[str, Any] = {"size": size, "capacity": capacity, "family": family}
    try:
        written = run_isolated(
            _prepare_write,
            (size, capacity, family, options, files),
            isolate=options.isolate,
            timeout_seconds=options.timeout_seconds,
        )
        entry.update(written.value or {}, write_seconds=written.seconds, error=written.error)
        if written.error is None:
            run = run_isolated(
                _prepare_load,
                files,
                isolate=options.isolate,
                timeout_seconds=options.timeout_seconds,
            )
            entry.update(run.value or {}, peak_bytes=run.peak_bytes, error=run.error)
    finally:
        for path in files:
            path.unlink(missing_ok=True)
    return entry


def _run_instance(
    size: int,
    capacity: str,
    family: str,
    settings: policy.LoadAwarePolicy,
    workdir: pathlib.Path,
    options: Options,
    results: Results,
) -> None:
    tag = f"[{size} nodes, {capacity}, {family}]"
    scenario, timings = _build_instance(size, capacity, family, options)
    started = time.perf_counter()
    state = cluster.cluster_state_from_objects(scenario.objects)
    # Until the reader reads extended resources; a no-op once it does.
    state = gpu_pool.with_allocatable_gpus(state, scenario.objects)
    converted = time.perf_counter()
    usage = metrics.usage_from_json(scenario.metrics)
    timings["convert_seconds"] = converted - started
    timings["usage_seconds"] = time.perf_counter() - converted
    _progress(
        f"{tag} {len(state.pods)} pods generated in {timings['generate_seconds']:.1f}s, "
        f"converted in {timings['convert_seconds'] + timings['usage_seconds']:.1f}s"
    )
    # The raw objects are several times the size of the ClusterState at 5,000 nodes;
    # hand their memory back so that the planner processes reuse it (see _prepare_load).
    del scenario
    gc.collect()
    _release_free_memory()

    source: pathlib.Path | Instance = (state, usage, settings)
    if options.isolate:
        # Each planner process reads the instance back: unpickling leaves a compact
        # heap, so what the planner allocates shows in its peak RSS.
        source = workdir / f"instance-{size}-{capacity}-{family}.pickle"
        with source.open("wb") as out:
            pickle.dump((state, usage, settings), out, protocol=pickle.HIGHEST_PROTOCOL)
    view = checks.ClusterView.build(state, usage, settings, NOW)
    bound = measure.cover_bound(state, usage, settings, NOW, view)
    results.instances.append(
        {
            "size": size,
            "capacity": capacity,
            "family": family,
            "seed": options.seed,
            "nodes": len(state.nodes),
            "gpu_nodes": sum(
                1 for n in state.nodes if n.labels.get(gpu_pool.PRESENT_LABEL) == "true"
            ),
            "pods": len(state.pods),
            "hot": bound.hot,
            "relievable": bound.relievable,
            "cover_bound": bound.evictions,
            **timings,
        }
    )
    for solver in options.solvers:
        if solver == MILP_DEFAULT_PROFILE and settings.steering.scheduler_config is None:
            continue  # the same plan as milp's: loadaware is on the cluster's profile
        run = run_isolated(
            _prepare_solve,
            (solver, source),
            isolate=options.isolate,
            timeout_seconds=options.timeout_seconds,
        )
        rows = _rows(
            size=size,
            capacity=capacity,
            family=family,
            solver=solver,
            run=run,
            state=state,
            usage=usage,
            settings=settings,
            view=view,
            seed=options.seed,
            scorings=options.scorings,
        )
        results.rows.extend(rows)
        for row in rows:
            if row.get("error"):
                _progress(f"{tag} {solver}: failed\n{row['error']}")
                continue
            _progress(
                f"{tag} {row['solver']}, {row['scoring']} scoring: {row['evictions']} "
                f"evictions in {row['seconds']:.2f}s, {row['hot_left']} hot left, "
                f"{row['bad_landings']} bad landings, {row['nodes_tainted']} tainted, "
                f"{row['violations']} violations"
            )
    if isinstance(source, pathlib.Path):
        source.unlink()


def run_benchmark(options: Options) -> Results:
    started = time.perf_counter()
    policies = {family: family_policy(family, options) for family in options.families}
    results = Results(
        options={
            **{k: v for k, v in asdict(options).items() if k not in ("out", "policy_file")},
            "policy_file": str(options.policy_file) if options.policy_file else None,
            "now": NOW.isoformat(),
        },
        environment={
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
    )
    with tempfile.TemporaryDirectory(prefix="loadaware-bench-instances-") as tmp:
        workdir = pathlib.Path(tmp)
        for size in options.sizes:
            entry = _measure_loading(
                size, options.capacities[0], options.families[0], workdir, options
            )
            results.loading.append(entry)
            seconds = entry.get("cluster_seconds", float("nan"))
            _progress(f"[{size} nodes] load_cluster_file: {seconds:.1f}s")
            for family in (f for f in options.families if _runs_at(f, size, options)):
                for capacity in options.capacities:
                    try:
                        _run_instance(
                            size, capacity, family, policies[family], workdir, options, results
                        )
                    except Exception:
                        # A generator or loader failure loses this instance, not the run.
                        error = traceback.format_exc(limit=8)
                        _progress(f"[{size} nodes, {capacity}, {family}] failed\n{error}")
                        results.rows.append(
                            {
                                "size": size,
                                "capacity": capacity,
                                "family": family,
                                "requested": "instance",
                                "solver": "instance",
                                "scoring": "-",
                                "error": error,
                            }
                        )
                    gc.collect()
                    _release_free_memory()
    results.total_seconds = time.perf_counter() - started
    return results


# --- output ------------------------------------------------------------------------------------


def _instance_key(row: dict[str, Any]) -> tuple[int, str, str]:
    return (row["size"], row["capacity"], row["family"])


def _baseline_rows(results: Results) -> dict[tuple[int, str, str, str], dict[str, Any]]:
    return {
        _row_key(r): r for r in results.rows if r["requested"] == BASELINE and not r.get("error")
    }


def _row_key(row: dict[str, Any]) -> tuple[int, str, str, str]:
    """The instance and the replay's scoring: what a row is compared within."""
    return (*_instance_key(row), row["scoring"])


def _percent(count: int, total: int) -> str:
    return f"{100 * count / total:.0f}" if total else "-"


def _ratio(value: float, base: float) -> str:
    if base > 0:
        return f"{value / base:.2f}x"
    return "1.00x" if value == 0 else "inf"


def _cells(row: dict[str, Any], base: dict[str, Any] | None) -> list[str]:
    head = [f"{row['size']:,}", row["capacity"], row["family"], row["solver"], row["scoring"]]
    if row.get("error"):
        return head + ["error"] * (len(COLUMNS) - len(head))
    peak = row["peak_target_utilisation"]
    bound = row["lower_bound"]
    gap = row["gap_percent"]
    memory = row["peak_bytes"]
    evictions = row["evictions"]
    named_before = row.get("named_hot_before", {})
    cells = [
        *head,
        str(evictions),
        str(row["hot_before"]),
        str(row["hot_left"]),
        (
            f"{row['named_hot_left'][gpu_pool.RESOURCE]} of {named_before[gpu_pool.RESOURCE]}"
            if gpu_pool.RESOURCE in named_before
            else "-"
        ),
        str(row["nodes_tainted"]),
        f"{row['residual_overload']:.4f}",
        "-" if peak is None else f"{peak:.1%}",
        "-" if bound is None else f"{bound:.2f}",
        "-" if gap is None else f"{gap:.2f}",
        f"{row['seconds']:.2f}",
        "-" if memory is None else f"{memory / 2**20:.0f}",
        str(row["bounce_backs"]),
        str(row["bad_landings"]),
        "-" if row["off_set_landings"] is None else str(row["off_set_landings"]),
        str(row["pending"]),
        _percent(row["landed_as_planned"], evictions),
        str(row["tied_with_bad"]),
        f"{row['taint_patches'] / evictions:.2f}" if evictions else "-",
        str(row["violations"]),
    ]
    if base is None:
        return [*cells, "-", "-"]
    return [
        *cells,
        _ratio(evictions, base["evictions"]),
        _ratio(row["seconds"], base["seconds"]),
    ]


def _markdown(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max([len(h), *(len(r[k]) for r in rows)]) for k, h in enumerate(header)]
    lines = [
        "| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |",
        "|" + "|".join("-" * (w + 2) for w in widths) + "|",
    ]
    lines += [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in rows
    ]
    return "\n".join(lines)


def _loading_cells(entry: dict[str, Any]) -> tuple[str, ...]:
    if entry.get("error"):
        return (f"{entry['size']:,}", "error", "-", "-", "-", "-")
    peak = entry.get("peak_bytes")
    return (
        f"{entry['size']:,}",
        f"{entry['pods']:,}",
        f"{entry['cluster_file_bytes'] / 2**20:.0f}",
        f"{entry['cluster_seconds']:.2f}",
        f"{entry['metrics_seconds']:.2f}",
        "-" if peak is None else f"{peak / 2**20:.0f}",
    )


def render(results: Results) -> str:
    """The Markdown report: results, instances, loading, legend."""
    bases = _baseline_rows(results)
    table = _markdown(
        COLUMNS,
        [_cells(r, bases.get(_row_key(r))) for r in results.rows],
    )
    instances = _markdown(
        (
            "size",
            "capacity",
            "family",
            "nodes",
            "gpu nodes",
            "pods",
            "hot",
            "relievable",
            "cover bound",
            "generate s",
            "convert s",
        ),
        [
            (
                f"{i['size']:,}",
                i["capacity"],
                i["family"],
                f"{i['nodes']:,}",
                f"{i['gpu_nodes']:,}",
                f"{i['pods']:,}",
                str(i["hot"]),
                str(i["relievable"]),
                str(i["cover_bound"]),
                f"{i['generate_seconds']:.2f}",
                f"{i['convert_seconds'] + i['usage_seconds']:.2f}",
            )
            for i in results.instances
        ],
    )
    loading = _markdown(
        ("size", "pods", "cluster.json MiB", "load seconds", "metrics load s", "peak MiB"),
        [_loading_cells(e) for e in results.loading],
    )
    failures = [
        f"- {r['size']} {r['capacity']} {r['family']} {r['requested']}: "
        f"{r['error'].strip().splitlines()[-1]}"
        for r in results.rows
        if r.get("error")
    ] + [
        f"- loading {e['size']}: {e['error'].strip().splitlines()[-1]}"
        for e in results.loading
        if e.get("error")
    ]
    # A plan's violations are the same in every scoring: listed once.
    violations = list(
        dict.fromkeys(
            f"- {r['size']} {r['capacity']} {r['family']} {r['solver']}: "
            + "; ".join(r["violation_examples"][:3])
            for r in results.rows
            if not r.get("error") and r["violations"]
        )
    )
    parts = [
        "## Plans\n",
        table,
        "\n" + LEGEND,
        "\n## Instances\n",
        instances,
        "\ncover bound: fewest evictions that could relieve the relievable hot nodes "
        "(largest evictable pods first, targets ignored).",
        "\n## Loading (load_cluster_file on a `kubectl get -o json` file; target < 10 s "
        "at 150,000 pods)\n",
        loading,
    ]
    if violations:
        parts += ["\n## Violations\n", "\n".join(violations)]
    if failures:
        parts += ["\n## Failures\n", "\n".join(failures)]
    parts.append(f"\nTotal wall time: {results.total_seconds:.1f} s")
    return "\n".join(parts)


def write_json(results: Results, directory: pathlib.Path) -> pathlib.Path:
    directory.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = directory / f"bench-{stamp}.json"
    path.write_text(json.dumps(asdict(results), indent=2, default=str) + "\n", encoding="utf-8")
    return path


# --- command line ------------------------------------------------------------------------------


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part.strip().replace("_", "")) for part in text.split(",") if part)
    except ValueError:
        raise argparse.ArgumentTypeError("sizes are node counts, e.g. 100,1000") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("sizes must be at least 1")
    return sizes


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="loadaware's planners against the descheduler's order on generated clusters",
    )
    parser.add_argument(
        "--sizes",
        type=_sizes,
        help="node counts, comma-separated (default 100,1000,5000)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="100 and 1,000 nodes only (ignored with --sizes)"
    )
    parser.add_argument("--capacity", choices=(*CAPACITIES, "both"), default="both")
    parser.add_argument(
        "--families",
        help=f"instance families, comma-separated, from {', '.join(FAMILIES)} (default all; "
        f"{', '.join(scheduler_families.FAMILIES)} only up to --scheduler-families-max-size "
        "nodes unless named here)",
    )
    parser.add_argument(
        "--scheduler-families-max-size",
        type=int,
        default=SCHEDULER_FAMILIES_MAX_SIZE,
        help="the largest size the families of other scheduler profiles run at when "
        f"--families is not given (default {SCHEDULER_FAMILIES_MAX_SIZE:,}; 0: none of them)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pods-per-node", type=int, default=30)
    parser.add_argument(
        "--solvers",
        default=",".join(SOLVERS),
        help=f"comma-separated, from {', '.join(SOLVERS)} (default all; "
        f"{MILP_DEFAULT_PROFILE} only where the family's scheduler is not the default profile)",
    )
    parser.add_argument(
        "--scoring",
        default=",".join(measure.SCORINGS),
        help="how the replay's kube-scheduler scores, comma-separated, from "
        f"{', '.join(measure.SCORINGS)} (default both, a row each)",
    )
    parser.add_argument(
        "--policy",
        type=pathlib.Path,
        help="policy file for every family (default: the defaults, and for the family with "
        "the GPU pool its gpu resource and pool)",
    )
    parser.add_argument(
        "--no-gpu-pool",
        action="store_true",
        help=f"leave the GPU pool out of the {gpu_pool.FAMILY} family",
    )
    parser.add_argument("--out", type=pathlib.Path, default=RESULTS_DIR, help="JSON results dir")
    parser.add_argument("--no-json", action="store_true", help="write no JSON results")
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="plan in this process (no fork; peak memory is not measured)",
    )
    parser.add_argument(
        "--timeout", type=float, default=900.0, help="seconds per planner run (default 900)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    solvers = tuple(s.strip() for s in args.solvers.split(",") if s.strip())
    unknown = sorted(set(solvers) - set(SOLVERS))
    if unknown or not solvers:
        parser.error(f"unknown solvers {unknown}; choose from {', '.join(SOLVERS)}")
    named = args.families is not None
    families = (
        tuple(dict.fromkeys(f.strip() for f in args.families.split(",") if f.strip()))
        if named
        else FAMILIES
    )
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown or not families:
        parser.error(f"unknown families {unknown}; choose from {', '.join(FAMILIES)}")
    scorings = tuple(dict.fromkeys(x.strip() for x in args.scoring.split(",") if x.strip()))
    unknown = sorted(set(scorings) - set(measure.SCORINGS))
    if unknown or not scorings:
        parser.error(f"unknown scoring {unknown}; choose from {', '.join(measure.SCORINGS)}")
    sizes = args.sizes or (QUICK_SIZES if args.quick else DEFAULT_SIZES)
    options = Options(
        sizes=sizes,
        capacities=CAPACITIES if args.capacity == "both" else (args.capacity,),
        families=families,
        scheduler_families_max_size=None if named else args.scheduler_families_max_size,
        seed=args.seed,
        pods_per_node=args.pods_per_node,
        solvers=solvers,
        scorings=scorings,
        out=None if args.no_json else args.out,
        isolate=not args.in_process,
        timeout_seconds=args.timeout,
        policy_file=args.policy,
        gpu_pool=not args.no_gpu_pool,
    )
    results = run_benchmark(options)
    print(render(results))
    if options.out is not None:
        print(f"\nResults: {write_json(results, options.out)}")
    failed = any(r.get("error") for r in [*results.rows, *results.loading])
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _progress(f"harness peak RSS: {max_rss / 1024:.0f} MiB")
    return 1 if failed else 0
