"""The simulated kube-scheduler keeps its cache (`scheduling.Occupancy`) by deltas.

Driven through evictions, clock moves (terminating pods gone, replacements
Ready), node changes (a taint, a zone label, cordon, readiness, allocatable),
pod deletions (at once and graceful), a binding by another scheduler, a pod
with a host port, a node added and one deleted, and a namespace relabelled,
after every step:

- the cache answers as one rebuilt from the store: the same nodes, requests,
  pod counts and placements, the same fit reason of every probe pod on every
  node, the same fit mask and the same best nodes;
- pods land where a scheduler that rebuilds its cache on every pass (what it
  did before it kept one) puts them, tie-break and node sampling included.
"""

from __future__ import annotations

import collections
import copy
import datetime
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from loadaware import cluster, scheduling, sim
from loadaware.sim import _clock, _resources, _store, scenarios

NOW = datetime.datetime(2026, 11, 29, 8, 0, 0, tzinfo=datetime.UTC)
_MERGE = "application/merge-patch+json"
_ZONE = "topology.kubernetes.io/zone"

Step = Callable[[sim.SimCluster], None]


def _objects() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    # 120 nodes: from 100 the scheduler samples nodes, as kube-scheduler does.
    generated = scenarios.generate_cluster(nodes=120, seed=1, family="usage-independent", now=NOW)
    return copy.deepcopy(list(generated.objects)), generated.metrics


def _twins() -> tuple[sim.SimCluster, sim.SimCluster]:
    """The cluster twice: one scheduler keeps its cache, the other rebuilds it every pass."""
    objects, metrics = _objects()
    kept = sim.SimCluster(objects, metrics, clock=sim.SimClock(NOW, speed=0.0))
    rebuilt = sim.SimCluster(copy.deepcopy(objects), metrics, clock=sim.SimClock(NOW, speed=0.0))
    scheduler = rebuilt.controllers.scheduler
    rebuilt.store.on_change.append(lambda *_: scheduler.drop_cache())
    return kept, rebuilt


def _bound(cluster_: sim.SimCluster) -> list[dict[str, Any]]:
    return [p for p in cluster_.list("pods") if p["spec"].get("nodeName")]


def _loaded(cluster_: sim.SimCluster) -> list[dict[str, Any]]:
    """The bound pods the cluster was loaded with: the same in both twins (the names
    of the replacements are random), in key order."""
    return [
        p
        for p in _bound(cluster_)
        if (_clock.parse_time(p["metadata"].get("creationTimestamp")) or 0.0) < NOW.timestamp()
    ]


def _owner(pod: dict[str, Any]) -> str:
    refs = pod["metadata"].get("ownerReferences") or [{"name": pod["metadata"]["name"]}]
    return f"{pod['metadata']['namespace']}/{refs[0]['name']}"


def _landings(cluster_: sim.SimCluster) -> dict[str, collections.Counter[str]]:
    """Per node, how many pods of each owner are bound there (pod names of a
    ReplicaSet's replacements are random, their owners are not)."""
    found: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for pod in _bound(cluster_):
        state = "terminating" if pod["metadata"].get("deletionTimestamp") else "live"
        found[pod["spec"]["nodeName"]][f"{_owner(pod)} {state}"] += 1
    return dict(found)


def _evictable(cluster_: sim.SimCluster, *, anti_affinity: bool = False) -> tuple[str, str]:
    for pod in _loaded(cluster_):
        meta = pod["metadata"]
        refs = meta.get("ownerReferences") or []
        if meta.get("deletionTimestamp") or not any(r["kind"] == "ReplicaSet" for r in refs):
            continue
        if anti_affinity and "podAntiAffinity" not in (pod["spec"].get("affinity") or {}):
            continue
        try:
            cluster_.evict(meta["namespace"], meta["name"], dry_run=True)
        except sim.ApiError:
            continue
        return meta["namespace"], meta["name"]
    raise AssertionError("no pod can be evicted")


def _node_hosting_anti_affinity(cluster_: sim.SimCluster) -> str:
    for pod in _loaded(cluster_):
        if "podAntiAffinity" in (pod["spec"].get("affinity") or {}):
            return str(pod["spec"]["nodeName"])
    raise AssertionError("the cluster has no pod with anti-affinity")


