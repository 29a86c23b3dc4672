"""The kube-scheduler model's public names: what the planner, the evictor, the
simulated cluster and the benchmarks use."""

from __future__ import annotations

from loadaware import scheduling


def test_public_names() -> None:
    assert sorted(scheduling.__all__) == sorted(
        [
            "FIT_REASONS",
            "HARD_TAINT_EFFECTS",
            "MIN_FEASIBLE_NODES_TO_FIND",
            "STEERING_TAINT",
            "BoolArray",
            "IntArray",
            "NodeSampler",
            "NodeScores",
            "NodeTree",
            "Occupancy",
            "best_nodes",
            "eligible_needed",
            "feasible_mask",
            "node_admits",
            "num_feasible_nodes_to_find",
            "predict_replacement",
            "recreated_after_deletion",
            "replacement_of",
            "scheduling_replacement",
            "score_replacement",
            "spread_filter_mask",
            "tolerates",
            "DEFAULT_PROFILE",
            "DEFAULT_PROFILES",
            "DEFAULT_SCHEDULER_NAME",
            "ResourceWeight",
            "SchedulerProfile",
            "SchedulerProfiles",
            "ScoringStrategy",
            "profiles_from_config",
            "modelled_profiles",
        ]
    )
    for name in scheduling.__all__:
        assert getattr(scheduling, name) is not None
