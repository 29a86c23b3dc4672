"""Write a generated cluster as the two files `loadaware plan --cluster --metrics` reads.

    python -m bench.generate --nodes 1000 --seed 1 --capacity tight --out DIR
    python -m bench.generate --nodes 1000 --family usage-independent --out DIR
    python -m bench.generate --nodes 1000 --family usage-independent --gpu-pool --out DIR
    python -m bench.generate --nodes 1000 --family most-allocated --out DIR
    python -m bench.generate --scenario peak-hour --out DIR

writes DIR/cluster.json (a kind: List of raw objects) and DIR/metrics.json. The
metrics are stamped relative to --now (default: the current time), so plan
against them soon or pass the same --now to `loadaware plan`.

--gpu-pool adds the GPU pool `python -m bench` gives the usage-independent
family (bench.gpu_pool: nodes with `nvidia.com/gpu` in status.allocatable,
pods' and nodes' gpu usage as `named: {"gpu": ...}` in the metrics) and writes
DIR/policy.yaml, the policy the bench plans it with (`loadaware plan --policy`).

A family of bench.scheduler_families (most-allocated, requested-to-capacity-ratio)
generates the usage-independent instance and writes its cluster's
KubeSchedulerConfiguration as DIR/scheduler-config.yaml (`loadaware sim serve
--scheduler-config`) and DIR/policy.yaml with the same configuration as
steering.schedulerConfig (with --gpu-pool, the pool's resource and pool too).
"""

from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import subprocess
import sys
import time
from collections.abc import Sequence

import yaml

from bench import gpu_pool, scheduler_families
from loadaware.sim import scenarios


def usage_independent_in_child(
    nodes: int, out: pathlib.Path, *, seed: int, now: str | None = None
) -> None:
    """Generate the usage-independent family into `out` in a process of its own, so
    that the caller's process holds none of it (its peak memory is measured)."""
    command = [sys.executable, "-m", "bench.generate", "--nodes", str(nodes)]
    command += ["--family", "usage-independent", "--seed", str(seed), "--out", str(out)]
    if now is not None:
        command += ["--now", now]
    subprocess.run(command, check=True)


def _timestamp(value: str) -> datetime.datetime:
    parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        raise argparse.ArgumentTypeError("needs a time zone, e.g. 2026-11-29T08:00:00Z")
    return parsed


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.generate", description=__doc__.split("\n")[0]
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--nodes", type=int, help="number of nodes to generate")
    source.add_argument("--scenario", choices=scenarios.SCENARIO_NAMES, help="a built-in scenario")
    parser.add_argument("--pods-per-node", type=int, default=30)
    parser.add_argument("--zones", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--capacity", choices=("loose", "tight"), default="loose")
    parser.add_argument("--hot-fraction", type=float, default=0.1)
    parser.add_argument(
        "--family",
        choices=(*scenarios.FAMILIES, *scheduler_families.FAMILIES),
        default="proportional",
        help="how usage relates to requests (default proportional), or the scoring "
        "strategy of the cluster's kube-scheduler on the usage-independent instance",
    )
    parser.add_argument(
        "--gpu-pool",
        action="store_true",
        help="add the bench's GPU pool (bench.gpu_pool) and write its policy.yaml",
    )
    parser.add_argument("--now", type=_timestamp, help="RFC 3339 time the metrics are collected at")
    parser.add_argument("--out", type=pathlib.Path, required=True, help="directory to write into")
    parser.add_argument(
        "--indent", type=int, default=None, help="pretty-print JSON (slower, larger)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.gpu_pool and args.scenario:
        parser.error("--gpu-pool goes with --nodes, not --scenario")
    now = args.now or datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    started = time.perf_counter()
    if args.scenario:
        scenario = scenarios.builtin_scenario(args.scenario, now=now)
    else:
        try:
            scenario = scenarios.generate_cluster(
                nodes=args.nodes,
                pods_per_node=args.pods_per_node,
                zones=args.zones,
                seed=args.seed,
                capacity=args.capacity,
                hot_fraction=args.hot_fraction,
                family=scheduler_families.base_family(args.family),
                now=now,
            )
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if args.gpu_pool:
            scenario = gpu_pool.add_gpu_pool(scenario, seed=args.seed, now=now)
    generated = time.perf_counter() - started
    args.out.mkdir(parents=True, exist_ok=True)
    # Compact by default: a 5,000-node cluster is several hundred MB pretty-printed.
    separators = None if args.indent is not None else (",", ":")
    for file_name, body in (
        ("cluster.json", scenario.cluster_document()),
        ("metrics.json", scenario.metrics),
    ):
        with (args.out / file_name).open("w", encoding="utf-8") as out:
            json.dump(body, out, indent=args.indent, separators=separators)
            out.write("\n")
    config = scheduler_families.CONFIGS.get(args.family)
    if config is not None:
        (args.out / "scheduler-config.yaml").write_text(
            f"# The kube-scheduler configuration of the bench's {args.family} family "
            "(bench.scheduler_families).\n" + yaml.safe_dump(config, sort_keys=False),
            encoding="utf-8",
        )
    if args.gpu_pool or config is not None:
        document: dict[str, object] = {
            "apiVersion": "loadaware.io/v1alpha1",
            "kind": "LoadAwarePolicy",
            **(gpu_pool.policy_document() if args.gpu_pool else {}),
        }
        if config is not None:
            document["steering"] = {"schedulerConfig": config}
        (args.out / "policy.yaml").write_text(
            f"# The policy `python -m bench` plans the {args.family} family with "
            "(bench.gpu_pool, bench.scheduler_families).\n"
            + yaml.safe_dump(document, sort_keys=False),
            encoding="utf-8",
        )
    pods = len(scenario.metrics["pods"])
    nodes = len(scenario.metrics["nodes"])
    print(
        f"{scenario.name}: {nodes} nodes, {pods} pods, {len(scenario.objects)} objects "
        f"generated in {generated:.2f}s, written to {args.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
