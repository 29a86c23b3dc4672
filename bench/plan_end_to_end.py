"""`loadaware plan` end to end, as a user runs it, on generated clusters of growing size.

    python -m bench.plan_end_to_end                        # 5,000 nodes, 5 runs
    python -m bench.plan_end_to_end --sizes 1000,5000 --runs 3
    python -m bench.plan_end_to_end --dir DIR              # generate into DIR/<nodes>, reuse
    python -m bench.plan_end_to_end --dir DIR --now 2026-12-03T14:59:40Z

For every size it generates a usage-independent cluster (`python -m bench.generate`,
about 30 pods per node, its metrics stamped at --now) unless DIR/<nodes> already
holds one, and writes a policy that reads metrics-server's usage (maxSampleAge 2m,
onStaleNode Exclude) unless given one with --policy. It then runs
`python -m loadaware plan --cluster --metrics --policy --now -o json` as a process
of its own, --runs times, its standard output to /dev/null: everything a user
waits for, from the interpreter's start and the imports to the last byte of the
plan's JSON and the process's exit.

Per size the table gives the nodes and pods, the wall seconds of a run (min and
median), the CPU seconds (user + system) of the child process, median over the
runs, its peak RSS (the highest of the runs), and whether the bars are met: the
median wall time within 10 s, the peak RSS within 3 GiB. Wall time depends on what
else the machine runs; CPU seconds less so.

Not part of `make test`: a 5,000-node cluster takes minutes to generate and each
run about ten seconds.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Final

from bench import generate

DEFAULT_SIZES: Final = (5000,)
DEFAULT_RUNS: Final = 5
# Fixed, so that a generated directory can be planned again later: the metrics are
# stamped relative to it and judged at it.
NOW: Final = "2026-11-29T08:00:00Z"
WALL_BAR_SECONDS: Final = 10.0
RSS_BAR_MIB: Final = 3 * 1024.0
POLICY: Final = """\
apiVersion: loadaware.io/v1alpha1
kind: LoadAwarePolicy
metrics:
  maxSampleAge: 2m
  onStaleNode: Exclude
  metricsServer: {}
"""
COLUMNS: Final = (
    "nodes",
    "pods",
    "runs",
    "wall s min",
    "wall s median",
    "CPU s median",
    "peak RSS MiB",
    f"wall <= {WALL_BAR_SECONDS:.0f} s",
    f"RSS <= {RSS_BAR_MIB / 1024:.0f} GiB",
)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Run:
    """One `loadaware plan` process."""

    wall_seconds: float
    cpu_seconds: float  # user + system of the child
    peak_rss_mib: float
    exit_code: int


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    nodes: int
    pods: int
    runs: tuple[Run, ...]

    @property
    def wall_min(self) -> float:
        return min(r.wall_seconds for r in self.runs)

    @property
    def wall_median(self) -> float:
        return statistics.median(r.wall_seconds for r in self.runs)

    @property
    def cpu_median(self) -> float:
        return statistics.median(r.cpu_seconds for r in self.runs)

    @property
    def peak_rss_mib(self) -> float:
        return max(r.peak_rss_mib for r in self.runs)

    def cells(self) -> tuple[str, ...]:
        return (
            str(self.nodes),
            str(self.pods),
            str(len(self.runs)),
            f"{self.wall_min:.2f}",
            f"{self.wall_median:.2f}",
            f"{self.cpu_median:.2f}",
            f"{self.peak_rss_mib:.0f}",
            _met(self.wall_median <= WALL_BAR_SECONDS),
            _met(self.peak_rss_mib <= RSS_BAR_MIB),
        )


def _met(ok: bool) -> str:
    return "yes" if ok else "NO"


def table(rows: Sequence[Row]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def parse_sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(s) for s in text.split(",") if s.strip())
    except ValueError:
        raise argparse.ArgumentTypeError("comma-separated node counts, e.g. 1000,5000") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError("node counts must be at least 1")
    return sizes


def counts(directory: pathlib.Path) -> tuple[int, int]:
    """Nodes and pods of a generated directory, read off its metrics file (one
    sample each), which is a thirtieth of the cluster file."""
    with (directory / "metrics.json").open(encoding="utf-8") as stream:
        document = json.load(stream)
    return len(document.get("nodes") or ()), len(document.get("pods") or ())


def run_plan(command: Sequence[str]) -> Run:
    """Run `command` as a child whose standard output goes to /dev/null; its wall
    time, and its CPU time and peak RSS as the kernel accounts them (wait4)."""
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return Run(
        wall_seconds=wall,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        peak_rss_mib=usage.ru_maxrss / 1024,  # KiB on Linux
        exit_code=child.returncode,
    )


def plan_command(directory: pathlib.Path, policy_file: pathlib.Path, now: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "loadaware",
        "plan",
        "--cluster",
        str(directory / "cluster.json"),
        "--metrics",
        str(directory / "metrics.json"),
        "--policy",
        str(policy_file),
        "--now",
        now,
        "-o",
        "json",
    ]


def measure(
    nodes: int,
    *,
    directory: pathlib.Path,
    runs: int,
    seed: int,
    now: str,
    policy_file: pathlib.Path,
) -> Row:
    if not (directory / "cluster.json").exists():
        generate.usage_independent_in_child(nodes, directory, seed=seed, now=now)
    node_count, pods = counts(directory)
    command = plan_command(directory, policy_file, now)
    done = []
    for index in range(runs):
        run = run_plan(command)
        if run.exit_code != 0:
            raise RuntimeError(f"{' '.join(command)} exited with {run.exit_code}")
        print(
            f"{nodes} nodes, run {index + 1}/{runs}: {run.wall_seconds:.2f} s wall, "
            f"{run.cpu_seconds:.2f} s CPU, {run.peak_rss_mib:.0f} MiB",
            file=sys.stderr,
        )
        done.append(run)
    return Row(nodes=node_count, pods=pods, runs=tuple(done))


def _now(text: str) -> str:
    try:
        parsed = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an RFC 3339 time: {text!r}") from None
    if parsed.tzinfo is None:
        raise argparse.ArgumentTypeError(f"time needs a zone (e.g. Z): {text!r}")
    return text


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.plan_end_to_end", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        default=DEFAULT_SIZES,
        help="comma-separated node counts (default 5000)",
    )
    parser.add_argument(
        "--runs", type=int, default=DEFAULT_RUNS, help=f"runs per size (default {DEFAULT_RUNS})"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--dir",
        type=pathlib.Path,
        help="generate into DIR/<nodes> and reuse what is there (default: a temporary dir)",
    )
    parser.add_argument(
        "--now",
        type=_now,
        default=NOW,
        help=f"the time the metrics are stamped at and judged at (default {NOW}); "
        "for a reused directory, the time it was generated with",
    )
    parser.add_argument(
        "--policy",
        type=pathlib.Path,
        help="policy file (default: metrics-server's usage, maxSampleAge 2m)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be 1 or more")
    rows = []
    with tempfile.TemporaryDirectory(prefix="plan-end-to-end-") as scratch:
        # The policy goes apart from the cluster files, so that a reused directory
        # is only read.
        policy_file = args.policy or pathlib.Path(scratch) / "policy.yaml"
        if args.policy is None:
            policy_file.write_text(POLICY, encoding="utf-8")
        for size in args.sizes:
            directory = args.dir / str(size) if args.dir else pathlib.Path(scratch) / str(size)
            directory.mkdir(parents=True, exist_ok=True)
            rows.append(
                measure(
                    size,
                    directory=directory,
                    runs=args.runs,
                    seed=args.seed,
                    now=args.now,
                    policy_file=policy_file,
                )
            )
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
