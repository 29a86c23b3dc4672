"""What the controllers share: the store and its clock, the dirty sets a store listener
fills as objects change (so a quiet 150,000-pod cluster costs nothing per round), and
the indexes that let a controller read only the objects it concerns: a controller's
pods, an owner's dependents, the workloads by uid, a namespace's pods by label, and
the PodDisruptionBudgets by namespace and those counting disrupted pods.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from typing import Any

from loadaware.sim import _clock, _resources, _selectors, _storage, _store
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
        self.all_daemonsets = False  # a node came, went, or changed what a DaemonSet selects
        self.daemonsets: set[str] = set()  # uids of DaemonSets whose pods or spec changed
        # uid -> keys of the pods it controls; namespace/name of owners by uid.
        self.owned: dict[str, set[str]] = collections.defaultdict(set)
        self.dependents: dict[str, set[tuple[_storage.ResourceKey, str]]] = collections.defaultdict(
            set
        )
        # uid -> (resource, namespace/name) of the workloads the controllers reconcile.
        self.workloads: dict[str, tuple[_resources.Resource, str]] = {}
        # namespace -> label pair -> names of the pods carrying it.
        self._pods_by_label: dict[str, dict[tuple[str, str], set[str]]] = {}
        # namespace -> names of its PodDisruptionBudgets; per budget with disruptedPods,
        # the earliest moment one was recorded (an unreadable stamp counts as 0).
        self._pdbs: dict[str, set[str]] = {}
        self.disrupted_since: dict[str, float] = {}
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
        if resource is _resources.PODS:
            self._index_labels(obj, added=added)
        elif resource in _WORKLOADS:
            if added:
                self.workloads[obj["metadata"]["uid"]] = (resource, key)
            else:
                self.workloads.pop(obj["metadata"]["uid"], None)
        elif resource is _resources.PDBS:
            self._index_pdb(obj, added=added)
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

    def _index_labels(self, pod: Mapping[str, Any], *, added: bool) -> None:
        meta = pod["metadata"]
        by_label = self._pods_by_label.setdefault(meta["namespace"], {})
        for pair in (meta.get("labels") or {}).items():
            if added:
                by_label.setdefault(pair, set()).add(meta["name"])
            else:
                names = by_label.get(pair)
                if names is not None:
                    names.discard(meta["name"])
                    if not names:
                        del by_label[pair]

    def _index_pdb(self, pdb: Mapping[str, Any], *, added: bool) -> None:
        meta = pdb["metadata"]
        names = self._pdbs.setdefault(meta["namespace"], set())
        key = _objects.key(pdb)
        if added:
            names.add(meta["name"])
            stamps = (pdb.get("status") or {}).get("disruptedPods") or {}
            if stamps:
                self.disrupted_since[key] = min(
                    _clock.parse_time(stamp) or 0.0 for stamp in stamps.values()
                )
        else:
            names.discard(meta["name"])
            self.disrupted_since.pop(key, None)

    def pdb_keys_in(self, namespace: str) -> list[str]:
        """The keys (namespace/name) of the namespace's PodDisruptionBudgets."""
        return [f"{namespace}/{name}" for name in self._pdbs.get(namespace, ())]

    def pods_selected(
        self, namespace: str, selector: Mapping[str, Any] | None
    ) -> list[dict[str, Any]]:
        """The namespace's pods a label selector matches, in key order: those carrying
        one of its matchLabels pairs are checked, not the whole namespace."""
        if selector is None:
            return []
        pair = min((selector.get("matchLabels") or {}).items(), default=None)
        if pair is None:
            candidates: list[dict[str, Any]] = self.store.objects(_resources.PODS, namespace)
        else:
            names = sorted(self._pods_by_label.get(namespace, {}).get(pair, ()))
            candidates = [
                pod
                for name in names
                if (pod := self.store.find(_resources.PODS, namespace, name)) is not None
            ]
        return [
            p
            for p in candidates
            if _selectors.label_selector_matches(selector, p["metadata"].get("labels") or {})
        ]

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
                    self.daemonsets.add(ref["uid"])
            self._pdbs_selecting(meta["namespace"], old, new)
        elif resource is _resources.NODES:
            # The scheduler's own listener marks the pods it could not place. A taint
            # that only steers (PreferNoSchedule) leaves every DaemonSet as it was.
            if kind != "MODIFIED" or _daemon_set_view(old) != _daemon_set_view(new):
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
                self.daemonsets.add(meta["uid"])
            if _scale_changed(kind, old, new):
                self.pdb_namespaces.add(meta["namespace"])
        elif resource is _resources.PDBS and kind != "DELETED":
            # A budget's status depends on its own spec and its pods, not on other budgets.
            self.pdb_keys.add(_objects.key(new))
        elif resource is _resources.NAMESPACES and meta.get("deletionTimestamp"):
            self.deleting_namespaces.add(meta["name"])

    def _pdbs_selecting(self, namespace: str, old: Any, new: Any) -> None:
        """Mark the PodDisruptionBudgets whose selector matches the pod before or after
        its change: only their status can change, and a namespace may hold thousands
        of pods and hundreds of budgets."""
        if namespace in self.pdb_namespaces:
            return
        labels = [(pod["metadata"].get("labels") or {}) for pod in (old, new) if pod is not None]
        for name in self._pdbs.get(namespace, ()):
            pdb = self.store.find(_resources.PDBS, namespace, name)
            if pdb is None:
                continue
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


_WORKLOADS = (
    _resources.DEPLOYMENTS,
    _resources.REPLICASETS,
    _resources.STATEFULSETS,
    _resources.JOBS,
    _resources.DAEMONSETS,
)


def _daemon_set_view(node: Mapping[str, Any]) -> tuple[object, ...]:
    """What of a node decides which DaemonSets run a pod on it (`daemon_set_nodes`):
    its labels and its NoSchedule and NoExecute taints."""
    taints = [
        t
        for t in (node.get("spec") or {}).get("taints") or []
        if t.get("effect") in ("NoSchedule", "NoExecute")
    ]
    return node["metadata"].get("labels") or {}, taints


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
