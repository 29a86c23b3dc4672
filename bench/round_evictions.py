"""loadaware's CPU per eviction in a live round, on generated clusters of growing size.

    python -m bench.round_evictions                        # 1,000 and 5,000 nodes
    python -m bench.round_evictions --sizes 1000 --evictions 50
    python -m bench.round_evictions --sizes 1000 --profile # where the evictions' CPU goes

For every size it generates a usage-independent cluster (`python -m bench.generate`,
about 30 pods per node) and serves it with `loadaware sim serve` in a process of
its own, with kube-scheduler's default node sampling. In this process it then runs
one round as `run --once` does (a watched cluster cache, the metrics-server
source, soft-taint steering and landing control), its plan capped at `--evictions`
by limits.maxNoOfPodsToEvictTotal (0: the whole plan, whose size grows with the
cluster's, and with it what a round writes to its state at each eviction).

Only the evicting phase is measured, from the round's "evicting" step to its
"verifying" step: the re-check before each eviction, landing control, the steering
taints, the eviction and the wait for its replacement, in loadaware's process (the
cache's watch threads included) and, apart, in the simulator's. Reading the
cluster, planning and the relief check are done once per round, whatever the
number of evictions, and are not in it. The table gives per size: evictions
planned and carried out, loadaware's CPU seconds per eviction split three ways
(its evicting thread writing steering taints; the same thread's other work: the
re-check, landing control, the eviction, the state and the waits; its other
threads, chiefly the cluster cache's watches, which receive an event for every
taint written), the simulator's, wall seconds per eviction, taint writes per
eviction and the median of nodes tainted as evictions were sent (both grow with
the eligible set a landing needs under node sampling: about 25 nodes at 1,000
nodes, where kube-scheduler scores 42% of them, and 130 at 5,000, where it
scores 10%), and each process's peak memory. `--lookahead N` sets
steering.lookahead for the rounds; `--profile` prints where the evicting
thread's CPU went.

Not part of `make test`: a 5,000-node cluster takes minutes to generate and serve.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pathlib
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

import kubernetes.client

from bench import generate
from loadaware import cluster, kube, policy, runtime
from loadaware import round as rounds
from loadaware.evict import _taint
from loadaware.kube import ClientSettings

DEFAULT_SIZES = (1000, 5000)
# Serving a 5,000-node cluster starts in minutes on a busy machine.
SERVE_TIMEOUT = 1200.0
COLUMNS = (
    "nodes",
    "pods",
    "planned",
    "evicted",
    "loadaware CPU s per eviction",
    "of which taint writes",
    "of which evicting thread, other work",
    "of which other threads",
    "simulator CPU s per eviction",
    "wall s per eviction",
    "taint writes per eviction",
    "median tainted nodes",
    "loadaware peak MiB",
    "simulator peak MiB",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    nodes: int
    pods: int
    planned: int
    evicted: int
    cpu_seconds: float  # loadaware's, over the evicting phase
    write_seconds: float  # of it, the evictor's thread writing steering taints
    thread_seconds: float  # of it, the evictor's thread, the writes included
    sim_cpu_seconds: float
    wall_seconds: float
    taint_writes: int
    median_tainted: float
    peak_mib: float
    sim_peak_mib: float

    def cells(self) -> tuple[str, ...]:
        per = max(self.evicted, 1)
        return (
            str(self.nodes),
            str(self.pods),
            str(self.planned),
            str(self.evicted),
            f"{self.cpu_seconds / per:.3f}",
            f"{self.write_seconds / per:.3f}",
            f"{(self.thread_seconds - self.write_seconds) / per:.3f}",
            f"{(self.cpu_seconds - self.thread_seconds) / per:.3f}",
            f"{self.sim_cpu_seconds / per:.3f}",
            f"{self.wall_seconds / per:.3f}",
            f"{self.taint_writes / per:.1f}",
            f"{self.median_tainted:.0f}",
            f"{self.peak_mib:.0f}",
            f"{self.sim_peak_mib:.0f}",
        )


def _proc_cpu_seconds(pid: int) -> float:
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    # utime and stime are the 14th and 15th fields; two are before the split point.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proc_peak_mib(pid: int) -> float:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _serve(directory: pathlib.Path, log: BinaryIO) -> tuple[subprocess.Popen[bytes], pathlib.Path]:
    kubeconfig = directory / "kubeconfig.yaml"
    kubeconfig.unlink(missing_ok=True)
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "loadaware",
            "sim",
            "serve",
            "--cluster",
            str(directory / "cluster.json"),
            "--metrics",
            str(directory / "metrics.json"),
            "--port",
            "0",
            "--kubeconfig-out",
            str(kubeconfig),
        ],
        stdout=subprocess.DEVNULL,
        # Its log (a watch cut as the round ends, say) is kept apart from the table's.
        stderr=log,
    )
    deadline = time.monotonic() + SERVE_TIMEOUT
    while not kubeconfig.exists():
        if server.poll() is not None:
            raise RuntimeError(f"sim serve exited with {server.returncode}")
        if time.monotonic() > deadline:
            server.terminate()
            raise RuntimeError(f"sim serve did not start within {SERVE_TIMEOUT:.0f}s")
        time.sleep(1.0)
    return server, kubeconfig


def _policy(evictions: int, lookahead: int | None = None) -> policy.LoadAwarePolicy:
    document: dict[str, object] = {
        "metrics": {
            "maxSampleAge": "2m",
            "onStaleNode": "Exclude",
            # The simulator encodes a 150,000-pod PodMetrics list in one go: on a busy
            # machine the first byte can take longer than the default 10 s.
            "metricsServer": {"timeout": "60s"},
        }
    }
    if evictions:
        document["limits"] = {"maxNoOfPodsToEvictTotal": evictions}
    if lookahead is not None:
        document["steering"] = {"lookahead": lookahead}
    return policy.parse_policy(document)


class _WriteClock:
    """CPU seconds of the thread that writes the steering taints, spent writing them
    (the PATCH and its answer; the watch events they cause are not in it)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._saved: dict[str, Any] = {}

    def __enter__(self) -> _WriteClock:
        for name in ("add_hotspot_taint", "remove_hotspot_taint"):
            write = self._saved[name] = getattr(_taint, name)
            setattr(_taint, name, self._timed(write))
        return self

    def __exit__(self, *exc: object) -> None:
        for name, write in self._saved.items():
            setattr(_taint, name, write)

    def _timed(self, write: Any) -> Any:
        def timed(*args: Any) -> Any:
            start = time.thread_time()
            try:
                return write(*args)
            finally:
                self.seconds += time.thread_time() - start

        return timed


