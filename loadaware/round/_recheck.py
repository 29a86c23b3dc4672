"""The re-check just before each eviction: no stop asked for, the view of the
cluster within its bound, usage still fresh, the source still hot. It answers
as data (evict.Proceed, Skip or Stop), which the executor acts on."""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Collection

from loadaware import cluster, evict, metrics, plan, policy
from loadaware.errors import RefusedError

# Re-reading usage before every eviction would hammer the metrics source in a
# large round; a reading this recent still counts as fresh for the re-check. The
# sources are no finer: metrics-server scrapes every 15 s by default, and so do most
# Prometheus setups; at 30,000 pods a re-read cost a round about a second.
RECHECK_REUSE_SECONDS = 15.0


class Rechecker:
    """evict.Recheck for one round: `read_usage` gives usage as the round plans on
    it; a reading younger than `reuse_seconds` (by `clock`) is reused.

    It reads the nodes' usage only: whether a source is still over its targets is
    its node's usage, and the nodes' samples are what a stale or implausible source
    is refused on. Every pod's sample (150,000 at 5,000 nodes) read again every
    15 s cost the metrics source and loadaware more than the evictions did, and
    grew with the cluster rather than with the round. With `asked`, the nodes the
    re-checks will ask about (the plan's sources), only those are read and judged:
    judging the whole cluster's samples every 15 s cost a 5,000-node round more per
    eviction than its state did, for nodes no re-check looks at.

    A node is classified when a re-check first asks about it after a reading: its
    class is its own usage against its pool's targets, so classifying every node
    again at every reading (5,000 at 5,000 nodes) told nothing more. Where a pool's
    targets are distances from its mean (useDeviationThresholds), each node's class
    depends on every node's usage, and every node is classified at once."""

    def __init__(
        self,
        settings: policy.LoadAwarePolicy,
        snapshot: cluster.ClusterState,
        usage: metrics.Usage,
        *,
        read_usage: Callable[[cluster.ClusterState], metrics.Usage],
        clock: Callable[[], datetime.datetime],
        reuse_seconds: float = RECHECK_REUSE_SECONDS,
        check_cluster: Callable[[], None] | None = None,
        stop_requested: Callable[[], str | None] | None = None,
        asked: Collection[str] | None = None,
    ) -> None:
        self._settings = settings
        self._snapshot = snapshot
        self._each_alone = not any(p.use_deviation_thresholds for p in settings.node_pools)
        # What the usage is read for: the nodes asked about (all of them where a
        # node's class depends on every node's usage), no pods.
        nodes = snapshot.nodes
        if asked is not None and self._each_alone:
            wanted = frozenset(asked)
            nodes = tuple(n for n in snapshot.nodes if n.name in wanted)
        self._read_scope = dataclasses.replace(snapshot, nodes=nodes, pods=())
        self._usage = usage
        self._read_usage = read_usage
        self._clock = clock
        self._reuse_seconds = reuse_seconds
        self._check_cluster = check_cluster
        self._stop_requested = stop_requested
        self._classes: dict[str, str] = {}
        self._read_at: datetime.datetime | None = None
        self.classified = 0  # nodes classified so far: what a re-check costs grows with it

    def __call__(self, eviction: plan.Eviction) -> evict.RecheckOutcome:
        stop = self._stop_requested() if self._stop_requested is not None else None
        if stop is not None:
            return evict.Stop(evict.StopRequestedError(stop))
        if self._check_cluster is not None:
            try:
                self._check_cluster()
            except RefusedError as exc:
                # Fail closed: nothing is evicted on a view of the cluster too old.
                return evict.Stop(exc)
        now = self._clock()
        if self._read_at is None or (now - self._read_at).total_seconds() >= self._reuse_seconds:
            try:
                self._usage = self._read_usage(self._read_scope)
            except RefusedError as exc:
                # Fail closed: the source can no longer be vouched for.
                return evict.Stop(exc)
            self._classes = {} if self._each_alone else self._classify(self._snapshot)
            self._read_at = now
        # Only hotspot relief needs a hot source; a deschedule strategy's or
        # consolidation's pod leaves whatever its node's load.
        if eviction.reason == "hotspot" and self._class_of(eviction.node) != "hot":
            return evict.Skip(plan.SOURCE_NOT_HOT)
        return evict.PROCEED

    def _class_of(self, name: str) -> str | None:
        if name not in self._classes and self._each_alone:
            node = self._snapshot.nodes_by_name.get(name)
            if node is not None:
                alone = dataclasses.replace(
                    self._snapshot,
                    nodes=(node,),
                    pods=self._snapshot.pods_by_node.get(name, ()),
                )
                self._classes.update(self._classify(alone))
        return self._classes.get(name)

    def _classify(self, state: cluster.ClusterState) -> dict[str, str]:
        table = plan.classify_nodes(
            state,
            self._usage,
            self._settings.node_pools,
            {},
            allocatable_names=plan.allocatable_names(self._settings),
        )
        self.classified += len(table.names)
        return dict(zip(table.names, table.classes, strict=True))
