"""`loadaware suspend` / `loadaware resume`: the switch on-call flips without a deploy.

It is the annotation `loadaware.io/suspend` on loadaware's state ConfigMap
(`state.namespace`/`state.configMap`), which every round reads at its start and
again in the reservation before every eviction (evict/_state.py). So one write
stops the `run --once` CronJob, every schedule and the Alertmanager webhook at
once, in every replica, and the eviction in flight is the last one. Who flipped
it, when and why are recorded beside it; the ConfigMap is created when no round
has written it yet.
"""

from __future__ import annotations

import datetime
import getpass
import os
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING

from loadaware import evict, kube, policy

if TYPE_CHECKING:
    import kubernetes.client


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def default_actor() -> str:
    """user@host of whoever runs the command; a pod may have neither a login nor a USER."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def set_suspended(
    suspended: bool,
    *,
    policy_file: str | os.PathLike[str],
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
    reason: str = "",
    by: str | None = None,
    api: kubernetes.client.ApiClient | None = None,
    clock: Callable[[], datetime.datetime] = _utc_now,
) -> dict[str, object]:
    """Suspend (True) or resume (False) evictions through the policy's state
    ConfigMap; returns where the switch is and how it now stands."""
    settings = policy.load_policy(policy_file)
    client = api or kube.api_client(kubeconfig=kubeconfig, context=context)
    store = evict.StateStore(evict.Kube(client), settings, clock)
    # A missing namespace or permission says so, with the fix, rather than as a 404.
    store.check_access(write=True)
    suspension = store.set_suspended(suspended, by=by or default_actor(), reason=reason)
    return {
        "configMap": f"{settings.state.namespace}/{settings.state.config_map}",
        "suspended": suspension.suspended,
        "changedBy": suspension.changed_by or None,
        "changedAt": suspension.changed_at or None,
        "reason": suspension.reason or None,
    }
