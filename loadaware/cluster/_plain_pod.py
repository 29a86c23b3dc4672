"""Pods as the API server writes them, parsed typed and read without checks.

Most of a large dump is pods, nearly all in the shape the API server writes. msgspec
parses one into the Structs below, which name the fields the pod reader reads, typed
as the API server writes them (strings, integers, objects of strings): it checks
those types in C as it parses, and PlainPodReader reads the fields by attribute,
with none of the FieldReader's checks left to make.

A pod of another shape (msgspec.ValidationError), or with anything PlainPodReader
does not read itself (init containers, pod-level resources or overhead, extended
resources, host ports, no status.qosClass, a quantity or timestamp that does not
parse), is left to the checked way (None): the item is parsed again as any other
and read by _pod.read_pod. What PlainPodReader reads is what read_pod reads from
the same pod (tests/cluster/test_plain_pod.py).

The pods of a workload carry the same containers, written alike: a pod's
containers are kept as their text (msgspec.Raw), and parsed only where that text
was not read before (a seventh of a generated 150,000-pod dump's pods).
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Callable
from typing import Any, TypeAlias

import msgspec

from loadaware import policy
from loadaware import quantity as _quantity
from loadaware.cluster import _fast, _fields, _plain_affinity, _selectors, _shared, _types
from loadaware.errors import InputError

# Every Struct: keys in camelCase as in the API, unknown keys skipped as parsed, not
# tracked by the cyclic collector (they hold no cycles, and live for one object).


class Struct(msgspec.Struct, rename="camel", gc=False):
    pass


class OwnerReference(Struct):
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool = False


class _Metadata(Struct):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    owner_references: list[OwnerReference] = []
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None


class _Port(Struct):
    host_port: int = 0


class _Resources(Struct):
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}


class _Container(Struct):
    image: str = ""
    resources: _Resources | None = None
    ports: list[_Port] = []


class _Volume(Struct):
    # Any value but null counts, as in read_pod.
    empty_dir: Any = None
    host_path: Any = None
    persistent_volume_claim: Any = None


class _Toleration(Struct, frozen=True):
    # Frozen, so hashable: a pod's list is looked up whole (see _tolerations).
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""


class _Spec(Struct):
    # Parsed only where not read before (see _containers): the pods of a workload
    # carry the same containers, as the same text.
    containers: msgspec.Raw = msgspec.Raw(b"[]")
    init_containers: list[Any] = []
    volumes: list[_Volume] = []
    node_name: str = ""
    scheduler_name: str = ""
    priority: int | None = None
    priority_class_name: str = ""
    tolerations: list[_Toleration] = []
    node_selector: dict[str, str] = {}
    resource_claims: list[Any] = []
    # Read by the checked readers, as parsed (rare, or not worth a Struct).
    affinity: _plain_affinity.PlainAffinity | None = None
    topology_spread_constraints: Any = None
    # Any value makes the pod one for read_pod (see the module).
    resources: Any = None
    overhead: Any = None


class _Condition(Struct):
    type: str = ""
    status: str = ""
    reason: str = ""  # read by the cluster cache (PodScheduled: Unschedulable)


class _Waiting(Struct):
    reason: str = ""


class _Terminated(Struct):
    reason: str = ""
    exit_code: int | None = None


class _State(Struct):
    waiting: _Waiting | None = None
    terminated: _Terminated | None = None


class _ContainerStatus(Struct):
    name: str = ""
    restart_count: int = 0
    state: _State | None = None


class _Status(Struct):
    phase: str = ""
    conditions: list[_Condition] = []
    qos_class: str = ""
    start_time: str | None = None
    reason: str = ""
    container_statuses: list[_ContainerStatus] = []
    init_container_statuses: list[_ContainerStatus] = []


class PlainPod(Struct):
    api_version: str = ""
    kind: str = ""
    metadata: _Metadata | None = None
    spec: _Spec | None = None
    status: _Status | None = None


_DECODER = msgspec.json.Decoder(PlainPod)
_CONTAINERS = msgspec.json.Decoder(list[_Container])

# A pod's containers read (see PlainPodReader._containers): their (cpu, memory)
# requests in nano-units and their images; or _NOT_PLAIN, for read_pod to read.
_Containers: TypeAlias = tuple[int, int, tuple[str, ...]]
_NOT_PLAIN: _Containers = (-1, -1, ())

# Resource names containers commonly request, none an extended resource (as in _fast).
_NO_DOMAIN = frozenset({"cpu", "memory", "ephemeral-storage"})

# A pod read: the pod but for what needs the rest of the input, and whether its
# priority comes from its class (as _pod.read_pod gives them).
ReadPod: TypeAlias = tuple[_types.Pod, bool]


class PlainPodReader:
    """Pods parsed into PlainPod, read without checks (see the module). What many pods
    carry alike is kept once, in the tables of the reading given (owner references,
    container statuses, tolerations, images) and in the reader's own (timestamps,
    quantities, toleration lists), for as long as the reader lives: one load."""

    __slots__ = ("_containers_read", "_nanos", "_reading", "_timestamps", "_tolerations")

    def __init__(self, reading: _fast.FastReading) -> None:
        self._reading = reading
        self._timestamps: dict[str, datetime.datetime] = {}
        self._tolerations: dict[tuple[_Toleration, ...], tuple[_types.Toleration, ...]] = {}
        self._containers_read: dict[bytes, _Containers] = {}
        self._nanos = functools.lru_cache(maxsize=_shared.KEPT)(text_nanos)

    def read_json(self, text: Any) -> ReadPod | None:
        """The pod in this JSON text (bytes, or a msgspec.Raw), as read_pod reads it;
        None for a pod read_pod must read, and for any other object. ASCII text only:
        msgspec checks the UTF-8 only of the parts it parses (see _file)."""
        try:
            return self.read(_DECODER.decode(text))
        except msgspec.ValidationError:
            return None

    def read(self, item: PlainPod) -> ReadPod | None:
        meta, spec, status = item.metadata, item.spec, item.status
        if (
            item.kind != "Pod"
            or "/" in item.api_version  # another API group's Pod: not read as one
            or meta is None
            or spec is None
            or status is None
            or not meta.name
            or not status.qos_class
            or spec.init_containers
            or spec.resources is not None
            or spec.overhead is not None
        ):
            return None
        try:
            return self._read(meta, spec, status)
        except (_fast.NotPlainError, InputError):
            return None

    def _read(self, meta: _Metadata, spec: _Spec, status: _Status) -> ReadPod:
        reading = self._reading
        name = meta.name
        namespace = meta.namespace or "default"  # as _objects.namespace_of
        labels = meta.labels
        annotations = meta.annotations
        cpu, memory, images = self._containers(spec.containers)

        owner, other_owners = owners(meta.owner_references, reading.owner_ref)
        has_local_storage = has_pvc = False
        for volume in spec.volumes:
            if volume.empty_dir is not None or volume.host_path is not None:
                has_local_storage = True
            if volume.persistent_volume_claim is not None:
                has_pvc = True

        affinity = spec.affinity
        spread = spec.topology_spread_constraints
        r = _fields.FieldReader("Pod", name, namespace) if affinity or spread else None
        if affinity is not None and r is not None:
            read_affinity = _plain_affinity.read_affinity(affinity, r)
        else:
            read_affinity = _plain_affinity.NO_AFFINITY
        if spread and r is not None:
            # As read_pod reads them, with the checks: rare, and not alike from pod to pod.
            spread_constraints = _selectors.spread_constraints(
                r, {"topologySpreadConstraints": spread}, labels
            )
        else:
            spread_constraints = ()

        container_statuses, restart_count = self._container_statuses(status)

        ready = False
        for condition in status.conditions:
            if condition.type == "Ready":
                ready = condition.status == "True"
                break

        priority = spec.priority
        # Every field of the Pod in its order (see _types.new_pod), as read_pod gives
        # them by name: for many pods, matching 41 keywords costs more than the reading.
        pod = _types.new_pod(
            namespace,
            name,
            meta.uid,
            spec.node_name or None,  # node_name
            spec.scheduler_name or policy.DEFAULT_SCHEDULER_NAME,  # the API server's default
            status.phase or "Pending",  # the API server starts every pod so
            ready,
            labels,
            annotations,
            owner,
            other_owners,
            None,  # workload: set by _convert._complete_pod, as is owner_selector
            None,  # owner_selector
            _quantity.nanos_to_millicores(cpu),  # cpu_request_millicores
            _quantity.nanos_to_units(memory),  # memory_request_bytes
            {},  # extended_requests: none, or not a plain pod
            0 if priority is None else priority,  # priority: the class's where not set
            spec.priority_class_name,
            status.qos_class,
            self._timestamp(meta.creation_timestamp),  # creation_timestamp
            self._timestamp(meta.deletion_timestamp),  # deletion_timestamp
            restart_count,
            has_local_storage,
            has_pvc,
            bool(spec.resource_claims),  # has_resource_claims
            "kubernetes.io/config.mirror" in annotations,  # is_mirror
            self._tolerations_of(spec.tolerations),  # tolerations
            spec.node_selector,
            *read_affinity[:3],  # required node affinity, pod affinity and anti-affinity
            (),  # host_ports: none, or not a plain pod
            *read_affinity[3:],  # preferred node affinity, pod affinity and anti-affinity
            spread_constraints,  # topology_spread_constraints
            self._timestamp(status.start_time),  # start_time
            status.reason,  # status_reason
            container_statuses,
            images,  # container_images
        )
        return pod, priority is None

    def _containers(self, text: msgspec.Raw) -> _Containers:
        """The containers' (cpu, memory) requests in nano-units, as
        FastReading.plain_container_requests sums them, and their images; the
        containers' text read before is not read again."""
        key = bytes(text)
        known = self._containers_read.get(key)
        if known is None:
            known = self._read_containers(key)
            _shared.keep(self._containers_read, key, known)
        if known is _NOT_PLAIN:
            raise _fast.NotPlainError
        return known

    def _read_containers(self, text: bytes) -> _Containers:
        try:
            containers = _CONTAINERS.decode(text)
        except msgspec.ValidationError:
            return _NOT_PLAIN
        cpu = memory = 0
        nanos = self._nanos
        try:
            for container in containers:
                resources = container.resources
                if resources is not None:
                    requests, limits = resources.requests, resources.limits
                    for names in (requests, limits):
                        if names and not _NO_DOMAIN.issuperset(names) and _has_domain(names):
                            return _NOT_PLAIN  # extended resources: read_pod reads them
                    # A limit without a request is the request (CheckedReading.resources).
                    amount = requests.get("cpu")
                    if amount is None:
                        amount = limits.get("cpu")
                    if amount is not None:
                        cpu += nanos(amount)
                    amount = requests.get("memory")
                    if amount is None:
                        amount = limits.get("memory")
                    if amount is not None:
                        memory += nanos(amount)
                for port in container.ports:
                    if port.host_port:
                        return _NOT_PLAIN  # host ports: read_pod reads them
        except _fast.NotPlainError:
            return _NOT_PLAIN
        images = self._reading.images_of(tuple([container.image for container in containers]))
        return cpu, memory, images

    def _container_statuses(
        self, status: _Status
    ) -> tuple[tuple[_types.ContainerStatus, ...], int]:
        """As CheckedReading.container_statuses (init containers first), and the pod's
        restart count: its containers' (not its init containers')."""
        status_of = self._reading.status_of
        read = [_container_status(status_of, e, True) for e in status.init_container_statuses]
        restart_count = 0
        for entry in status.container_statuses:
            container_status = _container_status(status_of, entry, False)
            restart_count += container_status.restart_count
            read.append(container_status)
        return tuple(read), restart_count

    def _tolerations_of(self, items: list[_Toleration]) -> tuple[_types.Toleration, ...]:
        if not items:
            return ()
        # The pods of a workload carry the same list: one read before is not read again.
        key = tuple(items)
        known = self._tolerations.get(key)
        if known is None:
            toleration_of = self._reading.toleration_of
            known = tuple(
                [
                    # An empty operator means Equal, as in the API.
                    toleration_of(t.key, t.operator or "Equal", t.value, t.effect)
                    for t in items
                ]
            )
            _shared.keep(self._tolerations, key, known)
        return known

    def _timestamp(self, text: str | None) -> datetime.datetime | None:
        """As FieldReader.timestamp; a pod's startTime is mostly its creationTimestamp,
        and the pods of one rollout share theirs."""
        if text is None:
            return None
        moment = self._timestamps.get(text)
        if moment is None:
            try:
                moment = _fields.in_utc(datetime.datetime.fromisoformat(text))
            except ValueError:
                raise _fast.NotPlainError from None  # refused by read_pod
            _shared.keep(self._timestamps, text, moment)
        return moment


