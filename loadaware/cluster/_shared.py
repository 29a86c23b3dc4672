"""Values that many objects of one cluster carry alike, kept once.

The pods of a workload carry the same owner reference, tolerations, container
images and (mostly healthy) container statuses; the nodes report the same few
hundred images. Kept once, a 150,000-pod cluster holds a fraction of the objects,
and equal values compare by identity first.

A reading (_reading.CheckedReading) holds them, memoised, for as long as it
lives (one load, or one cluster cache); its tables are bounded, for a cache that
reads for days. Reads from several threads may share one: a race loses an
entry, never a value.
"""

from __future__ import annotations

from typing import TypeVar

from loadaware.cluster import _types

_K = TypeVar("_K")
_V = TypeVar("_V")

# Entries per table before it starts afresh: a cluster has a few per workload.
KEPT = 4096
NODE_IMAGES_KEPT = 16384


def keep(table: dict[_K, _V], key: _K, value: _V, kept: int = KEPT) -> _V:
    """Store the value in a bounded table (emptied when full) and return it."""
    if len(table) >= kept:
        table.clear()
    table[key] = value
    return value


def owner_ref(kind: str, name: str, uid: str) -> _types.OwnerRef:
    # The pods of one ReplicaSet all carry the same reference.
    return _types.OwnerRef(kind=kind, name=name, uid=uid)


def toleration(key: str, operator: str, value: str, effect: str) -> _types.Toleration:
    # Nearly every pod carries the same few (not-ready, unreachable).
    return _types.Toleration(key=key, operator=operator, value=value, effect=effect)


def container_status(
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


def first(images: tuple[str, ...]) -> tuple[str, ...]:
    """Memoised, the first tuple equal to these images: the replicas of a workload
    share it (and one copy of each name)."""
    return images
