"""The simulated control plane: what reacts to API writes in a real cluster.

- kubelet: a bound pod starts (ContainerCreating, then Running and Ready
  `ready_delay` simulated seconds after binding); a terminating pod is removed
  once its grace period has passed. Nothing happens on a NotReady node: its
  pods neither start nor finish terminating.
- node lifecycle: `set_node_ready(name, False)` turns the node's conditions
  Unknown, taints it unreachable (NoSchedule and NoExecute) and marks its pods
  not Ready; taint-based eviction after tolerationSeconds is not modelled.
- kube-scheduler: Pending pods, highest priority first, go where the
  kube-scheduler model puts them (`scheduling.best_nodes`), through the
  same filters (`Occupancy.fit_failure` names the reasons of a
  FailedScheduling). From 100 nodes, as kube-scheduler does by default, only a
  sample of the feasible nodes is scored: those its walk over the nodeTree
  finds first from a start index that moves on with every pod (NodeSampler;
  `percentage_of_nodes_to_score` 0 is the adaptive default, 100 scores every
  feasible node). As in kube-scheduler, a terminating pod's requests count on
  its node until the pod is gone (it is not counted for spreading), and the
  choice among equally best-scored nodes is random (seeded: `scheduler_seed`).
  Preemption is not modelled.
- ReplicaSet, Deployment (one ReplicaSet per Deployment; template rollouts are
  not modelled), StatefulSet (OrderedReady: an ordinal comes back under the
  same name once its predecessor is gone and the lower ones are Ready),
  DaemonSet (a pod per eligible node) and Job controllers, with their status.
  A Job keeps `parallelism` pods running (its pods never finish here) and
  counts a pod deleted or evicted before its end as failed, up to
  `backoffLimit`; indexed completion, podFailurePolicy and CronJobs are not
  modelled.
- disruption controller: each PDB's expectedPods, desiredHealthy,
  currentHealthy, disruptionsAllowed, disruptedPods and DisruptionAllowed
  condition.
- garbage collector (background propagation) and namespace deletion.

Work is driven by what changed: a store listener files changed objects as
dirty, so a quiet 150,000-pod cluster costs nothing per round. `reconcile()`
runs one round under the store lock; `Runner` runs rounds in a thread when the
store changes or a timer (readiness, grace periods) is due.
"""

from __future__ import annotations

import collections
import copy
import hashlib
import logging
import math
import random
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from loadaware import cluster, errors, scheduling
from loadaware.sim import (
    _clock,
    _events,
    _eviction,
    _pod_ips,
    _resources,
    _selectors,
    _status,
    _store,
    _usage,
)

log = logging.getLogger(__name__)

_SAFE = "bcdfghjklmnpqrstvwxz2456789"
# The disruption controller forgets an eviction it has not seen complete after this long.
_DISRUPTED_POD_TIMEOUT = 120.0
_UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
# The Job controller's finalizer on its pods, removed once it has counted a pod's end.
_JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
# Chains of reactions (evicted -> removed -> replaced -> bound) settle within a few rounds.
_MAX_ROUNDS = 10

# kube-scheduler's wording of each nodeFit reason, for FailedScheduling messages.
_FIT_MESSAGES = {
    "node-not-ready": "node(s) had untolerated taint {node.kubernetes.io/not-ready: }",
    "node-unschedulable": "node(s) were unschedulable",
    "untolerated-taint": "node(s) had untolerated taint(s)",
    "node-selector": "node(s) didn't match Pod's node affinity/selector",
    "node-affinity": "node(s) didn't match Pod's node affinity/selector",
    "insufficient-cpu": "Insufficient cpu",
    "insufficient-memory": "Insufficient memory",
    "insufficient-extended-resource": "Insufficient extended resource",
    "too-many-pods": "Too many pods",
    "host-port": "node(s) didn't have free ports for the requested pod ports",
    "pod-affinity": "node(s) didn't match pod affinity rules",
    "pod-anti-affinity": "node(s) didn't match pod anti-affinity rules",
}
# PodTopologySpread's Filter (ErrReasonConstraintsNotMatch, ErrReasonNodeLabelNotMatch).
_SPREAD_MESSAGE = "node(s) didn't match pod topology spread constraints"
_SPREAD_LABEL_MESSAGE = _SPREAD_MESSAGE + " (missing required label)"
_AFTER_SPREAD = frozenset({"pod-affinity", "pod-anti-affinity"})


def _key(obj: Mapping[str, Any]) -> str:
    meta = obj["metadata"]
    return _store.object_key(meta.get("namespace"), meta["name"])


