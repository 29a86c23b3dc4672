"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it.

Why a Lease: only one replica may evict, yet every replica serves /metrics and
the webhook. The rules, those of client-go's LeaseLock:

- The Lease records holderIdentity, leaseDurationSeconds, acquireTime,
  renewTime and leaseTransitions. Every write carries the resourceVersion read
  just before it, so two replicas racing for it get one 200 and one 409.
- Another holder's lease counts as expired when leaseDuration has passed on
  *our* clock since we last saw the record change (not since its renewTime:
  clocks of different machines disagree).
- The leader renews every retryPeriod. If no renewal succeeded for
  renewDeadline it stops leading at once — before any other replica may take
  the lease, since renewDeadline < leaseDuration.
- On shutdown the leader releases: holderIdentity emptied and
  leaseDurationSeconds 1, so the next replica takes over without waiting.

is_leader() is computed from the last successful renewal each time it is
asked, so a renewal loop that stalls cannot leave a replica believing it leads.

A lease call that fails says why: the status code and the API's reason, and
for a missing namespace (404 on create) or a missing permission (403) the fix.
The cause is logged when it changes, not at every retry, and status() carries
it until a call succeeds again, so /status and /readyz can show it.
"""

from __future__ import annotations

import datetime
import logging
import secrets
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from loadaware import kube, policy
from loadaware.errors import (
    ConflictError,
    ForbiddenError,
    LoadawareError,
    MissingNamespaceError,
    MissingPermissionError,
    NotFoundError,
)

log = logging.getLogger(__name__)

RawLease = dict[str, Any]


class Elector(Protocol):
    """What the service needs of leader election (AlwaysLeader when it is disabled)."""

    identity: str

    def is_leader(self) -> bool: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def status(self) -> dict[str, Any]: ...


def default_identity() -> str:
    # As client-go's examples: the host (the pod name in a Deployment) plus a random
    # suffix, so a restarted container never mistakes the old holder for itself.
    return f"{socket.gethostname()}_{secrets.token_hex(4)}"


def micro_time(moment: datetime.datetime) -> str:
    """A metav1.MicroTime: RFC 3339 with microseconds, in UTC."""
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class AlwaysLeader:
    """Leader election disabled (one replica, or tests): this replica always leads."""

    def __init__(self, identity: str = "standalone") -> None:
        self.identity = identity
        self._stopped = False

    def is_leader(self) -> bool:
        return not self._stopped

    def start(self) -> None:
        pass

    def stop(self) -> None:
        self._stopped = True

    def status(self) -> dict[str, Any]:
        return {"enabled": False, "identity": self.identity, "isLeader": self.is_leader()}


class _LeaseApi:
    """The Lease calls (kube.Leases), with the fix for what only the operator can fix."""

    def __init__(self, api_client: Any, namespace: str, name: str, timeout_seconds: float) -> None:
        self._leases = kube.Leases(api_client, namespace, name, timeout_seconds)
        self._namespace = namespace

    def _call(self, call: Callable[..., Any], *args: Any) -> Any:
        try:
            return call(*args)
        except NotFoundError as exc:
            if exc.details_kind != "namespaces":
                raise
            # A create in a namespace that does not exist; a read there answers a
            # plain 404 for the Lease, which is not yet an error.
            raise MissingNamespaceError(
                f'namespace "{self._namespace}" not found: create it (kubectl create '
                f"namespace {self._namespace}) or set serve.leaderElection.leaseNamespace"
            ) from None
        except ForbiddenError as exc:
            raise MissingPermissionError(
                f"{exc}: grant get, create and update on coordination.k8s.io leases in "
                f"namespace {self._namespace} to the identity loadaware runs as (as "
                "deploy/overlays/serve/leader-election.yaml does), or set "
                "serve.leaderElection.enabled: false for a single replica"
            ) from None

    def read(self) -> RawLease | None:
        result: RawLease | None = self._call(self._leases.read)
        return result

    def create(self, spec: dict[str, Any]) -> RawLease:
        result: RawLease = self._call(self._leases.create, spec)
        return result

    def replace(self, lease: RawLease) -> RawLease:
        result: RawLease = self._call(self._leases.replace, lease)
        return result


class LeaseElector:
    """Campaigns for and renews a Lease on a thread of its own."""

    def __init__(
        self,
        api_client: Any,
        settings: policy.LeaderElectionSettings,
        *,
        identity: str | None = None,
        clock: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
        monotonic: Callable[[], float] = time.monotonic,
        on_change: Callable[[bool], None] | None = None,
    ) -> None:
        self.identity = identity or default_identity()
        self._settings = settings
        self._duration = settings.lease_duration.total_seconds()
        self._renew_deadline = settings.renew_deadline.total_seconds()
        self._retry = settings.retry_period.total_seconds()
        self._api = _LeaseApi(
            api_client,
            settings.lease_namespace,
            settings.lease_name,
            # A call must end within the renew deadline, or one slow call would
            # outlast it without the loop noticing.
            timeout_seconds=max(self._renew_deadline / 2, 1.0),
        )
        self._clock = clock
        self._monotonic = monotonic
        self._on_change = on_change
        self._lock = threading.Lock()
        self._leading = False
        self._renewed_at = -float("inf")  # monotonic time of our last successful write
        self._observed: RawLease | None = None  # the lease spec as last seen
        self._observed_at = -float("inf")  # monotonic time it last changed
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="leader-election", daemon=True)
        self._error: str | None = None  # why the last attempt failed, "reference: message"

    # -- what the service asks ------------------------------------------------

    def is_leader(self) -> bool:
        with self._lock:
            return self._leading and self._monotonic() - self._renewed_at < self._renew_deadline

    def status(self) -> dict[str, Any]:
        with self._lock:
            spec = dict(self._observed or {})
            error = self._error
        return {
            "enabled": True,
            "identity": self.identity,
            "isLeader": self.is_leader(),
            "lease": f"{self._settings.lease_namespace}/{self._settings.lease_name}",
            "holder": spec.get("holderIdentity") or None,
            "renewTime": spec.get("renewTime"),
            "leaseTransitions": spec.get("leaseTransitions"),
            "error": error,
        }

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Stop campaigning and release the lease if held."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self._renew_deadline + 5)
        was_leading = self.is_leader()
        self._set_leading(False)
        if was_leading:
            self._release()

    # -- the loop ---------------------------------------------------------------

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.try_acquire_or_renew()
                self._failed(None)
            except LoadawareError as exc:
                self._failed(exc.summary())
            except Exception as exc:
                if self._failed(f"unexpected failure: {type(exc).__name__}"):
                    log.exception("leader election: unexpected failure")
            # A leader that could not renew in time stops leading now, not at its next success.
            if self._leading and not self.is_leader():
                log.warning("leader election: renew deadline passed; stepping down")
                self._set_leading(False)
            self._stop.wait(self._retry)

    def _failed(self, error: str | None) -> bool:
        """Record why the last attempt failed (None: it succeeded); logs, and returns
        True, only when that changed: a cause that lasts is said once, not every
        retryPeriod."""
        with self._lock:
            previous, self._error = self._error, error
        if error == previous:
            return False
        lease = f"{self._settings.lease_namespace}/{self._settings.lease_name}"
        if error is not None:
            log.warning(
                "leader election: lease call failed", extra={"lease": lease, "reason": error}
            )
        else:
            log.info(
                "leader election: lease calls succeed again",
                extra={"lease": lease, "reason": previous},
            )
        return True

    def try_acquire_or_renew(self) -> bool:
        """One attempt; True when this replica holds the lease afterwards."""
        now = self._clock()
        stamp = micro_time(now)
        lease = self._api.read()
        if lease is None:
            spec = {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": int(self._duration),
                "acquireTime": stamp,
                "renewTime": stamp,
                "leaseTransitions": 0,
            }
            try:
                created = self._api.create(spec)
            except ConflictError:
                return False  # another replica created it first
            self._observe(created)
            self._renewed(True)
            return True
        spec = dict(lease.get("spec") or {})
        self._observe(lease)
        holder = spec.get("holderIdentity") or ""
        ours = holder == self.identity
        if holder and not ours and not self._expired():
            self._set_leading(False)
            return False
        if not ours:
            spec["acquireTime"] = stamp
            # As client-go: every change of holder counts, also after a release.
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        spec["holderIdentity"] = self.identity
        spec["leaseDurationSeconds"] = int(self._duration)
        spec["renewTime"] = stamp
        lease["spec"] = spec
        try:
            updated = self._api.replace(lease)
        except ConflictError:
            return False  # someone wrote in between: read again next round
        self._observe(updated)
        self._renewed(True)
        return True

    def _observe(self, lease: RawLease) -> None:
        spec = dict(lease.get("spec") or {})
        with self._lock:
            if spec != self._observed:
                self._observed = spec
                self._observed_at = self._monotonic()

    def _expired(self) -> bool:
        with self._lock:
            spec = self._observed or {}
            duration = float(spec.get("leaseDurationSeconds") or self._duration)
            return self._monotonic() - self._observed_at > duration

    def _renewed(self, leading: bool) -> None:
        with self._lock:
            self._renewed_at = self._monotonic()
        self._set_leading(leading)

    def _set_leading(self, leading: bool) -> None:
        with self._lock:
            changed = leading != self._leading
            self._leading = leading
        if changed:
            log.info(
                "leader election: now leading" if leading else "leader election: stopped leading",
                extra={
                    "identity": self.identity,
                    "lease": f"{self._settings.lease_namespace}/{self._settings.lease_name}",
                },
            )
            if self._on_change is not None:
                self._on_change(leading)

    def _release(self) -> None:
        try:
            lease = self._api.read()
            if lease is None:
                return
            spec = dict(lease.get("spec") or {})
            if spec.get("holderIdentity") != self.identity:
                return
            stamp = micro_time(self._clock())
            spec.update(
                {
                    "holderIdentity": "",
                    "leaseDurationSeconds": 1,
                    "acquireTime": stamp,
                    "renewTime": stamp,
                }
            )
            lease["spec"] = spec
            self._api.replace(lease)
            log.info(
                "leader election: lease released",
                extra={"lease": f"{self._settings.lease_namespace}/{self._settings.lease_name}"},
            )
        except LoadawareError as exc:
            # The lease then expires by itself after leaseDuration.
            log.warning("leader election: could not release the lease", extra={"reason": str(exc)})