@dataclass(frozen=True, slots=True)
class _Spent:
    """CPU and wall seconds: read at a moment (`now`), or spent between two."""

    cpu: float  # loadaware's process
    thread: float  # the thread that evicts (and writes the taints)
    sim_cpu: float  # the simulator's process
    wall: float

    @classmethod
    def now(cls, server_pid: int) -> _Spent:
        return cls(
            time.process_time(), time.thread_time(), _proc_cpu_seconds(server_pid), time.monotonic()
        )

    def since(self, start: _Spent) -> _Spent:
        return _Spent(
            self.cpu - start.cpu,
            self.thread - start.thread,
            self.sim_cpu - start.sim_cpu,
            self.wall - start.wall,
        )


def _round(
    settings: policy.LoadAwarePolicy,
    kubeconfig: pathlib.Path,
    server_pid: int,
    profile: cProfile.Profile | None,
) -> tuple[rounds.RoundRecord, _Spent]:
    """One round as `run --once` runs it, and what its evicting phase spent."""
    client = kube.api_client(ClientSettings(kubeconfig=str(kubeconfig)))
    kubernetes.client.CoreV1Api(client).create_namespace(
        {"metadata": {"name": settings.state.namespace}}
    )
    marks: dict[str, _Spent] = {}

    def on_phase(step: str) -> None:
        marks[step] = _Spent.now(server_pid)
        if profile is not None and step == "evicting":
            profile.enable()
        elif profile is not None and step == "verifying":
            profile.disable()

    cache = cluster.ClusterCache(
        client, sync_timeout=settings.cluster_cache.sync_timeout.total_seconds()
    )
    context = runtime.live_round_context(settings, client, cache=cache)
    with cache:
        result = rounds.run_round(
            settings, context, rounds.RoundOptions(trigger="bench", on_phase=on_phase)
        )
    if profile is not None:
        profile.disable()
    if "evicting" not in marks:
        return result.record, _Spent(0.0, 0.0, 0.0, 0.0)
    end = marks.get("verifying") or _Spent.now(server_pid)
    return result.record, end.since(marks["evicting"])


