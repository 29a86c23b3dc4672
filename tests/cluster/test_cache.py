"""The cluster cache against the simulated API: what it holds is what a fresh list
gives, after every kind of change; it relists after 410 Gone, a cut stream and an
API server restart, counting each cause; it says how old it is and refuses a view
older than its bound; and it answers the evictor's reads without a request."""

from __future__ import annotations

import datetime
import pathlib
import threading
import time
from collections.abc import Iterator

import kubernetes.client
import pytest

from loadaware import cluster, kube, sim
from loadaware.errors import RefusedError
from loadaware.kube import ClientSettings
from tests.lib.cache import all_watching, caught_up
from tests.lib.sim import sim_server


@pytest.fixture
def server() -> Iterator[sim.SimServer]:
    # Bookmarks every 0.2 s: a quiet kind's age stays well under any bound tested.
    with sim_server(watch_bookmark_seconds=0.2) as running:
        yield running


@pytest.fixture
def client(server: sim.SimServer, tmp_path: pathlib.Path) -> kubernetes.client.ApiClient:
    config = server.write_kubeconfig(tmp_path / "kubeconfig")
    return kube.api_client(ClientSettings(kubeconfig=str(config)))


@pytest.fixture
def cache(
    server: sim.SimServer, client: kubernetes.client.ApiClient
) -> Iterator[cluster.ClusterCache]:
    with cluster.ClusterCache(client, watch_seconds=(30.0, 30.0)) as running:
        assert running.wait_synced(20)
        yield running


def _fresh(client: kubernetes.client.ApiClient) -> cluster.ClusterState:
    return cluster.read_cluster(client=client)


def _evictable(state: cluster.ClusterState) -> cluster.Pod:
    return next(p for p in state.pods if p.owner is not None and p.owner.kind == "ReplicaSet")


def test_a_synced_cache_holds_what_a_fresh_list_gives(
    cache: cluster.ClusterCache, client: kubernetes.client.ApiClient
) -> None:
    assert cache.snapshot() == _fresh(client)


def test_evictions_and_their_replacements_arrive_as_events(
    server: sim.SimServer, cache: cluster.ClusterCache, client: kubernetes.client.ApiClient
) -> None:
    before = cache.snapshot()
    for pod in [p for p in before.pods if p.owner and p.owner.kind == "ReplicaSet"][:3]:
        server.sim.evict(pod.namespace, pod.name)
    server.advance(30)
    caught_up(cache, server)
    after = cache.snapshot()
    assert after == _fresh(client)
    assert after != before
    stats = cache.stats()
    assert stats["pods"]["events"] > 0
    assert stats["pods"]["relists"] == {}


def test_workload_and_priority_class_changes_complete_the_pods_again(
    server: sim.SimServer, cache: cluster.ClusterCache, client: kubernetes.client.ApiClient
) -> None:
    before = cache.snapshot()
    pod = _evictable(before)
    apps = kubernetes.client.AppsV1Api(client)
    # The ReplicaSet loses its Deployment: its pods' workload is the ReplicaSet now.
    assert pod.owner is not None
    apps.patch_namespaced_replica_set(
        pod.owner.name, pod.namespace, {"metadata": {"ownerReferences": None}}
    )
    scheduling = kubernetes.client.SchedulingV1Api(client)
    scheduling.create_priority_class(
        {"metadata": {"name": "everything"}, "value": 7, "globalDefault": True}
    )
    caught_up(cache, server)
    after = cache.snapshot()
    assert after == _fresh(client)
    moved = next(p for p in after.pods if p.key == pod.key)
    assert moved.workload is not None
    assert moved.workload.kind == "ReplicaSet"
    # The pod seen by the earlier snapshot is unchanged: snapshots are values.
    assert next(p for p in before.pods if p.key == pod.key).workload != moved.workload


def test_a_snapshot_with_nothing_changed_is_the_same_object(
    cache: cluster.ClusterCache,
) -> None:
    assert cache.snapshot() is cache.snapshot()


