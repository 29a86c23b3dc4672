"""The checked reading of a pod's hot fields: the seam behind which the fast path sits.

A pod's reader (_pod.read_pod) reads its containers' requests, container
statuses, tolerations, container images and timestamps through a
CheckedReading: every field through the FieldReader, whose errors name it. The
FastReading (_fast) reads the same fields as the API server and the kubelet
write them without those checks, and falls back to these methods for anything
else; tests/cluster/test_pod_reading.py checks that both give the same pod, or
the same error, for any input.

A reading holds what its objects share (_shared, and the fast path's tables):
the file loader and the live reader make one per read, the cluster cache one for
its lifetime.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Mapping
from typing import Any, TypeAlias

from loadaware import quantity as _quantity
from loadaware.cluster import _fields, _shared, _types

# A pod's (cpu, memory) requests in nano-units, its extended resources' requests as
# counts, and its host ports.
ContainerRequests: TypeAlias = tuple[int, int, Mapping[str, int], tuple[int, ...]]


class CheckedReading:
    """Each hot field read through the FieldReader's checks (see the module)."""

    __slots__ = ("_node_images", "images_of", "owner_ref", "status_of", "toleration_of")

    def __init__(self) -> None:
        # Values many objects carry alike, kept once for as long as the reading lives
        # (see _shared). Memoised with lru_cache, which looks up in C.
        self.owner_ref = functools.lru_cache(maxsize=_shared.KEPT)(_shared.owner_ref)
        self.toleration_of = functools.lru_cache(maxsize=_shared.KEPT)(_shared.toleration)
        self.status_of = functools.lru_cache(maxsize=_shared.KEPT)(_shared.container_status)
        self.images_of = functools.lru_cache(maxsize=_shared.KEPT)(_shared.first)
        # status.images entries read, by their names and their size as written (None
        # for none): equal keys read the same, as no JSON value other than a string
        # equals a string.
        self._node_images: dict[tuple[Any, ...], _types.ContainerImage] = {}

    def containers(
        self,
        r: _fields.FieldReader,
        spec: Mapping[str, Any],
        containers: list[Any],
        init_containers: list[Any],
    ) -> ContainerRequests:
        cpu, memory = self.container_requests_sum(r, containers, init_containers)
        cpu, memory = self.pod_requests(r, spec, cpu, memory)
        extended = extended_requests(r, containers, init_containers)
        return cpu, memory, extended, host_ports(r, containers, init_containers)

    def container_requests_sum(
        self, r: _fields.FieldReader, containers: list[Any], init_containers: list[Any]
    ) -> tuple[int, int]:
        """(cpu, memory) requests of the containers in nano-units, as kube-scheduler sums
        them (resource.PodRequests), before pod_requests adds what the pod itself states.

        Regular containers and sidecars (init containers with restartPolicy Always)
        run together for the pod's life, so they add up. A plain init container runs
        alone, next to the sidecars started before it, so only its peak counts. Sums
        are exact; the caller rounds once, as Kubernetes does.
        """
        cpu, memory = 0, 0
        for i, container in enumerate(containers):
            c_cpu, c_memory = self._container_requests(r, container, "spec.containers", i)
            cpu += c_cpu
            memory += c_memory

        sidecar_cpu, sidecar_memory = 0, 0
        init_peak_cpu, init_peak_memory = 0, 0
        for i, container in enumerate(init_containers):
            if type(container) is not dict:
                container = r.mapping(container, "{}[{}]", "spec.initContainers", i)
            c_cpu, c_memory = self._container_requests(r, container, "spec.initContainers", i)
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

    def _container_requests(
        self, r: _fields.FieldReader, container: Any, prefix: str, index: int
    ) -> tuple[int, int]:
        if type(container) is dict:
            entry = container
        else:
            entry = r.mapping(container, "{}[{}]", prefix, index)
        resources = entry.get("resources")
        if not resources:
            return 0, 0
        cpu, memory = self.resources(r, resources, "{}[{}].resources", prefix, index)
        return cpu or 0, memory or 0

    def pod_requests(
        self, r: _fields.FieldReader, spec: Mapping[str, Any], cpu: int, memory: int
    ) -> tuple[int, int]:
        """The containers' (cpu, memory) requests, from container_requests_sum, as
        kube-scheduler takes them for the pod: pod-level resources in their place, pod
        overhead (RuntimeClass) on top."""
        # Pod-level resources (spec.resources) replace the container sum for the
        # resources they name; the API server refuses them where the feature is off.
        pod_resources = spec.get("resources")
        if pod_resources:
            pod_cpu, pod_memory = self.resources(r, pod_resources, "spec.resources")
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

    def resources(
        self, r: _fields.FieldReader, resources: Any, path: str, *where: object
    ) -> tuple[int | None, int | None]:
        """(cpu, memory) requests in nano-units, None where not set. A limit without a
        request is also the request: the API server defaults it so before the scheduler
        sees the pod."""
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

    def container_statuses(
        self, r: _fields.FieldReader, status: Mapping[str, Any]
    ) -> tuple[_types.ContainerStatus, ...]:
        result = []
        for field_name, init in (("initContainerStatuses", True), ("containerStatuses", False)):
            items = status.get(field_name)
            if items is None:
                continue  # as r.sequence reads it: no entry
            path = "status." + field_name
            for i, item in enumerate(r.sequence(items, path)):
                result.append(self.container_status(r, item, init, path, i))
        return tuple(result)

    def container_status(
        self, r: _fields.FieldReader, item: Any, init: bool, path: str, i: int
    ) -> _types.ContainerStatus:
        entry = r.mapping(item, "{}[{}]", path, i)
        state = r.mapping(entry.get("state"), "{}[{}].state", path, i)
        waiting = r.mapping(state.get("waiting"), "{}[{}].state.waiting", path, i)
        terminated = r.mapping(state.get("terminated"), "{}[{}].state.terminated", path, i)
        exit_code = terminated.get("exitCode")
        count = entry.get("restartCount")
        return self.status_of(
            r.string(entry.get("name"), "{}[{}].name", path, i),
            init,
            0 if count is None else r.integer(count, "{}[{}].restartCount", path, i),
            r.string(waiting.get("reason"), "{}[{}].state.waiting.reason", path, i),
            r.string(terminated.get("reason"), "{}[{}].state.terminated.reason", path, i),
            None
            if exit_code is None
            else r.integer(exit_code, "{}[{}].state.terminated.exitCode", path, i),
        )

    def tolerations(
        self, r: _fields.FieldReader, spec: Mapping[str, Any]
    ) -> tuple[_types.Toleration, ...]:
        items = spec.get("tolerations")
        if not items:
            return ()
        result = []
        for i, item in enumerate(r.sequence(items, "spec.tolerations")):
            entry = r.mapping(item, "spec.tolerations[{}]", i)
            result.append(
                self.toleration_of(
                    r.string(entry.get("key"), "spec.tolerations[{}].key", i),
                    # An empty operator means Equal, as in the API.
                    r.string(entry.get("operator"), "spec.tolerations[{}].operator", i) or "Equal",
                    r.string(entry.get("value"), "spec.tolerations[{}].value", i),
                    r.string(entry.get("effect"), "spec.tolerations[{}].effect", i),
                )
            )
        return tuple(result)

    def container_images(
        self, r: _fields.FieldReader, containers: list[Any], init_containers: list[Any]
    ) -> tuple[str, ...]:
        """The image of every init container, then of every container, as kube-scheduler's
        ImageLocality reads them; one tuple for the replicas of a workload."""
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
        return self.images_of(tuple(images))

    def timestamp(self, r: _fields.FieldReader, value: Any, path: str) -> datetime.datetime | None:
        return r.timestamp(value, path)

    def node_images(self, r: _fields.FieldReader, items: Any) -> tuple[_types.ContainerImage, ...]:
        if not items:
            return ()
        return tuple(
            self.node_image(r, item, i) for i, item in enumerate(r.sequence(items, "status.images"))
        )

    def node_image(self, r: _fields.FieldReader, item: Any, i: int) -> _types.ContainerImage:
        entry = r.mapping(item, "status.images[{}]", i)
        names = r.strings(entry.get("names"), "status.images[{}].names", i)
        size = entry.get("sizeBytes")
        # Optional in the API: kube-scheduler then counts the image as empty.
        image = _types.ContainerImage(
            names=names,
            size_bytes=0 if size is None else r.integer(size, "status.images[{}].sizeBytes", i),
        )
        # Kept for FastReading.node_images.
        return _shared.keep(self._node_images, (*names, size), image, _shared.NODE_IMAGES_KEPT)


def extended_requests(
    r: _fields.FieldReader, containers: list[Any], init_containers: list[Any]
) -> Mapping[str, int]:
    """Requests of extended resources (names with a domain, `nvidia.com/gpu`) as
    counts, summed as pod_requests sums cpu: containers and sidecars add up, a plain
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


def host_ports(
    r: _fields.FieldReader, containers: list[Any], init_containers: list[Any]
) -> tuple[int, ...]:
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
