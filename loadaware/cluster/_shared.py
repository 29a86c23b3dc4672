"""Values that many objects of one cluster carry alike, kept once.

The pods of a workload carry the same owner reference, tolerations, container
images and (mostly healthy) container statuses; the nodes report the same few
hundred images. Kept once, a 150,000-pod cluster holds a fraction of the objects,
and equal values compare by identity first.

A SharedValues lives as long as the reading that holds it (one load, or one
cluster cache); its tables are bounded, for a cache that reads for days. Reads
from several threads may share one: a race loses an entry, never a value.
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar

from loadaware.cluster import _types

_K = TypeVar("_K")
_V = TypeVar("_V")

# Entries per table before it starts afresh: a cluster has a few per workload.
KEPT = 4096
_NODE_IMAGES_KEPT = 16384


def keep(table: dict[_K, _V], key: _K, value: _V, kept: int = KEPT) -> _V:
    """Store the value in a bounded table (emptied when full) and return it."""
    if len(table) >= kept:
        table.clear()
    table[key] = value
    return value


class SharedValues:
    """One copy of each equal value read (see the module)."""

    __slots__ = ("_node_images", "container_status", "images", "owner_ref", "toleration")

    def __init__(self) -> None:
        # Memoised constructors, one set per instance: lru_cache looks up in C, at a
        # fraction of the cost of a lookup written out here, for every pod.
        self.owner_ref = functools.lru_cache(maxsize=KEPT)(_owner_ref)
        self.toleration = functools.lru_cache(maxsize=KEPT)(_toleration)
        self.container_status = functools.lru_cache(maxsize=KEPT)(_container_status)
        # The first tuple of these images read: the replicas of a workload share it
        # (and one copy of each name).
        self.images = functools.lru_cache(maxsize=KEPT)(_first)
        self._node_images: dict[tuple[Any, ...], _types.ContainerImage] = {}

    def node_image(self, key: tuple[Any, ...]) -> _types.ContainerImage | None:
        """A status.images entry read before, by its names and its size as written
        (None for none): equal keys read the same, as no JSON value other than a
        string equals a string."""
        return self._node_images.get(key)

    def keep_node_image(
        self, key: tuple[Any, ...], image: _types.ContainerImage
    ) -> _types.ContainerImage:
        return keep(self._node_images, key, image, _NODE_IMAGES_KEPT)


def _owner_ref(kind: str, name: str, uid: str) -> _types.OwnerRef:
    # The pods of one ReplicaSet all carry the same reference.
    return _types.OwnerRef(kind=kind, name=name, uid=uid)


def _toleration(key: str, operator: str, value: str, effect: str) -> _types.Toleration:
    # Nearly every pod carries the same few (not-ready, unreachable).
    return _types.Toleration(key=key, operator=operator, value=value, effect=effect)


def _container_status(
    name: str,
    init: bool,
    restart_count: int,
    waiting_reason: str,
    terminated_reason: str,
    exit_code: int | None,
) -> _types.ContainerStatus:
    # The replicas of a workload mostly report the same healthy containers.
    return _types.ContainerStatus(
        name=name,
        init=init,
        restart_count=restart_count,
        waiting_reason=waiting_reason,
        terminated_reason=terminated_reason,
        exit_code=exit_code,
    )


def _first(images: tuple[str, ...]) -> tuple[str, ...]:
    return images