def test_410_gone_relists_that_kind_and_counts_it(
    server: sim.SimServer, cache: cluster.ClusterCache, client: kubernetes.client.ApiClient
) -> None:
    all_watching(cache, server)
    assert server.sim.expire_watches() == len(cache.versions())
    pod = _evictable(cache.snapshot())
    server.sim.evict(pod.namespace, pod.name)
    server.advance(30)
    server.wait_for(lambda: cache.stats()["pods"]["relists"].get("expired") == 1, timeout=20)
    caught_up(cache, server)
    assert cache.snapshot() == _fresh(client)


def test_a_watch_answered_410_relists_that_kind(
    server: sim.SimServer, client: kubernetes.client.ApiClient
) -> None:
    with cluster.ClusterCache(client, watch_seconds=(1.0, 1.0)) as cache:
        assert cache.wait_synced(20)
        # The next request on pods is the watch started when this one times out.
        server.faults.add(path="/api/v1/pods", method="GET", status=410, times=1)
        server.wait_for(lambda: cache.stats()["pods"]["relists"].get("expired") == 1, timeout=20)
        assert cache.snapshot() == _fresh(client)


def test_a_cut_stream_relists_and_counts_it(
    server: sim.SimServer, cache: cluster.ClusterCache, client: kubernetes.client.ApiClient
) -> None:
    all_watching(cache, server)
    assert server.sim.close_watches() == len(cache.versions())
    pod = _evictable(cache.snapshot())
    server.sim.evict(pod.namespace, pod.name)
    server.advance(30)
    server.wait_for(lambda: cache.stats()["nodes"]["relists"].get("dropped") == 1, timeout=20)
    caught_up(cache, server)
    assert cache.snapshot() == _fresh(client)


def test_an_api_server_restart_relists_every_kind(
    server: sim.SimServer, cache: cluster.ClusterCache, client: kubernetes.client.ApiClient
) -> None:
    server.restart()
    pod = _evictable(cache.snapshot())
    server.sim.evict(pod.namespace, pod.name)
    server.advance(30)
    server.wait_for(
        lambda: all(sum(s["relists"].values()) >= 1 for s in cache.stats().values()), timeout=20
    )
    caught_up(cache, server)
    assert cache.snapshot() == _fresh(client)


def _watches_by_resource(server: sim.SimServer) -> dict[str, int]:
    return {r: n for (verb, r), n in server.sim.requests.counts().items() if verb == "watch"}


def test_the_server_ending_a_watch_at_its_timeout_is_no_relist(
    server: sim.SimServer, client: kubernetes.client.ApiClient
) -> None:
    with cluster.ClusterCache(client, watch_seconds=(1.0, 1.0)) as cache:
        assert cache.wait_synced(20)
        kinds = len(cache.versions())
        lists = server.sim.requests.total("list")
        opened = _watches_by_resource(server)

        def every_kind_rewatched() -> bool:
            # Two more watches of a kind: at least one of its watches was ended by
            # the server's timeout and followed by the next, whether or not the
            # first was open yet when counting began.
            now = _watches_by_resource(server)
            return sum(now[r] >= opened.get(r, 0) + 2 for r in now) == kinds

        # Each watch lasts about 1 s, so this takes about 2 s; the deadline only
        # bounds a machine so loaded that a thread waits seconds for its turn.
        server.wait_for(every_kind_rewatched, timeout=120)
        assert server.sim.requests.total("list") == lists
        assert all(s["relists"] == {} for s in cache.stats().values())


def test_age_grows_while_the_api_is_gone_and_the_round_is_refused(
    server: sim.SimServer, cache: cluster.ClusterCache
) -> None:
    cache.check_fresh(datetime.timedelta(seconds=5))
    ages = cache.ages()
    assert all(age is not None and age < 5 for age in ages.values())
    server.stop()
    server.sim.close_connections()
    server.wait_for(lambda: (cache.age() or 0) > 1.0, timeout=20)
    with pytest.raises(RefusedError) as refused:
        cache.check_fresh(datetime.timedelta(seconds=1))
    assert refused.value.reference == "stale-cluster-cache"
    assert "older than 1s" in str(refused.value)


