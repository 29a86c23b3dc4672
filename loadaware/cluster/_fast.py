"""The fast reading of a pod's hot fields, for the shapes the API server writes.

A large dump reads the same few fields of every pod, where the FieldReader's
checks cost more than the reading. FastReading reads them as the API server and
the kubelet write them (objects, strings, integers: what `kubectl get -o json`
prints) without those checks, and hands anything else to CheckedReading, whose
errors name the field; and it does not read again what an earlier object of the
same reading held alike (a list of tolerations, a timestamp, a node's image, a
quantity). Whatever the input, it gives what CheckedReading gives
(tests/cluster/test_pod_reading.py).
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

from loadaware import quantity as _quantity
from loadaware.cluster import _fields, _reading, _shared, _types

_TolerationsKey: TypeAlias = tuple[tuple[tuple[str, Any], ...], ...]

# Resource names containers commonly request, none an extended resource: a set check
# clears most containers before _has_domain looks at each name, at a greater cost.
_NO_DOMAIN = frozenset({"cpu", "memory", "ephemeral-storage"})


class NotPlainError(Exception):
    """The input is not in the shape a plain reader reads."""


class FastReading(_reading.CheckedReading):
    """CheckedReading without the checks where the input is as the API server writes it."""

    __slots__ = ("_text_nanos", "_timestamps", "_tolerations")

    def __init__(self) -> None:
        super().__init__()
        # Read before, by their text or (for tolerations) by _tolerations_key: a
        # pod's startTime is mostly its creationTimestamp, the pods of one rollout
        # share theirs, a load has a few toleration lists per workload kind and
        # DaemonSet, and a few dozen quantities over all its containers.
        self._timestamps: dict[str, datetime.datetime] = {}
        self._tolerations: dict[_TolerationsKey, tuple[_types.Toleration, ...]] = {}
        self._text_nanos = functools.lru_cache(maxsize=_shared.KEPT)(_plain_text_nanos)

    def containers(
        self,
        r: _fields.FieldReader,
        spec: Mapping[str, Any],
        containers: list[Any],
        init_containers: list[Any],
    ) -> _reading.ContainerRequests:
        plain = None if init_containers else self.plain_container_requests(containers)
        if plain is None:
            return super().containers(r, spec, containers, init_containers)
        if "resources" in spec or "overhead" in spec:
            return *self.pod_requests(r, spec, *plain), {}, ()
        return *plain, {}, ()

    def plain_container_requests(self, containers: list[Any]) -> tuple[int, int] | None:
        """container_requests_sum for containers as the API server writes them that
        request no extended resource and bind no host port, nearly every pod's:
        extended_requests and host_ports would find nothing, and are not called. None
        for any other containers, read by those three, whose errors name the field."""
        cpu, memory = 0, 0
        for container in containers:
            if type(container) is not dict:
                return None
            resources = container.get("resources")
            if resources:
                if type(resources) is not dict:
                    return None
                try:
                    c_cpu, c_memory = self._plain_resources(resources)
                except NotPlainError:
                    return None
                # _plain_resources leaves requests and limits dicts or None.
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

    def resources(
        self, r: _fields.FieldReader, resources: Any, path: str, *where: object
    ) -> tuple[int | None, int | None]:
        if type(resources) is dict:
            try:
                return self._plain_resources(resources)
            except NotPlainError:
                pass  # read again, with the checks that say what is wrong
        return super().resources(r, resources, path, *where)

    def _plain_resources(self, resources: dict[str, Any]) -> tuple[int | None, int | None]:
        requests = _plain_object(resources.get("requests"))
        limits = _plain_object(resources.get("limits"))
        cpu = requests.get("cpu")
        if cpu is None:
            cpu = limits.get("cpu")
        memory = requests.get("memory")
        if memory is None:
            memory = limits.get("memory")
        return self._plain_nanos(cpu), self._plain_nanos(memory)

    def _plain_nanos(self, value: Any) -> int | None:
        if value is None:
            return None
        if type(value) is not str:
            raise NotPlainError  # YAML numbers: read (and refused where they must be) by r.nanos
        return self._text_nanos(value)

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
                try:
                    result.append(self.plain_container_status(item, init))
                except NotPlainError:
                    result.append(self.container_status(r, item, init, path, i))
        return tuple(result)

    def plain_container_status(self, item: Any, init: bool) -> _types.ContainerStatus:
        """container_status for an entry as the kubelet writes it, without the
        checks; NotPlainError for anything else."""
        entry = _plain_object(item)
        state = _plain_object(entry.get("state"))
        count = entry.get("restartCount")
        if not (count is None or type(count) is int):
            raise NotPlainError
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
                raise NotPlainError
        return self.status_of(
            _plain_text(entry.get("name")),
            init,
            count or 0,
            waiting_reason,
            terminated_reason,
            exit_code,
        )

    def tolerations(
        self, r: _fields.FieldReader, spec: Mapping[str, Any]
    ) -> tuple[_types.Toleration, ...]:
        items = spec.get("tolerations")
        if not items:
            return ()
        # The pods of a workload carry the same list: one read before is not read again.
        key = _tolerations_key(items)
        try:
            known = self._tolerations.get(key) if key is not None else None
        except TypeError:  # an unhashable value somewhere: no key
            key = known = None
        if known is not None:
            return known
        result = super().tolerations(r, spec)
        if key is not None:
            _shared.keep(self._tolerations, key, result)
        return result

    def container_images(
        self, r: _fields.FieldReader, containers: list[Any], init_containers: list[Any]
    ) -> tuple[str, ...]:
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
            return super().container_images(r, containers, init_containers)
        return self.images_of(images)

    def timestamp(self, r: _fields.FieldReader, value: Any, path: str) -> datetime.datetime | None:
        if type(value) is not str:
            return None if value is None else r.timestamp(value, path)
        moment = self._timestamps.get(value)
        if moment is None:
            moment = r.timestamp(value, path)
            if moment is not None:  # always, for a string
                _shared.keep(self._timestamps, value, moment)
        return moment

    def node_images(self, r: _fields.FieldReader, items: Any) -> tuple[_types.ContainerImage, ...]:
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
                        known = self._node_images.get((*names, size))
                    except TypeError:  # an unhashable name: read it below, and refused
                        known = None
                    if known is not None:
                        result.append(known)
                        continue
            result.append(self.node_image(r, item, i))
        return tuple(result)


def _plain_object(value: Any) -> Mapping[str, Any]:
    """As FieldReader.mapping."""
    if type(value) is dict:
        return value
    if value is None:
        return _fields.EMPTY
    raise NotPlainError


def _plain_text(value: Any) -> str:
    """As FieldReader.string."""
    if type(value) is str:
        return value
    if value is None:
        return ""
    raise NotPlainError


def _plain_text_nanos(text: str) -> int:
    try:
        amount = _quantity.to_nanos(text)
    except ValueError:
        raise NotPlainError from None
    if amount < 0:
        raise NotPlainError
    return amount


def _has_domain(names: Iterable[Any]) -> bool:
    """Whether a name (or a name that is not a string) may be an extended resource."""
    return any(type(name) is not str or "/" in name for name in names)


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
