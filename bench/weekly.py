"""Weeks of node-exporter and cAdvisor history with a weekday peak, for forecasts.

A small cluster whose workloads use more from 09:00 to 10:00 UTC on weekdays
(`peak`) than the rest of the week (`base`). Each week the workloads' pods are
recreated under new names (a rollout every Sunday at 00:00: a new
pod-template-hash and new suffixes), as a real cluster's pods are, so history
follows workloads and not pod names. Nodes run the same pods every week; a
node's usage is its base plus its pods'.

Samples every `step` seconds (15 minutes by default, which keeps five weeks
small); queries must then use a rate window of at least two steps. Counters
grow at the usage of the segment's start, so rate() over whole segments
recovers it exactly. History runs to `end`, which may lie after the test's
`now` (an instant query at `now` never sees later samples): what really happens
during the coming peak, for the proof after it.

Backfilled with `promtool tsdb create-blocks-from openmetrics` and served by
bench.prometheus.PrometheusServer.
"""

from __future__ import annotations

import datetime
import pathlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from bench import prometheus as lib

GiB = 1024**3
MiB = 1024**2
WEEK_SECONDS = 7 * 86400
# Kubernetes' suffix alphabet: what pod-template-hashes and pod suffixes are made of.
SAFE = "bcdfghjklmnpqrstvwxz2456789"


def is_peak(moment: float, *, start_hour: int = 9, hours: int = 1) -> bool:
    """Weekdays, start_hour:00 to start_hour+hours:00 UTC."""
    at = datetime.datetime.fromtimestamp(moment, datetime.UTC)
    return at.weekday() < 5 and start_hour <= at.hour < start_hour + hours


@dataclass(frozen=True)
class WorkloadTruth:
    """A Deployment's replicas: what each uses off and at the peak, and on which nodes."""

    namespace: str
    name: str
    nodes: Sequence[str]  # one entry per replica
    base: tuple[float, float]  # cpu cores, memory bytes per replica
    peak: tuple[float, float]
    # History starts this many seconds before `now` (None: at the history's start).
    age: float | None = None
    # Extra cpu at the peak on this one day only (unix start of the day): a surprise.
    surprise: tuple[float, float] | None = None

    def usage(self, moment: float) -> tuple[float, float]:
        cpu, memory = self.peak if is_peak(moment) else self.base
        if self.surprise is not None and is_peak(moment):
            day, extra = self.surprise
            if day <= moment < day + 86400:
                cpu += extra
        return cpu, memory


def _code(seed: int, length: int) -> str:
    out = []
    for _ in range(length):
        seed = (seed * 1103515245 + 12345) % 2**31
        out.append(SAFE[seed % len(SAFE)])
    return "".join(out)


def pod_name(workload: str, week: int, replica: int) -> str:
    """The replica's name in a week: <workload>-<pod-template-hash>-<suffix>."""
    seed = sum(map(ord, workload)) * 131 + week
    return f"{workload}-{_code(seed, 9)}-{_code(seed * 7 + replica + 1, 5)}"


@dataclass
class WeeklyCluster:
    """Nodes (name -> base cpu cores, memory bytes) and workloads; `now` on a step."""

    now: float
    nodes: Mapping[str, tuple[float, float]]
    workloads: Sequence[WorkloadTruth]
    weeks: int = 5
    step: float = 900.0
    # Seconds of history after `now` (the coming peak, as it really happens).
    after: float = 2 * 3600.0
    node_age: Mapping[str, float] = field(default_factory=dict)

    @property
    def start(self) -> float:
        return self.now - self.weeks * WEEK_SECONDS

    def week_of(self, moment: float) -> int:
        """Rollouts happen on Sundays at 00:00 UTC (the unix epoch was a Thursday)."""
        return int((moment - 3 * 86400) // WEEK_SECONDS)

    def current_pods(self) -> dict[str, tuple[WorkloadTruth, str]]:
        """Pod key -> (workload, node) for the pods running at `now`."""
        week = self.week_of(self.now)
        return {
            f"{w.namespace}/{pod_name(w.name, week, i)}": (w, node)
            for w in self.workloads
            for i, node in enumerate(w.nodes)
        }

    def node_usage(self, node: str, moment: float) -> tuple[float, float]:
        cpu, memory = self.nodes[node]
        for workload in self.workloads:
            if workload.age is not None and moment < self.now - workload.age:
                continue
            replicas = sum(1 for n in workload.nodes if n == node)
            pod_cpu, pod_memory = workload.usage(moment)
            cpu += replicas * pod_cpu
            memory += replicas * pod_memory
        return cpu, memory

    def families(self) -> list[lib.Family]:
        times = [
            self.start + k * self.step
            for k in range(int((self.now + self.after - self.start) // self.step) + 1)
        ]
        cpu = lib.Family("node_cpu_seconds", "counter")
        total = lib.Family("node_memory_MemTotal_bytes", "gauge")
        available = lib.Family("node_memory_MemAvailable_bytes", "gauge")
        for node in self.nodes:
            first = self.now - self.node_age.get(node, self.now - self.start)
            moments = [t for t in times if t >= first]
            base = {"instance": f"{node}:9100", "job": "node-exporter", "node": node}
            cpu.add(
                {**base, "cpu": "0", "mode": "user"},
                _counter(moments, lambda t, n=node: self.node_usage(n, t)[0]),
            )
            cpu.add({**base, "cpu": "0", "mode": "idle"}, ((t, 1000.0) for t in moments))
            total.add(base, ((t, 64.0 * GiB) for t in moments))
            available.add(base, ((t, 64.0 * GiB - self.node_usage(node, t)[1]) for t in moments))
        usage = lib.Family("container_cpu_usage_seconds", "counter")
        working_set = lib.Family("container_memory_working_set_bytes", "gauge")
        for workload in self.workloads:
            first = self.start if workload.age is None else self.now - workload.age
            alive = [t for t in times if t >= first]
            by_week: dict[int, list[float]] = {}
            for moment in alive:
                by_week.setdefault(self.week_of(moment), []).append(moment)
            for week, moments in sorted(by_week.items()):
                for replica, node in enumerate(workload.nodes):
                    labels = {
                        "namespace": workload.namespace,
                        "pod": pod_name(workload.name, week, replica),
                        "container": "app",
                        "node": node,
                        "instance": f"{node}:10250",
                        "job": "kubelet",
                    }
                    usage.add(labels, _counter(moments, lambda t, w=workload: w.usage(t)[0]))
                    working_set.add(labels, ((t, workload.usage(t)[1]) for t in moments))
        return [cpu, total, available, usage, working_set]

    def backfill(self, workdir: pathlib.Path) -> pathlib.Path:
        """The TSDB directory, backfilled."""
        openmetrics = workdir / "weekly.om"
        with openmetrics.open("w") as out:
            lib.write_openmetrics([f for f in self.families() if f.series], out)
        tsdb = workdir / "tsdb"
        lib.backfill(openmetrics, tsdb, max_block_duration="168h")
        openmetrics.unlink()
        return tsdb


def _counter(moments: Iterable[float], rate: Callable[[float], float]) -> list[tuple[float, float]]:
    """A counter growing over each segment at the rate of its start."""
    points: list[tuple[float, float]] = []
    value, previous = 100.0, None
    for moment in moments:
        if previous is not None:
            value += rate(previous) * (moment - previous)
        points.append((moment, value))
        previous = moment
    return points
