"""The in-round guard on the model (evict/_landing_guard): replacements bound outside
the landing set the model predicted for them (off-set) stop a round once they are
more than steering.maxOffSetLandings and more than 1 - minModelAgreement of the
round's landings. Judged with a real LandingControl on the small scenario's plan:
its hot nodes and sources are bad landings, which the guard leaves to the breaker.
"""

from __future__ import annotations

import dataclasses
import datetime

import pytest

from loadaware import cluster, evict, metrics, plan, policy
from loadaware import round as rounds
from loadaware.evict._landing_guard import OffSetLandingGuard
from loadaware.sim import builtin_scenario

NOW = datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)
# The small scenario's nodes: default-a-002 and default-c-002 are hot, the rest cold.
GOOD = ("default-a-001", "default-b-001", "default-b-002", "default-c-001")


def _guard(**steering: object) -> tuple[OffSetLandingGuard, plan.Plan]:
    scenario = builtin_scenario("small", now=NOW)
    state = cluster.cluster_state_from_objects(scenario.objects)
    usage = metrics.usage_from_json(scenario.metrics)
    settings = policy.parse_policy({"steering": steering}) if steering else policy.LoadAwarePolicy()
    planned = rounds.timed_plan(state, usage, settings, usage.collected_at)
    assert planned.evictions
    control = plan.LandingControl.for_plan(state, usage, settings, usage.collected_at, planned)
    return OffSetLandingGuard(settings, control), planned


def _off_set(eviction: plan.Eviction) -> str:
    """A good node outside the eviction's landing set."""
    return next(n for n in GOOD if n not in eviction.landing_set)


def test_one_unlucky_landing_does_not_stop_a_round() -> None:
    guard, planned = _guard()
    eviction = planned.evictions[0]
    assert guard.observe(eviction, _off_set(eviction)) is None
    assert guard.observe(eviction, _off_set(eviction)) is None
    assert len(guard.off_set) == 2


def test_the_third_off_set_landing_stops_the_round() -> None:
    guard, planned = _guard()
    eviction = planned.evictions[0]
    for _ in range(2):
        assert guard.observe(eviction, _off_set(eviction)) is None
    stop = guard.observe(eviction, _off_set(eviction))
    assert isinstance(stop, evict.ModelDisagreesError)
    assert stop.reference == "scheduler-model-disagrees"
    assert stop.exit_code == 3
    assert str(stop).startswith("3 of 3 replacements landed outside the landing set")
    assert "more than 2 and more than 5% of them" in str(stop)
    assert eviction.pod in str(stop)
    assert "steering.schedulerConfig" in (stop.hint or "")


def test_off_set_landings_within_the_share_do_not_stop_it() -> None:
    guard, planned = _guard()
    eviction = planned.evictions[0]
    # 3 off-set among 60 landings is 5%, not more: the model holds.
    for _ in range(57):
        assert guard.observe(eviction, eviction.landing_set[0]) is None
    for _ in range(3):
        assert guard.observe(eviction, _off_set(eviction)) is None
    # A fourth is more than 5% of 61.
    assert isinstance(guard.observe(eviction, _off_set(eviction)), evict.ModelDisagreesError)


def test_landings_in_the_set_and_bad_landings_are_not_off_set() -> None:
    guard, planned = _guard()
    eviction = planned.evictions[0]
    for node in (eviction.landing_set[0], eviction.node, "default-c-002") * 3:
        assert guard.observe(eviction, node) is None
    assert guard.off_set == []
    assert guard.landed == 9


def test_a_move_without_a_landing_claim_is_not_counted() -> None:
    guard, planned = _guard()
    unclaimed = dataclasses.replace(planned.evictions[0], landing_set=(), expected_node=None)
    for _ in range(5):
        assert guard.observe(unclaimed, GOOD[0]) is None
    assert guard.landed == 0


@pytest.mark.parametrize(
    ("steering", "stops_at"),
    [
        ({"maxOffSetLandings": 0}, 1),
        ({"maxOffSetLandings": 4}, 5),
        ({"minModelAgreement": 0}, None),
    ],
)
def test_the_bound_follows_the_policy(steering: dict[str, object], stops_at: int | None) -> None:
    guard, planned = _guard(**steering)
    eviction = planned.evictions[0]
    stopped = None
    for count in range(1, 8):
        if guard.observe(eviction, _off_set(eviction)) is not None:
            stopped = count
            break
    assert stopped == stops_at
