"""How long PrometheusProvider takes to fetch and parse a large cluster's usage.

    python -m bench.metrics_fetch [--nodes 5000] [--pods 150000] [--repeat 3]

Backfills a TSDB with node-exporter and cAdvisor series for the cluster (one
container per pod plus cAdvisor's pod-level series, with kube-prometheus-stack's
labels), starts Debian's `prometheus` on it, and times, each best of --repeat
(the slowest run is shown too: other work on the machine shows as spread):

- raw HTTP: the same POSTs the provider sends (its instant queries and the
  range query, four at a time, in its order), bodies read but not parsed: what
  Prometheus and the network cost;
- fetch_usage: the provider end to end (credentials, queries, JSON, checks,
  Usage for every node and pod).

The ratio of the two is what the provider adds on top of Prometheus. The issue's
target is fetch_usage <= 5 s for 5,000 nodes and 150,000 pods on 2 cores.
Not part of `make test`: backfilling takes a minute or two.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import os
import pathlib
import sys
import tempfile
import time
from collections.abc import Callable, Sequence

import requests

from bench import prometheus as lib
from loadaware.metrics import PrometheusProvider
from loadaware.metrics._prometheus import _POD_VALUE, QUERY_THREADS
from loadaware.metrics._promql import marked
from loadaware.policy import MetricsSettings

TARGET_SECONDS = 5.0
STEP_SECONDS = 60.0


def _cluster(nodes: int, pods: int, now: float) -> tuple[list[lib.NodeTruth], list[lib.PodTruth]]:
    node_truths = [
        lib.NodeTruth(
            f"node-{i:05d}",
            cpu_cores=0.5 + (i % 13) * 0.4,
            memory_used_bytes=(2 + i % 11) * lib.GiB,
            cpus=8,
        )
        for i in range(nodes)
    ]
    pod_truths = [
        lib.PodTruth(
            f"ns-{i % 200:03d}",
            f"app-{i:06d}",
            node_truths[i % nodes].name,
            {"app": (0.01 + (i % 50) * 0.01, (64 + i % 512) * 1024**2)},
        )
        for i in range(pods)
    ]
    return node_truths, pod_truths


def _backfill(workdir: pathlib.Path, nodes: int, pods: int, now: float) -> dict[str, float]:
    timings: dict[str, float] = {}
    node_truths, pod_truths = _cluster(nodes, pods, now)
    started = time.perf_counter()
    openmetrics = workdir / "history.om"
    with openmetrics.open("w") as out:
        # Nodes: enough history for rate() at each point of the confirmation range;
        # pods: one rate window. Sample every minute to keep the file small.
        families = lib.kube_prometheus_history(
            node_truths, [], start=now - 10 * 60, end=now, step=STEP_SECONDS
        )
        families += lib.kube_prometheus_history(
            [], pod_truths, start=now - 6 * 60, end=now, step=STEP_SECONDS
        )
        samples = lib.write_openmetrics((f for f in families if f.series), out)
    timings["generate OpenMetrics"] = time.perf_counter() - started
    timings["samples"] = samples
    started = time.perf_counter()
    lib.backfill(openmetrics, workdir / "tsdb")
    timings["promtool backfill"] = time.perf_counter() - started
    openmetrics.unlink()
    return timings


def timed(repeat: int, action: Callable[[], object]) -> list[float]:
    """Seconds of each of `repeat` runs of `action`."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.metrics_fetch", description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    if not lib.tools_available():
        sys.stderr.write("needs prometheus and promtool: run `make system-deps`\n")
        return 2

    now = float(int(time.time()))
    with tempfile.TemporaryDirectory(prefix="loadaware-bench-") as tmp:
        workdir = pathlib.Path(tmp)
        setup = _backfill(workdir, args.nodes, args.pods, now)
        started = time.perf_counter()
        with lib.PrometheusServer(workdir / "tsdb", workdir) as server:
            setup["prometheus start"] = time.perf_counter() - started
            settings = MetricsSettings.model_validate(
                {"prometheus": {"url": server.url, "timeout": "60s"}}
            )
            provider = PrometheusProvider(settings)
            moment = datetime.datetime.fromtimestamp(now, datetime.UTC)
            node_names = [f"node-{i:05d}" for i in range(args.nodes)]
            pod_keys = [f"ns-{i % 200:03d}/app-{i:06d}" for i in range(args.pods)]

            queries = provider.queries
            confirmation = settings.hotspot_confirmation
            span = (2 * confirmation.consecutive - 2) * confirmation.interval.total_seconds()
            range_query = " or ".join(
                marked(queries[n].value, r)
                for n, r in (("nodeCpu", "cpu"), ("nodeMemory", "memory"))
            )
            session = requests.Session()
            base = server.url

            # Pod values first, then the range query, then the rest, as the provider asks.
            asked = provider.instant_queries(with_history=True)
            pod_values = [text for kind, text in asked if kind == _POD_VALUE]
            others = [text for kind, text in asked if kind != _POD_VALUE]

            def post(endpoint: str, form: dict[str, str]) -> int:
                return len(session.post(f"{base}/api/v1/{endpoint}", data=form).content)

            def raw() -> int:
                # The same distinct queries, as concurrently as the provider sends them.
                with concurrent.futures.ThreadPoolExecutor(QUERY_THREADS) as pool:
                    jobs = [
                        pool.submit(post, "query", {"query": t, "time": f"{now:.3f}"})
                        for t in pod_values
                    ]
                    jobs.append(
                        pool.submit(
                            post,
                            "query_range",
                            {
                                "query": range_query,
                                "start": f"{now - span:.3f}",
                                "end": f"{now:.3f}",
                                "step": f"{confirmation.interval.total_seconds():g}",
                            },
                        )
                    )
                    jobs += [
                        pool.submit(post, "query", {"query": t, "time": f"{now:.3f}"})
                        for t in others
                    ]
                    return sum(job.result() for job in jobs)

            body_bytes = raw()  # warms Prometheus' caches for both measurements
            usage = provider.fetch_usage(node_names, pod_keys, now=moment)
            assert len(usage.nodes) == args.nodes, len(usage.nodes)
            assert len(usage.pods) == args.pods, len(usage.pods)
            raw_times = timed(args.repeat, raw)
            fetch_times = timed(
                args.repeat, lambda: provider.fetch_usage(node_names, pod_keys, now=moment)
            )
            raw_seconds, fetch_seconds = min(raw_times), min(fetch_times)

    rows = [
        ("nodes / pods", f"{args.nodes:,} / {args.pods:,}"),
        ("samples backfilled", f"{int(setup['samples']):,}"),
        ("generate OpenMetrics", f"{setup['generate OpenMetrics']:.1f} s"),
        ("promtool backfill", f"{setup['promtool backfill']:.1f} s"),
        ("prometheus ready", f"{setup['prometheus start']:.1f} s"),
        ("response bodies", f"{body_bytes / 1e6:.1f} MB"),
        ("raw HTTP (baseline)", f"{raw_seconds:.2f} s (slowest {max(raw_times):.2f} s)"),
        ("fetch_usage", f"{fetch_seconds:.2f} s (slowest {max(fetch_times):.2f} s)"),
        ("fetch_usage / raw HTTP", f"{fetch_seconds / raw_seconds:.2f}x"),
        (
            f"target <= {TARGET_SECONDS:g} s",
            "met" if fetch_seconds <= TARGET_SECONDS else "MISSED",
        ),
        ("cpus", str(os.cpu_count())),
    ]
    width = max(len(k) for k, _ in rows)
    sys.stdout.write(f"{'measure'.ljust(width)}  value\n{'-' * width}  -----\n")
    for key, value in rows:
        sys.stdout.write(f"{key.ljust(width)}  {value}\n")
    return 0 if fetch_seconds <= TARGET_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