def _patch_node(cluster_: sim.SimCluster, name: str, body: dict[str, Any], **kw: Any) -> None:
    cluster_.store.patch(_resources.NODES, None, name, _MERGE, body, **kw)


def _node_names(cluster_: sim.SimCluster) -> list[str]:
    return [n["metadata"]["name"] for n in cluster_.list("nodes")]


# --- the steps, each applied to both clusters ---


def evict_one(cluster_: sim.SimCluster) -> None:
    cluster_.evict(*_evictable(cluster_))


def evict_anti_affinity(cluster_: sim.SimCluster) -> None:
    cluster_.evict(*_evictable(cluster_, anti_affinity=True))


def let_time_pass(cluster_: sim.SimCluster) -> None:
    cluster_.advance(40)


def taint_a_node(cluster_: sim.SimCluster) -> None:
    taint = {"key": "loadaware.io/steer", "value": "", "effect": "PreferNoSchedule"}
    hard = {"key": "dedicated", "value": "x", "effect": "NoSchedule"}
    names = _node_names(cluster_)
    _patch_node(cluster_, names[3], {"spec": {"taints": [taint]}})
    _patch_node(cluster_, names[4], {"spec": {"taints": [hard]}})
    evict_one(cluster_)


def untaint_a_node(cluster_: sim.SimCluster) -> None:
    _patch_node(cluster_, _node_names(cluster_)[4], {"spec": {"taints": None}})
    evict_one(cluster_)


def move_a_node_to_another_zone(cluster_: sim.SimCluster) -> None:
    name = _node_hosting_anti_affinity(cluster_)
    zone = cluster_.get("nodes", None, name)["metadata"]["labels"].get(_ZONE, "")
    other = "zone-moved" if zone != "zone-moved" else "zone-back"
    _patch_node(cluster_, name, {"metadata": {"labels": {_ZONE: other, "moved": "yes"}}})
    evict_anti_affinity(cluster_)


def cordon_a_node(cluster_: sim.SimCluster) -> None:
    _patch_node(cluster_, _node_names(cluster_)[5], {"spec": {"unschedulable": True}})
    evict_one(cluster_)


def node_not_ready_then_ready(cluster_: sim.SimCluster) -> None:
    name = _node_names(cluster_)[6]
    cluster_.set_node_ready(name, False)
    cluster_.reconcile()
    evict_one(cluster_)
    cluster_.reconcile()
    cluster_.set_node_ready(name, True)


def shrink_a_node(cluster_: sim.SimCluster) -> None:
    name = _node_names(cluster_)[7]
    status = cluster_.get("nodes", None, name)["status"]
    allocatable = {**status["allocatable"], "pods": "3", "cpu": "500m"}
    _patch_node(cluster_, name, {"status": {"allocatable": allocatable}}, subresource="status")
    evict_one(cluster_)


def delete_pods(cluster_: sim.SimCluster) -> None:
    first, second = (p["metadata"] for p in _loaded(cluster_)[10:12])
    cluster_.store.delete(
        _resources.PODS,
        first["namespace"],
        first["name"],
        _store.DeleteOptions(grace_period_seconds=0),
    )
    cluster_.store.delete(
        _resources.PODS, second["namespace"], second["name"], _store.DeleteOptions()
    )


def bind_by_another_scheduler(cluster_: sim.SimCluster) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "bound-elsewhere", "labels": {"app": "elsewhere"}},
        "spec": {
            "schedulerName": "other-scheduler",
            "containers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}},
                }
            ],
        },
    }
    cluster_.store.create(_resources.PODS, "default", pod)
    with cluster_.store.lock:
        cluster_.controllers.bind("default", "bound-elsewhere", _node_names(cluster_)[8])


def host_port_pods(cluster_: sim.SimCluster) -> None:
    for name in ("port-a", "port-b"):
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "labels": {"app": "ported"}},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "busybox",
                        "ports": [{"containerPort": 80, "hostPort": 8080}],
                        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                    }
                ],
                "affinity": {
                    "podAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 10,
                                "podAffinityTerm": {
                                    "labelSelector": {"matchLabels": {"app": "ported"}},
                                    "topologyKey": _ZONE,
                                },
                            }
                        ]
                    }
                },
            },
        }
        cluster_.store.create(_resources.PODS, "default", pod)
        cluster_.reconcile()


