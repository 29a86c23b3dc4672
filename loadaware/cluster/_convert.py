"""Raw Kubernetes objects (as `kubectl get -o json` prints them) to ClusterState.

Kinds read: v1 Node, Pod and Namespace, policy/v1 PodDisruptionBudget, apps/v1
ReplicaSet, Deployment, StatefulSet and DaemonSet, batch/v1 Job,
scheduling.k8s.io/v1 PriorityClass. `*List` objects are flattened; other kinds
are ignored. Every field is type-checked as it is read: a bad object raises
InputError naming the object and the field path, never a KeyError or a
TypeError from deep inside.

Where an object lacks a field the API server would have defaulted (a
hand-written file), the default is the API server's; where a guess could make a
pod look evictable that is not, the input is refused instead.

One Converter reads for the file loader, the live reader and the cluster cache
alike: the objects' fields through _fields, pods through _pod, the other kinds
through _objects, and a pod's hot fields through its reading (_fast, else
_reading's checked one). What it keeps between objects lives in that reading,
as long as the Converter does: one load, or one cluster cache.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeAlias

from loadaware import gc_freeze
from loadaware.cluster import _fast, _fields, _objects, _pod, _reading, _types
from loadaware.errors import InputError

RawObject: TypeAlias = _fields.RawObject

# (API group, kind) of the objects read; the version is not checked so that
# older dumps (policy/v1beta1, apps/v1beta2) still load.
_NODE = ("", "Node")
_POD = ("", "Pod")
_NAMESPACE = ("", "Namespace")
_PDB = ("policy", "PodDisruptionBudget")
_PRIORITY_CLASS = ("scheduling.k8s.io", "PriorityClass")
_CLUSTER_SCOPED = frozenset({_NODE, _NAMESPACE, _PRIORITY_CLASS})
_WORKLOAD = ("", "")  # stands for every kind in _WORKLOAD_KINDS
_WORKLOAD_KINDS = frozenset(
    {
        ("apps", "ReplicaSet"),
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("apps", "DaemonSet"),
        ("batch", "Job"),
    }
)

# What each kind read is read as (workloads in one list, so that they keep their
# input order), and whether its objects are namespaced.
_READ_AS: dict[tuple[str, str], tuple[tuple[str, str], bool]] = {
    **{
        key: (key, key not in _CLUSTER_SCOPED)
        for key in (_NODE, _POD, _NAMESPACE, _PDB, _PRIORITY_CLASS)
    },
    **{key: (_WORKLOAD, True) for key in _WORKLOAD_KINDS},
}

# Built into every API server; pods naming them get these values from admission.
_UNKNOWN_CLASS_PRIORITY = 2_000_000_000
_SYSTEM_PRIORITY_CLASSES = {
    "system-cluster-critical": 2_000_000_000,
    "system-node-critical": 2_000_001_000,
}


class Converter:
    """Raw objects to the values of a ClusterState, through one reading (see the module).

    The reading is the fast one unless another is given (tests give the checked
    one, to compare). Objects are read in any order; `cluster_state` and
    `cluster_state_from_stream` read a whole input.
    """

    __slots__ = ("reading",)

    def __init__(self, reading: _reading.CheckedReading | None = None) -> None:
        self.reading = _fast.FastReading() if reading is None else reading

    def namespace(self, raw: RawObject, r: _fields.FieldReader) -> tuple[str, dict[str, str]]:
        return _objects.read_namespace(raw, r)

    def priority_class(self, raw: RawObject, r: _fields.FieldReader) -> tuple[str, int]:
        return _objects.read_priority_class(raw, r)

    def node(self, raw: RawObject, r: _fields.FieldReader) -> _types.Node:
        return _objects.read_node(raw, r, self.reading)

    def workload(self, raw: RawObject, r: _fields.FieldReader) -> _types.Workload:
        return _objects.read_workload(raw, r, self.reading)

    def pdb(self, raw: RawObject, r: _fields.FieldReader) -> _types.PodDisruptionBudget:
        return _objects.read_pdb(raw, r)

    def pod(self, raw: RawObject, r: _fields.FieldReader) -> tuple[_types.Pod, bool]:
        """The pod but for its workload and its priority from its class (then the bool
        is True), for _complete_pod."""
        return _pod.read_pod(raw, r, self.reading)

    def cluster_state(self, objects: Iterable[Any]) -> _types.ClusterState:
        """The objects (Lists allowed) as a ClusterState; InputError on a bad object,
        checking kind after kind."""
        by_kind: dict[tuple[str, str], list[tuple[RawObject, _fields.FieldReader]]] = {}
        for position, raw in enumerate(iter_objects(objects), start=1):
            read_as = _read_as(raw, position)
            if read_as is not None:
                key, r = read_as
                by_kind.setdefault(key, []).append((raw, r))

        namespace_labels = _unique(
            "Namespace", (self.namespace(raw, r) for raw, r in by_kind.get(_NAMESPACE, ()))
        )
        priority_classes = _unique(
            "PriorityClass",
            (self.priority_class(raw, r) for raw, r in by_kind.get(_PRIORITY_CLASS, ())),
        )
        default_priority = _objects.global_default_priority(by_kind.get(_PRIORITY_CLASS, ()))

        workloads = [self.workload(raw, r) for raw, r in by_kind.get(_WORKLOAD, ())]
        workload_index = _unique("workload", ((w.key, w) for w in workloads))

        nodes = [self.node(raw, r) for raw, r in by_kind.get(_NODE, ())]
        _unique("Node", ((n.name, n) for n in nodes))

        resolver = _WorkloadResolver(workload_index)
        pods = [
            _complete_pod(
                *_pod.read_pod(raw, r, self.reading), resolver, priority_classes, default_priority
            )
            for raw, r in by_kind.get(_POD, ())
        ]
        _unique("Pod", ((p.key, p) for p in pods))

        pdbs = [self.pdb(raw, r) for raw, r in by_kind.get(_PDB, ())]
        _unique("PodDisruptionBudget", ((p.key, p) for p in pdbs))

        return _types.ClusterState(
            nodes=tuple(nodes),
            pods=tuple(pods),
            pdbs=tuple(pdbs),
            workloads=tuple(workloads),
            namespace_labels=namespace_labels,
            priority_classes=priority_classes,
        )

    def cluster_state_from_stream(self, objects: Iterable[Any]) -> _types.ClusterState:
        """cluster_state for objects best freed as soon as read (a large dump parsed
        one object at a time): each is converted as it comes, and only what it was
        converted to is kept (see Stream).

        A bad input raises, but not necessarily the error cluster_state reports,
        which checks kind after kind rather than in input order: a caller that
        reports the error asks that one again. Where nothing is wrong, both check
        the same objects the same way, and give the same ClusterState.
        """
        stream = Stream(self)
        add = stream.add
        for obj in objects:
            add(obj)
        return stream.cluster_state()


class Stream:
    """A ClusterState read one object at a time, for cluster_state_from_stream: each
    object is converted as it comes (`add`), or comes read already by a reader of its
    own (`add_pod`, `add_workload`, `add_node`: the _plain_* readers). The pods are
    completed at the end (`cluster_state`), once all the workloads and priority
    classes they refer to are known."""

    __slots__ = (
        "_classes",
        "_converter",
        "_default_priority",
        "_namespaces",
        "_nodes",
        "_pdbs",
        "_position",
        "_read_pods",
        "_workloads",
    )

    def __init__(self, converter: Converter) -> None:
        self._converter = converter
        self._namespaces: list[tuple[str, dict[str, str]]] = []
        self._classes: list[tuple[str, int]] = []
        self._default_priority: int | None = None
        self._workloads: list[_types.Workload] = []
        self._nodes: list[_types.Node] = []
        self._read_pods: list[tuple[_types.Pod, bool]] = []
        self._pdbs: list[_types.PodDisruptionBudget] = []
        self._position = 0  # of the last object, Lists flattened, for errors

    def add_pod(self, read: tuple[_types.Pod, bool]) -> None:
        """A pod as Converter.pod reads it, in its place in the input."""
        self._position += 1
        self._read_pods.append(read)

    def add_workload(self, workload: _types.Workload) -> None:
        """A workload as Converter.workload reads it, in its place in the input."""
        self._position += 1
        self._workloads.append(workload)

    def add_node(self, node: _types.Node) -> None:
        """A node as Converter.node reads it, in its place in the input."""
        self._position += 1
        self._nodes.append(node)

    def add(self, obj: Any) -> None:
        """An object (Lists flattened), converted and checked as cluster_state does."""
        converter = self._converter
        for raw in iter_objects((obj,)):
            self._position += 1
            read_as = _read_as(raw, self._position)
            if read_as is None:
                continue
            key, r = read_as
            if key == _POD:
                self._read_pods.append(_pod.read_pod(raw, r, converter.reading))
            elif key == _WORKLOAD:
                self._workloads.append(converter.workload(raw, r))
            elif key == _NODE:
                self._nodes.append(converter.node(raw, r))
            elif key == _PDB:
                self._pdbs.append(converter.pdb(raw, r))
            elif key == _NAMESPACE:
                self._namespaces.append(converter.namespace(raw, r))
            else:
                self._classes.append(converter.priority_class(raw, r))
                # As global_default_priority: the first class that says globalDefault.
                if self._default_priority is None and r.boolean(
                    raw.get("globalDefault"), "globalDefault"
                ):
                    self._default_priority = r.integer(raw.get("value"), "value")

    def cluster_state(self) -> _types.ClusterState:
        """The objects added, as a ClusterState; InputError for one added twice."""
        priority_classes = _unique("PriorityClass", self._classes)
        default_priority = self._default_priority
        if default_priority is None:
            default_priority = 0  # no globalDefault class
        workloads = self._workloads
        resolver = _WorkloadResolver(_unique("workload", ((w.key, w) for w in workloads)))
        pods = [
            _complete_pod(pod, class_priority, resolver, priority_classes, default_priority)
            for pod, class_priority in self._read_pods
        ]
        nodes, pdbs = self._nodes, self._pdbs
        _unique("Node", ((n.name, n) for n in nodes))
        _unique("Pod", ((p.key, p) for p in pods))
        _unique("PodDisruptionBudget", ((p.key, p) for p in pdbs))
        return _types.ClusterState(
            nodes=tuple(nodes),
            pods=tuple(pods),
            pdbs=tuple(pdbs),
            workloads=tuple(workloads),
            namespace_labels=_unique("Namespace", self._namespaces),
            priority_classes=priority_classes,
        )


def cluster_state_from_objects(objects: Iterable[Any]) -> _types.ClusterState:
    """Convert raw objects (Lists allowed) into a ClusterState; InputError on a bad object."""
    with gc_freeze.paused():
        return Converter().cluster_state(objects)


def cluster_state_from_stream(objects: Iterable[Any]) -> _types.ClusterState:
    """Converter.cluster_state_from_stream, with a converter of its own."""
    with gc_freeze.paused():
        return Converter().cluster_state_from_stream(objects)


def _api_group(raw: RawObject) -> str:
    api_version = raw.get("apiVersion")
    if not isinstance(api_version, str) or "/" not in api_version:
        return ""
    return api_version.split("/", 1)[0]


def iter_objects(objects: Iterable[Any]) -> Iterator[RawObject]:
    """The objects, with `kind: List` (and any `*List` with `items`) flattened, nulls skipped."""
    for obj in objects:
        if obj is None:
            continue
        if type(obj) is not dict and not isinstance(obj, Mapping):
            raise InputError(f"expected a Kubernetes object, got {_fields.type_name(obj)}")
        kind = obj.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and "items" in obj:
            items = obj["items"]
            if items is None:
                continue
            if not isinstance(items, list):
                raise InputError(f"{kind}: items: expected a list, got {_fields.type_name(items)}")
            yield from iter_objects(items)
        else:
            yield obj


def _read_as(raw: RawObject, position: int) -> tuple[tuple[str, str], _fields.FieldReader] | None:
    """The kind an object is read as (_NODE, _POD, ...) and its reader; None for a
    kind that is not read."""
    kind = raw.get("kind")
    if not isinstance(kind, str) or not kind:
        raise InputError(
            f"object #{position}: kind: missing; every object needs kind and apiVersion"
        )
    read_as = _READ_AS.get((_api_group(raw), kind))
    if read_as is None:
        return None
    key, namespaced = read_as
    return key, _reader_for(raw, kind, position, namespaced)


def _reader_for(raw: RawObject, kind: str, position: int, namespaced: bool) -> _fields.FieldReader:
    meta = raw.get("metadata")
    # `type() is dict` first: isinstance() against the Mapping ABC is slow (see _fields).
    if type(meta) is dict or isinstance(meta, Mapping):
        name, namespace = meta.get("name"), meta.get("namespace")
    else:
        name = namespace = None
    if not isinstance(name, str) or not name:
        raise InputError(f"{kind} (object #{position}): metadata.name: missing")
    if not namespaced:
        return _fields.FieldReader(kind, name)
    if not isinstance(namespace, str) or not namespace:
        namespace = "default"  # see _namespace_of
    return _fields.FieldReader(kind, name, namespace)


def _unique(what: str, entries: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Entries by key, refusing the same object twice: two versions of one object
    would leave it unclear which state to plan against."""
    result: dict[str, Any] = {}
    for key, value in entries:
        if key in result:
            raise InputError(f"{what} {key} appears more than once in the input")
        result[key] = value
    return result


