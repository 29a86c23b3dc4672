"""`python -m bench.plan_end_to_end`: its table names each column and says whether
the bars are met; a run is measured as a child process (CPU and peak RSS from
wait4); a small cluster goes through the whole bench."""

from __future__ import annotations

import pathlib
import sys

import pytest

from bench import plan_end_to_end as bench


def _row(walls: list[float], rss: float = 600.0) -> bench.Row:
    runs = tuple(
        bench.Run(wall_seconds=w, cpu_seconds=w + 1.0, peak_rss_mib=rss, exit_code=0) for w in walls
    )
    return bench.Row(nodes=5000, pods=150000, runs=runs)


def _cells(text: str) -> list[dict[str, str]]:
    lines = text.splitlines()
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert header == list(bench.COLUMNS)
    assert set(lines[1]) == {"|", "-"}
    return [
        dict(zip(header, (c.strip() for c in line.strip("|").split("|")), strict=True))
        for line in lines[2:]
    ]


def test_table_gives_min_and_median_and_the_bars() -> None:
    rows = _cells(bench.table([_row([9.5, 11.0, 9.0]), _row([10.5, 12.0], rss=3500.0)]))
    assert rows[0] == {
        "nodes": "5000",
        "pods": "150000",
        "runs": "3",
        "wall s min": "9.00",
        "wall s median": "9.50",
        "CPU s median": "10.50",
        "peak RSS MiB": "600",
        "wall <= 10 s": "yes",
        "RSS <= 3 GiB": "yes",
    }
    assert rows[1]["wall s median"] == "11.25"
    assert rows[1]["wall <= 10 s"] == "NO"
    assert rows[1]["RSS <= 3 GiB"] == "NO"


def test_sizes_are_node_counts() -> None:
    assert bench.parse_sizes("1000, 5000") == (1000, 5000)
    for bad in ("many", "0", ""):
        with pytest.raises(Exception, match="node counts"):
            bench.parse_sizes(bad)


def test_a_run_is_measured_in_the_child() -> None:
    # The child burns some CPU and holds 200 MiB: both are its own, not this process's.
    code = "b = bytearray(200 * 1024 * 1024); sum(range(3_000_000)); raise SystemExit(4)"
    run = bench.run_plan([sys.executable, "-c", code])
    assert run.exit_code == 4
    assert run.cpu_seconds > 0
    assert run.wall_seconds >= run.cpu_seconds * 0.5
    assert 200 <= run.peak_rss_mib < 1024


def test_bad_arguments_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench.main(["--runs", "0"])
    assert "--runs" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--now", "yesterday"])
    assert "--now" in capsys.readouterr().err


@pytest.mark.slow
def test_bench_runs_small(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--sizes", "50", "--runs", "2", "--dir", str(tmp_path)]) == 0
    (row,) = _cells(capsys.readouterr().out)
    assert row["nodes"] == "50"
    assert row["pods"] == "1500"
    assert row["runs"] == "2"
    assert 0 < float(row["wall s min"]) <= float(row["wall s median"]) < 60
    assert float(row["CPU s median"]) > 0
    assert row["wall <= 10 s"] == "yes"
    assert (tmp_path / "50" / "cluster.json").exists()
    # The directory is reused as it is: nothing but the generated files in it.
    assert sorted(p.name for p in (tmp_path / "50").iterdir()) == ["cluster.json", "metrics.json"]
