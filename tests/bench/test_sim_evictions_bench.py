"""`python -m bench.sim_evictions` runs on a small cluster: every eviction asked for is
carried out, every replacement is bound, and the table names each column."""

from __future__ import annotations

import pytest

from bench import sim_evictions


def test_sim_evictions_bench_runs_small(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--sizes", "30", "--evictions", "4", "--settle-every", "2", "--steer", "3"]
    assert sim_evictions.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header == list(sim_evictions.COLUMNS)
    row = dict(zip(header, (cell.strip() for cell in lines[2].strip("|").split("|")), strict=True))
    assert row["nodes"] == "30"
    assert row["steer"] == "3"
    assert row["evictions"] == "4"
    assert row["unbound"] == "0"
    # A pass after each eviction and around its steering taints (also around a refused
    # one), and after each settling and the last.
    refused = int(row["refused"])
    assert int(row["reconcile calls"]) == 4 * 3 + refused * 2 + 2 + 1
    assert float(row["s per eviction"]) >= 0


def test_sim_evictions_bench_refuses_bad_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        sim_evictions.main(["--sizes", "many"])
    assert "--sizes" in capsys.readouterr().err
