"""A refused plan carries its refusal as data (plan.Refusal: the stable code and
the message), and a round refuses with exactly that: nothing parses the reason."""

from __future__ import annotations

import datetime

from loadaware import cluster, metrics, policy
from loadaware import round as rounds
from loadaware.sim import builtin_scenario

NOW = datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)


def test_a_plan_on_stale_metrics_carries_its_refusal() -> None:
    scenario = builtin_scenario("small", now=NOW)
    state = cluster.cluster_state_from_objects(scenario.objects)
    usage = metrics.usage_from_json(scenario.metrics)
    settings = policy.LoadAwarePolicy()

    fresh = rounds.timed_plan(state, usage, settings, usage.collected_at)
    assert fresh.status == "planned"
    assert fresh.refusal is None

    late = rounds.timed_plan(state, usage, settings, NOW + datetime.timedelta(minutes=30))
    assert late.status == "refused"
    assert late.refusal is not None
    assert late.refusal.code == "stale-metrics"
    assert late.refusal.message.startswith("node ")
    # The reason stays what the plan JSON contract says: the code first.
    assert late.reason == f"{late.refusal.code}: {late.refusal.message}"
