"""The in-round guard on the model of kube-scheduler: where each replacement was
bound, against the landing set the model derived for it just before its eviction.

A replacement bound on a good node outside its landing set (off-set) is the model
disagreeing with the cluster's scheduler. One such landing is no proof (a sample
kube-scheduler drew, a rival the view had not caught up with), but a model that
scores differently misses on nearly every move, and every further move it plans
and steers rests on the same scores. So the round stops once its off-set landings
are more than steering.maxOffSetLandings and more than 1 - minModelAgreement of
the bound replacements it judged: with the defaults, the third off-set landing
stops a round whose landings are otherwise in their sets at least 95% of the time,
and a model that disagrees outright is caught within three evictions.

Bad landings (source, hot, excluded, over targets) are the breaker's, as the
verifier judges them; they are counted here as landings but not as off-set.
Pure: the executor tells it where each replacement was bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from loadaware import plan
from loadaware.evict._stops import ModelDisagreesError
from loadaware.policy import LoadAwarePolicy


@dataclass(frozen=True, slots=True, kw_only=True)
class OffSetLanding:
    pod: str
    node: str
    landing_set: tuple[str, ...]


class OffSetLandingGuard:
    """Counts the round's bound replacements and those off their landing set."""

    def __init__(self, policy: LoadAwarePolicy, control: plan.LandingControl) -> None:
        steering = policy.steering
        self._min_agreement = steering.min_model_agreement
        self._max_off_set = steering.max_off_set_landings
        self._control = control
        self.landed = 0  # bound replacements of moves with a landing set
        self.off_set: list[OffSetLanding] = []

    def observe(self, eviction: plan.Eviction, node: str) -> ModelDisagreesError | None:
        """The replacement of `eviction` (as derived before it was sent) was bound to
        `node`; the error that stops the round when this tips it over the bound."""
        if not eviction.landing_set:
            return None  # the model claimed no landing for it
        self.landed += 1
        if node in eviction.landing_set or self._control.judge_landing(eviction, node):
            return None
        self.off_set.append(
            OffSetLanding(pod=eviction.pod, node=node, landing_set=eviction.landing_set)
        )
        return self.tripped()

    def tripped(self) -> ModelDisagreesError | None:
        off_set = len(self.off_set)
        if off_set <= self._max_off_set or off_set <= (1 - self._min_agreement) * self.landed:
            return None
        last = self.off_set[-1]
        shown = ", ".join(last.landing_set[:3]) + (" ..." if len(last.landing_set) > 3 else "")
        return ModelDisagreesError(
            f"{off_set} of {self.landed} replacements landed outside the landing set "
            f"the model predicted (bound: more than {self._max_off_set} and more than "
            f"{1 - self._min_agreement:.0%} of them); last: {last.pod} on {last.node}, "
            f"predicted {shown}"
        )
