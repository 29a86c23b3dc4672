"""Whether loadaware may keep its state in the ConfigMap a policy names: the namespace
exists and the identity loadaware runs as may read and write the ConfigMap there.

Checked before a round, so that a round finds out before it evicts rather than at
its first reservation (and serve before its first round), with the fix named: the
namespace to create or the grant to add.
"""

from __future__ import annotations

from loadaware.errors import (
    ConflictError,
    ForbiddenError,
    MissingNamespaceError,
    MissingPermissionError,
    NotFoundError,
)
from loadaware.kube import Kube, RawObject


def check_state_access(
    kube: Kube, namespace: str, name: str, empty: RawObject, *, write: bool
) -> bool:
    """Whether rounds can keep their state in configmap `name` of `namespace`; raises
    MissingNamespaceError or MissingPermissionError, each with the fix, when they
    cannot. `empty`: the ConfigMap a first reservation would create.

    `write`: also the create or update a reservation needs, as a server-side dry
    run. Without it (a dry run writes no state) a missing namespace is no
    error: the state reads as empty, and False says so."""
    try:
        found = kube.find_namespace(namespace)
    except ForbiddenError as exc:
        raise _missing_permission(exc, "list on namespaces", "clusterrole.yaml") from None
    if found is None or (found.get("metadata") or {}).get("deletionTimestamp"):
        if not write:
            return False
        raise _missing_namespace(namespace, "state.namespace", terminating=found is not None)
    try:
        body = kube.read_config_map(namespace, name)
    except ForbiddenError as exc:
        raise _missing_permission(
            exc, f"get on configmaps/{name} in namespace {namespace}", "role.yaml"
        ) from None
    if not write:
        return True
    verb = "create" if body is None else "update"
    try:
        kube.check_config_map_write(
            namespace, body if body is not None else empty, create=body is None
        )
    except ConflictError:
        pass  # written in between: a 409 comes after authorization, which passed
    except NotFoundError:
        raise _missing_namespace(namespace, "state.namespace") from None
    except ForbiddenError as exc:
        grant = f"{verb} on configmaps" + (f"/{name}" if verb == "update" else "")
        raise _missing_permission(exc, f"{grant} in namespace {namespace}", "role.yaml") from None
    return True


def _missing_namespace(
    namespace: str, setting: str, *, terminating: bool = False
) -> MissingNamespaceError:
    if terminating:
        return MissingNamespaceError(
            f'namespace "{namespace}" is being deleted: create it again once it is gone '
            f"(kubectl create namespace {namespace}) or set {setting}"
        )
    return MissingNamespaceError(
        f'namespace "{namespace}" not found: '
        f"create it (kubectl create namespace {namespace}) or set {setting}"
    )


def _missing_permission(exc: ForbiddenError, grant: str, manifest: str) -> MissingPermissionError:
    return MissingPermissionError(
        f"{exc}: grant {grant} to the identity loadaware runs as (as deploy/base/{manifest} does)"
    )
