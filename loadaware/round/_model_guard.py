"""Before a round acts on its landings: whether the model of kube-scheduler agrees
with the cluster's scheduler well enough to back them.

Every move a round plans rests on a predicted landing: with steering
(steering.softTaint) the landing the taints make kube-scheduler's best choice,
without it the natural one, which must be good for the move to be planned at
all. Turning the taints off does not stop the round from predicting, so it does
not turn this guard off: when the recent agreement (`serve` measures it on every
binding it sees) is known to be under steering.minModelAgreement, after at least
steering.minAgreementObservations bindings, a round that would evict is refused
before it plans (scheduler-model-disagrees, exit 3), with nothing tainted or
evicted. The guard is off only when the policy says so: minModelAgreement 0. A
dry run changes nothing, so it goes on, as it does with the breaker open, and its
audit record says what a live round would have found.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from loadaware import evict, policy, scheduling


@dataclass(frozen=True, slots=True, kw_only=True)
class AgreementCheck:
    # The recent agreement as the audit record holds it; None: nothing measures it.
    figures: dict[str, Any] | None = None
    # Why a live round may not go on, or None.
    refusal: evict.ModelDisagreesError | None = None


def check_model_agreement(
    settings: policy.LoadAwarePolicy,
    read_agreement: Callable[[], scheduling.ModelAgreement] | None,
    *,
    dry_run: bool,
) -> AgreementCheck:
    """The recent agreement, and the refusal when it is too low for a live round."""
    if read_agreement is None:
        return AgreementCheck()
    steering = settings.steering
    agreement = read_agreement()
    below = agreement.below(steering.min_model_agreement, steering.min_agreement_observations)
    ratio = agreement.ratio
    figures: dict[str, Any] = {
        "ratio": round(ratio, 4) if ratio is not None else None,
        "observed": agreement.observed,
        "minModelAgreement": steering.min_model_agreement,
        "minAgreementObservations": steering.min_agreement_observations,
        "below": below,
        "byProfile": {
            name: {"observed": p.observed, "agreed": p.agreed}
            for name, p in agreement.by_profile.items()
        },
        "examples": [
            {"pod": b.pod, "node": b.node, "predicted": list(b.predicted), "reason": b.reason}
            for b in agreement.examples[:3]
        ],
    }
    if not below or dry_run:
        return AgreementCheck(figures=figures)
    assert ratio is not None
    example = agreement.examples[0] if agreement.examples else None
    return AgreementCheck(
        figures=figures,
        refusal=evict.ModelDisagreesError(
            f"the model agreed with the cluster's scheduler on {ratio:.1%} of the last "
            f"{agreement.observed} bindings, under steering.minModelAgreement "
            f"{steering.min_model_agreement:.0%} (counted from "
            f"{steering.min_agreement_observations} bindings)"
            + (
                f"; e.g. {example.pod} bound to {example.node}, predicted "
                f"{', '.join(example.predicted[:3]) or 'no feasible node'}"
                if example is not None
                else ""
            ),
            also="steering.minModelAgreement: 0 turns this guard off",
        ),
    )
