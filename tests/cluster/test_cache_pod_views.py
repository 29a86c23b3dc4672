"""The cluster cache's pod views (what `read_pod`, `list_pods` and `list_node_pods`
answer), built once per change of a pod and shared by the reads until the next.

Covers: every view, kept from before the pods' changes or built after them, equals
the one built field by field (as the cache built each at every read before views
were kept) from the pod as a fresh list gives it (Ready, Pending and unschedulable,
terminating), through each of the three reads; a read with nothing changed gives
the same view again; a watch event that changes the pod (new labels, an eviction
marking it terminating) gives a new view with the change, and leaves the view read
before it as it was; a deleted pod's view is held by no entry of the cache once the
deletion is heard.
"""

from __future__ import annotations

import datetime
import gc
import pathlib
from collections.abc import Iterator
from typing import Any

import kubernetes.client
import pytest

from loadaware import cluster, kube, sim
from loadaware.cluster import _cache_objects
from tests.lib.cache import caught_up
from tests.lib.sim import sim_server


@pytest.fixture
def server() -> Iterator[sim.SimServer]:
    with sim_server(watch_bookmark_seconds=0.2) as running:
        yield running


@pytest.fixture
def client(server: sim.SimServer, tmp_path: pathlib.Path) -> kubernetes.client.ApiClient:
    config = server.write_kubeconfig(tmp_path / "kubeconfig")
    return kube.api_client(kube.ClientSettings(kubeconfig=str(config)))


@pytest.fixture
def cache(client: kubernetes.client.ApiClient) -> Iterator[cluster.ClusterCache]:
    with cluster.ClusterCache(client, watch_seconds=(30.0, 30.0)) as running:
        assert running.wait_synced(20)
        yield running