def owners(
    refs: list[OwnerReference], owner_ref: Callable[[str, str, str], _types.OwnerRef]
) -> tuple[_types.OwnerRef | None, tuple[_types.OwnerRef, ...]]:
    """As _objects.owners_of: the controller reference, else the first; the others,
    in their order. NotPlainError where owners_of refuses one."""
    if not refs:
        return None, ()
    if len(refs) == 1:
        ref = refs[0]
        if not ref.kind or not ref.name:
            raise _fast.NotPlainError
        return owner_ref(ref.kind, ref.name, ref.uid), ()
    chosen = 0
    for i, ref in enumerate(refs):
        if ref.controller:
            chosen = i
            break
    read = []
    for ref in refs:
        if not ref.kind or not ref.name:
            raise _fast.NotPlainError
        read.append(owner_ref(ref.kind, ref.name, ref.uid))
    return read[chosen], tuple(read[:chosen] + read[chosen + 1 :])


def _container_status(
    status_of: Any, entry: _ContainerStatus, init: bool
) -> _types.ContainerStatus:
    """As CheckedReading.container_status."""
    state = entry.state
    waiting_reason = terminated_reason = ""
    exit_code = None
    if state is not None:
        # Nearly every container is running, with neither of these to read.
        if state.waiting is not None:
            waiting_reason = state.waiting.reason
        if state.terminated is not None:
            terminated_reason = state.terminated.reason
            exit_code = state.terminated.exit_code
    result: _types.ContainerStatus = status_of(
        entry.name, init, entry.restart_count, waiting_reason, terminated_reason, exit_code
    )
    return result


def text_nanos(text: str) -> int:
    """As FieldReader.nanos, NotPlainError where that refuses the quantity."""
    try:
        amount = _quantity.to_nanos(text)
    except ValueError:
        raise _fast.NotPlainError from None
    if amount < 0:
        raise _fast.NotPlainError
    return amount


def _has_domain(names: dict[str, str]) -> bool:
    """Whether a name may be an extended resource (with a domain, `nvidia.com/gpu`)."""
    return any("/" in name for name in names)
