"""Namespaces, PriorityClasses, Nodes, workloads and PodDisruptionBudgets from raw
objects, and the owner references every namespaced object carries.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from loadaware import quantity as _quantity
from loadaware.cluster import _fields, _reading, _selectors, _types

TAINT_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})

# kubelet's default maxPods, used when a hand-written node states no pod capacity.
DEFAULT_MAX_PODS = 110

# The API server sets this immutable label on every namespace (since 1.21);
# namespaceSelectors commonly rely on it.
_NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def namespace_of(raw: _fields.RawObject, r: _fields.FieldReader) -> str:
    # kubectl prints the namespace; a hand-written object without one lands in
    # `default`, as `kubectl apply` would put it.
    return r.string(raw["metadata"].get("namespace"), "metadata.namespace") or "default"


def owner_of(
    raw: _fields.RawObject, r: _fields.FieldReader, reading: _reading.CheckedReading
) -> _types.OwnerRef | None:
    """The controller ownerReference, else the first one."""
    return owners_of(raw, r, reading)[0]


def owners_of(
    raw: _fields.RawObject, r: _fields.FieldReader, reading: _reading.CheckedReading
) -> tuple[_types.OwnerRef | None, tuple[_types.OwnerRef, ...]]:
    """The controller ownerReference, else the first one; and the other references,
    in their order."""
    refs = raw["metadata"].get("ownerReferences")
    if type(refs) is not list:
        refs = r.sequence(refs, "metadata.ownerReferences")
    if not refs:
        return None, ()
    if len(refs) == 1:
        return owner_ref_at(refs, 0, r, reading), ()
    chosen = 0
    for i, ref in enumerate(refs):
        if type(ref) is dict and ref.get("controller") is True:
            chosen = i
            break
    others = tuple(owner_ref_at(refs, i, r, reading) for i in range(len(refs)) if i != chosen)
    return owner_ref_at(refs, chosen, r, reading), others


def owner_ref_at(
    refs: list[Any], i: int, r: _fields.FieldReader, reading: _reading.CheckedReading
) -> _types.OwnerRef:
    path = "metadata.ownerReferences[{}]"
    ref = refs[i]
    if type(ref) is not dict:
        ref = r.mapping(ref, path, i)
    kind, name, uid = ref.get("kind"), ref.get("name"), ref.get("uid")
    if type(kind) is str and type(name) is str and type(uid) is str and kind and name:
        # As the API server writes them: nothing to check.
        return reading.owner_ref(kind, name, uid)
    kind = r.string(kind, "metadata.ownerReferences[{}].kind", i)
    name = r.string(name, "metadata.ownerReferences[{}].name", i)
    if not kind or not name:
        r.fail(path, "an owner reference needs kind and name", i)
    uid = r.string(uid, "metadata.ownerReferences[{}].uid", i)
    return reading.owner_ref(kind, name, uid)


# --- cluster-scoped objects -----------------------------------------------------------


def read_namespace(raw: _fields.RawObject, r: _fields.FieldReader) -> tuple[str, dict[str, str]]:
    name: str = raw["metadata"]["name"]
    labels = r.string_map(raw["metadata"].get("labels"), "metadata.labels")
    labels.setdefault(_NAMESPACE_NAME_LABEL, name)
    return name, labels


def read_priority_class(raw: _fields.RawObject, r: _fields.FieldReader) -> tuple[str, int]:
    if "value" not in raw:
        r.fail("value", "missing")
    return raw["metadata"]["name"], r.integer(raw["value"], "value")


def global_default_priority(
    classes: Iterable[tuple[_fields.RawObject, _fields.FieldReader]],
) -> int:
    # Priority admission gives pods without a class the globalDefault class's value.
    for raw, r in classes:
        if r.boolean(raw.get("globalDefault"), "globalDefault"):
            return r.integer(raw.get("value"), "value")
    return 0


# --- Node -------------------------------------------------------------------------------


def read_node(
    raw: _fields.RawObject, r: _fields.FieldReader, reading: _reading.CheckedReading
) -> _types.Node:
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
        if effect not in TAINT_EFFECTS:
            r.fail(f"{path}.effect", f"{effect!r} is not one of {', '.join(sorted(TAINT_EFFECTS))}")
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
        allocatable_pods=DEFAULT_MAX_PODS if pods is None else _quantity.nanos_to_units(pods),
        allocatable_extended=extended,
        taints=tuple(taints),
        unschedulable=r.boolean(spec.get("unschedulable"), "spec.unschedulable"),
        # No Ready condition at all means the node has never reported: not ready.
        ready=condition_is_true(r, status, "Ready"),
        images=reading.node_images(r, status.get("images")),
    )


def condition_is_true(r: _fields.FieldReader, status: Mapping[str, Any], kind: str) -> bool:
    for i, item in enumerate(r.sequence(status.get("conditions"), "status.conditions")):
        condition = item if type(item) is dict else r.mapping(item, "status.conditions[{}]", i)
        if condition.get("type") == kind:
            return condition.get("status") == "True"
    return False


# --- workloads --------------------------------------------------------------------------


def read_workload(
    raw: _fields.RawObject, r: _fields.FieldReader, reading: _reading.CheckedReading
) -> _types.Workload:
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
        namespace=namespace_of(raw, r),
        name=meta["name"],
        uid=r.string(meta.get("uid"), "metadata.uid"),
        replicas=replicas,
        owner=owner_of(raw, r, reading),
        selector=_selectors.label_selector(r, spec.get("selector"), "spec.selector"),
    )


# --- PodDisruptionBudget ----------------------------------------------------------------


def read_pdb(raw: _fields.RawObject, r: _fields.FieldReader) -> _types.PodDisruptionBudget:
    meta = raw["metadata"]
    spec = r.mapping(raw.get("spec"), "spec")
    status = r.mapping(raw.get("status"), "status")
    selector = _selectors.label_selector(r, spec.get("selector"), "spec.selector")
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
        namespace=namespace_of(raw, r),
        name=meta["name"],
        selector=selector,
        disruptions_allowed=max(disruptions_allowed, 0),
        min_available=int_or_string(r, spec.get("minAvailable"), "spec.minAvailable"),
        max_unavailable=int_or_string(r, spec.get("maxUnavailable"), "spec.maxUnavailable"),
    )


def int_or_string(r: _fields.FieldReader, value: Any, path: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        r.fail(path, f"expected an integer or a percentage, got {_fields.type_name(value)}")
    return str(value)
