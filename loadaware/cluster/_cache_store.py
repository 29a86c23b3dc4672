"""What the cluster cache holds: each kind's converted objects and how far its watch has
read, the pods with their indexes by namespace and by node, each node's taints as
written with the resourceVersion they were read at (what a taint write names), the
objects that could not be read, and the snapshot assembled from them.

The watch threads write and rounds and the executor read: every method expects its
caller to hold `lock`, and `changed` wakes those waiting on a kind's list.

Each change applied is also told, in the order applied and under `lock`, to the
store's `listeners` (`CacheChange`), numbered as `changes` counts them, so that
whoever mirrors the cluster (the binding observer) can start from a snapshot and
follow on from exactly the change after it.
"""

from __future__ import annotations

import bisect
import dataclasses
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from loadaware.cluster import _cache_objects, _convert, _types
from loadaware.errors import LoadawareError

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CacheChange:
    """One change the cluster cache applied: an object of a kind added (`old` None),
    modified, or deleted (`new` None), as converted (a Pod, a Node, a namespace's
    labels, a Workload, ...); or, `relisted`, the whole kind replaced by a new list
    (`old` and `new` None), after which a mirror starts again from a snapshot.
    `sequence` numbers the changes in the order they were applied, from 1."""

    kind: str  # the kind's name: pods, nodes, namespaces, replicasets, ...
    sequence: int
    old: Any = None
    new: Any = None
    relisted: bool = False


CacheListener = Callable[[CacheChange], None]


@dataclasses.dataclass(frozen=True, slots=True)
class NodeTaints:
    """A node's spec.taints as the API server gave them (every field kept, timeAdded
    too) and the resourceVersion of that same object: what a write of its taints
    starts from and names as its precondition."""

    resource_version: str
    taints: tuple[Mapping[str, Any], ...]

    @classmethod
    def of(cls, raw: Any) -> NodeTaints | None:
        """Read from a node object; None when it has no resourceVersion to name."""
        if not isinstance(raw, dict):
            return None
        version = (raw.get("metadata") or {}).get("resourceVersion")
        taints = (raw.get("spec") or {}).get("taints") or []
        if not version or not isinstance(taints, list):
            return None
        return cls(str(version), tuple(dict(t) for t in taints if isinstance(t, dict)))