def _controller_ref(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def _condition(obj: Mapping[str, Any], kind: str) -> Mapping[str, Any] | None:
    for condition in (obj.get("status") or {}).get("conditions") or []:
        if condition.get("type") == kind:
            return condition
    return None


def is_pod_ready(pod: Mapping[str, Any]) -> bool:
    ready = _condition(pod, "Ready")
    return ready is not None and ready.get("status") == "True"


def _is_active(pod: Mapping[str, Any]) -> bool:
    """Counted by its controller: not terminating, not finished."""
    return not pod["metadata"].get("deletionTimestamp") and (pod.get("status") or {}).get(
        "phase"
    ) not in ("Succeeded", "Failed")


def _owner_ref(owner: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _with_condition(
    conditions: Iterable[Mapping[str, Any]], kind: str, status: str, now: str, **extra: Any
) -> list[dict[str, Any]]:
    result, found = [], False
    for condition in conditions:
        if condition.get("type") == kind:
            found = True
            changed = condition.get("status") != status
            updated = {**condition, "status": status, **extra}
            if changed:
                updated["lastTransitionTime"] = now
            result.append(updated)
        else:
            result.append(dict(condition))
    if not found:
        result.append({"type": kind, "status": status, "lastTransitionTime": now, **extra})
    return result


def _template_hash(template: Mapping[str, Any]) -> str:
    digest = hashlib.sha256(repr(sorted(str(template))).encode()).digest()
    return "".join(_SAFE[b % len(_SAFE)] for b in digest[:10])


class Controllers:
    def __init__(
        self,
        store: _store.Store,
        usage: _usage.UsageModel,
        *,
        ready_delay: float = 2.0,
        scheduler_seed: int = 0,
        percentage_of_nodes_to_score: int = 0,
    ) -> None:
        self.store = store
        self.clock = store.clock
        self.usage = usage
        self.ready_delay = ready_delay
        self._tie_breaker = random.Random(scheduler_seed)
        # kube-scheduler's informer adds the nodes of its first list in the API's
        # order, which is the store's; later ones as they come (see _on_change).
        self.node_sampler = scheduling.NodeSampler(
            scheduling.NodeTree(
                (n["metadata"]["name"], n["metadata"].get("labels") or {})
                for n in store.objects(_resources.NODES)
            ),
            percentage_of_nodes_to_score=percentage_of_nodes_to_score,
        )
        # Dirty sets, filled by the store listener.
        self._pods: set[str] = set()  # pods that may need the kubelet or the scheduler
        self._owners: set[str] = set()  # uids of controllers to reconcile
        self._pdb_namespaces: set[str] = set()  # namespaces whose every PDB may have changed
        self._pdb_keys: set[str] = set()  # PDBs (namespace/name) a pod's change concerns
        self._deleted_uids: list[str] = []
        self._deleting_namespaces: set[str] = set()
        # The loaded state is taken as settled: controllers act on what changes after it.
        self._all_daemonsets = False
        # uid -> keys of the pods it controls; namespace/name of owners by uid.
        self._owned: dict[str, set[str]] = collections.defaultdict(set)
        self._dependents: dict[str, set[tuple[_store.ResourceKey, str]]] = collections.defaultdict(
            set
        )
        self._converted: dict[str, tuple[str, Any]] = {}  # uid -> (resourceVersion, Pod | Node)
        self._unschedulable_at: dict[str, int] = {}  # pod key -> store version last tried
        self._pod_ips = _pod_ips.PodIPAllocator()
        for pod in store.objects(_resources.PODS):
            self._pod_ips.hold(pod)
        store.on_change.append(self._pod_ips.on_change)
        self._pod_cidrs: _pod_ips.CidrAllocator | None = None  # made when a node lacks one
        self._stopping: set[str] = set()  # uids of pods whose containers are being stopped
        self._index_all()
        store.on_change.append(self._on_change)

    # --- bookkeeping ---

    def _index_all(self) -> None:
        with self.store.lock:
            for resource in _resources.STORED:
                for obj in self.store.objects(resource):
                    self._index(resource, obj, added=True)
                    if resource is _resources.PODS and self._pod_needs_attention(obj):
                        self._pods.add(_key(obj))

    def _index(self, resource: _resources.Resource, obj: Mapping[str, Any], *, added: bool) -> None:
        key = _key(obj)
        for ref in obj["metadata"].get("ownerReferences") or []:
            uid = ref.get("uid")
            if not uid:
                continue
            if added:
                self._dependents[uid].add((resource.key, key))
                if resource is _resources.PODS and ref.get("controller"):
                    self._owned[uid].add(key)
            else:
                self._dependents[uid].discard((resource.key, key))
                self._owned[uid].discard(key)

    @staticmethod
    def _pod_needs_attention(pod: Mapping[str, Any]) -> bool:
        status = pod.get("status") or {}
        return bool(
            pod["metadata"].get("deletionTimestamp")
            or status.get("phase") == "Pending"
            or (
                pod["spec"].get("nodeName")
                and not is_pod_ready(pod)
                and status.get("phase") == "Running"
            )
        )

    def _on_change(self, kind: str, resource: _resources.Resource, old: Any, new: Any) -> None:
        if old is not None:
            self._index(resource, old, added=False)
        if kind != "DELETED":
            self._index(resource, new, added=True)
        meta = new["metadata"]
        if kind == "DELETED" and meta.get("uid"):
            self._deleted_uids.append(meta["uid"])
            self._converted.pop(meta["uid"], None)
        if resource is _resources.PODS:
            key = _key(new)
            if kind != "DELETED" and self._pod_needs_attention(new):
                self._pods.add(key)
            ref = _controller_ref(new) or (old and _controller_ref(old))
            if ref:
                self._owners.add(ref["uid"])
                if ref.get("kind") == "DaemonSet":
                    self._all_daemonsets = True
            self._pdbs_selecting(meta["namespace"], old, new)
        elif resource is _resources.NODES:
            self._track_node(kind, old, new)
            self._all_daemonsets = True
            self._pods.update(self._unschedulable_at)
        elif resource in (
            _resources.REPLICASETS,
            _resources.DEPLOYMENTS,
            _resources.STATEFULSETS,
            _resources.DAEMONSETS,
            _resources.JOBS,
        ):
            self._owners.add(meta["uid"])
            ref = _controller_ref(new)
            if ref:
                self._owners.add(ref["uid"])
            if resource is _resources.DAEMONSETS:
                self._all_daemonsets = True
            if _scale_changed(kind, old, new):
                self._pdb_namespaces.add(meta["namespace"])
        elif resource is _resources.PDBS:
            self._pdb_namespaces.add(meta["namespace"])
        elif resource is _resources.NAMESPACES and meta.get("deletionTimestamp"):
            self._deleting_namespaces.add(meta["name"])

    def _pdbs_selecting(self, namespace: str, old: Any, new: Any) -> None:
        """Mark the PodDisruptionBudgets whose selector matches the pod before or after
        its change: only their status can change, and a namespace may hold thousands
        of pods and hundreds of budgets."""
        if namespace in self._pdb_namespaces:
            return
        labels = [(pod["metadata"].get("labels") or {}) for pod in (old, new) if pod is not None]
        for pdb in self.store.objects(_resources.PDBS, namespace):
            selector = (pdb.get("spec") or {}).get("selector")
            if any(_selectors.label_selector_matches(selector, pod) for pod in labels):
                self._pdb_keys.add(_key(pdb))

    def _track_node(self, kind: str, old: Any, new: Any) -> None:
        tree = self.node_sampler.tree
        name = new["metadata"]["name"]
        labels = new["metadata"].get("labels") or {}
        if kind == "ADDED":
            tree.add(name, labels)
        elif kind == "DELETED":
            tree.remove(name, labels)
        else:
            tree.update(name, old["metadata"].get("labels") or {}, labels)

    # --- one round ---

    def reconcile(self) -> None:
        """Rounds until nothing more changes (one controller's writes are another's input)."""
        with self.store.lock:
            for _ in range(_MAX_ROUNDS):
                before = self.store.resource_version
                self._garbage_collect()
                self._namespaces()
                self._workload_controllers()
                self._scheduler()
                self._kubelet()
                self._disruption()
                if self.store.resource_version == before:
                    break

    def next_due(self) -> float | None:
        """The simulated time at which a timer (start, grace period, PDB expiry) is due."""
        due: list[float] = []
        with self.store.lock:
            for key in list(self._pods):
                namespace, _, name = key.partition("/")
                pod = self.store.find(_resources.PODS, namespace, name)
                if pod is None:
                    continue
                deletion = _clock.parse_time(pod["metadata"].get("deletionTimestamp"))
                if deletion is not None:
                    due.append(deletion)
                scheduled = _condition(pod, "PodScheduled")
                if pod["spec"].get("nodeName") and scheduled is not None:
                    since = _clock.parse_time(scheduled.get("lastTransitionTime"))
                    if since is not None:
                        due.append(since + self.ready_delay)
            for pdb in self.store.objects(_resources.PDBS):
                for stamp in ((pdb.get("status") or {}).get("disruptedPods") or {}).values():
                    moment = _clock.parse_time(stamp)
                    if moment is not None:
                        due.append(moment + _DISRUPTED_POD_TIMEOUT)
        return min(due) if due else None

    # --- garbage collector and namespaces ---

    def _garbage_collect(self) -> None:
        while self._deleted_uids:
            uid = self._deleted_uids.pop()
            for resource_key, key in sorted(self._dependents.pop(uid, ())):
                resource = next(r for r in _resources.STORED if r.key == resource_key)
                obj = self.store.bucket(resource).entries.get(key)
                if obj is None or obj.obj["metadata"].get("deletionTimestamp"):
                    continue
                refs = obj.obj["metadata"].get("ownerReferences") or []
                # A dependent with another live owner stays.
                if any(r.get("uid") != uid and r.get("uid") in self._live_uids(r) for r in refs):
                    continue
                meta = obj.obj["metadata"]
                self.store.delete(
                    resource, meta.get("namespace"), meta["name"], _store.DeleteOptions()
                )
            self._owned.pop(uid, None)

    def _live_uids(self, ref: Mapping[str, Any]) -> set[str]:
        kind = ref.get("kind")
        resource = next((r for r in _resources.STORED if r.kind == kind), None)
        if resource is None:
            return set()
        return {o["metadata"]["uid"] for o in self.store.objects(resource)}

    def _namespaces(self) -> None:
        for name in sorted(self._deleting_namespaces):
            remaining = 0
            for resource in _resources.STORED:
                if not resource.namespaced:
                    continue
                for obj in self.store.objects(resource, name):
                    remaining += 1
                    if not obj["metadata"].get("deletionTimestamp"):
                        self.store.delete(
                            resource, name, obj["metadata"]["name"], _store.DeleteOptions()
                        )
            if remaining == 0:
                namespace = self.store.find(_resources.NAMESPACES, None, name)
                if namespace is not None:
                    self.store.remove(_resources.NAMESPACES, namespace)
                self._deleting_namespaces.discard(name)

    # --- workload controllers ---

    def _workload_controllers(self) -> None:
        # Deployments first: they may create or scale the ReplicaSets handled next.
        dirty = self._owners
        self._owners = set()
        by_uid: dict[str, tuple[_resources.Resource, dict[str, Any]]] = {}
        for resource in (
            _resources.DEPLOYMENTS,
            _resources.REPLICASETS,
            _resources.STATEFULSETS,
            _resources.JOBS,
        ):
            for obj in self.store.objects(resource):
                if obj["metadata"]["uid"] in dirty:
                    by_uid[obj["metadata"]["uid"]] = (resource, obj)
        for resource, obj in by_uid.values():
            if resource is _resources.DEPLOYMENTS:
                self._deployment(obj)
        for resource, obj in by_uid.values():
            meta = obj["metadata"]
            current = self.store.find(resource, meta["namespace"], meta["name"])
            if current is None:
                continue
            if resource is _resources.REPLICASETS:
                self._replica_set(current)
            elif resource is _resources.STATEFULSETS:
                self._stateful_set(current)
            elif resource is _resources.JOBS:
                self._job(current)
        for resource, obj in by_uid.values():
            if resource is _resources.DEPLOYMENTS:
                self._deployment_status(obj)
        if self._all_daemonsets:
            self._all_daemonsets = False
            for ds in self.store.objects(_resources.DAEMONSETS):
                self._daemon_set(ds)

    def _pods_of(self, uid: str) -> list[dict[str, Any]]:
        pods = []
        for key in sorted(self._owned.get(uid, ())):
            namespace, _, name = key.partition("/")
            pod = self.store.find(_resources.PODS, namespace, name)
            if pod is not None:
                pods.append(pod)
        return pods

    def _new_pod(
        self, owner: Mapping[str, Any], *, name: str = "", extra_labels: Mapping[str, str] = {}
    ) -> dict[str, Any]:
        template = (owner.get("spec") or {}).get("template") or {}
        template_meta = template.get("metadata") or {}
        meta: dict[str, Any] = {
            "namespace": owner["metadata"]["namespace"],
            "labels": {**(template_meta.get("labels") or {}), **extra_labels},
            "ownerReferences": [_owner_ref(owner)],
        }
        if template_meta.get("annotations"):
            meta["annotations"] = dict(template_meta["annotations"])
        if name:
            meta["name"] = name
        else:
            meta["generateName"] = owner["metadata"]["name"] + "-"
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": copy.deepcopy(template.get("spec") or {}),
        }

    def _create_pod(self, owner: dict[str, Any], pod: dict[str, Any], component: str) -> None:
        try:
            created = self.store.add(_resources.PODS, pod)
        except Exception as exc:  # an invalid template: say so once, as the controller would
            _events.record(
                self.store,
                owner,
                type_="Warning",
                reason="FailedCreate",
                message=f"Error creating: {exc}",
                component=component,
            )
            return
        _events.record(
            self.store,
            owner,
            type_="Normal",
            reason="SuccessfulCreate",
            message=f"Created pod: {created['metadata']['name']}",
            component=component,
        )

    def _replica_set(self, rs: dict[str, Any]) -> None:
        uid = rs["metadata"]["uid"]
        if rs["metadata"].get("deletionTimestamp"):
            return
        pods = self._pods_of(uid)
        active = [p for p in pods if _is_active(p)]
        wanted = int((rs.get("spec") or {}).get("replicas", 1))
        for _ in range(wanted - len(active)):
            self._create_pod(rs, self._new_pod(rs), "replicaset-controller")
        if len(active) > wanted:
            # Unscheduled first, then not ready, then the youngest, as the controller ranks them.
            ranked = sorted(
                active,
                key=lambda p: (
                    bool(p["spec"].get("nodeName")),
                    is_pod_ready(p),
                    p["metadata"].get("creationTimestamp", ""),
                ),
            )
            for pod in ranked[: len(active) - wanted]:
                self.store.delete(
                    _resources.PODS,
                    pod["metadata"]["namespace"],
                    pod["metadata"]["name"],
                    _store.DeleteOptions(),
                )
                _events.record(
                    self.store,
                    rs,
                    type_="Normal",
                    reason="SuccessfulDelete",
                    message=f"Deleted pod: {pod['metadata']['name']}",
                    component="replicaset-controller",
                )
        active = [p for p in self._pods_of(uid) if _is_active(p)]
        ready = sum(1 for p in active if is_pod_ready(p))
        status: dict[str, Any] = {
            "replicas": len(active),
            "fullyLabeledReplicas": len(active),
            "readyReplicas": ready,
            "availableReplicas": ready,
            "observedGeneration": int(rs["metadata"].get("generation") or 1),
        }
        status = {k: v for k, v in status.items() if v or k in ("replicas", "observedGeneration")}
        self._set_status(_resources.REPLICASETS, rs, status)

    def _set_status(
        self, resource: _resources.Resource, obj: dict[str, Any], status: dict[str, Any]
    ) -> None:
        current = self.store.find(
            resource, obj["metadata"].get("namespace"), obj["metadata"]["name"]
        )
        if current is None:
            return
        merged = {**(current.get("status") or {}), **status}
        for key in [k for k, v in merged.items() if k not in status and isinstance(v, int)]:
            merged[key] = 0
        if merged != current.get("status"):
            self.store.replace(
                resource,
                current,
                {**current, "metadata": dict(current["metadata"]), "status": merged},
            )

    def _deployment(self, deployment: dict[str, Any]) -> None:
        if deployment["metadata"].get("deletionTimestamp"):
            return
        uid = deployment["metadata"]["uid"]
        namespace = deployment["metadata"]["namespace"]
        owned = [
            rs
            for rs in self.store.objects(_resources.REPLICASETS, namespace)
            if (_controller_ref(rs) or {}).get("uid") == uid
        ]
        wanted = int((deployment.get("spec") or {}).get("replicas", 1))
        if not owned:
            template = copy.deepcopy((deployment.get("spec") or {}).get("template") or {})
            template_hash = _template_hash(template)
            labels = {**((template.get("metadata") or {}).get("labels") or {})}
            labels["pod-template-hash"] = template_hash
            template.setdefault("metadata", {})["labels"] = labels
            selector = copy.deepcopy((deployment.get("spec") or {}).get("selector") or {})
            selector.setdefault("matchLabels", {})["pod-template-hash"] = template_hash
            revision = (deployment["metadata"].get("annotations") or {}).get(
                "deployment.kubernetes.io/revision", "1"
            )
            rs = {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": f"{deployment['metadata']['name']}-{template_hash}",
                    "namespace": namespace,
                    "labels": labels,
                    "annotations": {
                        "deployment.kubernetes.io/desired-replicas": str(wanted),
                        "deployment.kubernetes.io/revision": revision,
                    },
                    "ownerReferences": [_owner_ref(deployment)],
                },
                "spec": {"replicas": wanted, "selector": selector, "template": template},
            }
            created = self.store.add(_resources.REPLICASETS, rs)
            self._owners.add(created["metadata"]["uid"])
            _events.record(
                self.store,
                deployment,
                type_="Normal",
                reason="ScalingReplicaSet",
                message=f"Scaled up replica set {created['metadata']['name']} from 0 to {wanted}",
                component="deployment-controller",
            )
            return
        newest = max(
            owned,
            key=lambda rs: (
                int(
                    (rs["metadata"].get("annotations") or {}).get(
                        "deployment.kubernetes.io/revision", "0"
                    )
                ),
                rs["metadata"].get("creationTimestamp", ""),
            ),
        )
        have = int((newest.get("spec") or {}).get("replicas", 1))
        if have != wanted:
            spec = {**newest["spec"], "replicas": wanted}
            meta = dict(newest["metadata"])
            meta["generation"] = int(meta.get("generation") or 1) + 1
            self.store.replace(
                _resources.REPLICASETS, newest, {**newest, "metadata": meta, "spec": spec}
            )
            self._replica_set(
                self.store.find(_resources.REPLICASETS, namespace, newest["metadata"]["name"])
                or newest
            )
            verb = "up" if wanted > have else "down"
            _events.record(
                self.store,
                deployment,
                type_="Normal",
                reason="ScalingReplicaSet",
                message=(
                    f"Scaled {verb} replica set {newest['metadata']['name']} "
                    f"from {have} to {wanted}"
                ),
                component="deployment-controller",
            )

    def _deployment_status(self, deployment: dict[str, Any]) -> None:
        uid = deployment["metadata"]["uid"]
        namespace = deployment["metadata"]["namespace"]
        replicas = ready = 0
        for rs in self.store.objects(_resources.REPLICASETS, namespace):
            if (_controller_ref(rs) or {}).get("uid") != uid:
                continue
            status = rs.get("status") or {}
            replicas += int(status.get("replicas") or 0)
            ready += int(status.get("readyReplicas") or 0)
        wanted = int((deployment.get("spec") or {}).get("replicas", 1))
        status = {
            "observedGeneration": int(deployment["metadata"].get("generation") or 1),
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": ready,
            "availableReplicas": ready,
        }
        if wanted > ready:
            status["unavailableReplicas"] = wanted - ready
        status = {k: v for k, v in status.items() if v or k in ("replicas", "observedGeneration")}
        self._set_status(_resources.DEPLOYMENTS, deployment, status)

    def _stateful_set(self, sts: dict[str, Any]) -> None:
        if sts["metadata"].get("deletionTimestamp"):
            return
        spec = sts.get("spec") or {}
        name = sts["metadata"]["name"]
        namespace = sts["metadata"]["namespace"]
        wanted = int(spec.get("replicas", 1))
        ordered = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
        revision = (sts.get("status") or {}).get(
            "updateRevision"
        ) or f"{name}-{_template_hash(spec.get('template') or {})}"
        lower_ready = True
        for ordinal in range(wanted):
            pod_name = f"{name}-{ordinal}"
            pod = self.store.find(_resources.PODS, namespace, pod_name)
            if pod is None:
                if ordered and not lower_ready:
                    break
                new = self._new_pod(
                    sts,
                    name=pod_name,
                    extra_labels={
                        "controller-revision-hash": revision,
                        "statefulset.kubernetes.io/pod-name": pod_name,
                        "apps.kubernetes.io/pod-index": str(ordinal),
                    },
                )
                new["spec"]["hostname"] = pod_name
                new["spec"]["subdomain"] = spec.get("serviceName", name)
                volumes = list(new["spec"].get("volumes") or [])
                for claim in spec.get("volumeClaimTemplates") or []:
                    claim_name = claim["metadata"]["name"]
                    volumes = [v for v in volumes if v.get("name") != claim_name]
                    volumes.append(
                        {
                            "name": claim_name,
                            "persistentVolumeClaim": {"claimName": f"{claim_name}-{pod_name}"},
                        }
                    )
                if volumes:
                    new["spec"]["volumes"] = volumes
                self._create_pod(sts, new, "statefulset-controller")
                lower_ready = False
            else:
                lower_ready = lower_ready and is_pod_ready(pod) and _is_active(pod)
        pods = [p for p in self._pods_of(sts["metadata"]["uid"]) if _is_active(p)]
        ready = sum(1 for p in pods if is_pod_ready(p))
        status = {
            "observedGeneration": int(sts["metadata"].get("generation") or 1),
            "replicas": len(pods),
            "readyReplicas": ready,
            "currentReplicas": len(pods),
            "updatedReplicas": len(pods),
            "availableReplicas": ready,
        }
        self._set_status(_resources.STATEFULSETS, sts, status)

    def _job(self, job: dict[str, Any]) -> None:
        meta, spec = job["metadata"], job.get("spec") or {}
        if meta.get("deletionTimestamp"):
            return
        status = dict(job.get("status") or {})
        conditions = list(status.get("conditions") or [])
        uid = meta["uid"]
        now = _clock.rfc3339(self.clock.time())
        succeeded = int(status.get("succeeded") or 0)
        failed = int(status.get("failed") or 0)
        # The Job controller counts each pod once, as it drops its tracking finalizer
        # from a pod that finished or is being deleted: an evicted pod counts as failed.
        for pod in self._pods_of(uid):
            finalizers = pod["metadata"].get("finalizers") or []
            phase = (pod.get("status") or {}).get("phase")
            if _JOB_TRACKING_FINALIZER not in finalizers or _is_active(pod):
                continue
            pod_meta = dict(pod["metadata"])
            pod_meta["finalizers"] = [f for f in finalizers if f != _JOB_TRACKING_FINALIZER]
            if not pod_meta["finalizers"]:
                del pod_meta["finalizers"]
            self.store.replace(_resources.PODS, pod, {**pod, "metadata": pod_meta})
            if phase == "Succeeded":
                succeeded += 1
            else:
                failed += 1
        active = [p for p in self._pods_of(uid) if _is_active(p)]
        finished = any(
            c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
            for c in conditions
        )
        completions = spec.get("completions")
        if not finished and failed > int(spec.get("backoffLimit", 6)):
            finished = True
            conditions = _with_condition(
                conditions,
                "Failed",
                "True",
                now,
                reason="BackoffLimitExceeded",
                message="Job has reached the specified backoff limit",
                lastProbeTime=now,
            )
            for pod in active:
                self.store.delete(
                    _resources.PODS,
                    pod["metadata"]["namespace"],
                    pod["metadata"]["name"],
                    _store.DeleteOptions(),
                )
            active = []
        if not finished:
            # Pods run until deleted here, so a Job completes only from the state loaded.
            if completions is None:
                wanted = 0 if succeeded else int(spec.get("parallelism", 1))
            else:
                wanted = min(int(spec.get("parallelism", 1)), int(completions) - succeeded)
            if spec.get("suspend"):
                wanted = 0
            for _ in range(wanted - len(active)):
                pod = self._new_pod(
                    job,
                    extra_labels={
                        "batch.kubernetes.io/controller-uid": uid,
                        "batch.kubernetes.io/job-name": meta["name"],
                        "controller-uid": uid,
                        "job-name": meta["name"],
                    },
                )
                pod["metadata"]["finalizers"] = [_JOB_TRACKING_FINALIZER]
                self._create_pod(job, pod, "job-controller")
            active = [p for p in self._pods_of(uid) if _is_active(p)]
        status.update(
            {
                "active": len(active),
                "ready": sum(1 for p in active if is_pod_ready(p)),
                "succeeded": succeeded,
                "failed": failed,
            }
        )
        status.setdefault("startTime", meta.get("creationTimestamp") or now)
        if conditions:
            status["conditions"] = conditions
        status = {k: v for k, v in status.items() if v or k in ("ready", "startTime")}
        self._set_status(_resources.JOBS, job, status)

    def _daemon_set(self, ds: dict[str, Any]) -> None:
        if ds["metadata"].get("deletionTimestamp"):
            return
        template_spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
        pods = [p for p in self._pods_of(ds["metadata"]["uid"]) if _is_active(p)]
        covered = {_pinned_node(p) for p in pods}
        eligible = daemon_set_nodes(template_spec, self.store.objects(_resources.NODES))
        for name in eligible:
            if name in covered:
                continue
            pod = self._new_pod(ds, extra_labels={"pod-template-generation": "1"})
            pod["spec"]["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": [name]}
                                ]
                            }
                        ]
                    }
                }
            }
            self._create_pod(ds, pod, "daemonset-controller")
        ready = sum(1 for p in pods if is_pod_ready(p))
        status = {
            "observedGeneration": int(ds["metadata"].get("generation") or 1),
            "currentNumberScheduled": len(pods),
            "desiredNumberScheduled": len(eligible),
            "numberMisscheduled": 0,
            "numberReady": ready,
            "numberAvailable": ready,
            "updatedNumberScheduled": len(pods),
        }
        if len(eligible) > ready:
            status["numberUnavailable"] = len(eligible) - ready
        self._set_status(_resources.DAEMONSETS, ds, status)

    # --- kube-scheduler ---

    def _scheduler(self) -> None:
        version = self.store.resource_version
        pending = []
        for key in sorted(self._pods):
            namespace, _, name = key.partition("/")
            pod = self.store.find(_resources.PODS, namespace, name)
            if (
                pod is None
                or pod["spec"].get("nodeName")
                or pod["metadata"].get("deletionTimestamp")
            ):
                continue
            if pod["spec"].get("schedulerName", "default-scheduler") != "default-scheduler":
                continue
            if self._unschedulable_at.get(key) == version:
                continue  # nothing changed since it last failed
            pending.append(pod)
        if not pending:
            return
        pending.sort(
            key=lambda p: (
                -int(p["spec"].get("priority") or 0),
                p["metadata"].get("creationTimestamp", ""),
                _key(p),
            )
        )
        nodes = self.store.objects(_resources.NODES)
        pods = [
            p
            for p in self.store.objects(_resources.PODS)
            if p["spec"].get("nodeName")
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        ]
        try:
            converted_nodes = self._convert(nodes)
            converted_pods = self._convert(pods)
            incoming = self._convert(pending)
        except errors.InputError as exc:
            log.warning("cannot model the cluster for scheduling", extra={"reason": str(exc)})
            return
        namespace_labels = {
            ns["metadata"]["name"]: ns["metadata"].get("labels") or {}
            for ns in self.store.objects(_resources.NAMESPACES)
        }
        occupancy = scheduling.Occupancy(
            converted_nodes, converted_pods, namespace_labels=namespace_labels
        )
        names = [n.name for n in converted_nodes]
        terminating = [p for p in converted_pods if p.deletion_timestamp is not None]
        now = _clock.rfc3339(self.clock.time())
        for raw, pod in zip(pending, incoming, strict=True):
            sample = self.node_sampler.sample(pod, occupancy, terminating=terminating)
            best = (
                scheduling.best_nodes(pod, occupancy, sample, terminating=terminating)
                if sample
                else ()
            )
            if not best:
                self._unschedulable(raw, pod, occupancy, names, now, terminating)
                continue
            target = best[0] if len(best) == 1 else self._tie_breaker.choice(best)
            self._unschedulable_at.pop(_key(raw), None)
            occupancy.add(pod, target)
            self._bind(raw, target, now)

    def _convert(self, objects: list[dict[str, Any]]) -> list[Any]:
        """Raw objects as the planner's types, converted once per resourceVersion."""
        missing = [
            o
            for o in objects
            if self._converted.get(o["metadata"]["uid"], ("", None))[0]
            != o["metadata"].get("resourceVersion")
        ]
        if missing:
            state = cluster.cluster_state_from_objects(missing)
            for obj, converted in zip(missing, [*state.nodes, *state.pods], strict=True):
                self._converted[obj["metadata"]["uid"]] = (
                    obj["metadata"].get("resourceVersion", ""),
                    converted,
                )
        return [self._converted[o["metadata"]["uid"]][1] for o in objects]

    def _unschedulable(
        self,
        raw: dict[str, Any],
        pod: Any,
        occupancy: scheduling.Occupancy,
        names: list[str],
        now: str,
        terminating: list[Any],
    ) -> None:
        # kube-scheduler stops at a node's first failing Filter plugin; PodTopologySpread
        # runs after the resource and port checks, before InterPodAffinity.
        reasons = {name: occupancy.fit_failure(pod, name) for name in names}
        spread_checked = [n for n, r in reasons.items() if r is None or r in _AFTER_SPREAD]
        spread_failed: set[str] = set()
        if spread_checked:
            mask = scheduling.spread_filter_mask(
                pod, occupancy, occupancy.node_indexes(spread_checked), terminating
            )
            spread_failed = {
                n for n, fits in zip(spread_checked, mask.tolist(), strict=True) if not fits
            }
        keys = [
            c.topology_key
            for c in pod.topology_spread_constraints
            if c.when_unsatisfiable == "DoNotSchedule"
        ]
        labels_of = {n.name: n.labels for n in occupancy.nodes}
        counts: collections.Counter[str] = collections.Counter()
        for name, reason in reasons.items():
            if name in spread_failed:
                missing = any(key not in labels_of[name] for key in keys)
                counts[_SPREAD_LABEL_MESSAGE if missing else _SPREAD_MESSAGE] += 1
            elif reason is not None:
                counts[_FIT_MESSAGES.get(reason, reason)] += 1
        parts = ", ".join(f"{n} {m}" for m, n in sorted(counts.items()))
        message = (
            f"0/{len(names)} nodes are available: {parts}. preemption: 0/{len(names)} nodes "
            f"are available: {len(names)} Preemption is not helpful for scheduling."
        )
        self._unschedulable_at[_key(raw)] = self.store.resource_version
        scheduled = _condition(raw, "PodScheduled")
        if scheduled is not None and scheduled.get("message") == message:
            return
        status = dict(raw.get("status") or {})
        status["conditions"] = _with_condition(
            status.get("conditions") or [],
            "PodScheduled",
            "False",
            now,
            reason="Unschedulable",
            message=message,
            lastProbeTime=None,
        )
        self.store.replace(
            _resources.PODS, raw, {**raw, "metadata": dict(raw["metadata"]), "status": status}
        )
        _events.record(
            self.store,
            raw,
            type_="Warning",
            reason="FailedScheduling",
            message=message,
            component="default-scheduler",
        )
        self._unschedulable_at[_key(raw)] = self.store.resource_version

    def _bind(self, raw: dict[str, Any], node: str, now: str) -> None:
        spec = {**raw["spec"], "nodeName": node}
        status = dict(raw.get("status") or {})
        conditions = _with_condition(status.get("conditions") or [], "PodScheduled", "True", now)
        for condition in conditions:
            if condition["type"] == "PodScheduled":
                condition.pop("reason", None)
                condition.pop("message", None)
                condition["lastTransitionTime"] = now
        status["conditions"] = conditions
        bound = self.store.replace(
            _resources.PODS,
            raw,
            {**raw, "metadata": dict(raw["metadata"]), "spec": spec, "status": status},
        )
        _events.record(
            self.store,
            bound,
            type_="Normal",
            reason="Scheduled",
            message=f"Successfully assigned {_key(raw)} to {node}",
            component="default-scheduler",
        )

    def bind(self, namespace: str, name: str, node: str) -> None:
        """The pods/binding subresource: 409 if already bound; lock held by the caller."""
        pod = self.store.get(_resources.PODS, namespace, name)
        if pod["spec"].get("nodeName"):
            raise _status.conflict(
                "pods",
                name,
                problem=f'pod {name} is already assigned to node "{pod["spec"]["nodeName"]}"',
            )
        if self.store.find(_resources.NODES, None, node) is None:
            raise _status.not_found("nodes", node)
        self._bind(pod, node, _clock.rfc3339(self.clock.time()))

    # --- kubelet and node lifecycle ---

    def _kubelet(self) -> None:
        now = self.clock.time()
        stamp = _clock.rfc3339(now)
        ready_nodes = {
            n["metadata"]["name"]: n
            for n in self.store.objects(_resources.NODES)
            if _usage.is_node_ready(n)
        }
        for key in sorted(self._pods):
            namespace, _, name = key.partition("/")
            pod = self.store.find(_resources.PODS, namespace, name)
            if pod is None:
                self._pods.discard(key)
                continue
            node_name = pod["spec"].get("nodeName")
            deletion = _clock.parse_time(pod["metadata"].get("deletionTimestamp"))
            if deletion is not None:
                uid = pod["metadata"].get("uid", "")
                if node_name in ready_nodes and uid not in self._stopping:
                    self._stopping.add(uid)
                    for container in pod["spec"].get("containers") or []:
                        _events.record(
                            self.store,
                            pod,
                            type_="Normal",
                            reason="Killing",
                            message=f"Stopping container {container.get('name')}",
                            component="kubelet",
                            host=str(node_name),
                        )
                # The kubelet confirms the end; on a NotReady node nobody does.
                if (
                    (not node_name or node_name in ready_nodes)
                    and deletion <= now
                    and not pod["metadata"].get("finalizers")
                ):
                    self.store.remove(_resources.PODS, pod)
                    self._pods.discard(key)
                    self._stopping.discard(uid)
                continue
            if not node_name:
                continue
            if node_name not in ready_nodes:
                continue
            phase = (pod.get("status") or {}).get("phase")
            if phase == "Pending":
                scheduled = _condition(pod, "PodScheduled")
                since = _clock.parse_time((scheduled or {}).get("lastTransitionTime")) or now
                if not (pod.get("status") or {}).get("startTime"):
                    self._accept(pod, ready_nodes[node_name], stamp)
                elif now >= since + self.ready_delay:
                    self._start(pod, stamp)
                    self._pods.discard(key)
            elif phase == "Running" and not is_pod_ready(pod):
                self._set_pod_ready(pod, True, stamp)
                self._pods.discard(key)
            else:
                self._pods.discard(key)

    def _accept(self, pod: dict[str, Any], node: Mapping[str, Any], stamp: str) -> None:
        """The kubelet has seen the pod: IPs, startTime, containers being created."""
        status = dict(pod.get("status") or {})
        host_ips = _pod_ips.host_ips(node)
        status["hostIP"] = host_ips[0] if host_ips else ""
        if host_ips:
            status["hostIPs"] = _pod_ips.ips_field(host_ips)
        pod_ips = self._pod_ips.allocate(pod, self._with_pod_cidr(node))
        if pod_ips:
            status["podIP"] = pod_ips[0]
            status["podIPs"] = _pod_ips.ips_field(pod_ips)
        status["startTime"] = stamp
        conditions = status.get("conditions") or []
        for kind, value, extra in (
            ("Initialized", "True", {}),
            ("Ready", "False", {"reason": "ContainersNotReady"}),
            ("ContainersReady", "False", {"reason": "ContainersNotReady"}),
        ):
            conditions = _with_condition(conditions, kind, value, stamp, **extra)
        status["conditions"] = conditions
        status["containerStatuses"] = [
            {
                "name": c.get("name"),
                "image": c.get("image"),
                "imageID": "",
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": {"waiting": {"reason": "ContainerCreating"}},
            }
            for c in pod["spec"].get("containers") or []
        ]
        self.store.replace(
            _resources.PODS, pod, {**pod, "metadata": dict(pod["metadata"]), "status": status}
        )

    def _with_pod_cidr(self, node: Mapping[str, Any]) -> Mapping[str, Any]:
        """The node, given a podCIDR first if it has none, as the node IPAM controller
        gives one to a node created after the cluster was loaded."""
        if _pod_ips.pod_cidrs(node):
            return node
        # The node this round's snapshot holds may have been given one since.
        current = self.store.get(_resources.NODES, None, node["metadata"]["name"])
        if _pod_ips.pod_cidrs(current):
            return current
        if self._pod_cidrs is None:
            self._pod_cidrs = _pod_ips.CidrAllocator(self.store.objects(_resources.NODES))
        updated = _pod_ips.with_pod_cidr(current, self._pod_cidrs.allocate())
        updated["metadata"] = dict(current["metadata"])
        return self.store.replace(_resources.NODES, current, updated)

    def _start(self, pod: dict[str, Any], stamp: str) -> None:
        status = dict(pod.get("status") or {})
        status["phase"] = "Running"
        conditions = status.get("conditions") or []
        for kind in ("Ready", "ContainersReady"):
            conditions = _with_condition(conditions, kind, "True", stamp)
            for condition in conditions:
                if condition["type"] == kind:
                    condition.pop("reason", None)
        status["conditions"] = conditions
        status["containerStatuses"] = [
            {
                "name": c.get("name"),
                "image": c.get("image"),
                "imageID": f"{c.get('image')}@sha256:{_digest(str(c.get('image')))}",
                "containerID": "containerd://"
                + _digest(pod["metadata"]["uid"] + str(c.get("name"))),
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": stamp}},
            }
            for c in pod["spec"].get("containers") or []
        ]
        self.store.replace(
            _resources.PODS, pod, {**pod, "metadata": dict(pod["metadata"]), "status": status}
        )

    def _set_pod_ready(self, pod: dict[str, Any], ready: bool, stamp: str) -> None:
        status = dict(pod.get("status") or {})
        value = "True" if ready else "False"
        conditions = status.get("conditions") or []
        for kind in ("Ready", "ContainersReady"):
            conditions = _with_condition(conditions, kind, value, stamp)
        status["conditions"] = conditions
        status["containerStatuses"] = [
            {**c, "ready": ready} for c in status.get("containerStatuses") or []
        ]
        self.store.replace(
            _resources.PODS, pod, {**pod, "metadata": dict(pod["metadata"]), "status": status}
        )

    def set_node_ready(self, name: str, ready: bool) -> None:
        """A node's kubelet stops (or resumes) posting status, as the node lifecycle
        controller sees it."""
        with self.store.lock:
            node = self.store.get(_resources.NODES, None, name)
            now = self.clock.time()
            stamp = _clock.rfc3339(now)
            status = dict(node.get("status") or {})
            conditions = []
            for condition in status.get("conditions") or []:
                condition = dict(condition)
                if ready:
                    healthy = "True" if condition.get("type") == "Ready" else "False"
                    if condition.get("status") != healthy:
                        condition["lastTransitionTime"] = stamp
                    condition["status"] = healthy
                    condition["reason"] = (
                        "KubeletReady" if condition["type"] == "Ready" else condition.get("reason")
                    )
                    if condition["type"] == "Ready":
                        condition["message"] = "kubelet is posting ready status"
                    condition["lastHeartbeatTime"] = stamp
                else:
                    if condition.get("status") != "Unknown":
                        condition["lastTransitionTime"] = stamp
                    condition["status"] = "Unknown"
                    condition["reason"] = "NodeStatusUnknown"
                    condition["message"] = "Kubelet stopped posting node status."
                conditions.append(condition)
            status["conditions"] = conditions
            spec = dict(node.get("spec") or {})
            taints = [t for t in spec.get("taints") or [] if t.get("key") != _UNREACHABLE_TAINT]
            if not ready:
                taints.append(
                    {"key": _UNREACHABLE_TAINT, "effect": "NoSchedule", "timeAdded": stamp}
                )
                taints.append(
                    {"key": _UNREACHABLE_TAINT, "effect": "NoExecute", "timeAdded": stamp}
                )
            if taints:
                spec["taints"] = taints
            else:
                spec.pop("taints", None)
            self.store.replace(
                _resources.NODES,
                node,
                {**node, "metadata": dict(node["metadata"]), "spec": spec, "status": status},
            )
            _events.record(
                self.store,
                {**node, "metadata": {**node["metadata"], "namespace": "default"}},
                type_="Normal",
                reason="NodeReady" if ready else "NodeNotReady",
                message=f"Node {name} status is now: {'NodeReady' if ready else 'NodeNotReady'}",
                component="node-controller",
            )
            for pod in self.store.objects(_resources.PODS):
                if pod["spec"].get("nodeName") != name:
                    continue
                if (pod.get("status") or {}).get("phase") != "Running":
                    continue
                if is_pod_ready(pod) != ready:
                    self._set_pod_ready(pod, ready, stamp)

    # --- disruption controller ---

    def _disruption(self) -> None:
        now = self.clock.time()
        namespaces, keys = self._pdb_namespaces, self._pdb_keys
        self._pdb_namespaces, self._pdb_keys = set(), set()
        for pdb in self.store.objects(_resources.PDBS):
            status = pdb.get("status") or {}
            if (
                pdb["metadata"]["namespace"] in namespaces
                or _key(pdb) in keys
                or status.get("disruptedPods")
            ):
                self._pdb_status(pdb, now)

    def _pdb_status(self, pdb: dict[str, Any], now: float) -> None:
        namespace = pdb["metadata"]["namespace"]
        spec = pdb.get("spec") or {}
        selector = spec.get("selector")
        pods = [
            p
            for p in self.store.objects(_resources.PODS, namespace)
            if _selectors.label_selector_matches(selector, p["metadata"].get("labels") or {})
        ]
        status = dict(pdb.get("status") or {})
        disrupted = {}
        for name, stamp in (status.get("disruptedPods") or {}).items():
            pod = self.store.find(_resources.PODS, namespace, name)
            moment = _clock.parse_time(stamp) or 0.0
            if (
                pod is not None
                and not pod["metadata"].get("deletionTimestamp")
                and now < moment + _DISRUPTED_POD_TIMEOUT
            ):
                disrupted[name] = stamp
        healthy = sum(
            1
            for p in pods
            if _is_active(p) and is_pod_ready(p) and p["metadata"]["name"] not in disrupted
        )
        expected, desired = self._expected_and_desired(spec, pods)
        allowed = max(0, healthy - desired)
        new_status: dict[str, Any] = {
            "observedGeneration": int(pdb["metadata"].get("generation") or 1),
            "currentHealthy": healthy,
            "desiredHealthy": desired,
            "expectedPods": expected,
            "disruptionsAllowed": allowed,
        }
        if disrupted:
            new_status["disruptedPods"] = disrupted
        new_status["conditions"] = _eviction.allowed_condition(
            status.get("conditions") or [], allowed > 0, now
        )
        if new_status != pdb.get("status"):
            self.store.replace(
                _resources.PDBS,
                pdb,
                {**pdb, "metadata": dict(pdb["metadata"]), "status": new_status},
            )

    def _expected_and_desired(
        self, spec: Mapping[str, Any], pods: list[dict[str, Any]]
    ) -> tuple[int, int]:
        min_available = spec.get("minAvailable")
        max_unavailable = spec.get("maxUnavailable")
        if isinstance(min_available, int) and max_unavailable is None:
            return len(pods), min_available
        expected = self._expected_pods(pods)
        if max_unavailable is not None:
            return expected, max(0, expected - _scaled(max_unavailable, expected))
        if min_available is None:
            return expected, expected
        return expected, _scaled(min_available, expected)

    def _expected_pods(self, pods: list[dict[str, Any]]) -> int:
        """The sum of the scales of the pods' controllers (a Deployment's for its ReplicaSets)."""
        scales: dict[str, int] = {}
        for pod in pods:
            ref = _controller_ref(pod)
            if ref is None:
                continue
            namespace = pod["metadata"]["namespace"]
            owner: Mapping[str, Any] | None = None
            if ref.get("kind") == "ReplicaSet":
                rs = self.store.find(_resources.REPLICASETS, namespace, ref["name"])
                parent = _controller_ref(rs) if rs is not None else None
                if parent is not None and parent.get("kind") == "Deployment":
                    owner = self.store.find(_resources.DEPLOYMENTS, namespace, parent["name"])
                else:
                    owner = rs
            elif ref.get("kind") == "StatefulSet":
                owner = self.store.find(_resources.STATEFULSETS, namespace, ref["name"])
            if owner is not None:
                scales[owner["metadata"]["uid"]] = int((owner.get("spec") or {}).get("replicas", 1))
            else:
                scales[pod["metadata"]["uid"]] = 1
        return sum(scales.values())