def _rfc3339(moment: datetime.datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _reference_view(pod: cluster.Pod, unschedulable: bool) -> dict[str, Any]:
    """The view as the cache built it at every read, field by field, before views
    were kept."""
    meta: dict[str, Any] = {
        "name": pod.name,
        "namespace": pod.namespace,
        "uid": pod.uid,
        "labels": dict(pod.labels),
        "creationTimestamp": _rfc3339(pod.creation_timestamp),
    }
    if pod.owner is not None:
        meta["ownerReferences"] = [
            {
                "kind": pod.owner.kind,
                "name": pod.owner.name,
                "uid": pod.owner.uid,
                "controller": True,
            }
        ]
    if pod.deletion_timestamp is not None:
        meta["deletionTimestamp"] = _rfc3339(pod.deletion_timestamp)
    conditions = [{"type": "Ready", "status": "True" if pod.ready else "False"}]
    if unschedulable:
        conditions.append({"type": "PodScheduled", "status": "False", "reason": "Unschedulable"})
    return {
        "metadata": meta,
        "spec": {"nodeName": pod.node_name} if pod.node_name else {},
        "status": {"phase": pod.phase, "conditions": conditions},
    }


def _references(client: kubernetes.client.ApiClient) -> dict[str, dict[str, Any]]:
    """Each pod's reference view, keyed namespace/name, from a fresh list."""
    unschedulable = {
        f"{p.metadata.namespace}/{p.metadata.name}"
        for p in kubernetes.client.CoreV1Api(client).list_pod_for_all_namespaces().items
        if any(
            c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable"
            for c in (p.status.conditions or [])
        )
    }
    pods = cluster.read_cluster(client=client).pods
    return {p.key: _reference_view(p, p.key in unschedulable) for p in pods}


def _evictable(cache: cluster.ClusterCache) -> cluster.Pod:
    return next(
        p
        for p in cache.snapshot().pods
        if p.owner is not None and p.owner.kind == "ReplicaSet" and p.node_name
    )


def test_every_view_is_the_one_built_field_by_field(
    server: sim.SimServer, cache: cluster.ClusterCache, client: kubernetes.client.ApiClient
) -> None:
    pod = _evictable(cache)
    assert pod.workload is not None
    assert pod.workload.kind == "Deployment"
    # Every pod's view built before the changes: the unchanged ones are read again.
    for namespace in {p.namespace for p in cache.snapshot().pods}:
        assert cache.list_pods(namespace)
    # More replicas than the nodes hold: some stay Pending, unschedulable.
    apps = kubernetes.client.AppsV1Api(client)
    apps.patch_namespaced_deployment(pod.workload.name, pod.namespace, {"spec": {"replicas": 250}})
    server.advance(5)
    terminating = next(p for p in cache.snapshot().pods if p.key != pod.key and p.ready)
    server.sim.evict(terminating.namespace, terminating.name)
    caught_up(cache, server)
    references = _references(client)
    views = {key: cache.read_pod(*key.split("/")) for key in references}
    assert views == references
    conditions = [c for v in views.values() if v for c in v["status"]["conditions"]]
    assert {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"} in conditions
    assert "deletionTimestamp" in views[terminating.key]["metadata"]  # type: ignore[index]
    for namespace in {key.partition("/")[0] for key in references}:
        listed = cache.list_pods(namespace)
        assert listed == [
            references[k] for k in sorted(references) if k.startswith(namespace + "/")
        ]
    selector = ",".join(f"{k}={v}" for k, v in sorted(pod.labels.items()))
    siblings = cache.list_pods(pod.namespace, selector)
    assert len(siblings) > 200
    assert all(references[f"{pod.namespace}/{v['metadata']['name']}"] == v for v in siblings)
    for node in {v["spec"].get("nodeName") for v in references.values()} - {None}:
        assert cache.list_node_pods(node) == [
            references[k]
            for k in sorted(references)
            if references[k]["spec"].get("nodeName") == node
        ]


def test_a_view_changes_when_its_pod_changes_and_not_before(
    server: sim.SimServer, cache: cluster.ClusterCache, client: kubernetes.client.ApiClient
) -> None:
    pod = _evictable(cache)
    before = cache.read_pod(pod.namespace, pod.name)
    assert before is not None
    assert cache.read_pod(pod.namespace, pod.name) is before
    selector = ",".join(f"{k}={v}" for k, v in sorted(pod.labels.items()))
    assert any(v is before for v in cache.list_pods(pod.namespace, selector))
    assert any(v is before for v in cache.list_node_pods(pod.node_name or ""))
    kept = _reference_view(pod, False)
    assert before == kept

    kubernetes.client.CoreV1Api(client).patch_namespaced_pod(
        pod.name, pod.namespace, {"metadata": {"labels": {"tier": "relabelled"}}}
    )
    caught_up(cache, server)
    relabelled = cache.read_pod(pod.namespace, pod.name)
    assert relabelled is not None
    assert relabelled["metadata"]["labels"] == {**pod.labels, "tier": "relabelled"}
    assert relabelled == _references(client)[pod.key]
    assert [v["metadata"]["name"] for v in cache.list_pods(pod.namespace, "tier=relabelled")] == [
        pod.name
    ]
    assert before == kept  # the view read before the change is as it was

    server.sim.evict(pod.namespace, pod.name)
    caught_up(cache, server)
    evicted = cache.read_pod(pod.namespace, pod.name)
    assert evicted is not None
    assert "deletionTimestamp" not in relabelled["metadata"]
    assert "deletionTimestamp" in evicted["metadata"]
    assert evicted == _references(client)[pod.key]
    assert any(v is evicted for v in cache.list_pods(pod.namespace, "tier=relabelled"))


def _held_by_entries(view: dict[str, Any]) -> int:
    return sum(1 for r in gc.get_referrers(view) if isinstance(r, _cache_objects.PodEntry))


def test_a_deleted_pods_view_is_held_by_nothing_in_the_cache(
    server: sim.SimServer, cache: cluster.ClusterCache
) -> None:
    pod = _evictable(cache)
    view = cache.read_pod(pod.namespace, pod.name)
    assert view is not None
    assert _held_by_entries(view) == 1
    server.sim.evict(pod.namespace, pod.name)
    server.advance(30)  # past the grace period: the pod is deleted
    caught_up(cache, server)
    assert cache.read_pod(pod.namespace, pod.name) is None
    assert pod.name not in {v["metadata"]["name"] for v in cache.list_pods(pod.namespace)}
    assert _held_by_entries(view) == 0
