"""Proof of relief: after the evictions, wait (bounded) for samples that cover
only time after the moves, then judge each node the round changed.

A sample proves something about a node only if all it reflects happened after
the node's last change: for a relieved node, after its evicted pods stopped (the
pod is gone, or its deletionTimestamp, the kubelet's deadline, has passed); for
a landing node, after its replacements were Ready. A metrics-server value
reflects [timestamp - window, timestamp]; a Prometheus `rate(...[w])` value
reflects at least [timestamp - w, timestamp], and timestamp is the raw sample's
time, never the query's. So a sample is evidence when timestamp minus its
window is after the change.

The source is read no more often than it can have a newer sample (its scrape
interval or resolution), only for the nodes being judged, and not before the
first evidence could exist. verify.reliefTimeout bounds the wait after the
latest change; a node without evidence by then is unverified, with the reason.

What is expected of a node follows what the round did, not what it planned: its
usage before, minus the pods evicted from it, plus the replacements that landed
on it. A relieved node that did not improve, or a landing node that turned hot,
opens the breaker: the model was wrong about this cluster, and later rounds
should not trust it until someone looks.
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from loadaware import cluster, evict, metrics, plan, policy
from loadaware.errors import ClusterError, RefusedError

log = logging.getLogger(__name__)

# metrics-server's own default --metric-resolution, when no sample says its window.
DEFAULT_RESOLUTION_SECONDS = 60.0


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeRelief:
    """One node the round changed, judged on a sample taken after the change.

    role "relieved": a hot node pods were moved off; verdict relieved (at or
    under its targets), improved (lower than before, still over), not improved,
    or unverified; or a hot node no pod was moved off, still over its targets
    after the round: left hot, not judged on a sample (see relief_rows). role
    "landing": a node replacements landed on; verdict within targets, turned
    hot, or unverified. `why` says why unverified or left hot."""

    node: str
    before: Mapping[str, float]
    expected: Mapping[str, float]
    observed: Mapping[str, float] | None  # None: no sample covering only time after the change
    role: str = "relieved"
    verdict: str = "unverified"
    why: str = ""
    targets: Mapping[str, float] = field(default_factory=dict)
    # The sample must cover only time after this: the evicted pods stopped, the
    # replacements Ready.
    changed_by: datetime.datetime | None = None
    sample_time: datetime.datetime | None = None
    covers_from: datetime.datetime | None = None

    def error(self) -> dict[str, float]:
        """|observed - expected| per resource (utilisation ratio), where observed."""
        if self.observed is None:
            return {}
        return {
            r: round(abs(self.observed[r] - self.expected[r]), 4)
            for r in self.observed
            if r in self.expected
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceTiming:
    """How often the metrics source can have a newer sample, and how far back a
    sample's value reaches."""

    poll_seconds: float
    window_seconds: float  # at least this much of the past is in every value
    timeout: datetime.timedelta

    def covers_from(self, sample: metrics.UsageSample) -> datetime.datetime:
        window = max(sample.window_seconds, self.window_seconds)
        return sample.timestamp - datetime.timedelta(seconds=window)


def source_timing(settings: policy.LoadAwarePolicy, usage: metrics.Usage) -> SourceTiming:
    """The timing of the policy's source: Prometheus from its rateWindow and
    scrapeInterval, metrics-server from the windows its samples carry (its
    resolution). verify.reliefTimeout, when set, overrides the derived timeout."""
    source = settings.metrics.prometheus
    if source is not None:
        poll = source.scrape_interval.total_seconds()
        window = source.rate_window.total_seconds()
        derived = window + 2 * poll
    else:
        windows = [s.window_seconds for s in usage.nodes.values() if s.window_seconds > 0]
        # A sample's window is the time between the two scrapes it was computed
        # from: metrics-server's resolution.
        poll = window = max(windows, default=DEFAULT_RESOLUTION_SECONDS)
        derived = 2 * poll
    timeout = settings.verify.relief_timeout or datetime.timedelta(seconds=derived)
    return SourceTiming(poll_seconds=poll, window_seconds=window, timeout=timeout)


@dataclass(kw_only=True)
class _Watch:
    """One node being judged, and what is known so far."""

    node: str
    role: str  # "relieved" | "landing"
    before: Mapping[str, float]
    expected: dict[str, float]
    targets: Mapping[str, float]
    changes: list[datetime.datetime] = field(default_factory=list)
    stopping: list[str] = field(default_factory=list)  # evicted pods whose stop is not known
    sample: metrics.UsageSample | None = None  # the evidence, once there is some
    newest: metrics.UsageSample | None = None  # the newest sample seen, evidence or not
    pod_count: int | None = None  # pods bound to it when the evidence came, where judged

    @property
    def changed_by(self) -> datetime.datetime | None:
        if self.stopping:
            return None
        return max(self.changes, default=None)