def _scale_changed(kind: str, old: Any, new: Any) -> bool:
    """Whether a workload's change can move a PodDisruptionBudget's expected pods: it
    came or went, or its scale or its owner changed. Status updates, which every
    eviction brings, cannot (the pods' own changes are tracked one by one)."""
    if kind != "MODIFIED" or old is None:
        return True
    before, after = old.get("spec") or {}, new.get("spec") or {}
    return before.get("replicas") != after.get("replicas") or old["metadata"].get(
        "ownerReferences"
    ) != new["metadata"].get("ownerReferences")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _scaled(value: Any, expected: int) -> int:
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * expected / 100)
    return int(value)


def _toleration(raw: Mapping[str, Any]) -> cluster.Toleration:
    return cluster.Toleration(
        key=str(raw.get("key") or ""),
        operator=str(raw.get("operator") or "Equal"),
        value=str(raw.get("value") or ""),
        effect=str(raw.get("effect") or ""),
    )


def _taint(raw: Mapping[str, Any]) -> cluster.Taint:
    return cluster.Taint(
        key=str(raw.get("key") or ""),
        value=str(raw.get("value") or ""),
        effect=str(raw.get("effect")),
    )


def daemon_set_nodes(
    template_spec: Mapping[str, Any], nodes: Iterable[Mapping[str, Any]]
) -> list[str]:
    """The nodes a DaemonSet with this pod template runs a pod on: its nodeSelector
    matches and it tolerates every NoSchedule and NoExecute taint (the unreachable
    taint of a NotReady node aside: its pod stays). Node affinity is not modelled."""
    tolerations = [_toleration(t) for t in template_spec.get("tolerations") or []]
    selector = template_spec.get("nodeSelector") or {}
    eligible = []
    for node in nodes:
        labels = node["metadata"].get("labels") or {}
        if any(labels.get(k) != v for k, v in selector.items()):
            continue
        taints = [_taint(t) for t in (node.get("spec") or {}).get("taints") or []]
        if any(
            t.effect in ("NoSchedule", "NoExecute")
            and t.key != _UNREACHABLE_TAINT
            and not any(tol.tolerates(t) for tol in tolerations)
            for t in taints
        ):
            continue
        eligible.append(str(node["metadata"]["name"]))
    return eligible


