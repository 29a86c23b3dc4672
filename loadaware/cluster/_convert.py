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
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, NoReturn, TypeAlias

from loadaware import collector
from loadaware import quantity as _quantity
from loadaware.cluster import _types
from loadaware.errors import InputError

RawObject: TypeAlias = Mapping[str, Any]

_EMPTY: Mapping[str, Any] = MappingProxyType({})

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

_LABEL_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})
_NODE_SELECTOR_OPERATORS = _LABEL_OPERATORS | {"Gt", "Lt"}
_TAINT_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})

# kubelet's default maxPods, used when a hand-written node states no pod capacity.
_DEFAULT_MAX_PODS = 110
DEFAULT_SCHEDULER_NAME = "default-scheduler"

# The API server sets this immutable label on every namespace (since 1.21);
# namespaceSelectors commonly rely on it.
_NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


class _Reader:
    """Typed access to one raw object's fields; failures name the object and the path.

    A path may hold `{}` placeholders filled from the trailing arguments (list
    indexes), so that it is formatted only when something is wrong: formatting
    every path up front costs more than reading the fields.
    """

    __slots__ = ("_kind", "_name", "_namespace")

    def __init__(self, kind: str, name: str, namespace: str | None = None) -> None:
        self._kind = kind
        self._name = name
        self._namespace = namespace  # None for a cluster-scoped object

    @property
    def what(self) -> str:
        # Formatted only when something is wrong: every object of a load gets a reader.
        if self._namespace is None:
            return f"{self._kind} {self._name}"
        return f"{self._kind} {self._namespace}/{self._name}"

    def fail(self, path: str, problem: str, *where: object) -> NoReturn:
        raise InputError(f"{self.what}: {path.format(*where) if where else path}: {problem}")

    # Each accessor checks `type(...) is` first: isinstance() against the
    # collections ABCs dominates the time of a 150,000-pod load otherwise.

    def mapping(self, value: Any, path: str, *where: object) -> Mapping[str, Any]:
        if type(value) is dict:
            return value
        if value is None:
            return _EMPTY
        if not isinstance(value, Mapping):
            self.fail(path, f"expected an object, got {_type_name(value)}", *where)
        return value

    def sequence(self, value: Any, path: str, *where: object) -> list[Any]:
        if type(value) is list:
            return value
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(path, f"expected a list, got {_type_name(value)}", *where)
        return value

    def string(self, value: Any, path: str, *where: object) -> str:
        if type(value) is str:
            return value
        if value is None:
            return ""
        if not isinstance(value, str):
            self.fail(path, f"expected a string, got {_type_name(value)}", *where)
        return value

    def integer(self, value: Any, path: str, *where: object) -> int:
        if type(value) is int:
            return value
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(path, f"expected an integer, got {_type_name(value)}", *where)
        return value

    def boolean(self, value: Any, path: str, *where: object) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            self.fail(path, f"expected true or false, got {_type_name(value)}", *where)
        return value

    def strings(self, value: Any, path: str, *where: object) -> tuple[str, ...]:
        items = self.sequence(value, path, *where)
        for i, item in enumerate(items):
            if not isinstance(item, str):
                self.fail(
                    f"{path.format(*where)}[{i}]", f"expected a string, got {_type_name(item)}"
                )
        return tuple(items)

    def string_map(self, value: Any, path: str, *where: object) -> dict[str, str]:
        if value is None:
            return {}
        result = dict(value if type(value) is dict else self.mapping(value, path, *where))
        for key, item in result.items():
            # YAML turns unquoted `true` or `1` into non-strings; the API would refuse them.
            if type(item) is not str or type(key) is not str:
                self.fail(
                    f"{path.format(*where)}.{key}",
                    f"expected a string, got {_type_name(item)} (quote it)",
                )
        return result

    def nanos(self, value: Any, path: str, *where: object) -> int:
        """A non-negative quantity in nano-units (see _quantity.to_nanos)."""
        try:
            amount = _quantity.to_nanos(value)
        except ValueError as exc:
            self.fail(path, str(exc), *where)
        if amount < 0:
            self.fail(path, f"{value!r} is negative", *where)
        return amount

    def timestamp(self, value: Any, path: str, *where: object) -> datetime.datetime | None:
        if type(value) is str:
            moment = _TIMESTAMPS.get(value)
            if moment is None:
                try:
                    parsed = datetime.datetime.fromisoformat(value)
                except ValueError:
                    self.fail(path, f"invalid timestamp {value!r}: expected RFC 3339", *where)
                moment = _in_utc(parsed)
                if len(_TIMESTAMPS) >= _TIMESTAMPS_KEPT:
                    _TIMESTAMPS.clear()
                _TIMESTAMPS[value] = moment
            return moment
        if value is None:
            return None
        if isinstance(value, datetime.datetime):
            return _in_utc(value)  # YAML reads unquoted timestamps itself
        self.fail(path, f"expected an RFC 3339 timestamp, got {_type_name(value)}", *where)


# Timestamps read, by their text: a pod's startTime is mostly its creationTimestamp,
# and the pods of one rollout share theirs. Bounded, as _TOLERATIONS.
_TIMESTAMPS: dict[str, datetime.datetime] = {}
_TIMESTAMPS_KEPT = 4096


def _in_utc(moment: datetime.datetime) -> datetime.datetime:
    if moment.tzinfo is None:
        return moment.replace(tzinfo=datetime.UTC)
    return moment.astimezone(datetime.UTC)


# --- plain readers ----------------------------------------------------------------------
#
# A `_plain_*` function reads a part of an object as the API server and the kubelet
# write it (objects, strings, integers: what `kubectl get -o json` prints) without
# the _Reader's checks, and raises _NotPlainError on anything else, for the caller to read
# that part again through the _Reader, whose error names the field. The same parts are
# read for every pod of a large dump, where the checks' calls cost more than the reading.


class _NotPlainError(Exception):
    """The input is not in the shape a `_plain_*` reader reads."""


def _plain_object(value: Any) -> Mapping[str, Any]:
    """As _Reader.mapping."""
    if type(value) is dict:
        return value
    if value is None:
        return _EMPTY
    raise _NotPlainError


def _plain_text(value: Any) -> str:
    """As _Reader.string."""
    if type(value) is str:
        return value
    if value is None:
        return ""
    raise _NotPlainError


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


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
            raise InputError(f"expected a Kubernetes object, got {_type_name(obj)}")
        kind = obj.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and "items" in obj:
            items = obj["items"]
            if items is None:
                continue
            if not isinstance(items, list):
                raise InputError(f"{kind}: items: expected a list, got {_type_name(items)}")
            yield from iter_objects(items)
        else:
            yield obj


def cluster_state_from_objects(objects: Iterable[Any]) -> _types.ClusterState:
    """Convert raw objects (Lists allowed) into a ClusterState; InputError on a bad object."""
    with collector.paused():
        return _cluster_state_from_objects(objects)


