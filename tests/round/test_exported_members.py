"""The round stage's public names: what runtime and tests may use, and nothing
that moved into it by accident."""

from __future__ import annotations

from loadaware import round as rounds


def test_a_round_result_and_its_options_are_frozen() -> None:
    import dataclasses

    import pytest

    options = rounds.RoundOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.dry_run = True  # type: ignore[misc]
    assert dataclasses.fields(rounds.RoundResult)
    assert rounds.RoundResult.__dataclass_params__.frozen  # type: ignore[attr-defined]