@dataclass(frozen=True, kw_only=True)
class Relief:
    """What the relief check found: the audit record's relief, relief_verdict and
    relief_wait, and why to open the breaker (None: keep it closed)."""

    nodes: tuple[NodeRelief, ...] = ()
    verdict: str = ""
    wait: Mapping[str, Any] = field(default_factory=dict)
    breaker: str | None = None


@dataclass(frozen=True, kw_only=True)
class ReliefCheck:
    settings: policy.LoadAwarePolicy
    kube: evict.Kube
    read_usage: Callable[[cluster.ClusterState], metrics.Usage]
    clock: Callable[[], datetime.datetime]
    sleep: Callable[[float], None]
    stop_requested: Callable[[], str | None]


def verify_relief(
    check: ReliefCheck,
    snapshot: cluster.ClusterState,
    planned: plan.Plan,
    execution: evict.ExecutionReport,
    usage: metrics.Usage,
) -> Relief:
    """Wait for evidence and judge every node the round changed."""
    timing = source_timing(check.settings, usage)
    capacity = _Capacity(usage, plan.allocatable_names(check.settings))
    watches = _watches(snapshot, planned, execution, capacity)
    if not watches:
        return Relief(verdict="no hotspot to verify")
    started = check.clock()
    reads, problem, stop = _wait_for_evidence(check, snapshot, watches, timing, started)
    wait = {
        "timeoutSeconds": timing.timeout.total_seconds(),
        "pollSeconds": timing.poll_seconds,
        "windowSeconds": timing.window_seconds,
        "waitedSeconds": round((check.clock() - started).total_seconds(), 3),
        "reads": reads,
        **({"stopped": stop} if stop else {}),
    }
    nodes = snapshot.nodes_by_name
    judged = [
        _judge(watch, nodes[watch.node], timing, capacity, problem, stop)
        for watch in sorted(watches.values(), key=lambda w: (w.role != "relieved", w.node))
    ]
    verdict, breaker = _relief_verdict(judged)
    hotspot = any(w.role == "relieved" for w in watches.values())
    return Relief(
        nodes=tuple(judged),
        verdict=verdict if hotspot or breaker else "no hotspot to verify",
        wait=wait,
        breaker=breaker,
    )


@dataclass(frozen=True)
class _Capacity:
    """A named resource's capacity on a node: from its capacity query, else the
    node's allocatable resource it names (as classification has it)."""

    usage: metrics.Usage
    allocatable_names: Mapping[str, str]

    def __call__(self, node: cluster.Node, resource: str) -> float:
        queried = self.usage.capacity.get(node.name, {}).get(resource)
        if queried:
            return queried
        return node.allocatable_extended.get(self.allocatable_names.get(resource, ""), 0.0)


def _watches(
    snapshot: cluster.ClusterState,
    planned: plan.Plan,
    execution: evict.ExecutionReport,
    capacity: _Capacity,
) -> dict[str, _Watch]:
    """The nodes to judge: hot sources of evicted pods (relieved) and the nodes
    their replacements became Ready on (landing)."""
    reports = {n.name: n for n in planned.nodes}
    evictions = {e.pod: e for e in planned.evictions}
    nodes = snapshot.nodes_by_name
    replaced = {r.pod: r for r in execution.replacements}
    watches: dict[str, _Watch] = {}

    def watch(name: str, role: str) -> _Watch:
        found = watches.get(name)
        if found is None:
            node = reports[name]
            found = watches[name] = _Watch(
                node=name,
                role=role,
                before=node.before,
                expected=dict(node.before),
                targets=node.high,
            )
        return found

    for outcome in execution.outcomes:
        eviction = evictions.get(outcome.pod)
        if outcome.result != "evicted" or eviction is None or outcome.node not in reports:
            continue
        share = _share(eviction, nodes[outcome.node], capacity)
        if eviction.reason == "hotspot":
            source = watch(outcome.node, "relieved")
        elif outcome.node in watches:
            source = watches[outcome.node]
        else:
            source = None
        if source is not None:
            for r, value in share.items():
                if r in source.expected:
                    source.expected[r] -= value
            replacement = replaced.get(outcome.pod)
            stopped = replacement.predecessor_stopped_by if replacement else None
            source.changes.append(max(stopped or outcome.at, outcome.at))
            if stopped is None:
                source.stopping.append(outcome.pod)
        replacement = replaced.get(outcome.pod)
        if (
            replacement is None
            or not replacement.ready
            or replacement.node is None
            or replacement.node not in reports
        ):
            continue
        landing = watch(replacement.node, "landing")
        for r, value in _share(eviction, nodes[replacement.node], capacity).items():
            if r in landing.expected:
                landing.expected[r] += value
        landing.changes.append(replacement.ready_at or outcome.at)
    for w in watches.values():
        w.expected = {r: round(max(v, 0.0), 4) for r, v in w.expected.items()}
    return watches


