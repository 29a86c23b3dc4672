"""A node's watch event read typed, as the file loader reads nodes (_plain_node).

Steering sets and removes a taint on tens of nodes per eviction in a large
cluster, and each write comes back as a MODIFIED event carrying the whole node,
its 50 images included. Read as generic JSON and converted with the checks, one
event cost about as much as the write that caused it; read typed, an image seen
before is not read again. An event of another shape, a node _objects.read_node
would refuse, a DELETED event or anything not ASCII is left to the generic path
(None), which reads and reports it as before.
"""

from __future__ import annotations

from typing import Any

import msgspec

from loadaware.cluster import _cache_store, _plain_node, _types

_APPLIED = frozenset({"ADDED", "MODIFIED"})


class _Event(msgspec.Struct, gc=False):
    type: str
    object: msgspec.Raw


class _Metadata(msgspec.Struct, rename="camel", gc=False):
    resource_version: str = ""


class _Spec(msgspec.Struct, gc=False):
    # Every field of each taint kept, timeAdded too: what a write of them starts from.
    taints: list[dict[str, Any]] = []


class _Versioned(msgspec.Struct, gc=False):
    metadata: _Metadata = msgspec.field(default_factory=_Metadata)
    spec: _Spec = msgspec.field(default_factory=_Spec)


_EVENT = msgspec.json.Decoder(_Event)
_VERSIONED = msgspec.json.Decoder(_Versioned)


class NodeEvent(msgspec.Struct, frozen=True, gc=False):
    type: str  # ADDED or MODIFIED
    node: _types.Node
    resource_version: str
    taints: _cache_store.NodeTaints | None


class NodeEvents:
    """Reads one watch stream's node events; not shared between threads (the images
    it has read are kept, as PlainNodeReader keeps them)."""

    def __init__(self) -> None:
        self._nodes = _plain_node.PlainNodeReader()

    def read(self, line: bytes) -> NodeEvent | None:
        """The event in `line`, or None for one the generic path must read."""
        if not line.isascii():
            return None
        try:
            event = _EVENT.decode(line)
            if event.type not in _APPLIED:
                return None
            versioned = _VERSIONED.decode(event.object)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        node = self._nodes.read_json(event.object)
        if node is None:
            return None
        version = versioned.metadata.resource_version
        taints = _cache_store.NodeTaints(version, tuple(versioned.spec.taints)) if version else None
        return NodeEvent(type=event.type, node=node, resource_version=version, taints=taints)
