"""The planner's public names: what the stages above it (evict, runtime, report,
the CLI) and the benchmarks use. The kube-scheduler model is `loadaware.scheduling`'s."""

from __future__ import annotations

from loadaware import plan


def test_public_names() -> None:
    assert sorted(plan.__all__) == sorted(
        [
            "HOTSPOT_TAINT",
            "NO_CARRIED_BUDGET",
            "POD_COUNT",
            "RESOURCES",
            "SOURCE_NOT_HOT",
            "CarriedBudget",
            "Eviction",
            "EvictionRules",
            "LandingControl",
            "NodeReport",
            "NodeTable",
            "Plan",
            "Refusal",
            "SolverInfo",
            "allocatable_names",
            "build_plan",
            "classify_nodes",
            "pod_eligibility",
            "node_scopes",
            "plan_to_json",
            "pool_of",
            "unavailable_by_workload",
        ]
    )
    for name in plan.__all__:
        assert getattr(plan, name) is not None