def _share(eviction: plan.Eviction, node: cluster.Node, capacity: _Capacity) -> dict[str, float]:
    """The pod's usage as a share of the node's allocatable."""
    named = {}
    for resource, value in eviction.named.items():
        room = capacity(node, resource)
        named[resource] = value / room if room else 0.0
    return named | {
        "cpu": eviction.cpu_cores / (node.allocatable_cpu_millicores / 1000)
        if node.allocatable_cpu_millicores
        else 0.0,
        "memory": eviction.memory_bytes / node.allocatable_memory_bytes
        if node.allocatable_memory_bytes
        else 0.0,
        plan.POD_COUNT: 1 / node.allocatable_pods if node.allocatable_pods else 0.0,
    }


def _wait_for_evidence(
    check: ReliefCheck,
    snapshot: cluster.ClusterState,
    watches: dict[str, _Watch],
    timing: SourceTiming,
    started: datetime.datetime,
) -> tuple[int, str, str | None]:
    """Poll until every node has evidence, the timeout passes after the latest
    change, or a stop is asked for. Returns (reads, last read problem, stop)."""
    scope = cluster.ClusterState(
        nodes=tuple(snapshot.nodes_by_name[name] for name in sorted(watches)), pods=()
    )
    window = datetime.timedelta(seconds=timing.window_seconds)
    poll = datetime.timedelta(seconds=timing.poll_seconds)
    reads, problem = 0, ""
    last_read: datetime.datetime | None = None
    while True:
        now = check.clock()
        _learn_stops(check.kube, watches, now)
        pending = [w for w in watches.values() if w.sample is None]
        if not pending:
            return reads, problem, None
        if (stop := check.stop_requested()) is not None:
            return reads, problem, stop
        known = [w.changed_by for w in watches.values() if w.changed_by is not None]
        deadline = max([started, *known]) + timing.timeout
        # No sample can be evidence before a change plus the source's window, and
        # the source has nothing newer until its next scrape.
        earliest = [w.changed_by + window for w in pending if w.changed_by is not None]
        next_read = None
        if earliest:
            next_read = min(earliest)
            if last_read is not None:
                next_read = max(next_read, last_read + poll)
        final = now >= deadline and earliest and (last_read is None or last_read < deadline)
        if (next_read is not None and next_read <= now) or final:
            reads += 1
            last_read = now
            problem = _read_evidence(check, scope, pending, timing)
            if final:
                return reads, problem, None
            continue
        if now >= deadline:
            return reads, problem, None
        wake = min(deadline, next_read or deadline)
        if any(w.stopping for w in pending):
            wake = min(wake, now + poll)
        check.sleep(max((wake - now).total_seconds(), 0.001))


def _read_evidence(
    check: ReliefCheck,
    scope: cluster.ClusterState,
    pending: list[_Watch],
    timing: SourceTiming,
) -> str:
    """One read of the judged nodes; keeps each sample that is evidence. Returns
    what went wrong with the read, or ""."""
    try:
        fresh = check.read_usage(scope)
    except (RefusedError, ClusterError) as exc:
        return f"usage could not be read ({exc.summary()})"
    for w in pending:
        sample = fresh.nodes.get(w.node)
        if sample is None:
            continue
        w.newest = sample
        changed = w.changed_by
        if changed is not None and timing.covers_from(sample) > changed:
            w.sample = sample
            if plan.POD_COUNT in w.targets:
                w.pod_count = _pod_count(check.kube, w.node)
    return ""


def _pod_count(kube: evict.Kube, node: str) -> int | None:
    """Pods holding a slot on the node now: bound and not finished."""
    try:
        pods = kube.list_node_pods(node)
    except ClusterError:
        return None
    finished = ("Succeeded", "Failed")
    return sum(1 for p in pods if (p.get("status") or {}).get("phase") not in finished)


