"""The model's agreement with the cluster's scheduler over a window of bindings."""

import pytest

from loadaware import scheduling


def _binding(name: str, agreed: bool, *, profile: str = "default-scheduler", at: float = 0.0):
    return scheduling.Binding(
        pod=f"shop/{name}",
        scheduler_name=profile,
        node="node-1",
        agreed=agreed,
        predicted=() if agreed else ("node-2",),
        seen_at=at,
    )


def test_an_empty_window_has_no_ratio_and_is_not_below_any_bound() -> None:
    agreement = scheduling.AgreementWindow().snapshot()
    assert agreement.ratio is None
    assert agreement.observed == 0
    assert not agreement.below(0.95, min_observations=0)


def test_the_ratio_counts_per_profile_and_names_the_latest_disagreements_first() -> None:
    window = scheduling.AgreementWindow()
    window.record(_binding("a", True))
    window.record(_binding("b", False))
    window.record(_binding("c", True, profile="bin-packing"))
    window.record(_binding("d", False, profile="bin-packing"))
    window.record(_binding("e", True, profile="bin-packing"))

    agreement = window.snapshot()

    assert agreement.observed == 5
    assert agreement.agreed == 3
    assert agreement.ratio == pytest.approx(0.6)
    assert agreement.by_profile["bin-packing"].ratio == pytest.approx(2 / 3)
    assert agreement.by_profile["default-scheduler"].ratio == pytest.approx(0.5)
    assert [b.pod for b in agreement.examples] == ["shop/d", "shop/b"]


def test_a_low_ratio_counts_only_after_enough_observations() -> None:
    window = scheduling.AgreementWindow()
    for index in range(4):
        window.record(_binding(f"p{index}", False))
    assert not window.snapshot().below(0.95, min_observations=5)
    window.record(_binding("p4", False))
    assert window.snapshot().below(0.95, min_observations=5)
    assert not window.snapshot().below(0.0, min_observations=5)


def test_the_window_keeps_only_its_last_bindings_and_those_young_enough() -> None:
    window = scheduling.AgreementWindow(size=3, max_age_seconds=10.0)
    window.record(_binding("old", False, at=0.0))
    for index, at in enumerate((5.0, 12.0, 14.0)):
        window.record(_binding(f"new{index}", True, at=at))

    assert window.snapshot().observed == 3
    assert window.snapshot().ratio == 1.0
    assert window.snapshot(now=20.0).observed == 2


def test_a_window_of_no_bindings_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        scheduling.AgreementWindow(size=0)
