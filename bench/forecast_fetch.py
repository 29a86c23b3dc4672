"""How long a round planned ahead waits for its forecast (PrometheusForecaster).

    python -m bench.forecast_fetch [--nodes 1000] [--pods 10000] [--weeks 4]
                                   [--step 15m] [--horizon 1h] [--repeat 3]

Backfills a TSDB with `--weeks` + 1 weeks of node-exporter and cAdvisor series
for the cluster (kube-prometheus-stack names and labels; pods in workloads of
10 replicas, recreated under new names every week, as rollouts do), starts
Debian's `prometheus` on it, and times fetch_forecast for every node and pod,
best of --repeat (the slowest run is shown too: other work on the machine shows
as spread): its four queries (node cpu and memory, pod cpu and memory, each a
union of `--weeks` offset subqueries at `--step`) side by side, the answers
parsed, the quantile across weeks taken, coverage checked.

Only the hours the forecast reads are written, for each week: from an hour
before its window (the rate window) to an hour after; a whole month at a
15-minute step for 10,000 pods would be gigabytes of OpenMetrics for the same
answer. Samples are `--step` apart, so the rate window is two steps.

The issue's target: 1,000 nodes and 10,000 pods with 4 weeks of history at a
15-minute step answer within 10 s on 2 cores. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import datetime
import os
import pathlib
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import IO

from bench import prometheus as lib
from bench.metrics_fetch import timed
from bench.weekly import WEEK_SECONDS, pod_name
from loadaware import policy
from loadaware.metrics import PrometheusForecaster
from loadaware.policy import MetricsSettings

TARGET_SECONDS = 10.0
REPLICAS = 10
# A Monday, 08:30 UTC, on the step grid: the round before a 09:00 peak.
NOW = datetime.datetime(2026, 11, 30, 8, 30, tzinfo=datetime.UTC)


def _moments(now: float, weeks: int, step: float, horizon: float) -> list[list[float]]:
    """Per week (0 = the current one): the sample times written."""
    slices = []
    for week in range(weeks + 1):
        start = now - week * WEEK_SECONDS - 3600.0
        end = now - week * WEEK_SECONDS + horizon + 3600.0
        slices.append([start + k * step for k in range(int((end - start) // step) + 1)])
    return slices


def _labels(labels: dict[str, str]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def _peak(moment: float) -> float:
    """Weekday 09:00-10:00 UTC: the load doubles."""
    at = datetime.datetime.fromtimestamp(moment, datetime.UTC)
    return 2.0 if at.weekday() < 5 and at.hour == 9 else 1.0


def write_history(
    out: IO[str], *, nodes: int, pods: int, weeks: int, step: float, horizon: float, now: float
) -> int:
    """The OpenMetrics text, streamed; returns the number of samples."""
    slices = _moments(now, weeks, step, horizon)
    every = sorted(t for moments in slices for t in moments)
    count = 0
    workloads = max(1, pods // REPLICAS)

    def counter(rate: Callable[[float], float], moments: list[float]) -> list[tuple[float, float]]:
        value, previous, points = 100.0, None, []
        for moment in moments:
            if previous is not None and moment - previous <= step:
                value += rate(previous) * (moment - previous)
            points.append((moment, value))
            previous = moment
        return points

    out.write("# TYPE node_cpu_seconds counter\n")
    for i in range(nodes):
        base = {"instance": f"node-{i:05d}:9100", "job": "node-exporter", "node": f"node-{i:05d}"}
        cores = 1.0 + (i % 13) * 0.3
        for mode, rate in (("user", lambda t, c=cores: c * _peak(t)), ("idle", lambda t: 1.0)):
            prefix = f"node_cpu_seconds_total{_labels({**base, 'cpu': '0', 'mode': mode})} "
            for moment, value in counter(rate, every):
                out.write(f"{prefix}{value:.3f} {moment:.3f}\n")
                count += 1
    for family, value_of in (
        ("node_memory_MemTotal_bytes", lambda i, t: 64.0 * 2**30),
        ("node_memory_MemAvailable_bytes", lambda i, t: (48.0 - (i % 7) * _peak(t)) * 2**30),
    ):
        out.write(f"# TYPE {family} gauge\n")
        for i in range(nodes):
            labels = {"instance": f"node-{i:05d}:9100", "job": "node-exporter"}
            prefix = f"{family}{_labels({**labels, 'node': f'node-{i:05d}'})} "
            for moment in every:
                out.write(f"{prefix}{value_of(i, moment):.0f} {moment:.3f}\n")
                count += 1

    def pod_series(week: int, index: int) -> tuple[dict[str, str], float]:
        workload, replica = index % workloads, index // workloads
        node = f"node-{index % nodes:05d}"
        labels = {
            "namespace": f"ns-{workload % 100:02d}",
            "pod": pod_name(f"app-{workload:05d}", week, replica),
            "container": "app",
            "node": node,
            "instance": f"{node}:10250",
            "job": "kubelet",
        }
        return labels, 0.01 + (workload % 50) * 0.01

    out.write("# TYPE container_cpu_usage_seconds counter\n")
    for week, moments in enumerate(slices):
        for index in range(pods):
            labels, cores = pod_series(week, index)
            prefix = f"container_cpu_usage_seconds_total{_labels(labels)} "
            for moment, value in counter(lambda t, c=cores: c * _peak(t), moments):
                out.write(f"{prefix}{value:.3f} {moment:.3f}\n")
                count += 1
    out.write("# TYPE container_memory_working_set_bytes gauge\n")
    for week, moments in enumerate(slices):
        for index in range(pods):
            labels, cores = pod_series(week, index)
            prefix = f"container_memory_working_set_bytes{_labels(labels)} "
            for moment in moments:
                out.write(f"{prefix}{cores * 2**30 * _peak(moment):.0f} {moment:.3f}\n")
                count += 1
    out.write("# EOF\n")
    return count


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.forecast_fetch", description=__doc__)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--weeks", type=int, default=4)
    parser.add_argument(
        "--step", type=policy.parse_duration, default=datetime.timedelta(minutes=15)
    )
    parser.add_argument(
        "--horizon", type=policy.parse_duration, default=datetime.timedelta(hours=1)
    )
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    if not lib.tools_available():
        sys.stderr.write("needs prometheus and promtool: run `make system-deps`\n")
        return 2
    step, horizon = args.step.total_seconds(), args.horizon.total_seconds()
    now = NOW.timestamp()
    setup: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="loadaware-bench-") as tmp:
        workdir = pathlib.Path(tmp)
        started = time.perf_counter()
        openmetrics = workdir / "history.om"
        with openmetrics.open("w") as out:
            samples = write_history(
                out,
                nodes=args.nodes,
                pods=args.pods,
                weeks=args.weeks,
                step=step,
                horizon=horizon,
                now=now,
            )
        setup["generate OpenMetrics"] = time.perf_counter() - started
        started = time.perf_counter()
        lib.backfill(openmetrics, workdir / "tsdb", max_block_duration="168h")
        setup["promtool backfill"] = time.perf_counter() - started
        openmetrics.unlink()
        started = time.perf_counter()
        with lib.PrometheusServer(workdir / "tsdb", workdir) as server:
            setup["prometheus start"] = time.perf_counter() - started
            settings = MetricsSettings.model_validate(
                {
                    "prometheus": {
                        "url": server.url,
                        "timeout": "60s",
                        "rateWindow": policy.format_duration(2 * args.step),
                        "forecast": {
                            "weeks": args.weeks,
                            "minWeeks": args.weeks,
                            "step": policy.format_duration(args.step),
                        },
                    }
                }
            )
            forecaster = PrometheusForecaster(settings)
            node_names = [f"node-{i:05d}" for i in range(args.nodes)]
            workloads = max(1, args.pods // REPLICAS)
            current = 0  # the current week's pod names
            pod_keys = [
                f"ns-{(i % workloads) % 100:02d}/"
                + pod_name(f"app-{i % workloads:05d}", current, i // workloads)
                for i in range(args.pods)
            ]

            def fetch() -> object:
                return forecaster.fetch_forecast(
                    node_names, pod_keys, now=NOW, horizon=args.horizon
                )

            first = forecaster.fetch_forecast(node_names, pod_keys, now=NOW, horizon=args.horizon)
            assert len(first.nodes) == args.nodes, (len(first.nodes), first.uncovered_nodes)
            assert len(first.workloads) == workloads, len(first.workloads)
            times = timed(args.repeat, fetch)
            seconds = min(times)

    rows = [
        ("nodes / pods (workloads)", f"{args.nodes:,} / {args.pods:,} ({workloads:,})"),
        (
            "weeks / step / horizon",
            f"{args.weeks} / {policy.format_duration(args.step)} / "
            f"{policy.format_duration(args.horizon)}",
        ),
        ("samples backfilled", f"{samples:,}"),
        ("generate OpenMetrics", f"{setup['generate OpenMetrics']:.1f} s"),
        ("promtool backfill", f"{setup['promtool backfill']:.1f} s"),
        ("prometheus ready", f"{setup['prometheus start']:.1f} s"),
        ("queries", str(first.queries)),
        ("fetch_forecast", f"{seconds:.2f} s (slowest {max(times):.2f} s)"),
        (f"target <= {TARGET_SECONDS:g} s", "met" if seconds <= TARGET_SECONDS else "MISSED"),
        ("cpus", str(os.cpu_count())),
    ]
    width = max(len(k) for k, _ in rows)
    sys.stdout.write(f"| {'measure'.ljust(width)} | value |\n| {'-' * width} | ----- |\n")
    for key, value in rows:
        sys.stdout.write(f"| {key.ljust(width)} | {value} |\n")
    return 0 if seconds <= TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
