"""Nodes as the kubelet and the API server write them, parsed typed and read
without checks (as _plain_pod does pods).

A node's status lists up to 50 images, most of them on many nodes: PlainNodeReader
reads each entry once per load. A node of another shape, or with anything
_objects.read_node would refuse (a quantity that does not parse, no cpu or memory,
a taint's effect), is left to it (None).
"""

from __future__ import annotations

from typing import Any

import msgspec

from loadaware import quantity as _quantity
from loadaware.cluster import _fast, _objects, _plain_pod, _shared, _types


class _Struct(msgspec.Struct, rename="camel", gc=False):
    """As _plain_pod.Struct."""


class _Metadata(_Struct):
    name: str = ""
    uid: str = ""
    labels: dict[str, str] = {}


class _Taint(_Struct):
    key: str = ""
    value: str = ""
    effect: str = ""


class _Spec(_Struct):
    taints: list[_Taint] = []
    unschedulable: bool = False


class _Condition(_Struct):
    type: str = ""
    status: str = ""


class _Image(_Struct):
    names: tuple[str, ...] = ()
    size_bytes: int | None = None


class _Status(_Struct):
    allocatable: dict[str, str] = {}
    capacity: dict[str, str] = {}
    conditions: list[_Condition] = []
    images: list[_Image] = []


class PlainNode(_Struct):
    api_version: str = ""
    kind: str = ""
    metadata: _Metadata | None = None
    spec: _Spec | None = None
    status: _Status | None = None


_DECODER = msgspec.json.Decoder(PlainNode)


class PlainNodeReader:
    """Nodes parsed into PlainNode, read without checks (see the module); an image
    entry read before, on another node, is not read again."""

    __slots__ = ("_images", "_nanos")

    def __init__(self) -> None:
        # By names and size as written (None for none): equal keys read the same.
        self._images: dict[tuple[tuple[str, ...], int | None], _types.ContainerImage] = {}
        self._nanos = _plain_pod.text_nanos

    def read_json(self, text: Any) -> _types.Node | None:
        """The node in this JSON text, as read_node reads it; None for one read_node
        must read, and for any other object. ASCII text only (see _plain_pod)."""
        try:
            item = _DECODER.decode(text)
        except msgspec.ValidationError:
            return None
        meta, spec, status = item.metadata, item.spec, item.status
        if (
            item.kind != "Node"
            or "/" in item.api_version  # another API group's Node: not read as one
            or meta is None
            or spec is None
            or status is None
            or not meta.name
        ):
            return None
        try:
            return self._read(meta, spec, status)
        except _fast.NotPlainError:
            return None

    def _read(self, meta: _Metadata, spec: _Spec, status: _Status) -> _types.Node:
        allocatable, capacity, nanos = status.allocatable, status.capacity, self._nanos

        def resource(name: str) -> int | None:
            # As read_node: allocatable, else capacity.
            amount = allocatable.get(name)
            if amount is None:
                amount = capacity.get(name)
            return None if amount is None else nanos(amount)

        cpu, memory, pods = resource("cpu"), resource("memory"), resource("pods")
        if cpu is None or memory is None:
            raise _fast.NotPlainError  # refused by read_node
        extended = {
            name: (resource(name) or 0) / 1e9 for name in {**capacity, **allocatable} if "/" in name
        }
        taints = []
        for taint in spec.taints:
            if taint.effect not in _objects.TAINT_EFFECTS:
                raise _fast.NotPlainError  # refused by read_node
            taints.append(_types.Taint(key=taint.key, value=taint.value, effect=taint.effect))
        ready = False
        for condition in status.conditions:
            if condition.type == "Ready":
                ready = condition.status == "True"
                break
        return _types.Node(
            name=meta.name,
            uid=meta.uid,
            labels=meta.labels,
            allocatable_cpu_millicores=_quantity.nanos_to_millicores(cpu),
            allocatable_memory_bytes=_quantity.nanos_to_units(memory),
            allocatable_pods=(
                _objects.DEFAULT_MAX_PODS if pods is None else _quantity.nanos_to_units(pods)
            ),
            allocatable_extended=extended,
            taints=tuple(taints),
            unschedulable=spec.unschedulable,
            ready=ready,
            images=tuple([self._image(image) for image in status.images]),
        )

    def _image(self, image: _Image) -> _types.ContainerImage:
        key = (image.names, image.size_bytes)
        known = self._images.get(key)
        if known is None:
            size = image.size_bytes
            # Optional in the API: kube-scheduler then counts the image as empty.
            known = _types.ContainerImage(names=image.names, size_bytes=0 if size is None else size)
            _shared.keep(self._images, key, known, _shared.NODE_IMAGES_KEPT)
        return known
