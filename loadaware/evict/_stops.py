"""Why the executor stopped evicting before the end of a plan, as errors.

ExecutionReport.stopped holds one of these, or a refusal (a RefusedError: the
view of the cluster or the usage could no longer be vouched for, the suspend
switch). Their summary() is the audit record's `stopped` text."""

from __future__ import annotations

from loadaware.errors import ClusterError, LoadawareError, RefusedError


class BreakerOpenError(RefusedError):
    """The circuit breaker is open (opened by an earlier round): nothing is evicted
    until it closes."""

    reference = "breaker-open"


class StopRequestedError(LoadawareError):
    """The round was told to stop (SIGTERM, lost leadership, shutting down)."""

    reference = "stop-requested"

    def summary(self) -> str:
        return self.message


class EvictionFailedError(ClusterError):
    """An eviction failed in a way that leaves unknown whether it happened (409,
    5xx, a timeout): the round stops there, its reservation still counted."""

    reference = "eviction-failed"

    def __init__(self, pod: str, cause: ClusterError) -> None:
        super().__init__(f"eviction of {pod} failed: {cause.reference}")
        self.pod = pod
        self.cause = cause

    def summary(self) -> str:
        return self.message


class BreakerOpenedError(LoadawareError):
    """A replacement landed badly or never became Ready: this round opened the breaker."""

    reference = "breaker-opened"

    def summary(self) -> str:
        return f"breaker opened: {self.message}"
