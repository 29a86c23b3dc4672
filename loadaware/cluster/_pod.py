"""A Pod from its raw object: what kube-scheduler, the descheduler's evictor and
loadaware's planner read of it.

read_pod reads the pod but for what needs the rest of the input (its workload, and
its priority where only its class gives it), which _convert adds once the
workloads and PriorityClasses are known. The hot fields go through the reading
given (_reading: the checked one, or _fast's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadaware import policy
from loadaware import quantity as _quantity
from loadaware.cluster import _fields, _objects, _reading, _selectors, _types


def read_pod(
    raw: _fields.RawObject, r: _fields.FieldReader, reading: _reading.CheckedReading
) -> tuple[_types.Pod, bool]:
    """The pod but for what needs the rest of the input, for _convert._complete_pod:
    its `workload` (the top of the owner chain) is None, and where spec.priority is
    not set (then the bool is True) its `priority` is 0 until its priority class is
    known."""
    meta = raw["metadata"]
    spec = r.mapping(raw.get("spec"), "spec")
    status = r.mapping(raw.get("status"), "status")
    namespace = _objects.namespace_of(raw, r)
    annotations = r.string_map(meta.get("annotations"), "metadata.annotations")

    containers = r.sequence(spec.get("containers"), "spec.containers")
    init_containers = r.sequence(spec.get("initContainers"), "spec.initContainers")
    cpu, memory, extended, host_ports = reading.containers(r, spec, containers, init_containers)

    qos_class = r.string(status.get("qosClass"), "status.qosClass")
    if not qos_class:
        qos_class = _pod_qos_class(r, spec, containers, init_containers)

    owner, other_owners = _objects.owners_of(raw, r, reading)
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
        node_affinity = _selectors.required_node_affinity(r, affinity)
        preferred_node_affinity = _selectors.preferred_node_affinity(r, affinity)
        pod_affinity = _selectors.pod_affinity_terms(r, affinity, "podAffinity")
        pod_anti_affinity = _selectors.pod_affinity_terms(r, affinity, "podAntiAffinity")
        preferred_pod_affinity = _selectors.weighted_pod_affinity_terms(r, affinity, "podAffinity")
        preferred_pod_anti_affinity = _selectors.weighted_pod_affinity_terms(
            r, affinity, "podAntiAffinity"
        )
    else:
        node_affinity, pod_affinity, pod_anti_affinity = (), (), ()
        preferred_node_affinity = ()
        preferred_pod_affinity = preferred_pod_anti_affinity = ()
    labels = r.string_map(meta.get("labels"), "metadata.labels")
    uid = r.string(meta.get("uid"), "metadata.uid")
    node_name = r.string(spec.get("nodeName"), "spec.nodeName") or None
    # The API server defaults it; a file may leave it out.
    scheduler_name = (
        r.string(spec.get("schedulerName"), "spec.schedulerName") or policy.DEFAULT_SCHEDULER_NAME
    )
    # The API server starts every pod as Pending.
    phase = r.string(status.get("phase"), "status.phase") or "Pending"
    ready = _objects.condition_is_true(r, status, "Ready")
    priority = _explicit_priority(r, spec)  # 0 where it comes from the class
    creation = reading.timestamp(r, meta.get("creationTimestamp"), "metadata.creationTimestamp")
    deletion = reading.timestamp(r, meta.get("deletionTimestamp"), "metadata.deletionTimestamp")
    # Read here, where the restart count was read on its own: the pod's restarts are
    # its containers' (not its init containers').
    container_statuses = reading.container_statuses(r, status)
    restart_count = sum([s.restart_count for s in container_statuses if not s.init])

    pod = _types.new_pod(
        namespace=namespace,
        name=meta["name"],
        uid=uid,
        node_name=node_name,
        scheduler_name=scheduler_name,
        phase=phase,
        ready=ready,
        labels=labels,
        annotations=annotations,
        owner=owner,
        other_owners=other_owners,
        workload=None,  # set by _convert._complete_pod, as is owner_selector
        owner_selector=None,
        cpu_request_millicores=_quantity.nanos_to_millicores(cpu),
        memory_request_bytes=_quantity.nanos_to_units(memory),
        extended_requests=extended,
        priority=priority,
        priority_class_name=priority_class_name,
        qos_class=qos_class,
        creation_timestamp=creation,
        deletion_timestamp=deletion,
        restart_count=restart_count,
        has_local_storage=has_local_storage,
        has_pvc=has_pvc,
        has_resource_claims=bool(r.sequence(spec.get("resourceClaims"), "spec.resourceClaims")),
        is_mirror="kubernetes.io/config.mirror" in annotations,
        tolerations=reading.tolerations(r, spec),
        node_selector=r.string_map(spec.get("nodeSelector"), "spec.nodeSelector"),
        required_node_affinity=node_affinity,
        required_pod_affinity=pod_affinity,
        required_pod_anti_affinity=pod_anti_affinity,
        host_ports=host_ports,
        preferred_node_affinity=preferred_node_affinity,
        preferred_pod_affinity=preferred_pod_affinity,
        preferred_pod_anti_affinity=preferred_pod_anti_affinity,
        topology_spread_constraints=_selectors.spread_constraints(r, spec, labels),
        start_time=reading.timestamp(r, status.get("startTime"), "status.startTime"),
        status_reason=r.string(status.get("reason"), "status.reason"),
        container_statuses=container_statuses,
        container_images=reading.container_images(r, containers, init_containers),
    )
    return pod, spec.get("priority") is None


def _pod_qos_class(
    r: _fields.FieldReader,
    spec: Mapping[str, Any],
    containers: list[Any],
    init_containers: list[Any],
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


def _explicit_priority(r: _fields.FieldReader, spec: Mapping[str, Any]) -> int:
    value = spec.get("priority")
    return 0 if value is None else r.integer(value, "spec.priority")