class Kind:
    """One kind's objects, converted, and how far its watch has read."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.name = path.rsplit("/", 1)[-1]
        self.objects: dict[str, Any] = {}
        self.version = ""
        self.synced = False
        self.served = True
        self.seen_at: float | None = None  # monotonic time of the newest sign of life
        self.events = 0
        self.relists: dict[str, int] = {}
        self.said: set[str] = set()  # causes already logged
        self.error: str | None = None  # why the last list failed, while it does
        self.failure: LoadawareError | None = None  # the same, as the error it was


class CacheStore:
    """The kinds' objects and the pods' indexes (see the module)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.kinds = {path: Kind(path) for path in paths}
        self.invalid: dict[str, str] = {}  # object -> why it cannot be read
        # Node name -> its taints and resourceVersion as last seen: the steering's
        # taint writes start from them instead of reading each node from the server.
        self.node_taints: dict[str, NodeTaints] = {}
        # Pods, and what their completion depends on.
        self.pods: dict[str, _cache_objects.PodEntry] = {}
        self.pods_by_namespace: dict[str, set[str]] = {}
        self.pods_by_node: dict[str, set[str]] = {}
        # (namespace, label key, value) -> pod keys: the executor lists a workload's
        # pods by their labels after every eviction, and a namespace holds thousands.
        self.pods_by_label: dict[tuple[str, str, str], set[str]] = {}
        self._sorted_pods: list[str] | None = None  # pod keys in list order, once sorted
        self._workloads: tuple[_types.Workload, ...] | None = None  # as last assembled
        self._resolver: _convert._WorkloadResolver | None = None
        self._resolution = 0  # bumped when a workload or a PriorityClass changes
        self._resolved_at = -1
        self._fresh: set[str] = set()  # pods converted since the last snapshot
        self._last_state: _types.ClusterState | None = None
        self._dirty = True
        # Told every change under the lock: each must return at once (hand it on).
        self.listeners: list[CacheListener] = []
        self.changes = 0  # changes applied, as numbered for the listeners

    @property
    def synced(self) -> bool:
        return all(k.synced for k in self.kinds.values())

    # --- writes ---------------------------------------------------------------------------

    def listed(
        self,
        kind: Kind,
        converted: dict[str, Any],
        invalid: Mapping[str, str],
        version: str | None,
        now: float,
        node_taints: Mapping[str, NodeTaints] | None = None,
    ) -> None:
        """A list of the kind completed: its objects replace the old ones (and, for
        nodes, `node_taints` every node's taints as listed)."""
        prefix = f"{kind.name}: "
        self.invalid = {k: v for k, v in self.invalid.items() if not k.startswith(prefix)}
        self.invalid.update(invalid)
        if kind.path == _cache_objects.PODS:
            self._replace_pods(converted)
        elif kind.path == _cache_objects.NODES:
            self.node_taints = dict(node_taints or {})
        elif kind.path in _cache_objects.RESOLUTION_PATHS and converted != kind.objects:
            self._resolution += 1
        # Pods are kept in `pods` alone: here, the listed entries (and the views built
        # on them) would outlive their pods' changes and deletions until the next list.
        kind.objects = {} if kind.path == _cache_objects.PODS else converted
        kind.version = version or ""
        kind.served = version is not None
        kind.synced = True
        kind.error = None
        kind.failure = None
        kind.seen_at = now
        self._dirty = True
        self._tell(kind.name, relisted=True)
        self.changed.notify_all()

    def put_invalid(self, type_: str, described: str, problem: str) -> None:
        """A watch event whose object cannot be read: a snapshot refuses while it stays."""
        self._dirty = True
        if type_ == "DELETED":
            self.invalid.pop(described, None)
        else:
            self.invalid[described] = problem

    def put(
        self,
        kind: Kind,
        type_: str,
        key: str,
        value: Any,
        described: str,
        node_taints: NodeTaints | None = None,
    ) -> None:
        """An ADDED, MODIFIED or DELETED event's object, converted (and, for a node,
        `node_taints` its taints as the event carried them)."""
        self._dirty = True
        self.invalid.pop(described, None)
        if kind.path == _cache_objects.NODES:
            if type_ == "DELETED" or node_taints is None:
                self.node_taints.pop(key, None)
            else:
                self.node_taints[key] = node_taints
        if kind.path == _cache_objects.PODS:
            entry = self.pods.get(key)
            old = None if entry is None else entry.pod
            if type_ == "DELETED":
                self._drop_pod(key)
                new = None
            else:
                self._put_pod(key, value)
                new = value.pod
        else:
            old = kind.objects.get(key)
            if type_ == "DELETED":
                kind.objects.pop(key, None)
                new = None
            else:
                kind.objects[key] = value
                new = value
            if kind.path in _cache_objects.RESOLUTION_PATHS and (
                type_ == "DELETED" or old != value
            ):
                self._resolution += 1
        if old is not None or new is not None:
            self._tell(kind.name, old, new)

    def _tell(self, kind: str, old: Any = None, new: Any = None, relisted: bool = False) -> None:
        self.changes += 1
        if self.listeners:
            change = CacheChange(
                kind=kind, sequence=self.changes, old=old, new=new, relisted=relisted
            )
            for listener in self.listeners:
                try:
                    listener(change)
                except Exception:  # a listener's failure must not stop the watch
                    log.exception("cluster cache listener failed", extra={"kind": kind})

    # --- the snapshot ---------------------------------------------------------------------

    def snapshot(self) -> _types.ClusterState:
        """The cluster as last seen: the last snapshot while nothing changed."""
        if not self._dirty and self._last_state is not None:
            return self._last_state
        state = self._assemble()
        self._last_state = state
        self._dirty = False
        return state

    def _assemble(self) -> _types.ClusterState:
        kinds = self.kinds
        namespaces = kinds["/api/v1/namespaces"].objects
        classes_kind = kinds["/apis/scheduling.k8s.io/v1/priorityclasses"].objects
        classes = {name: value for name, (value, _) in sorted(classes_kind.items())}
        # As the file loader: the first class, in list order, that says globalDefault.
        default_priority = next(
            (value for _, (value, default) in sorted(classes_kind.items()) if default), 0
        )
        if (
            self._resolved_at != self._resolution
            or self._workloads is None
            or self._resolver is None
        ):
            # A workload or a PriorityClass changed: every pod is completed again.
            workloads: list[_types.Workload] = []
            index: dict[str, _types.Workload] = {}
            for path in _cache_objects.WORKLOAD_PATHS:
                objects = kinds[path].objects  # keyed by Workload.key
                workloads.extend(objects[key] for key in sorted(objects))
                index.update(objects)
            self._workloads = tuple(workloads)
            resolver = _convert._WorkloadResolver(index)
            self._resolver = resolver
            changing: Iterable[str] = self.pods.keys()
        else:
            resolver = self._resolver
            changing = self._fresh
        for key in changing:
            entry = self.pods[key]
            entry.pod = _completed(entry, resolver, classes, default_priority)
            entry.published = True
        self._resolved_at = self._resolution
        self._fresh = set()
        if self._sorted_pods is None:
            self._sorted_pods = sorted(self.pods)
        entries = self.pods
        pods = tuple([entries[key].pod for key in self._sorted_pods])
        nodes = kinds["/api/v1/nodes"].objects
        pdbs = kinds["/apis/policy/v1/poddisruptionbudgets"].objects
        return _types.ClusterState(
            nodes=tuple(nodes[name] for name in sorted(nodes)),
            pods=pods,
            pdbs=tuple(pdbs[key] for key in sorted(pdbs)),
            workloads=self._workloads,
            namespace_labels={name: namespaces[name] for name in sorted(namespaces)},
            priority_classes=classes,
        )

    # --- pods and their indexes -----------------------------------------------------------

    def _replace_pods(self, converted: Mapping[str, _cache_objects.PodEntry]) -> None:
        self._sorted_pods = None  # sorted once at the next snapshot, not key by key
        for key in list(self.pods):
            if key not in converted:
                self._drop_pod(key)
        for key, entry in converted.items():
            self._put_pod(key, entry)

    def pods_labelled(self, namespace: str, labels: Mapping[str, str]) -> set[str]:
        """Keys of the namespace's pods that carry every one of `labels` (all of the
        namespace's for none): the smallest label's pods, filtered."""
        if not labels:
            return set(self.pods_by_namespace.get(namespace, ()))
        sets = [self.pods_by_label.get((namespace, k, v), set()) for k, v in labels.items()]
        sets.sort(key=len)
        return sets[0].intersection(*sets[1:])

    def _put_pod(self, key: str, entry: _cache_objects.PodEntry) -> None:
        old = self.pods.get(key)
        if old is None:
            if self._sorted_pods is not None:
                # One new pod in 150,000: insert it in order rather than sort again.
                bisect.insort(self._sorted_pods, key)
            self.pods_by_namespace.setdefault(entry.pod.namespace, set()).add(key)
        else:
            if old.pod.node_name != entry.pod.node_name and old.pod.node_name:
                self.pods_by_node.get(old.pod.node_name, set()).discard(key)
            if old.pod.labels != entry.pod.labels:
                self._unlabel(key, old.pod)
        self._label(key, entry.pod)
        if entry.pod.node_name:
            self.pods_by_node.setdefault(entry.pod.node_name, set()).add(key)
        self.pods[key] = entry
        self._fresh.add(key)

    def _drop_pod(self, key: str) -> None:
        entry = self.pods.pop(key, None)
        if entry is None:
            return
        if self._sorted_pods is not None:
            del self._sorted_pods[bisect.bisect_left(self._sorted_pods, key)]
        self._fresh.discard(key)
        self.pods_by_namespace.get(entry.pod.namespace, set()).discard(key)
        if entry.pod.node_name:
            self.pods_by_node.get(entry.pod.node_name, set()).discard(key)
        self._unlabel(key, entry.pod)

    def _label(self, key: str, pod: _types.Pod) -> None:
        for name, value in pod.labels.items():
            self.pods_by_label.setdefault((pod.namespace, name, value), set()).add(key)

    def _unlabel(self, key: str, pod: _types.Pod) -> None:
        for name, value in pod.labels.items():
            label = (pod.namespace, name, value)
            keys = self.pods_by_label.get(label)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self.pods_by_label[label]


def _completed(
    entry: _cache_objects.PodEntry,
    resolver: _convert._WorkloadResolver,
    classes: Mapping[str, int],
    default_priority: int,
) -> _types.Pod:
    """The pod with its workload and priority as the cluster now says: itself where
    nothing changed, completed in place where no snapshot has seen it, else a copy."""
    pod = entry.pod
    workload, selector = pod.workload, pod.owner_selector
    if pod.owner is not None:
        workload, selector = resolver.resolve(pod.namespace, pod.owner)
    priority = pod.priority
    if entry.class_priority:
        priority = _convert._class_priority(pod.priority_class_name, classes, default_priority)
    if workload == pod.workload and selector == pod.owner_selector and priority == pod.priority:
        return pod
    if not entry.published:
        object.__setattr__(pod, "workload", workload)
        object.__setattr__(pod, "owner_selector", selector)
        object.__setattr__(pod, "priority", priority)
        return pod
    entry.published = False
    return dataclasses.replace(pod, workload=workload, owner_selector=selector, priority=priority)
