"""Seconds of simulated control-plane time per eviction, on generated clusters.

    python -m bench.sim_evictions                          # 1,000 and 5,000 nodes
    python -m bench.sim_evictions --sizes 1000 --evictions 50
    python -m bench.sim_evictions --sizes 1000 --profile   # cProfile's top entries too
    python -m bench.sim_evictions --steer 20               # steering taints around each

For every size it generates a usage-independent cluster (`loadaware.sim.scenarios`,
about 30 pods per node), builds the simulated cluster in this process
(`SimCluster`: store, controllers, usage), and settles it. Then, one at a time, it
evicts a bound pod of a ReplicaSet through the store's eviction path (the
Eviction API's code, PodDisruptionBudgets checked), runs the controllers as the
serving thread would after a write (`reconcile` until nothing changes, then
`next_due`), and checks that the ReplicaSet's replacement is bound. Every
`--settle-every` evictions the simulated clock moves on past the grace period and
the ready delay (the terminating pods go, the replacements turn Ready and the
budgets recover), and those passes are timed too. With `--steer N`, each eviction is
wrapped as a live round wraps it: N nodes (seeded) get loadaware's steering taint
(PreferNoSchedule) before it and lose it after, each write burst followed by a
controller pass.

Only the controller passes are timed, not the eviction call, the generation nor
the scheduler's cache filling at start-up.
The table gives, per size: evictions carried out, controller seconds per
eviction (all passes, the settling ones included), the scheduler's and the
disruption controller's share of them, the number of reconcile calls, and
replacements left unbound (should be 0).

Not part of `make test`: generating a 5,000-node cluster takes a minute.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import gc
import pstats
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from loadaware import scheduling
from loadaware.sim import SimClock, SimCluster, _resources, scenarios
from loadaware.sim import _status as sim_status
from loadaware.sim.controllers import _control_plane, _disruption

NOW = datetime.datetime(2026, 11, 29, 8, 0, 0, tzinfo=datetime.UTC)
DEFAULT_SIZES = (1000, 5000)
COLUMNS = (
    "nodes",
    "pods",
    "steer",
    "build s",
    "evictions",
    "refused",
    "s per eviction",
    "scheduler s per eviction",
    "disruption s per eviction",
    "reconcile calls",
    "unbound",
)


@dataclass(slots=True)
class _Timer:
    """Seconds spent in a wrapped callable."""

    seconds: float = 0.0

    def wrap(self, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        return timed


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    nodes: int
    pods: int
    steer: int
    build_seconds: float
    evictions: int
    refused: int
    seconds: float
    scheduler_seconds: float
    disruption_seconds: float
    reconcile_calls: int
    unbound: int

    def cells(self) -> tuple[str, ...]:
        per = max(self.evictions, 1)
        return (
            str(self.nodes),
            str(self.pods),
            str(self.steer),
            f"{self.build_seconds:.1f}",
            str(self.evictions),
            str(self.refused),
            f"{self.seconds / per:.3f}",
            f"{self.scheduler_seconds / per:.3f}",
            f"{self.disruption_seconds / per:.3f}",
            str(self.reconcile_calls),
            str(self.unbound),
        )


def _candidates(sim: SimCluster, seed: int) -> list[tuple[str, str]]:
    """Bound, Ready-or-Running pods of ReplicaSets, in a seeded order."""
    found = []
    for pod in sim.list("pods"):
        refs = pod["metadata"].get("ownerReferences") or []
        if not any(r.get("kind") == "ReplicaSet" and r.get("controller") for r in refs):
            continue
        if pod["spec"].get("nodeName") and not pod["metadata"].get("deletionTimestamp"):
            found.append((pod["metadata"]["namespace"], pod["metadata"]["name"]))
    random.Random(seed).shuffle(found)
    return found


def _unbound_replacements(sim: SimCluster) -> int:
    return sum(
        1
        for pod in sim.list("pods")
        if not pod["spec"].get("nodeName") and not pod["metadata"].get("deletionTimestamp")
    )


def _set_steering_taint(sim: SimCluster, names: Sequence[str], *, tainted: bool) -> None:
    taint = scheduling.STEERING_TAINT
    for name in names:
        node = sim.get("nodes", None, name)
        kept = [
            t for t in (node.get("spec") or {}).get("taints") or [] if t.get("key") != taint.key
        ]
        if tainted:
            kept.append({"key": taint.key, "value": taint.value, "effect": taint.effect})
        sim.store.patch(
            _resources.NODES,
            None,
            name,
            "application/merge-patch+json",
            {"spec": {"taints": kept or None}},
        )


def measure(
    nodes: int,
    *,
    evictions: int,
    settle_every: int,
    seed: int,
    steer: int = 0,
    profile: cProfile.Profile | None = None,
) -> Row:
    started = time.perf_counter()
    generated = scenarios.generate_cluster(
        nodes=nodes, seed=seed, family="usage-independent", now=NOW
    )
    sim = SimCluster(generated.objects, generated.metrics, clock=SimClock(NOW))
    pods = len(generated.metrics["pods"])
    del generated
    sim.reconcile()
    # The scheduler's cache fills at start-up, as kube-scheduler's does from its first list.
    sim.controllers.scheduler.occupancy  # noqa: B018
    gc.collect()
    gc.freeze()  # the loaded objects live for the whole run: keep the collector off them
    build_seconds = time.perf_counter() - started

    controllers = sim.controllers
    scheduler_timer, disruption_timer, total = _Timer(), _Timer(), _Timer()
    controllers.scheduler.run = scheduler_timer.wrap(controllers.scheduler.run)  # type: ignore[method-assign]
    original_sync = _disruption.sync
    _control_plane._disruption.sync = disruption_timer.wrap(original_sync)  # type: ignore[attr-defined]
    calls = 0

    def run_controllers() -> None:
        nonlocal calls
        calls += 1
        if profile is not None:
            profile.enable()
        try:
            total.wrap(_pass)()
        finally:
            if profile is not None:
                profile.disable()

    def _pass() -> None:
        controllers.reconcile()
        controllers.next_due()

    settle_seconds = sim.settings.ready_delay + 31.0
    done = refused = 0
    node_names = [n["metadata"]["name"] for n in sim.list("nodes")]
    pick = random.Random(seed)
    try:
        for namespace, name in _candidates(sim, seed):
            if done >= evictions:
                break
            steered = pick.sample(node_names, min(steer, len(node_names)))
            if steered:
                _set_steering_taint(sim, steered, tainted=True)
                run_controllers()
            try:
                sim.evict(namespace, name)
            except sim_status.ApiError:
                refused += 1  # a budget refused it: the next candidate
                evicted = False
            else:
                done += 1
                evicted = True
                run_controllers()
            if steered:
                _set_steering_taint(sim, steered, tainted=False)
                run_controllers()
            if evicted and done % settle_every == 0:
                sim.clock.advance(settle_seconds)
                run_controllers()
        sim.clock.advance(settle_seconds)
        run_controllers()
    finally:
        _control_plane._disruption.sync = original_sync  # type: ignore[attr-defined]
    return Row(
        nodes=nodes,
        pods=pods,
        steer=steer,
        build_seconds=build_seconds,
        evictions=done,
        refused=refused,
        seconds=total.seconds,
        scheduler_seconds=scheduler_timer.seconds,
        disruption_seconds=disruption_timer.seconds,
        reconcile_calls=calls,
        unbound=_unbound_replacements(sim),
    )


def _table(rows: Sequence[Row]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.sim_evictions", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--sizes",
        default=",".join(map(str, DEFAULT_SIZES)),
        help="comma-separated node counts (default 1000,5000)",
    )
    parser.add_argument("--evictions", type=int, default=40, help="evictions per size")
    parser.add_argument(
        "--settle-every", type=int, default=10, help="evictions between clock moves"
    )
    parser.add_argument(
        "--steer", type=int, default=0, help="nodes tainted around each eviction (default 0)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true", help="print cProfile's top entries")
    args = parser.parse_args(argv)
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        parser.error("--sizes: comma-separated integers, e.g. 1000,5000")
    if args.evictions < 1 or args.settle_every < 1:
        parser.error("--evictions and --settle-every must be at least 1")
    rows = []
    for size in sizes:
        profile = cProfile.Profile() if args.profile else None
        rows.append(
            measure(
                size,
                evictions=args.evictions,
                settle_every=args.settle_every,
                seed=args.seed,
                steer=args.steer,
                profile=profile,
            )
        )
        print(_table(rows[-1:]), file=sys.stderr)
        if profile is not None:
            stats = pstats.Stats(profile, stream=sys.stderr)
            stats.sort_stats("cumulative").print_stats(30)
            stats.sort_stats("tottime").print_stats(20)
    print(_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
