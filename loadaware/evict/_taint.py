"""Soft-taint steering: `loadaware.io/hotspot=true:PreferNoSchedule` on the round's
hot nodes while it evicts, so kube-scheduler prefers other nodes for the
replacements. Removed when the round ends — also after an error — and at the
next start if a crash left one behind.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from loadaware.errors import ConflictError, NotFoundError
from loadaware.evict._kube import Kube, RawObject

log = logging.getLogger(__name__)

HOTSPOT_TAINT_KEY = "loadaware.io/hotspot"
HOTSPOT_TAINT: RawObject = {"key": HOTSPOT_TAINT_KEY, "value": "true", "effect": "PreferNoSchedule"}
MAX_ATTEMPTS = 5


def _is_ours(taint: RawObject) -> bool:
    return taint.get("key") == HOTSPOT_TAINT_KEY


def add_hotspot_taint(kube: Kube, node_name: str) -> None:
    _edit_taints(kube, node_name, add=True)


def remove_hotspot_taint(kube: Kube, node_name: str) -> None:
    _edit_taints(kube, node_name, add=False)


def remove_leftover_taints(kube: Kube) -> list[str]:
    """Remove our taint from every node that carries it; return those nodes."""
    cleaned: list[str] = []
    for node in kube.list_nodes():
        taints = (node.get("spec") or {}).get("taints") or []
        if any(_is_ours(t) for t in taints):
            name = node["metadata"]["name"]
            remove_hotspot_taint(kube, name)
            cleaned.append(name)
    return cleaned


def remove_taints_quietly(kube: Kube, node_names: Iterable[str]) -> list[str]:
    """Best effort on the way out of a round: log failures, never raise, return failures."""
    failed: list[str] = []
    for name in node_names:
        try:
            remove_hotspot_taint(kube, name)
        except Exception:
            log.warning("could not remove hotspot taint", extra={"node": name}, exc_info=True)
            failed.append(name)
    return failed


def _edit_taints(kube: Kube, node_name: str, *, add: bool) -> None:
    for _attempt in range(MAX_ATTEMPTS):
        try:
            node = kube.read_node(node_name)
        except NotFoundError:
            return  # a node that is gone carries no taint
        taints = [t for t in (node.get("spec") or {}).get("taints") or [] if not _is_ours(t)]
        had = len(taints) != len((node.get("spec") or {}).get("taints") or [])
        if add:
            taints.append(dict(HOTSPOT_TAINT))
        elif not had:
            return
        try:
            kube.set_node_taints(node_name, taints, node["metadata"]["resourceVersion"])
            return
        except ConflictError:
            continue  # the node changed (status heartbeat, another controller): retry
    raise ConflictError(f"node {node_name} kept changing; taint not updated")