def measure(
    nodes: int,
    *,
    evictions: int,
    seed: int,
    directory: pathlib.Path,
    profile: cProfile.Profile | None = None,
    lookahead: int | None = None,
) -> Row:
    if not (directory / "cluster.json").exists():
        generate.usage_independent_in_child(nodes, directory, seed=seed)
    with (directory / "sim.log").open("wb") as log:
        server, kubeconfig = _serve(directory, log)
        try:
            with _WriteClock() as writes:
                record, spent = _round(
                    _policy(evictions, lookahead), kubeconfig, server.pid, profile
                )
            sim_peak = _proc_peak_mib(server.pid)
        finally:
            server.terminate()
            server.wait(timeout=60)
    execution = record.execution
    return Row(
        nodes=nodes,
        pods=int(record.inputs.get("pods") or 0),
        planned=len(record.plan.evictions) if record.plan else 0,
        evicted=execution.count("evicted") if execution else 0,
        cpu_seconds=spent.cpu,
        write_seconds=writes.seconds,
        thread_seconds=spent.thread,
        sim_cpu_seconds=spent.sim_cpu,
        wall_seconds=spent.wall,
        taint_writes=execution.taint_writes if execution else 0,
        median_tainted=execution.tainted_median if execution else 0.0,
        peak_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        sim_peak_mib=sim_peak,
    )


def _table(rows: Sequence[Row]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.round_evictions", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--sizes",
        default=",".join(map(str, DEFAULT_SIZES)),
        help="comma-separated node counts (default 1000,5000)",
    )
    parser.add_argument(
        "--evictions",
        type=int,
        default=100,
        help="the plan's cap per size (default 100; 0: the whole plan)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--keep",
        type=pathlib.Path,
        help="generate into DIR/<nodes> and reuse what is there (default: a temporary dir)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="print cProfile's top entries, by the evicting thread's CPU time",
    )
    parser.add_argument(
        "--lookahead",
        type=int,
        help="steering.lookahead for the round (default: the policy's default)",
    )
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error("--sizes: comma-separated integers, e.g. 1000,5000")
    if args.evictions < 0:
        parser.error("--evictions must be 0 (no cap) or more")
    rows = []
    for size in sizes:
        profile = cProfile.Profile(time.thread_time) if args.profile else None
        with tempfile.TemporaryDirectory(prefix=f"round-evictions-{size}-") as scratch:
            directory = args.keep / str(size) if args.keep else pathlib.Path(scratch)
            directory.mkdir(parents=True, exist_ok=True)
            rows.append(
                measure(
                    size,
                    evictions=args.evictions,
                    seed=args.seed,
                    directory=directory,
                    profile=profile,
                    lookahead=args.lookahead,
                )
            )
        print(_table(rows[-1:]), file=sys.stderr)
        if profile is not None:
            stats = pstats.Stats(profile, stream=sys.stderr)
            stats.sort_stats("cumulative").print_stats(40)
            stats.sort_stats("tottime").print_stats(25)
    print(_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
