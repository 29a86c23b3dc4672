"""Soft-taint steering: `loadaware.io/hotspot=true:PreferNoSchedule` on the few nodes
that would otherwise outscore an eviction's planned landing (its `steer` set),
from just before the eviction until its replacement is bound. Removed when the
round ends — also after an error — and at the next start if a crash left one
behind. loadaware writes no other taint and no other field of a node here.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from loadaware.errors import ConflictError, ForbiddenError, NotFoundError, RefusedError
from loadaware.kube import Kube, RawObject

log = logging.getLogger(__name__)

HOTSPOT_TAINT_KEY = "loadaware.io/hotspot"
HOTSPOT_TAINT: RawObject = {"key": HOTSPOT_TAINT_KEY, "value": "true", "effect": "PreferNoSchedule"}
MAX_ATTEMPTS = 5


def _is_ours(taint: RawObject) -> bool:
    # The effect too: a loadaware.io/hotspot NoSchedule taint is someone else's
    # doing, and the admission policy refuses loadaware any change to it.
    return taint.get("key") == HOTSPOT_TAINT_KEY and taint.get("effect") == "PreferNoSchedule"


def add_hotspot_taint(kube: Kube, node_name: str) -> None:
    _edit_taints(kube, node_name, add=True)


def remove_hotspot_taint(kube: Kube, node_name: str) -> None:
    _edit_taints(kube, node_name, add=False)


STEERING_FORBIDDEN_HINT = (
    "grant patch on nodes to loadaware's ServiceAccount (deploy/base does) and allow "
    "its loadaware.io/ taints in any admission policy, or set steering.softTaint: false"
)


def check_steering_allowed(kube: Kube, node_name: str) -> None:
    """Refuse the round (steering-forbidden) unless loadaware may set its taint: a
    server-side dry run of the patch goes through RBAC and admission and changes
    nothing."""
    try:
        _edit_taints(kube, node_name, add=True, dry_run=True)
    except ForbiddenError as exc:  # reading the node was refused
        raise _forbidden(node_name, exc) from exc
    except ConflictError:
        return  # the node kept changing: permission is not what failed


def _forbidden(node_name: str, exc: ForbiddenError) -> RefusedError:
    return RefusedError(
        f"cannot change the steering taint on node {node_name} ({exc}); {STEERING_FORBIDDEN_HINT}",
        reference="steering-forbidden",
        hint=STEERING_FORBIDDEN_HINT,
    )


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


def _edit_taints(kube: Kube, node_name: str, *, add: bool, dry_run: bool = False) -> None:
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
            kube.set_node_taints(
                node_name, taints, node["metadata"]["resourceVersion"], dry_run=dry_run
            )
            return
        except ForbiddenError as exc:
            raise _forbidden(node_name, exc) from exc
        except ConflictError:
            continue  # the node changed (status heartbeat, another controller): retry
    raise ConflictError(f"node {node_name} kept changing; taint not updated")
