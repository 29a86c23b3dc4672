"""How well the model agrees with the cluster's scheduler: for each pod the
scheduler bound, whether the node it chose was one the model would have
predicted (`Binding`), kept over a sliding window (`AgreementWindow`) and read
as one figure per profile (`ModelAgreement`).

A landing claim is only as good as the model behind it. Where the cluster's
scheduler scores differently (another scoringStrategy, other weights, a second
scheduler under the same name), the model's predictions and the real bindings
part, and this is where that shows before a round leans on them.

Pure: the caller says when each binding was seen, in its own clock's seconds.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

# How many disagreements a snapshot names, newest first.
EXAMPLES_KEPT = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class Binding:
    """One pod the scheduler bound, and what the model said of it."""

    pod: str  # namespace/name
    scheduler_name: str
    node: str  # where the scheduler bound it
    agreed: bool
    # The model's landing set for the pod (a few names; empty when it found no
    # feasible node), and why it disagreed when it did.
    predicted: tuple[str, ...] = ()
    reason: str = ""
    seen_at: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfileAgreement:
    observed: int = 0
    agreed: int = 0

    @property
    def ratio(self) -> float | None:
        return self.agreed / self.observed if self.observed else None


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelAgreement:
    """The bindings of a window: how many were seen and how many the model agreed
    with, per schedulerName, and the latest disagreements."""

    by_profile: Mapping[str, ProfileAgreement] = field(default_factory=lambda: MappingProxyType({}))
    examples: tuple[Binding, ...] = ()

    @property
    def observed(self) -> int:
        return sum(p.observed for p in self.by_profile.values())

    @property
    def agreed(self) -> int:
        return sum(p.agreed for p in self.by_profile.values())

    @property
    def ratio(self) -> float | None:
        """The share of bindings the model agreed with; None before any was seen."""
        observed = self.observed
        return self.agreed / observed if observed else None

    def below(self, minimum: float, min_observations: int) -> bool:
        """Whether the agreement is known to be under `minimum`: only once at least
        `min_observations` bindings were seen, so that a few early ones do not decide."""
        ratio = self.ratio
        return ratio is not None and self.observed >= min_observations and ratio < minimum


class AgreementWindow:
    """The last `size` bindings, and those younger than `max_age_seconds` (None: no
    age bound). Safe to record from a watch thread while another reads."""

    def __init__(self, size: int = 500, max_age_seconds: float | None = None) -> None:
        if size < 1:
            raise ValueError("an agreement window holds at least one binding")
        self._bindings: deque[Binding] = deque(maxlen=size)
        self._max_age = max_age_seconds
        self._lock = threading.Lock()

    def record(self, binding: Binding) -> None:
        with self._lock:
            self._bindings.append(binding)

    def snapshot(self, now: float | None = None) -> ModelAgreement:
        """The window's agreement; with `now` (the recording clock's), bindings older
        than the age bound are left out."""
        with self._lock:
            bindings = list(self._bindings)
        if now is not None and self._max_age is not None:
            oldest = now - self._max_age
            bindings = [b for b in bindings if b.seen_at >= oldest]
        counts: dict[str, list[int]] = {}
        for binding in bindings:
            seen = counts.setdefault(binding.scheduler_name, [0, 0])
            seen[0] += 1
            seen[1] += binding.agreed
        examples = tuple(b for b in reversed(bindings) if not b.agreed)[:EXAMPLES_KEPT]
        return ModelAgreement(
            by_profile=MappingProxyType(
                {
                    name: ProfileAgreement(observed=observed, agreed=agreed)
                    for name, (observed, agreed) in sorted(counts.items())
                }
            ),
            examples=examples,
        )