def _pinned_node(pod: Mapping[str, Any]) -> str | None:
    """The node a DaemonSet pod is bound or pinned to."""
    if pod["spec"].get("nodeName"):
        return str(pod["spec"]["nodeName"])
    affinity = ((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in affinity.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("values"):
                return str(field["values"][0])
    return None


class Runner:
    """Runs reconcile rounds in a thread: on every store change, and when a timer is due."""

    def __init__(self, controllers: Controllers, *, poll_seconds: float = 0.05) -> None:
        self.controllers = controllers
        self.poll_seconds = poll_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sim-controllers", daemon=True)
        self._seen = -1

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self.controllers.store.changed:
            self.controllers.store.changed.notify_all()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        store = self.controllers.store
        due: float | None = None
        while not self._stop.is_set():
            try:
                with store.changed:
                    if store.resource_version == self._seen:
                        store.changed.wait(self.poll_seconds)
                    changed = store.resource_version != self._seen
                    if not changed and (due is None or due > store.clock.time()):
                        continue
                    self.controllers.reconcile()
                    self._seen = store.resource_version
                    # Timers only move when the store does: computed once per round.
                    due = self.controllers.next_due()
            except Exception:  # a controller bug must not stop the cluster
                log.exception("simulated controllers failed")
                self._stop.wait(self.poll_seconds)
