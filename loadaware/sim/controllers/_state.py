"""What the controllers share: the store and its clock, the dirty sets a store listener
fills as objects change (so a quiet 150,000-pod cluster costs nothing per round), and
the ownership indexes (a controller's pods, an owner's dependents).
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from typing import Any

from loadaware.sim import _resources, _selectors, _storage, _store
from loadaware.sim.controllers import _objects


class ControlState:
    def __init__(self, store: _store.Store) -> None:
        self.store = store
        self.clock = store.clock
        # Dirty sets, filled by the store listener.
        self.pods: set[str] = set()  # pods that may need the kubelet or the scheduler
        self.owners: set[str] = set()  # uids of controllers to reconcile
        self.pdb_namespaces: set[str] = set()  # namespaces whose every PDB may have changed
        self.pdb_keys: set[str] = set()  # PDBs (namespace/name) a pod's change concerns
        self.deleted_uids: list[str] = []
        self.deleting_namespaces: set[str] = set()
        # The loaded state is taken as settled: controllers act on what changes after it.
        self.all_daemonsets = False
        # uid -> keys of the pods it controls; namespace/name of owners by uid.
        self.owned: dict[str, set[str]] = collections.defaultdict(set)
        self.dependents: dict[str, set[tuple[_storage.ResourceKey, str]]] = collections.defaultdict(
            set
        )
        self._index_all()
        store.on_change.append(self._on_change)

    def _index_all(self) -> None:
        with self.store.lock:
            for resource in _resources.STORED:
                for obj in self.store.objects(resource):
                    self._index(resource, obj, added=True)
                    if resource is _resources.PODS and self._pod_needs_attention(obj):
                        self.pods.add(_objects.key(obj))

    def _index(self, resource: _resources.Resource, obj: Mapping[str, Any], *, added: bool) -> None:
        key = _objects.key(obj)
        for ref in obj["metadata"].get("ownerReferences") or []:
            uid = ref.get("uid")
            if not uid:
                continue
            if added:
                self.dependents[uid].add((resource.key, key))
                if resource is _resources.PODS and ref.get("controller"):
                    self.owned[uid].add(key)
            else:
                self.dependents[uid].discard((resource.key, key))
                self.owned[uid].discard(key)

    @staticmethod
    def _pod_needs_attention(pod: Mapping[str, Any]) -> bool:
        status = pod.get("status") or {}
        return bool(
            pod["metadata"].get("deletionTimestamp")
            or status.get("phase") == "Pending"
            or (
                pod["spec"].get("nodeName")
                and not _objects.is_pod_ready(pod)
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
            self.deleted_uids.append(meta["uid"])
        if resource is _resources.PODS:
            key = _objects.key(new)
            if kind != "DELETED" and self._pod_needs_attention(new):
                self.pods.add(key)
            ref = _objects.controller_ref(new) or (old and _objects.controller_ref(old))
            if ref:
                self.owners.add(ref["uid"])
                if ref.get("kind") == "DaemonSet":
                    self.all_daemonsets = True
            self._pdbs_selecting(meta["namespace"], old, new)
        elif resource is _resources.NODES:
            # The scheduler's own listener marks the pods it could not place.
            self.all_daemonsets = True
        elif resource in (
            _resources.REPLICASETS,
            _resources.DEPLOYMENTS,
            _resources.STATEFULSETS,
            _resources.DAEMONSETS,
            _resources.JOBS,
        ):
            self.owners.add(meta["uid"])
            ref = _objects.controller_ref(new)
            if ref:
                self.owners.add(ref["uid"])
            if resource is _resources.DAEMONSETS:
                self.all_daemonsets = True
            if _scale_changed(kind, old, new):
                self.pdb_namespaces.add(meta["namespace"])
        elif resource is _resources.PDBS:
            self.pdb_namespaces.add(meta["namespace"])
        elif resource is _resources.NAMESPACES and meta.get("deletionTimestamp"):
            self.deleting_namespaces.add(meta["name"])

    def _pdbs_selecting(self, namespace: str, old: Any, new: Any) -> None:
        """Mark the PodDisruptionBudgets whose selector matches the pod before or after
        its change: only their status can change, and a namespace may hold thousands
        of pods and hundreds of budgets."""
        if namespace in self.pdb_namespaces:
            return
        labels = [(pod["metadata"].get("labels") or {}) for pod in (old, new) if pod is not None]
        for pdb in self.store.objects(_resources.PDBS, namespace):
            selector = (pdb.get("spec") or {}).get("selector")
            if any(_selectors.label_selector_matches(selector, pod) for pod in labels):
                self.pdb_keys.add(_objects.key(pdb))

    def pods_of(self, uid: str) -> list[dict[str, Any]]:
        pods = []
        for key in sorted(self.owned.get(uid, ())):
            namespace, _, name = key.partition("/")
            pod = self.store.find(_resources.PODS, namespace, name)
            if pod is not None:
                pods.append(pod)
        return pods


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
