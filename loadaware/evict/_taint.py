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
    # The first try starts from the cluster cache's view of the node, when the round
    # reads one: it saves a read per taint written, and the steering writes several
    # per eviction. The write names the resourceVersion the view holds, so a view
    # that is behind (this round's last write to the node not yet seen, a status
    # update) fails with a conflict, and the tries after it read the node from the
    # API server, as a write that meets a changed node always did.
    seen = kube.cached_node(node_name)
    if seen is not None and _try_edit(kube, seen, add=add, dry_run=dry_run, cached=True):
        return
    for _attempt in range(MAX_ATTEMPTS):
        try:
            node = kube.read_node(node_name)
        except NotFoundError:
            return  # a node that is gone carries no taint
        if _try_edit(kube, node, add=add, dry_run=dry_run, cached=False):
            return
    raise ConflictError(f"node {node_name} kept changing; taint not updated")


def _try_edit(kube: Kube, node: RawObject, *, add: bool, dry_run: bool, cached: bool) -> bool:
    """One write of the node's taints as read (`cached`: from the cache): True when
    done (written, nothing to change, the node gone); False when the node changed
    since it was read, or when a cached view finds nothing to change (it may not
    have seen the last write yet)."""
    name = node["metadata"]["name"]
    listed = (node.get("spec") or {}).get("taints") or []
    taints = [t for t in listed if not _is_ours(t)]
    had = len(taints) != len(listed)
    if cached and had == add:
        return False
    if add:
        taints.append(dict(HOTSPOT_TAINT))
    elif not had:
        return True
    try:
        kube.set_node_taints(name, taints, node["metadata"]["resourceVersion"], dry_run=dry_run)
    except NotFoundError:
        return True  # gone since it was read
    except ForbiddenError as exc:
        raise _forbidden(name, exc) from exc
    except ConflictError:
        return False  # the node changed (status heartbeat, another controller): retry
    return True