def _cluster_state_from_objects(objects: Iterable[Any]) -> _types.ClusterState:
    by_kind: dict[tuple[str, str], list[tuple[RawObject, _Reader]]] = {}
    for position, raw in enumerate(iter_objects(objects), start=1):
        read_as = _read_as(raw, position)
        if read_as is not None:
            key, r = read_as
            by_kind.setdefault(key, []).append((raw, r))

    namespace_labels = _unique(
        "Namespace", (_convert_namespace(raw, r) for raw, r in by_kind.get(_NAMESPACE, ()))
    )
    priority_classes = _unique(
        "PriorityClass",
        (_convert_priority_class(raw, r) for raw, r in by_kind.get(_PRIORITY_CLASS, ())),
    )
    default_priority = _global_default_priority(by_kind.get(_PRIORITY_CLASS, ()))

    workloads = [_convert_workload(raw, r) for raw, r in by_kind.get(_WORKLOAD, ())]
    workload_index = _unique("workload", ((w.key, w) for w in workloads))

    nodes = [_convert_node(raw, r) for raw, r in by_kind.get(_NODE, ())]
    _unique("Node", ((n.name, n) for n in nodes))

    resolver = _WorkloadResolver(workload_index)
    pods = [
        _convert_pod(raw, r, resolver, priority_classes, default_priority)
        for raw, r in by_kind.get(_POD, ())
    ]
    _unique("Pod", ((p.key, p) for p in pods))

    pdbs = [_convert_pdb(raw, r) for raw, r in by_kind.get(_PDB, ())]
    _unique("PodDisruptionBudget", ((p.key, p) for p in pdbs))

    return _types.ClusterState(
        nodes=tuple(nodes),
        pods=tuple(pods),
        pdbs=tuple(pdbs),
        workloads=tuple(workloads),
        namespace_labels=namespace_labels,
        priority_classes=priority_classes,
    )


def _read_as(raw: RawObject, position: int) -> tuple[tuple[str, str], _Reader] | None:
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


def cluster_state_from_stream(objects: Iterable[Any]) -> _types.ClusterState:
    """cluster_state_from_objects for objects best freed as soon as read (a large
    dump parsed one object at a time): each is converted as it comes, and only what
    it was converted to is kept. The pods are completed at the end, once all the
    workloads and priority classes they refer to are known.

    A bad input raises, but not necessarily the error cluster_state_from_objects
    reports, which checks kind after kind rather than in input order: a caller that
    reports the error asks that one again. Where nothing is wrong, both check the
    same objects the same way, and give the same ClusterState.
    """
    namespaces: list[tuple[str, dict[str, str]]] = []
    classes: list[tuple[str, int]] = []
    default_priority: int | None = None
    workloads: list[_types.Workload] = []
    nodes: list[_types.Node] = []
    read_pods: list[tuple[_types.Pod, bool]] = []
    pdbs: list[_types.PodDisruptionBudget] = []
    with collector.paused():
        for position, raw in enumerate(iter_objects(objects), start=1):
            read_as = _read_as(raw, position)
            if read_as is None:
                continue
            key, r = read_as
            if key == _POD:
                read_pods.append(_read_pod(raw, r))
            elif key == _WORKLOAD:
                workloads.append(_convert_workload(raw, r))
            elif key == _NODE:
                nodes.append(_convert_node(raw, r))
            elif key == _PDB:
                pdbs.append(_convert_pdb(raw, r))
            elif key == _NAMESPACE:
                namespaces.append(_convert_namespace(raw, r))
            else:
                classes.append(_convert_priority_class(raw, r))
                # As _global_default_priority: the first class that says globalDefault.
                if default_priority is None and r.boolean(
                    raw.get("globalDefault"), "globalDefault"
                ):
                    default_priority = r.integer(raw.get("value"), "value")

        priority_classes = _unique("PriorityClass", classes)
        if default_priority is None:
            default_priority = 0  # no globalDefault class
        resolver = _WorkloadResolver(_unique("workload", ((w.key, w) for w in workloads)))
        pods = [
            _complete_pod(pod, class_priority, resolver, priority_classes, default_priority)
            for pod, class_priority in read_pods
        ]
        _unique("Node", ((n.name, n) for n in nodes))
        _unique("Pod", ((p.key, p) for p in pods))
        _unique("PodDisruptionBudget", ((p.key, p) for p in pdbs))
        return _types.ClusterState(
            nodes=tuple(nodes),
            pods=tuple(pods),
            pdbs=tuple(pdbs),
            workloads=tuple(workloads),
            namespace_labels=_unique("Namespace", namespaces),
            priority_classes=priority_classes,
        )


def _reader_for(raw: RawObject, kind: str, position: int, namespaced: bool) -> _Reader:
    meta = raw.get("metadata")
    # `type() is dict` first: isinstance() against the Mapping ABC is slow (see _Reader).
    if type(meta) is dict or isinstance(meta, Mapping):
        name, namespace = meta.get("name"), meta.get("namespace")
    else:
        name = namespace = None
    if not isinstance(name, str) or not name:
        raise InputError(f"{kind} (object #{position}): metadata.name: missing")
    if not namespaced:
        return _Reader(kind, name)
    if not isinstance(namespace, str) or not namespace:
        namespace = "default"  # see _namespace_of
    return _Reader(kind, name, namespace)