class _WorkloadResolver:
    """The top of a pod owner's chain, following owner references through the
    workloads in the input (ReplicaSet -> Deployment, Job -> CronJob), and the
    owner's selector.

    A chain stops at the first object not in the input: its reference is the
    workload. Nothing is inferred from names (`web-7d9f` is not assumed to
    belong to Deployment `web`), since a bare ReplicaSet can be named that way too.
    """

    def __init__(self, workloads: Mapping[str, _types.Workload]) -> None:
        self._workloads = workloads
        self._cache: dict[tuple[str, str, str, str], _ResolvedOwner] = {}

    def resolve(self, namespace: str, owner: _types.OwnerRef) -> _ResolvedOwner:
        """The top of the owner's chain, and the owner's spec.selector: None when the
        owner is not in the input (or is a same-named successor, with another uid)."""
        cache_key = (namespace, owner.kind, owner.name, owner.uid)
        cached = self._cache.get(cache_key)
        if cached is not None:
            return cached
        resolved = self._top(namespace, owner), self._selector(namespace, owner)
        self._cache[cache_key] = resolved
        return resolved

    def _selector(self, namespace: str, owner: _types.OwnerRef) -> _types.LabelSelector | None:
        workload = self._workloads.get(f"{owner.kind}/{namespace}/{owner.name}")
        if workload is None or (owner.uid and workload.uid and owner.uid != workload.uid):
            return None
        return workload.selector

    def _top(self, namespace: str, owner: _types.OwnerRef) -> _types.OwnerRef:
        current = owner
        seen: set[str] = set()
        while True:
            key = f"{current.kind}/{namespace}/{current.name}"
            workload = self._workloads.get(key)
            if workload is None or workload.owner is None or key in seen:
                break
            # A different uid is a same-named successor of the object the
            # reference meant; its owner says nothing about this chain.
            if current.uid and workload.uid and current.uid != workload.uid:
                break
            seen.add(key)
            current = workload.owner
        return current