def _learn_stops(kube: evict.Kube, watches: dict[str, _Watch], now: datetime.datetime) -> None:
    """For evicted pods whose stop the executor did not see: gone now, or the
    deletionTimestamp they carry."""
    for watch in watches.values():
        still: list[str] = []
        for key in watch.stopping:
            namespace, _, name = key.partition("/")
            try:
                live = kube.read_pod(namespace, name)
            except ClusterError:
                still.append(key)
                continue
            meta = (live or {}).get("metadata") or {}
            deadline = evict.parse_rfc3339(meta.get("deletionTimestamp"))
            if live is None or not meta.get("deletionTimestamp"):
                # Gone, or back under its name (a StatefulSet): stopped by now.
                watch.changes.append(now)
            elif deadline is not None:
                watch.changes.append(deadline)
            else:
                still.append(key)
        watch.stopping = still


def _judge(
    watch: _Watch,
    node: cluster.Node,
    timing: SourceTiming,
    capacity: _Capacity,
    problem: str,
    stop: str | None,
) -> NodeRelief:
    changed = watch.changed_by
    common = {
        "node": watch.node,
        "role": watch.role,
        "before": watch.before,
        "expected": watch.expected,
        "targets": watch.targets,
        "changed_by": changed,
    }
    sample = watch.sample
    if sample is None:
        return NodeRelief(
            **common,
            observed=None,
            verdict="unverified",
            why=_why_unverified(watch, timing, problem, stop),
            sample_time=watch.newest.timestamp if watch.newest else None,
            covers_from=timing.covers_from(watch.newest) if watch.newest else None,
        )
    observed = {
        "cpu": round(sample.cpu_cores / (node.allocatable_cpu_millicores / 1000), 4),
        "memory": round(sample.memory_bytes / node.allocatable_memory_bytes, 4),
    }
    if watch.pod_count is not None and node.allocatable_pods:
        observed[plan.POD_COUNT] = round(watch.pod_count / node.allocatable_pods, 4)
    for resource, value in sample.named.items():
        room = capacity(node, resource)
        if resource in watch.targets and room:
            observed[resource] = round(value / room, 4)
    over = [r for r, limit in watch.targets.items() if r in observed and observed[r] > limit]
    if watch.role == "landing":
        verdict = "turned hot" if over else "within targets"
    elif not over:
        verdict = "relieved"
    elif all(observed[r] < watch.before[r] for r in over):
        verdict = "improved"
    else:
        verdict = "not improved"
    return NodeRelief(
        **common,
        observed=observed,
        verdict=verdict,
        sample_time=sample.timestamp,
        covers_from=timing.covers_from(sample),
    )


def _why_unverified(watch: _Watch, timing: SourceTiming, problem: str, stop: str | None) -> str:
    if stop is not None:
        return f"the round was told to stop ({stop}) while waiting for evidence"
    if watch.stopping:
        return f"evicted pod {watch.stopping[0]} was not seen stopping"
    timeout = f"{timing.timeout.total_seconds():g}s"
    if problem:
        return f"{problem}, and no sample since within {timeout}"
    after = evict.rfc3339(watch.changed_by) if watch.changed_by else "the change"
    if watch.newest is None:
        return f"no sample for the node within {timeout} after {after}"
    covers = evict.rfc3339(timing.covers_from(watch.newest))
    return (
        f"no sample covering only time after {after} within {timeout} "
        f"(the newest covers from {covers})"
    )


def _relief_verdict(relief: list[NodeRelief]) -> tuple[str, str | None]:
    """The relief check's verdict on the nodes it judged (the round's verdict builds
    on it: see round_verdict), and why to open the breaker (None: keep it closed)."""

    def named(verdict: str, role: str) -> list[str]:
        return [r.node for r in relief if r.verdict == verdict and r.role == role]

    worse, hot = named("not improved", "relieved"), named("turned hot", "landing")
    problems = []
    if worse:
        problems.append(f"hotspot did not improve on {', '.join(worse)}")
    if hot:
        problems.append(f"landing node turned hot: {', '.join(hot)}")
    if problems:
        reason = "; ".join(problems)
        return reason, reason
    unverified = [r.node for r in relief if r.verdict == "unverified"]
    if unverified:
        return f"partly unverified: no evidence yet for {', '.join(unverified)}", None
    improved = named("improved", "relieved")
    if improved:
        return f"improved: still over its targets: {', '.join(improved)}", None
    return "relieved", None
