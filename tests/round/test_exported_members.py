"""The round stage's public names: what runtime and tests may use, and nothing
that moved into it by accident."""

from __future__ import annotations

from loadaware import round as rounds


def test_round_exports_exactly_its_public_names() -> None:
    assert sorted(rounds.__all__) == sorted(
        [
            "LANDINGS_WHERE",
            "LANDING_WHERE",
            "PROOF_OUTCOMES",
            "ForecastProof",
            "ForecastReader",
            "NodeCompletion",
            "NodeProof",
            "NodeRelief",
            "NodeResult",
            "PartialRoundError",
            "PendingProof",
            "RoundCompletion",
            "RoundContext",
            "RoundOptions",
            "RoundRecord",
            "RoundResult",
            "UsageReader",
            "completion_to_json",
            "describe_completion",
            "fetch_cluster_usage",
            "forecast_reader",
            "metrics_provider",
            "name_nodes",
            "prove",
            "relief_rows",
            "relief_to_json",
            "round_verdict",
            "run_round",
            "timed_plan",
        ]
    )
    for name in rounds.__all__:
        assert getattr(rounds, name) is not None


def test_a_round_result_and_its_options_are_frozen() -> None:
    import dataclasses

    import pytest

    options = rounds.RoundOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.dry_run = True  # type: ignore[misc]
    assert dataclasses.fields(rounds.RoundResult)
    assert rounds.RoundResult.__dataclass_params__.frozen  # type: ignore[attr-defined]