# The top of an owner's chain, and the owner's spec.selector (see _WorkloadResolver).
_ResolvedOwner: TypeAlias = tuple[_types.OwnerRef, _types.LabelSelector | None]


def _complete_pod(
    pod: _types.Pod,
    class_priority: bool,
    resolver: _WorkloadResolver,
    priority_classes: Mapping[str, int],
    default_priority: int,
) -> _types.Pod:
    """The pod from Converter.pod, completed once the workloads and priority classes are known.

    Completed in place, as a frozen dataclass's __post_init__ sets a field: nothing
    has seen the pod yet, and building it anew would cost as much as reading it.
    """
    if pod.owner is not None:
        workload, owner_selector = resolver.resolve(pod.namespace, pod.owner)
        object.__setattr__(pod, "workload", workload)
        object.__setattr__(pod, "owner_selector", owner_selector)
    if class_priority:
        priority = _class_priority(pod.priority_class_name, priority_classes, default_priority)
        object.__setattr__(pod, "priority", priority)
    return pod


def _class_priority(
    class_name: str, priority_classes: Mapping[str, int], default_priority: int
) -> int:
    # Only hand-written pods lack spec.priority; fill it in as Priority admission would.
    if not class_name:
        return default_priority
    if class_name in priority_classes:
        return priority_classes[class_name]
    if class_name in _SYSTEM_PRIORITY_CLASSES:
        return _SYSTEM_PRIORITY_CLASSES[class_name]
    # The class is not in the input (kubectl dumps rarely include PriorityClasses).
    # Guessing 0 could make a critical pod look evictable, and refusing the whole
    # file for one hand-written pod helps nobody: take the system-critical value,
    # which keeps the pod protected under the default podProtections.
    return _UNKNOWN_CLASS_PRIORITY