def add_and_delete_nodes(cluster_: sim.SimCluster) -> None:
    template = cluster_.get("nodes", None, _node_names(cluster_)[0])
    node = copy.deepcopy(template)
    meta = node["metadata"]
    meta["name"] = "node-added"
    meta["labels"] = {**meta["labels"], "kubernetes.io/hostname": "node-added"}
    for field in ("uid", "resourceVersion", "creationTimestamp"):
        meta.pop(field, None)
    node["spec"].pop("podCIDR", None)
    node["spec"].pop("podCIDRs", None)
    cluster_.store.create(_resources.NODES, None, node)
    cluster_.reconcile()
    evict_one(cluster_)
    cluster_.reconcile()
    cluster_.store.delete(_resources.NODES, None, _node_names(cluster_)[9], _store.DeleteOptions())
    evict_one(cluster_)


def relabel_a_namespace(cluster_: sim.SimCluster) -> None:
    namespace = _evictable(cluster_)[0]
    cluster_.store.patch(
        _resources.NAMESPACES, None, namespace, _MERGE, {"metadata": {"labels": {"team": "x"}}}
    )
    evict_one(cluster_)


STEPS: tuple[Step, ...] = (
    evict_one,
    evict_anti_affinity,
    let_time_pass,
    taint_a_node,
    untaint_a_node,
    move_a_node_to_another_zone,
    cordon_a_node,
    node_not_ready_then_ready,
    shrink_a_node,
    let_time_pass,
    delete_pods,
    bind_by_another_scheduler,
    host_port_pods,
    let_time_pass,
    add_and_delete_nodes,
    relabel_a_namespace,
    let_time_pass,
)


# --- the comparison ---


def _assert_same_answers(cluster_: sim.SimCluster, step: str) -> None:
    scheduler = cluster_.controllers.scheduler
    kept = scheduler.occupancy
    fresh = scheduler.rebuilt_occupancy()
    assert kept.node_names == fresh.node_names, step
    for field in ("requested_cpu_millicores", "requested_memory_bytes", "pods"):
        assert np.array_equal(getattr(kept.resources(), field), getattr(fresh.resources(), field))
    for field in ("allocatable_cpu_millicores", "allocatable_pods", "nonzero_cpu_millicores"):
        assert np.array_equal(getattr(kept.resources(), field), getattr(fresh.resources(), field))
    assert np.array_equal(kept.tainted, fresh.tainted), step
    state = cluster.cluster_state_from_objects(cluster_.list("pods"))
    for pod in state.pods:
        assert kept.placement(pod) == fresh.placement(pod), (step, pod.key)
    terminating = [p for p in state.pods if p.deletion_timestamp is not None and p.node_name]
    # Probe pods: one of each owner, those with inter-pod terms or host ports, as the
    # incoming replacement their controller would create.
    probes: dict[object, cluster.Pod] = {}
    for pod in state.pods:
        special = pod.required_pod_anti_affinity or pod.preferred_pod_affinity or pod.host_ports
        probes.setdefault(pod.key if special else (pod.namespace, pod.owner), pod)
    names = list(fresh.node_names)
    indexes = fresh.node_indexes(names)
    for pod in probes.values():
        incoming = scheduling.replacement_of(pod)
        for name in names:
            assert kept.fit_failure(incoming, name) == fresh.fit_failure(incoming, name), (
                step,
                pod.key,
                name,
            )
        assert np.array_equal(kept.fit_mask(incoming, indexes), fresh.fit_mask(incoming, indexes))
        assert scheduling.best_nodes(
            incoming, kept, names, terminating=terminating
        ) == scheduling.best_nodes(incoming, fresh, names, terminating=terminating), (
            step,
            pod.key,
        )


@pytest.mark.slow
def test_the_kept_cache_answers_as_a_rebuilt_one_and_places_pods_the_same() -> None:
    kept, rebuilt = _twins()
    for twin in (kept, rebuilt):
        twin.reconcile()
    _assert_same_answers(kept, "start")
    for step in STEPS:
        for twin in (kept, rebuilt):
            step(twin)
            twin.reconcile()
        _assert_same_answers(kept, step.__name__)
        assert _landings(kept) == _landings(rebuilt), step.__name__
