"""The cluster cache tells listeners each change it applies, in order.

Covers: an eviction and its replacement arrive as numbered changes of the pods
kind (the pod marked for deletion, then gone; the replacement added unbound,
then bound), each with the object before and after; `counted_snapshot` names
the last change the snapshot includes; a cut stream's relist is told as one
`relisted` change of the kind; a listener that raises neither stops the watch
nor the other listeners.
"""

from __future__ import annotations

import pathlib
import threading
from collections.abc import Iterator

import pytest

from loadaware import cluster, kube, sim
from tests.lib.cache import all_watching, caught_up
from tests.lib.sim import sim_server


@pytest.fixture
def server() -> Iterator[sim.SimServer]:
    with sim_server(watch_bookmark_seconds=0.2) as running:
        yield running


@pytest.fixture
def cache(server: sim.SimServer, tmp_path: pathlib.Path) -> Iterator[cluster.ClusterCache]:
    config = server.write_kubeconfig(tmp_path / "kubeconfig")
    client = kube.api_client(kube.ClientSettings(kubeconfig=str(config)))
    with cluster.ClusterCache(client, watch_seconds=(30.0, 30.0)) as running:
        assert running.wait_synced(20)
        yield running


class _Heard:
    def __init__(self) -> None:
        self.changes: list[cluster.CacheChange] = []
        self._lock = threading.Lock()

    def __call__(self, change: cluster.CacheChange) -> None:
        with self._lock:
            self.changes.append(change)

    def of(self, kind: str) -> list[cluster.CacheChange]:
        with self._lock:
            return [c for c in self.changes if c.kind == kind]


def test_an_eviction_and_its_replacement_are_told_in_order(
    server: sim.SimServer, cache: cluster.ClusterCache
) -> None:
    heard = _Heard()
    cache.add_listener(heard)
    _, first = cache.counted_snapshot()
    pod = next(p for p in cache.snapshot().pods if p.owner and p.owner.kind == "ReplicaSet")
    server.sim.evict(pod.namespace, pod.name)
    server.advance(30)
    caught_up(cache, server)
    state, last = cache.counted_snapshot()
    sequences = [c.sequence for c in heard.changes]
    assert sequences == list(range(first + 1, last + 1))
    mine = [c for c in heard.of("pods") if (c.old or c.new).key == pod.key]
    marked = [
        i
        for i, c in enumerate(mine)
        if c.old.deletion_timestamp is None
        if c.new is not None and c.new.deletion_timestamp is not None
    ]
    assert len(marked) == 1
    assert mine[-1].new is None
    assert mine[-1].old.deletion_timestamp is not None
    added = [c for c in heard.of("pods") if c.old is None]
    assert added
    replacement = added[0].new.key
    assert added[0].new.node_name is None
    bound = [
        c
        for c in heard.of("pods")
        if c.old is not None and c.old.key == replacement and c.old.node_name is None
        if c.new is not None and c.new.node_name is not None
    ]
    assert len(bound) == 1
    assert replacement in {p.key for p in state.pods if p.node_name == bound[0].new.node_name}


def test_a_relist_is_told_once_for_the_kind(
    server: sim.SimServer, cache: cluster.ClusterCache
) -> None:
    heard = _Heard()
    cache.add_listener(heard)
    all_watching(cache, server)
    server.sim.close_watches()
    pod = next(p for p in cache.snapshot().pods if p.owner and p.owner.kind == "ReplicaSet")
    server.sim.evict(pod.namespace, pod.name)
    server.advance(30)
    server.wait_for(lambda: cache.stats()["nodes"]["relists"].get("dropped") == 1, timeout=20)
    caught_up(cache, server)
    relisted = [c for c in heard.of("nodes") if c.relisted]
    assert len(relisted) == 1
    assert relisted[0].old is None
    assert relisted[0].new is None


def test_a_listener_that_raises_stops_nothing(
    server: sim.SimServer, cache: cluster.ClusterCache
) -> None:
    def broken(change: cluster.CacheChange) -> None:
        raise RuntimeError("broken listener")

    heard = _Heard()
    cache.add_listener(broken)
    cache.add_listener(heard)
    pod = next(p for p in cache.snapshot().pods if p.owner and p.owner.kind == "ReplicaSet")
    server.sim.evict(pod.namespace, pod.name)
    server.advance(30)
    caught_up(cache, server)
    assert heard.of("pods")
    assert all(s["relists"] == {} for s in cache.stats().values())