def test_a_cache_that_never_listed_refuses(client: kubernetes.client.ApiClient) -> None:
    unstarted = cluster.ClusterCache(client)
    with pytest.raises(RefusedError, match="never listed"):
        unstarted.check_fresh(datetime.timedelta(minutes=2))


def test_the_evictors_reads_are_answered_from_memory(
    server: sim.SimServer, cache: cluster.ClusterCache, client: kubernetes.client.ApiClient
) -> None:
    server.sim.requests.clear()
    state = cache.snapshot()
    pod = _evictable(state)
    assert pod.node_name is not None
    read = cache.read_pod(pod.namespace, pod.name)
    assert read is not None
    assert read["metadata"]["uid"] == pod.uid
    assert read["spec"]["nodeName"] == pod.node_name
    assert read["metadata"]["ownerReferences"][0]["uid"] == pod.owner.uid  # type: ignore[union-attr]
    selector = ",".join(f"{k}={v}" for k, v in sorted(pod.labels.items()))
    siblings = cache.list_pods(pod.namespace, selector)
    live = kubernetes.client.CoreV1Api(client).list_namespaced_pod(
        pod.namespace, label_selector=selector
    )
    assert {p["metadata"]["name"] for p in siblings} == {p.metadata.name for p in live.items}
    on_node = {p["metadata"]["name"] for p in cache.list_node_pods(pod.node_name)}
    assert on_node == {p.name for p in state.pods if p.node_name == pod.node_name}
    assert {n["metadata"]["name"] for n in cache.list_nodes()} == {n.name for n in state.nodes}
    assert cache.read_pod(pod.namespace, "no-such-pod") is None
    counts = server.sim.requests.counts()
    assert counts.get(("list", "pods"), 0) == 1  # the comparison above, not the cache
    assert counts.get(("get", "pods"), 0) == 0


def test_pods_listed_by_labels_follow_relabelling_and_replacement(
    server: sim.SimServer, cache: cluster.ClusterCache, client: kubernetes.client.ApiClient
) -> None:
    core = kubernetes.client.CoreV1Api(client)
    state = cache.snapshot()
    pod = _evictable(state)
    for tier in ("first", "moved"):
        core.patch_namespaced_pod(pod.name, pod.namespace, {"metadata": {"labels": {"tier": tier}}})
    evicted = next(
        p
        for p in state.pods
        if p.owner is not None and p.owner.kind == "ReplicaSet" and p.key != pod.key
    )
    server.sim.evict(evicted.namespace, evicted.name)
    server.advance(30)
    caught_up(cache, server)
    selectors = {
        "tier=moved",
        "tier=first",
        ",".join(f"{k}={v}" for k, v in sorted(pod.labels.items())),
        ",".join(f"{k}={v}" for k, v in sorted(evicted.labels.items())),
        *(f"{k}={v}" for k, v in pod.labels.items()),
        f"{next(iter(pod.labels))}=no-such-value",
        "",
    }
    for namespace in {pod.namespace, evicted.namespace}:
        for selector in sorted(selectors):
            live = core.list_namespaced_pod(namespace, label_selector=selector).items
            cached = cache.list_pods(namespace, selector)
            assert [p["metadata"]["name"] for p in cached] == sorted(
                p.metadata.name for p in live
            ), selector
    assert [p["metadata"]["name"] for p in cache.list_pods(pod.namespace, "tier=moved")] == [
        pod.name
    ]


def test_stop_ends_every_watch_thread_at_once(client: kubernetes.client.ApiClient) -> None:
    # Right after the first lists, the threads are opening their watches: a stream
    # that opens after stop() looked for streams to shut must still end.
    before = set(threading.enumerate())
    cache = cluster.ClusterCache(client)
    cache.start()
    assert cache.wait_synced(20)
    started = time.monotonic()
    cache.stop()
    assert time.monotonic() - started < 2.0
    left = [t.name for t in set(threading.enumerate()) - before if t.name.startswith("cache-")]
    assert left == []
