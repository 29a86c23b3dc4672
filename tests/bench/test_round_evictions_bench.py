"""`python -m bench.round_evictions` runs on a small cluster: it generates it, serves it
with `sim serve` in a process of its own, carries out the capped plan through a
live round and gives loadaware's CPU per eviction, split by where it went, and the
simulator's, in a table that names each column."""

from __future__ import annotations

import pathlib

import pytest

from bench import round_evictions


@pytest.mark.slow
def test_round_evictions_bench_runs_small(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--sizes", "150", "--evictions", "4", "--keep", str(tmp_path)]
    assert round_evictions.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header == list(round_evictions.COLUMNS)
    row = dict(zip(header, (cell.strip() for cell in lines[2].strip("|").split("|")), strict=True))
    assert row["nodes"] == "150"
    assert row["planned"] == "4"
    assert row["evicted"] == "4"
    total = float(row["loadaware CPU s per eviction"])
    assert 0 < total < 5
    parts = [
        float(row[name])
        for name in (
            "of which taint writes",
            "of which evicting thread, other work",
            "of which other threads",
        )
    ]
    assert all(part >= 0 for part in parts)
    # Three cells rounded to the thousandth add up to the total's.
    assert sum(parts) == pytest.approx(total, abs=0.002)
    assert float(row["simulator CPU s per eviction"]) > 0
    assert (tmp_path / "150" / "cluster.json").exists()


def test_round_evictions_bench_refuses_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        round_evictions.main(["--sizes", "many"])
    assert "--sizes" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        round_evictions.main(["--evictions", "-1"])
    assert "--evictions" in capsys.readouterr().err
