"""How well the kube-scheduler model agrees with the cluster's scheduler: the binding
observer as `serve` runs it, and `loadaware scheduler check`.

`binding_observer` builds the observer (`fidelity.BindingObserver`) for a policy:
the profiles it models (steering.schedulerConfig and steering.schedulerNames) and
steering.percentageOfNodesToScore. `check_scheduler` is the command: it reads the
cluster through a watched cache, watches until it has compared `bindings`
bindings of modelled pods or `duration` has passed, whichever comes first, and
returns what it found (`SchedulerCheck`); the CLI prints it and picks the exit
code. `agreement_document` is the JSON both `/status` and the command show.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loadaware import cluster, fidelity, kube, policy, scheduling

if TYPE_CHECKING:
    import kubernetes.client

log = logging.getLogger(__name__)

DEFAULT_CHECK_BINDINGS = 200
DEFAULT_CHECK_DURATION = datetime.timedelta(minutes=10)


def modelled_profiles(settings: policy.LoadAwarePolicy) -> scheduling.SchedulerProfiles:
    steering = settings.steering
    return scheduling.modelled_profiles(steering.scheduler_config, steering.scheduler_names)


def binding_observer(
    settings: policy.LoadAwarePolicy,
    cache: cluster.ClusterCache,
    *,
    window: scheduling.AgreementWindow | None = None,
    on_binding: Callable[[scheduling.Binding], None] | None = None,
) -> fidelity.BindingObserver:
    """The observer of the cache's bindings, modelling what the policy says the
    cluster's schedulers are (not started)."""
    return fidelity.BindingObserver(
        cache,
        modelled_profiles(settings),
        percentage_of_nodes_to_score=settings.steering.percentage_of_nodes_to_score,
        window=window,
        on_binding=on_binding,
    )


def agreement_document(
    agreement: scheduling.ModelAgreement, scheduler_names: tuple[str, ...]
) -> dict[str, Any]:
    """The agreement per schedulerName (every modelled one) and the latest
    disagreements, as JSON."""
    profiles: dict[str, Any] = {}
    for name in sorted({*scheduler_names, *agreement.by_profile}):
        seen = agreement.by_profile.get(name, scheduling.ProfileAgreement())
        ratio = seen.ratio
        profiles[name] = {
            "observed": seen.observed,
            "agreed": seen.agreed,
            "ratio": None if ratio is None else round(ratio, 4),
        }
    ratio = agreement.ratio
    return {
        "observed": agreement.observed,
        "agreed": agreement.agreed,
        "ratio": None if ratio is None else round(ratio, 4),
        "profiles": profiles,
        "disagreements": [
            {
                "pod": b.pod,
                "schedulerName": b.scheduler_name,
                "node": b.node,
                "predicted": list(b.predicted),
                "reason": b.reason,
            }
            for b in agreement.examples
        ],
    }


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SchedulerCheck:
    """What `loadaware scheduler check` found."""

    agreement: scheduling.ModelAgreement
    scheduler_names: tuple[str, ...]
    min_agreement: float
    seconds: float
    observer: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """At least one binding compared, and the agreement at the minimum or above."""
        ratio = self.agreement.ratio
        return ratio is not None and ratio >= self.min_agreement

    def text(self) -> str:
        """For a person: the agreement per schedulerName, then the disagreements."""
        lines = []
        ratio = self.agreement.ratio
        overall = "no bindings" if ratio is None else f"{_share(ratio)}"
        verdict = "pass" if self.passed else "FAIL"
        lines.append(
            f"scheduler model agreement: {overall} of {self.agreement.observed} bindings "
            f"in {self.seconds:.0f}s (minimum {_share(self.min_agreement)}): {verdict}"
        )
        document = agreement_document(self.agreement, self.scheduler_names)
        for name, seen in document["profiles"].items():
            share = "-" if seen["ratio"] is None else _share(seen["ratio"])
            lines.append(f"  {name}: {seen['agreed']}/{seen['observed']} agreed ({share})")
        if self.agreement.examples:
            lines.append("disagreements, latest first:")
        for binding in self.agreement.examples:
            predicted = ", ".join(binding.predicted) or "no feasible node"
            lines.append(f"  {binding.pod} ({binding.scheduler_name}) bound to {binding.node}")
            lines.append(f"    predicted: {predicted}")
            lines.append(f"    {binding.reason}")
        return "\n".join(lines) + "\n"

    def document(self) -> dict[str, Any]:
        return {
            **agreement_document(self.agreement, self.scheduler_names),
            "minAgreement": self.min_agreement,
            "passed": self.passed,
            "seconds": round(self.seconds, 1),
            "observer": self.observer,
        }


def check_scheduler(
    *,
    policy_file: str | os.PathLike[str],
    kubeconfig: str | os.PathLike[str] | None = None,
    context: str | None = None,
    bindings: int = DEFAULT_CHECK_BINDINGS,
    duration: datetime.timedelta = DEFAULT_CHECK_DURATION,
    min_agreement: float | None = None,
    api: kubernetes.client.ApiClient | None = None,
    on_start: Callable[[], None] | None = None,
) -> SchedulerCheck:
    """Watch the cluster's bindings until `bindings` of modelled pods are compared or
    `duration` has passed. `min_agreement` None: the policy's
    steering.minModelAgreement, the bound a round refuses under. RefusedError
    (exit 3) when the cluster cannot be listed;
    `on_start` is called once the cache has listed the cluster and the watch is on."""
    settings = policy.load_policy(policy_file)
    client = api or kube.api_client(kubeconfig=kubeconfig, context=context)
    cache = cluster.ClusterCache(
        client, sync_timeout=settings.cluster_cache.sync_timeout.total_seconds()
    )
    compared = threading.Condition()
    count = [0]

    def counted(binding: scheduling.Binding) -> None:
        with compared:
            count[0] += 1
            compared.notify_all()

    window = scheduling.AgreementWindow(size=max(bindings, 1))
    observer = binding_observer(settings, cache, window=window, on_binding=counted)
    started = time.monotonic()
    with cache, observer:
        if not cache.wait_synced(settings.cluster_cache.sync_timeout.total_seconds()):
            cache.check_fresh(settings.cluster_cache.max_age)  # says why, exit 3
        deadline = started + duration.total_seconds()
        # Bindings before the observer's first mirror are in it, not compared.
        observer.wait_idle(max(0.0, deadline - time.monotonic()))
        log.info(
            "watching the cluster's bindings",
            extra={"bindings": bindings, "seconds": duration.total_seconds()},
        )
        if on_start is not None:
            on_start()
        with compared:
            compared.wait_for(
                lambda: count[0] >= bindings, timeout=max(0.0, deadline - time.monotonic())
            )
        agreement = observer.snapshot()
        stats = observer.stats()
    return SchedulerCheck(
        agreement=agreement,
        scheduler_names=modelled_profiles(settings).names,
        min_agreement=(
            settings.steering.min_model_agreement if min_agreement is None else min_agreement
        ),
        seconds=time.monotonic() - started,
        observer=stats,
    )


def _share(ratio: float) -> str:
    return f"{ratio * 100:.1f}%"