def _unique(what: str, entries: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Entries by key, refusing the same object twice: two versions of one object
    would leave it unclear which state to plan against."""
    result: dict[str, Any] = {}
    for key, value in entries:
        if key in result:
            raise InputError(f"{what} {key} appears more than once in the input")
        result[key] = value
    return result


def _namespace_of(raw: RawObject, r: _Reader) -> str:
    # kubectl prints the namespace; a hand-written object without one lands in
    # `default`, as `kubectl apply` would put it.
    return r.string(raw["metadata"].get("namespace"), "metadata.namespace") or "default"


def _owner_of(raw: RawObject, r: _Reader) -> _types.OwnerRef | None:
    """The controller ownerReference, else the first one."""
    return _owners_of(raw, r)[0]


def _owners_of(
    raw: RawObject, r: _Reader
) -> tuple[_types.OwnerRef | None, tuple[_types.OwnerRef, ...]]:
    """The controller ownerReference, else the first one; and the other references,
    in their order."""
    refs = raw["metadata"].get("ownerReferences")
    if type(refs) is not list:
        refs = r.sequence(refs, "metadata.ownerReferences")
    if not refs:
        return None, ()
    if len(refs) == 1:
        return _owner_ref_at(refs, 0, r), ()
    chosen = 0
    for i, ref in enumerate(refs):
        if type(ref) is dict and ref.get("controller") is True:
            chosen = i
            break
    others = tuple(_owner_ref_at(refs, i, r) for i in range(len(refs)) if i != chosen)
    return _owner_ref_at(refs, chosen, r), others


def _owner_ref_at(refs: list[Any], i: int, r: _Reader) -> _types.OwnerRef:
    path = "metadata.ownerReferences[{}]"
    ref = refs[i]
    if type(ref) is not dict:
        ref = r.mapping(ref, path, i)
    kind, name, uid = ref.get("kind"), ref.get("name"), ref.get("uid")
    if type(kind) is str and type(name) is str and type(uid) is str and kind and name:
        return _owner_ref(kind, name, uid)  # as the API server writes them: nothing to check
    kind = r.string(kind, "metadata.ownerReferences[{}].kind", i)
    name = r.string(name, "metadata.ownerReferences[{}].name", i)
    if not kind or not name:
        r.fail(path, "an owner reference needs kind and name", i)
    return _owner_ref(kind, name, r.string(uid, "metadata.ownerReferences[{}].uid", i))


@functools.lru_cache(maxsize=4096)
def _owner_ref(kind: str, name: str, uid: str) -> _types.OwnerRef:
    # Shared: the pods of one ReplicaSet all carry the same reference.
    return _types.OwnerRef(kind=kind, name=name, uid=uid)


def _label_selector(r: _Reader, value: Any, path: str) -> _types.LabelSelector | None:
    if value is None:
        return None
    selector = r.mapping(value, path)
    expressions = selector.get("matchExpressions")
    return _types.LabelSelector(
        match_labels=r.string_map(selector.get("matchLabels"), "{}.matchLabels", path),
        # Workload selectors mostly have none; their paths are not formatted for nothing.
        match_expressions=()
        if expressions is None
        else _requirements(r, expressions, f"{path}.matchExpressions", _LABEL_OPERATORS),
    )


def _requirements(
    r: _Reader, value: Any, path: str, operators: frozenset[str]
) -> tuple[_types.Requirement, ...]:
    result = []
    for i, item in enumerate(r.sequence(value, path)):
        item_path = f"{path}[{i}]"
        entry = r.mapping(item, item_path)
        key = r.string(entry.get("key"), f"{item_path}.key")
        operator = r.string(entry.get("operator"), f"{item_path}.operator")
        if not key:
            r.fail(f"{item_path}.key", "missing")
        if operator not in operators:
            r.fail(
                f"{item_path}.operator",
                f"{operator!r} is not one of {', '.join(sorted(operators))}",
            )
        values = r.strings(entry.get("values"), f"{item_path}.values")
        result.append(_types.Requirement(key=key, operator=operator, values=values))
    return tuple(result)


# --- cluster-scoped helpers ---------------------------------------------------------------


def _convert_namespace(raw: RawObject, r: _Reader) -> tuple[str, dict[str, str]]:
    name: str = raw["metadata"]["name"]
    labels = r.string_map(raw["metadata"].get("labels"), "metadata.labels")
    labels.setdefault(_NAMESPACE_NAME_LABEL, name)
    return name, labels


def _convert_priority_class(raw: RawObject, r: _Reader) -> tuple[str, int]:
    if "value" not in raw:
        r.fail("value", "missing")
    return raw["metadata"]["name"], r.integer(raw["value"], "value")


def _global_default_priority(classes: Iterable[tuple[RawObject, _Reader]]) -> int:
    # Priority admission gives pods without a class the globalDefault class's value.
    for raw, r in classes:
        if r.boolean(raw.get("globalDefault"), "globalDefault"):
            return r.integer(raw.get("value"), "value")
    return 0


# --- Node -------------------------------------------------------------------------------


def _convert_node(raw: RawObject, r: _Reader) -> _types.Node:
    meta = raw["metadata"]
    spec = r.mapping(raw.get("spec"), "spec")
    status = r.mapping(raw.get("status"), "status")
    allocatable = r.mapping(status.get("allocatable"), "status.allocatable")
    capacity = r.mapping(status.get("capacity"), "status.capacity")

    def resource(name: str) -> int | None:
        for source, path in ((allocatable, "status.allocatable"), (capacity, "status.capacity")):
            if source.get(name) is not None:
                return r.nanos(source[name], f"{path}.{name}")
        return None

    cpu, memory, pods = resource("cpu"), resource("memory"), resource("pods")
    for name, amount in (("cpu", cpu), ("memory", memory)):
        if amount is None:
            r.fail(f"status.allocatable.{name}", "missing (and no status.capacity to fall back on)")
    # Extended resources carry a domain (`nvidia.com/gpu`); counts, as device plugins give them.
    extended = {
        name: (resource(name) or 0) / 1e9 for name in {**capacity, **allocatable} if "/" in name
    }

    taints = []
    for i, item in enumerate(r.sequence(spec.get("taints"), "spec.taints")):
        path = f"spec.taints[{i}]"
        entry = r.mapping(item, path)
        effect = r.string(entry.get("effect"), f"{path}.effect")
        if effect not in _TAINT_EFFECTS:
            r.fail(
                f"{path}.effect", f"{effect!r} is not one of {', '.join(sorted(_TAINT_EFFECTS))}"
            )
        taints.append(
            _types.Taint(
                key=r.string(entry.get("key"), f"{path}.key"),
                value=r.string(entry.get("value"), f"{path}.value"),
                effect=effect,
            )
        )

    return _types.Node(
        name=meta["name"],
        uid=r.string(meta.get("uid"), "metadata.uid"),
        labels=r.string_map(meta.get("labels"), "metadata.labels"),
        allocatable_cpu_millicores=_quantity.nanos_to_millicores(cpu or 0),
        allocatable_memory_bytes=_quantity.nanos_to_units(memory or 0),
        allocatable_pods=_DEFAULT_MAX_PODS if pods is None else _quantity.nanos_to_units(pods),
        allocatable_extended=extended,
        taints=tuple(taints),
        unschedulable=r.boolean(spec.get("unschedulable"), "spec.unschedulable"),
        # No Ready condition at all means the node has never reported: not ready.
        ready=_condition_is_true(r, status, "Ready"),
        images=_node_images(r, status.get("images")),
    )


def _node_images(r: _Reader, items: Any) -> tuple[_types.ContainerImage, ...]:
    if not items:
        return ()
    result = []
    for i, item in enumerate(r.sequence(items, "status.images")):
        # An entry read before, on another node, is taken without reading it again:
        # a dump's nodes repeat the same few hundred entries.
        if type(item) is dict:
            names, size = item.get("names"), item.get("sizeBytes")
            if type(names) is list and (size is None or type(size) is int):
                try:
                    known = _NODE_IMAGES.get((*names, size))
                except TypeError:  # an unhashable name: read it below, and refused
                    known = None
                if known is not None:
                    result.append(known)
                    continue
        result.append(_read_node_image(r, item, i))
    return tuple(result)


def _read_node_image(r: _Reader, item: Any, i: int) -> _types.ContainerImage:
    entry = r.mapping(item, "status.images[{}]", i)
    names = r.strings(entry.get("names"), "status.images[{}].names", i)
    size = entry.get("sizeBytes")
    # Optional in the API: kube-scheduler then counts the image as empty.
    image = _types.ContainerImage(
        names=names,
        size_bytes=0 if size is None else r.integer(size, "status.images[{}].sizeBytes", i),
    )
    if len(_NODE_IMAGES) >= _NODE_IMAGES_KEPT:
        _NODE_IMAGES.clear()
    # Keyed by the names and the size as written (None for none): equal keys read the
    # same, as no JSON value other than a string equals a string.
    _NODE_IMAGES[(*names, size)] = image
    return image


# status.images entries read, shared by every node reporting them. Bounded, as _TOLERATIONS.
_NODE_IMAGES: dict[tuple[Any, ...], _types.ContainerImage] = {}
_NODE_IMAGES_KEPT = 16384


def _condition_is_true(r: _Reader, status: Mapping[str, Any], kind: str) -> bool:
    for i, item in enumerate(r.sequence(status.get("conditions"), "status.conditions")):
        condition = item if type(item) is dict else r.mapping(item, "status.conditions[{}]", i)
        if condition.get("type") == kind:
            return condition.get("status") == "True"
    return False


# --- workloads --------------------------------------------------------------------------


def _convert_workload(raw: RawObject, r: _Reader) -> _types.Workload:
    kind: str = raw["kind"]
    meta = raw["metadata"]
    spec = r.mapping(raw.get("spec"), "spec")
    replicas: int | None
    if kind == "DaemonSet":
        status = r.mapping(raw.get("status"), "status")
        value = status.get("desiredNumberScheduled")
        # Unknown until the controller has reported; None rather than a guess.
        replicas = None if value is None else r.integer(value, "status.desiredNumberScheduled")
    elif kind == "Job":
        replicas = None  # a Job's pods run to completion; replicas do not apply
    else:
        value = spec.get("replicas")
        replicas = 1 if value is None else r.integer(value, "spec.replicas")  # API default
    return _types.Workload(
        kind=kind,
        namespace=_namespace_of(raw, r),
        name=meta["name"],
        uid=r.string(meta.get("uid"), "metadata.uid"),
        replicas=replicas,
        owner=_owner_of(raw, r),
        selector=_label_selector(r, spec.get("selector"), "spec.selector"),
    )


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


# --- Pod --------------------------------------------------------------------------------


def _convert_pod(
    raw: RawObject,
    r: _Reader,
    resolver: _WorkloadResolver,
    priority_classes: Mapping[str, int],
    default_priority: int,
) -> _types.Pod:
    pod, class_priority = _read_pod(raw, r)
    return _complete_pod(pod, class_priority, resolver, priority_classes, default_priority)


def _complete_pod(
    pod: _types.Pod,
    class_priority: bool,
    resolver: _WorkloadResolver,
    priority_classes: Mapping[str, int],
    default_priority: int,
) -> _types.Pod:
    """The pod from _read_pod, completed once the workloads and priority classes are known.

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


def _read_pod(raw: RawObject, r: _Reader) -> tuple[_types.Pod, bool]:
    """The pod but for what needs the rest of the input, for _complete_pod: its
    `workload` (the top of the owner chain) is None, and where spec.priority is not
    set (then the bool is True) its `priority` is 0 until its priority class is known."""
    meta = raw["metadata"]
    spec = r.mapping(raw.get("spec"), "spec")
    status = r.mapping(raw.get("status"), "status")
    namespace = _namespace_of(raw, r)
    annotations = r.string_map(meta.get("annotations"), "metadata.annotations")

    containers = r.sequence(spec.get("containers"), "spec.containers")
    init_containers = r.sequence(spec.get("initContainers"), "spec.initContainers")
    plain_requests = None if init_containers else _plain_container_requests(containers)
    if plain_requests is None:
        cpu, memory = _container_requests_sum(r, containers, init_containers)
        cpu, memory = _pod_requests(r, spec, cpu, memory)
        extended = _extended_requests(r, containers, init_containers)
    else:
        cpu, memory = _pod_requests(r, spec, *plain_requests)
        extended = {}

    qos_class = r.string(status.get("qosClass"), "status.qosClass")
    if not qos_class:
        qos_class = _pod_qos_class(r, spec, containers, init_containers)

    owner, other_owners = _owners_of(raw, r)
    # As the descheduler's IsPodWithLocalStorage: memory-backed emptyDirs count too.
    has_local_storage = has_pvc = False
    for i, volume in enumerate(r.sequence(spec.get("volumes"), "spec.volumes")):
        if type(volume) is not dict:
            volume = r.mapping(volume, "spec.volumes[{}]", i)
        if volume.get("emptyDir") is not None or volume.get("hostPath") is not None:
            has_local_storage = True
        if volume.get("persistentVolumeClaim") is not None:
            has_pvc = True
    priority_class_name = r.string(spec.get("priorityClassName"), "spec.priorityClassName")
    affinity = spec.get("affinity")
    if affinity:
        affinity = r.mapping(affinity, "spec.affinity")
        node_affinity = _required_node_affinity(r, affinity)
        preferred_node_affinity = _preferred_node_affinity(r, affinity)
        pod_affinity = _pod_affinity_terms(r, affinity, "podAffinity")
        pod_anti_affinity = _pod_affinity_terms(r, affinity, "podAntiAffinity")
        preferred_pod_affinity = _weighted_pod_affinity_terms(r, affinity, "podAffinity")
        preferred_pod_anti_affinity = _weighted_pod_affinity_terms(r, affinity, "podAntiAffinity")
    else:
        node_affinity, pod_affinity, pod_anti_affinity = (), (), ()
        preferred_node_affinity = ()
        preferred_pod_affinity = preferred_pod_anti_affinity = ()
    labels = r.string_map(meta.get("labels"), "metadata.labels")

    pod = _types.new_pod(
        namespace=namespace,
        name=meta["name"],
        uid=r.string(meta.get("uid"), "metadata.uid"),
        node_name=r.string(spec.get("nodeName"), "spec.nodeName") or None,
        # The API server defaults it; a file may leave it out.
        scheduler_name=r.string(spec.get("schedulerName"), "spec.schedulerName")
        or DEFAULT_SCHEDULER_NAME,
        # The API server starts every pod as Pending.
        phase=r.string(status.get("phase"), "status.phase") or "Pending",
        ready=_condition_is_true(r, status, "Ready"),
        labels=labels,
        annotations=annotations,
        owner=owner,
        other_owners=other_owners,
        workload=None,  # set by _complete_pod, as is owner_selector
        owner_selector=None,
        cpu_request_millicores=_quantity.nanos_to_millicores(cpu),
        memory_request_bytes=_quantity.nanos_to_units(memory),
        extended_requests=extended,
        priority=_explicit_priority(r, spec),  # 0 where it comes from the class
        priority_class_name=priority_class_name,
        qos_class=qos_class,
        creation_timestamp=r.timestamp(meta.get("creationTimestamp"), "metadata.creationTimestamp"),
        deletion_timestamp=r.timestamp(meta.get("deletionTimestamp"), "metadata.deletionTimestamp"),
        restart_count=_restart_count(r, status),
        has_local_storage=has_local_storage,
        has_pvc=has_pvc,
        has_resource_claims=bool(r.sequence(spec.get("resourceClaims"), "spec.resourceClaims")),
        is_mirror="kubernetes.io/config.mirror" in annotations,
        tolerations=_tolerations(r, spec),
        node_selector=r.string_map(spec.get("nodeSelector"), "spec.nodeSelector"),
        required_node_affinity=node_affinity,
        required_pod_affinity=pod_affinity,
        required_pod_anti_affinity=pod_anti_affinity,
        host_ports=()
        if plain_requests is not None
        else _host_ports(r, containers, init_containers),
        preferred_node_affinity=preferred_node_affinity,
        preferred_pod_affinity=preferred_pod_affinity,
        preferred_pod_anti_affinity=preferred_pod_anti_affinity,
        topology_spread_constraints=_spread_constraints(r, spec, labels),
        start_time=r.timestamp(status.get("startTime"), "status.startTime"),
        status_reason=r.string(status.get("reason"), "status.reason"),
        container_statuses=_container_statuses(r, status),
        container_images=_container_images(r, containers, init_containers),
    )
    return pod, spec.get("priority") is None


def _container_images(
    r: _Reader, containers: list[Any], init_containers: list[Any]
) -> tuple[str, ...]:
    """The image of every init container, then of every container, as kube-scheduler's
    ImageLocality reads them; one tuple for the replicas of a workload."""
    try:
        # Containers as the API server writes them, nearly every pod, most with one:
        # join() refuses anything but strings, in C, for less than a check of each.
        if init_containers:
            images = tuple([c["image"] for c in (*init_containers, *containers)])
        elif len(containers) == 1:
            images = (containers[0]["image"],)
        else:
            images = tuple([c["image"] for c in containers])
        "".join(images)
    except (TypeError, KeyError):
        images = _read_container_images(r, containers, init_containers)
    shared = _CONTAINER_IMAGES.get(images)
    if shared is None:
        if len(_CONTAINER_IMAGES) >= _CONTAINER_IMAGES_KEPT:
            _CONTAINER_IMAGES.clear()
        shared = _CONTAINER_IMAGES[images] = images
    return shared


def _read_container_images(
    r: _Reader, containers: list[Any], init_containers: list[Any]
) -> tuple[str, ...]:
    """_container_images for containers of any shape, with the checks that name a bad field."""
    images = []
    groups = (("spec.initContainers", init_containers), ("spec.containers", containers))
    for prefix, group in groups:
        for i, container in enumerate(group):
            if type(container) is not dict:
                container = r.mapping(container, "{}[{}]", prefix, i)
            image = container.get("image")
            if type(image) is not str:
                image = r.string(image, "{}[{}].image", prefix, i)
            images.append(image)
    return tuple(images)


# The image tuples read, each the first of its value: the replicas of a workload, read
# one after the other, share it (and one copy of each name). Bounded, as _TOLERATIONS.
_CONTAINER_IMAGES: dict[tuple[str, ...], tuple[str, ...]] = {}
_CONTAINER_IMAGES_KEPT = 4096


def _container_requests_sum(
    r: _Reader, containers: list[Any], init_containers: list[Any]
) -> tuple[int, int]:
    """(cpu, memory) requests of the containers in nano-units, as kube-scheduler sums
    them (resource.PodRequests), before _pod_requests adds what the pod itself states.

    Regular containers and sidecars (init containers with restartPolicy Always)
    run together for the pod's life, so they add up. A plain init container runs
    alone, next to the sidecars started before it, so only its peak counts. Sums
    are exact; the caller rounds once, as Kubernetes does.
    """
    cpu, memory = 0, 0
    for i, container in enumerate(containers):
        c_cpu, c_memory = _container_requests(r, container, "spec.containers", i)
        cpu += c_cpu
        memory += c_memory

    sidecar_cpu, sidecar_memory = 0, 0
    init_peak_cpu, init_peak_memory = 0, 0
    for i, container in enumerate(init_containers):
        c_cpu, c_memory = _container_requests(r, container, "spec.initContainers", i)
        if container.get("restartPolicy") == "Always":
            cpu += c_cpu
            memory += c_memory
            sidecar_cpu += c_cpu
            sidecar_memory += c_memory
            step_cpu, step_memory = sidecar_cpu, sidecar_memory
        else:
            step_cpu, step_memory = c_cpu + sidecar_cpu, c_memory + sidecar_memory
        init_peak_cpu = max(init_peak_cpu, step_cpu)
        init_peak_memory = max(init_peak_memory, step_memory)
    return max(cpu, init_peak_cpu), max(memory, init_peak_memory)


def _plain_container_requests(containers: list[Any]) -> tuple[int, int] | None:
    """_container_requests_sum for a pod without init containers whose containers are
    as the API server writes them, request no extended resource and bind no host
    port, nearly every pod: _extended_requests and _host_ports would find nothing,
    and are not called. None for any other containers, read by those three, whose
    errors name the field."""
    cpu, memory = 0, 0
    for container in containers:
        if type(container) is not dict:
            return None
        resources = container.get("resources")
        if resources:
            if type(resources) is not dict:
                return None
            try:
                c_cpu, c_memory = _plain_requests(resources)
            except _NotPlainError:
                return None
            # _plain_requests leaves requests and limits dicts or None.
            for names in (resources.get("requests"), resources.get("limits")):
                if names and not _NO_DOMAIN.issuperset(names) and _has_domain(names):
                    return None
            cpu += c_cpu or 0
            memory += c_memory or 0
        ports = container.get("ports")
        if ports:
            if type(ports) is not list:
                return None
            for port in ports:
                if type(port) is not dict or port.get("hostPort"):
                    return None
    return cpu, memory


# Resource names containers commonly request, none an extended resource: a set check
# clears most containers before _has_domain looks at each name, at a greater cost.
_NO_DOMAIN = frozenset({"cpu", "memory", "ephemeral-storage"})


def _has_domain(names: Iterable[Any]) -> bool:
    """Whether a name (or a name that is not a string) may be an extended resource."""
    return any(type(name) is not str or "/" in name for name in names)


def _pod_requests(r: _Reader, spec: Mapping[str, Any], cpu: int, memory: int) -> tuple[int, int]:
    """The containers' (cpu, memory) requests, from _container_requests_sum, as
    kube-scheduler takes them for the pod: pod-level resources in their place, pod
    overhead (RuntimeClass) on top."""
    # Pod-level resources (spec.resources) replace the container sum for the
    # resources they name; the API server refuses them where the feature is off.
    pod_resources = spec.get("resources")
    if pod_resources:
        pod_cpu, pod_memory = _requests_of(r, pod_resources, "spec.resources")
        cpu = cpu if pod_cpu is None else pod_cpu
        memory = memory if pod_memory is None else pod_memory

    overhead = spec.get("overhead")
    if overhead:
        overhead = r.mapping(overhead, "spec.overhead")
        if overhead.get("cpu") is not None:
            cpu += r.nanos(overhead["cpu"], "spec.overhead.cpu")
        if overhead.get("memory") is not None:
            memory += r.nanos(overhead["memory"], "spec.overhead.memory")
    return cpu, memory


def _extended_requests(
    r: _Reader, containers: list[Any], init_containers: list[Any]
) -> Mapping[str, int]:
    """Requests of extended resources (names with a domain, `nvidia.com/gpu`) as
    counts, summed as _pod_requests sums cpu: containers and sidecars add up, a plain
    init container counts at its peak. A limit alone is the request, as the API
    server defaults it (and for extended resources requires the two to be equal)."""
    totals: dict[str, int] = {}
    sidecars: dict[str, int] = {}
    peaks: dict[str, int] = {}
    for group, prefix in (
        (containers, "spec.containers"),
        (init_containers, "spec.initContainers"),
    ):
        for i, container in enumerate(group):
            if type(container) is not dict:
                container = r.mapping(container, "{}[{}]", prefix, i)
            resources = container.get("resources")
            if not resources or type(resources) is not dict:
                continue
            requests = resources.get("requests") or {}
            limits = resources.get("limits") or {}
            names = [n for n in (*requests, *limits) if "/" in n]
            if not names:
                continue
            path = f"{prefix}[{i}].resources"
            own: dict[str, int] = {}
            for name in dict.fromkeys(names):
                if name in requests:
                    amount = r.nanos(requests[name], f"{path}.requests.{name}")
                else:
                    amount = r.nanos(limits[name], f"{path}.limits.{name}")
                own[name] = _quantity.nanos_to_units(amount)
            if group is containers or container.get("restartPolicy") == "Always":
                for name, amount in own.items():
                    totals[name] = totals.get(name, 0) + amount
                if group is not containers:
                    for name, amount in own.items():
                        sidecars[name] = sidecars.get(name, 0) + amount
                        peaks[name] = max(peaks.get(name, 0), sidecars[name])
            else:
                for name, amount in own.items():
                    peaks[name] = max(peaks.get(name, 0), amount + sidecars.get(name, 0))
    for name, peak in peaks.items():
        totals[name] = max(totals.get(name, 0), peak)
    return {name: amount for name, amount in totals.items() if amount > 0}


def _container_requests(r: _Reader, container: Any, prefix: str, index: int) -> tuple[int, int]:
    entry = container if type(container) is dict else r.mapping(container, "{}[{}]", prefix, index)
    resources = entry.get("resources")
    if not resources:
        return 0, 0
    cpu, memory = _requests_of(r, resources, "{}[{}].resources", prefix, index)
    return cpu or 0, memory or 0


def _requests_of(
    r: _Reader, resources: Any, path: str, *where: object
) -> tuple[int | None, int | None]:
    """(cpu, memory) requests in nano-units, None where not set. A limit without a
    request is also the request: the API server defaults it so before the scheduler
    sees the pod."""
    if type(resources) is dict:
        try:
            return _plain_requests(resources)
        except _NotPlainError:
            pass  # read again below, with the checks that say what is wrong
    resources = r.mapping(resources, path, *where)
    requests = r.mapping(resources.get("requests"), path + ".requests", *where)
    limits = r.mapping(resources.get("limits"), path + ".limits", *where)
    cpu = requests.get("cpu")
    if cpu is not None:
        cpu_nanos: int | None = r.nanos(cpu, path + ".requests.cpu", *where)
    elif limits.get("cpu") is not None:
        cpu_nanos = r.nanos(limits["cpu"], path + ".limits.cpu", *where)
    else:
        cpu_nanos = None
    memory = requests.get("memory")
    if memory is not None:
        memory_nanos: int | None = r.nanos(memory, path + ".requests.memory", *where)
    elif limits.get("memory") is not None:
        memory_nanos = r.nanos(limits["memory"], path + ".limits.memory", *where)
    else:
        memory_nanos = None
    return cpu_nanos, memory_nanos


def _plain_requests(resources: dict[str, Any]) -> tuple[int | None, int | None]:
    """What _requests_of reads, for a block as the API server writes it (objects of
    quantity strings): every container has one, and the checks cost more than the
    reading. _NotPlainError for anything else."""
    requests = _plain_object(resources.get("requests"))
    limits = _plain_object(resources.get("limits"))
    cpu = requests.get("cpu")
    if cpu is None:
        cpu = limits.get("cpu")
    memory = requests.get("memory")
    if memory is None:
        memory = limits.get("memory")
    return _plain_nanos(cpu), _plain_nanos(memory)


def _plain_nanos(value: Any) -> int | None:
    if value is None:
        return None
    if type(value) is not str:
        raise _NotPlainError  # YAML numbers: read (and refused where they must be) by r.nanos
    return _plain_text_nanos(value)


@functools.lru_cache(maxsize=4096)
def _plain_text_nanos(text: str) -> int:
    # Cached here as well as in _quantity: a dump repeats a few dozen quantities over
    # all its containers, and this saves a call for each.
    try:
        amount = _quantity.to_nanos(text)
    except ValueError:
        raise _NotPlainError from None
    if amount < 0:
        raise _NotPlainError
    return amount


def _pod_qos_class(
    r: _Reader, spec: Mapping[str, Any], containers: list[Any], init_containers: list[Any]
) -> str:
    """The QoS class as the API server computes it (qos.GetPodQOS), for objects
    without status.qosClass. Only cpu and memory count; zero values count as unset;
    requests and limits are compared summed over all containers."""
    sources: list[tuple[Any, str]]
    if spec.get("resources"):
        # Pod-level resources decide the class on their own when set.
        sources = [(spec["resources"], "spec.resources")]
    else:
        sources = [
            (r.mapping(container, f"{prefix}[{i}]").get("resources"), f"{prefix}[{i}].resources")
            for prefix, group in (
                ("spec.containers", containers),
                ("spec.initContainers", init_containers),
            )
            for i, container in enumerate(group)
        ]
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    for value, path in sources:
        resources = r.mapping(value, path)
        request_map = r.mapping(resources.get("requests"), f"{path}.requests")
        limit_map = r.mapping(resources.get("limits"), f"{path}.limits")
        limits_found = set()
        for name in ("cpu", "memory"):
            if limit_map.get(name) is not None:
                amount = r.nanos(limit_map[name], f"{path}.limits.{name}")
                if amount > 0:
                    limits_found.add(name)
                    limits[name] = limits.get(name, 0) + amount
            # Requests default to limits (API defaulting), so read them that way.
            if request_map.get(name) is not None:
                amount = r.nanos(request_map[name], f"{path}.requests.{name}")
            elif limit_map.get(name) is not None:
                amount = r.nanos(limit_map[name], f"{path}.limits.{name}")
            else:
                amount = 0
            if amount > 0:
                requests[name] = requests.get(name, 0) + amount
        if limits_found != {"cpu", "memory"}:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and requests == limits:
        return "Guaranteed"
    return "Burstable"


def _explicit_priority(r: _Reader, spec: Mapping[str, Any]) -> int:
    value = spec.get("priority")
    return 0 if value is None else r.integer(value, "spec.priority")


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


def _restart_count(r: _Reader, status: Mapping[str, Any]) -> int:
    total = 0
    path = "status.containerStatuses"
    for i, item in enumerate(r.sequence(status.get("containerStatuses"), path)):
        entry = item if type(item) is dict else r.mapping(item, "{}[{}]", path, i)
        count = entry.get("restartCount")
        if type(count) is int:
            total += count
        elif count is not None:
            total += r.integer(count, "{}[{}].restartCount", path, i)
    return total


def _tolerations(r: _Reader, spec: Mapping[str, Any]) -> tuple[_types.Toleration, ...]:
    items = spec.get("tolerations")
    if not items:
        return ()
    # The pods of a workload carry the same list: one read before is not read again.
    key = _tolerations_key(items)
    try:
        known = _TOLERATIONS.get(key) if key is not None else None
    except TypeError:  # an unhashable value somewhere: no key
        key = known = None
    if known is not None:
        return known
    result = _read_tolerations(r, items)
    if key is not None:
        if len(_TOLERATIONS) >= _TOLERATIONS_KEPT:
            _TOLERATIONS.clear()
        _TOLERATIONS[key] = result
    return result


_TolerationsKey: TypeAlias = tuple[tuple[tuple[str, Any], ...], ...]

# Toleration lists read, by _tolerations_key: a load has a few per workload kind and
# DaemonSet. Bounded all the same, for a process that reads many.
_TOLERATIONS: dict[_TolerationsKey, tuple[_types.Toleration, ...]] = {}
_TOLERATIONS_KEPT = 4096


def _tolerations_key(items: Any) -> _TolerationsKey | None:
    """A list of objects as its entries' items, None for anything else. Equal keys
    read the same: no JSON value other than a string equals a string (nor null
    anything but null), so a key once read without error reads so again."""
    if type(items) is not list:
        return None
    key = []
    for entry in items:
        if type(entry) is not dict:
            return None
        key.append(tuple(entry.items()))
    return tuple(key)


def _read_tolerations(r: _Reader, items: Any) -> tuple[_types.Toleration, ...]:
    result = []
    for i, item in enumerate(r.sequence(items, "spec.tolerations")):
        entry = r.mapping(item, "spec.tolerations[{}]", i)
        result.append(
            _toleration(
                r.string(entry.get("key"), "spec.tolerations[{}].key", i),
                # An empty operator means Equal, as in the API.
                r.string(entry.get("operator"), "spec.tolerations[{}].operator", i) or "Equal",
                r.string(entry.get("value"), "spec.tolerations[{}].value", i),
                r.string(entry.get("effect"), "spec.tolerations[{}].effect", i),
            )
        )
    return tuple(result)


@functools.lru_cache(maxsize=1024)
def _toleration(key: str, operator: str, value: str, effect: str) -> _types.Toleration:
    # Shared: nearly every pod carries the same few (not-ready, unreachable).
    return _types.Toleration(key=key, operator=operator, value=value, effect=effect)


def _required_node_affinity(
    r: _Reader, affinity: Mapping[str, Any]
) -> tuple[_types.NodeSelectorTerm, ...]:
    path = "spec.affinity.nodeAffinity"
    node_affinity = r.mapping(affinity.get("nodeAffinity"), path)
    path += ".requiredDuringSchedulingIgnoredDuringExecution"
    required = r.mapping(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"), path)
    path += ".nodeSelectorTerms"
    terms = []
    for i, item in enumerate(r.sequence(required.get("nodeSelectorTerms"), path)):
        term_path = f"{path}[{i}]"
        term = r.mapping(item, term_path)
        terms.append(
            _types.NodeSelectorTerm(
                match_expressions=_requirements(
                    r,
                    term.get("matchExpressions"),
                    f"{term_path}.matchExpressions",
                    _NODE_SELECTOR_OPERATORS,
                ),
                match_fields=_requirements(
                    r, term.get("matchFields"), f"{term_path}.matchFields", _NODE_SELECTOR_OPERATORS
                ),
            )
        )
    return tuple(terms)


def _node_selector_term(r: _Reader, item: Any, path: str) -> _types.NodeSelectorTerm:
    term = r.mapping(item, path)
    return _types.NodeSelectorTerm(
        match_expressions=_requirements(
            r, term.get("matchExpressions"), f"{path}.matchExpressions", _NODE_SELECTOR_OPERATORS
        ),
        match_fields=_requirements(
            r, term.get("matchFields"), f"{path}.matchFields", _NODE_SELECTOR_OPERATORS
        ),
    )


def _preferred_node_affinity(
    r: _Reader, affinity: Mapping[str, Any]
) -> tuple[_types.PreferredSchedulingTerm, ...]:
    path = "spec.affinity.nodeAffinity"
    node_affinity = r.mapping(affinity.get("nodeAffinity"), path)
    path += ".preferredDuringSchedulingIgnoredDuringExecution"
    terms = []
    for i, item in enumerate(
        r.sequence(node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution"), path)
    ):
        term_path = f"{path}[{i}]"
        entry = r.mapping(item, term_path)
        weight = r.integer(entry.get("weight", 0), f"{term_path}.weight")
        terms.append(
            _types.PreferredSchedulingTerm(
                weight=weight,
                preference=_node_selector_term(
                    r, entry.get("preference"), f"{term_path}.preference"
                ),
            )
        )
    return tuple(terms)


_SPREAD_WHEN = frozenset({"DoNotSchedule", "ScheduleAnyway"})
_SPREAD_POLICIES = frozenset({"Honor", "Ignore"})


def _spread_constraints(
    r: _Reader, spec: Mapping[str, Any], labels: Mapping[str, str]
) -> tuple[_types.TopologySpreadConstraint, ...]:
    items = spec.get("topologySpreadConstraints")
    if not items:
        return ()
    result = []
    for i, item in enumerate(r.sequence(items, "spec.topologySpreadConstraints")):
        path = f"spec.topologySpreadConstraints[{i}]"
        entry = r.mapping(item, path)
        topology_key = r.string(entry.get("topologyKey"), f"{path}.topologyKey")
        if not topology_key:
            r.fail(f"{path}.topologyKey", "missing")
        when = r.string(entry.get("whenUnsatisfiable"), f"{path}.whenUnsatisfiable")
        if when not in _SPREAD_WHEN:
            r.fail(f"{path}.whenUnsatisfiable", f"{when!r} is not one of {sorted(_SPREAD_WHEN)}")
        max_skew = r.integer(entry.get("maxSkew", 1), f"{path}.maxSkew")
        if max_skew < 1:
            r.fail(f"{path}.maxSkew", "must be at least 1")
        min_domains = entry.get("minDomains")
        selector = _label_selector(r, entry.get("labelSelector"), f"{path}.labelSelector")
        # matchLabelKeys: the pod's own values of those keys narrow the selector, as
        # kube-scheduler does (newer API servers merge them into labelSelector already).
        keys = r.strings(entry.get("matchLabelKeys"), f"{path}.matchLabelKeys")
        extra = {k: labels[k] for k in keys if k in labels}
        if selector is not None and extra:
            selector = _types.LabelSelector(
                match_labels={**selector.match_labels, **extra},
                match_expressions=selector.match_expressions,
            )
        policies = []
        for name, default in (("nodeAffinityPolicy", "Honor"), ("nodeTaintsPolicy", "Ignore")):
            value = r.string(entry.get(name), f"{path}.{name}") or default
            if value not in _SPREAD_POLICIES:
                r.fail(f"{path}.{name}", f"{value!r} is not one of Honor, Ignore")
            policies.append(value)
        result.append(
            _types.TopologySpreadConstraint(
                max_skew=max_skew,
                topology_key=topology_key,
                when_unsatisfiable=when,
                label_selector=selector,
                min_domains=(
                    None if min_domains is None else r.integer(min_domains, f"{path}.minDomains")
                ),
                node_affinity_policy=policies[0],
                node_taints_policy=policies[1],
            )
        )
    return tuple(result)


def _container_statuses(
    r: _Reader, status: Mapping[str, Any]
) -> tuple[_types.ContainerStatus, ...]:
    result = []
    for field_name, init in (("initContainerStatuses", True), ("containerStatuses", False)):
        items = status.get(field_name)
        if items is None:
            continue  # as r.sequence reads it: no entry
        path = "status." + field_name
        for i, item in enumerate(r.sequence(items, path)):
            try:
                result.append(_plain_container_status(item, init))
            except _NotPlainError:
                result.append(_read_container_status(r, item, init, path, i))
    return tuple(result)


def _plain_container_status(item: Any, init: bool) -> _types.ContainerStatus:
    """_read_container_status for an entry as the kubelet writes it, without the
    checks; _NotPlainError for anything else."""
    entry = _plain_object(item)
    state = _plain_object(entry.get("state"))
    count = entry.get("restartCount")
    if not (count is None or type(count) is int):
        raise _NotPlainError
    # Nearly every container is running, with neither of these to read.
    waiting, terminated = state.get("waiting"), state.get("terminated")
    waiting_reason = terminated_reason = ""
    exit_code = None
    if waiting is not None:
        waiting_reason = _plain_text(_plain_object(waiting).get("reason"))
    if terminated is not None:
        terminated = _plain_object(terminated)
        terminated_reason = _plain_text(terminated.get("reason"))
        exit_code = terminated.get("exitCode")
        if not (exit_code is None or type(exit_code) is int):
            raise _NotPlainError
    return _container_status(
        _plain_text(entry.get("name")),
        init,
        count or 0,
        waiting_reason,
        terminated_reason,
        exit_code,
    )


def _read_container_status(
    r: _Reader, item: Any, init: bool, path: str, i: int
) -> _types.ContainerStatus:
    entry = r.mapping(item, "{}[{}]", path, i)
    state = r.mapping(entry.get("state"), "{}[{}].state", path, i)
    waiting = r.mapping(state.get("waiting"), "{}[{}].state.waiting", path, i)
    terminated = r.mapping(state.get("terminated"), "{}[{}].state.terminated", path, i)
    exit_code = terminated.get("exitCode")
    count = entry.get("restartCount")
    return _container_status(
        r.string(entry.get("name"), "{}[{}].name", path, i),
        init,
        0 if count is None else r.integer(count, "{}[{}].restartCount", path, i),
        r.string(waiting.get("reason"), "{}[{}].state.waiting.reason", path, i),
        r.string(terminated.get("reason"), "{}[{}].state.terminated.reason", path, i),
        None
        if exit_code is None
        else r.integer(exit_code, "{}[{}].state.terminated.exitCode", path, i),
    )


@functools.lru_cache(maxsize=4096)
def _container_status(
    name: str,
    init: bool,
    restart_count: int,
    waiting_reason: str,
    terminated_reason: str,
    exit_code: int | None,
) -> _types.ContainerStatus:
    # Shared: the replicas of a workload mostly report the same healthy containers.
    return _types.ContainerStatus(
        name=name,
        init=init,
        restart_count=restart_count,
        waiting_reason=waiting_reason,
        terminated_reason=terminated_reason,
        exit_code=exit_code,
    )


def _affinity_term(r: _Reader, item: Any, term_path: str) -> _types.PodAffinityTerm:
    term = r.mapping(item, term_path)
    topology_key = r.string(term.get("topologyKey"), f"{term_path}.topologyKey")
    if not topology_key:
        r.fail(f"{term_path}.topologyKey", "missing; pod affinity terms need a topologyKey")
    return _types.PodAffinityTerm(
        label_selector=_label_selector(r, term.get("labelSelector"), f"{term_path}.labelSelector"),
        topology_key=topology_key,
        namespaces=r.strings(term.get("namespaces"), f"{term_path}.namespaces"),
        namespace_selector=_label_selector(
            r, term.get("namespaceSelector"), f"{term_path}.namespaceSelector"
        ),
    )


def _weighted_pod_affinity_terms(
    r: _Reader, affinity: Mapping[str, Any], section: str
) -> tuple[_types.WeightedPodAffinityTerm, ...]:
    path = f"spec.affinity.{section}"
    rules = r.mapping(affinity.get(section), path)
    path += ".preferredDuringSchedulingIgnoredDuringExecution"
    terms = []
    for i, item in enumerate(
        r.sequence(rules.get("preferredDuringSchedulingIgnoredDuringExecution"), path)
    ):
        entry = r.mapping(item, f"{path}[{i}]")
        weight = r.integer(entry.get("weight"), f"{path}[{i}].weight")
        if not 1 <= weight <= 100:
            r.fail(f"{path}[{i}].weight", "must be between 1 and 100")
        term = _affinity_term(r, entry.get("podAffinityTerm"), f"{path}[{i}].podAffinityTerm")
        terms.append(_types.WeightedPodAffinityTerm(weight=weight, term=term))
    return tuple(terms)


def _pod_affinity_terms(
    r: _Reader, affinity: Mapping[str, Any], section: str
) -> tuple[_types.PodAffinityTerm, ...]:
    # matchLabelKeys and mismatchLabelKeys need no reading: the API server merges
    # them into labelSelector when the pod is created.
    path = f"spec.affinity.{section}"
    rules = r.mapping(affinity.get(section), path)
    path += ".requiredDuringSchedulingIgnoredDuringExecution"
    terms = []
    for i, item in enumerate(
        r.sequence(rules.get("requiredDuringSchedulingIgnoredDuringExecution"), path)
    ):
        terms.append(_affinity_term(r, item, f"{path}[{i}]"))
    return tuple(terms)


def _host_ports(r: _Reader, containers: list[Any], init_containers: list[Any]) -> tuple[int, ...]:
    # Sidecars hold their ports for the pod's life as regular containers do;
    # plain init containers have exited before the pod runs.
    ports: set[int] = set()
    groups = (
        ("spec.containers", containers, False),
        ("spec.initContainers", init_containers, True),
    )
    for prefix, group, only_sidecars in groups:
        for i, container in enumerate(group):
            entry = container
            if type(entry) is not dict:
                entry = r.mapping(container, "{}[{}]", prefix, i)
            declared = entry.get("ports")
            if not declared or (only_sidecars and entry.get("restartPolicy") != "Always"):
                continue
            for j, item in enumerate(r.sequence(declared, "{}[{}].ports", prefix, i)):
                if type(item) is not dict:
                    item = r.mapping(item, "{}[{}].ports[{}]", prefix, i, j)
                port = item.get("hostPort")
                if port:
                    ports.add(r.integer(port, "{}[{}].ports[{}].hostPort", prefix, i, j))
    return tuple(sorted(ports)) if ports else ()


# --- PodDisruptionBudget ----------------------------------------------------------------


def _convert_pdb(raw: RawObject, r: _Reader) -> _types.PodDisruptionBudget:
    meta = raw["metadata"]
    spec = r.mapping(raw.get("spec"), "spec")
    status = r.mapping(raw.get("status"), "status")
    selector = _label_selector(r, spec.get("selector"), "spec.selector")
    if selector is not None and selector.is_empty and raw.get("apiVersion") == "policy/v1beta1":
        selector = None  # in v1beta1 an empty selector selected no pod

    # No status means the disruption controller has not counted yet: allow
    # nothing. So does a status older than the spec, as the eviction API does.
    allowed = status.get("disruptionsAllowed")
    disruptions_allowed = 0 if allowed is None else r.integer(allowed, "status.disruptionsAllowed")
    generation = meta.get("generation")
    observed = status.get("observedGeneration")
    if isinstance(generation, int) and isinstance(observed, int) and observed < generation:
        disruptions_allowed = 0

    return _types.PodDisruptionBudget(
        namespace=_namespace_of(raw, r),
        name=meta["name"],
        selector=selector,
        disruptions_allowed=max(disruptions_allowed, 0),
        min_available=_int_or_string(r, spec.get("minAvailable"), "spec.minAvailable"),
        max_unavailable=_int_or_string(r, spec.get("maxUnavailable"), "spec.maxUnavailable"),
    )


def _int_or_string(r: _Reader, value: Any, path: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        r.fail(path, f"expected an integer or a percentage, got {_type_name(value)}")
    return str(value)
