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


class ModelDisagreesError(RefusedError):
    """The model of kube-scheduler cannot back the round's landing claims: the recent
    agreement with the cluster's scheduler is under steering.minModelAgreement (the
    round refuses before it plans), or the round's own replacements landed outside
    their landing sets beyond steering.maxOffSetLandings (it stops evicting). A
    refusal: the round does not go on with landings it cannot predict. Whichever
    says it, the fix is the same: the hint (`fix`) names it."""

    reference = "scheduler-model-disagrees"
    fix = (
        "the cluster's scheduler scores differently from loadaware's model: give its "
        "KubeSchedulerConfiguration as steering.schedulerConfig (and the schedulerNames "
        "it serves), and confirm with `loadaware scheduler check`"
    )

    def __init__(self, message: str, *, also: str = "") -> None:
        """`also`: what the hint adds for this stop (how to turn its guard off)."""
        super().__init__(message, hint=self.fix + (f"; {also}" if also else ""))
