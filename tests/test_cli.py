"""The `loadaware` command end to end, as a user runs it (in-process and as a subprocess).

Covers: plan -o json/table on files; exit 3 with status refused on stale
metrics; exit 2 naming the field on a bad policy; validate prints the
normalised policy; simulate on the built-in scenario and on files; exit 2 on
unreadable files and bad flags; the console script installed.
"""

from __future__ import annotations

import datetime
import json
import pathlib
import subprocess
import sys

import pytest

from loadaware import cli
from loadaware.sim import builtin_scenario

NOW = datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)
REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture
def scenario_files(tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    scenario = builtin_scenario("small", now=NOW)
    cluster = tmp_path / "cluster.json"
    metrics = tmp_path / "metrics.json"
    cluster.write_text(json.dumps(scenario.cluster_document()))
    metrics.write_text(json.dumps(scenario.metrics))
    return cluster, metrics


def _plan_args(cluster, metrics, policy, *extra: str) -> list[str]:
    return [
        "plan",
        "--cluster",
        str(cluster),
        "--metrics",
        str(metrics),
        "--policy",
        str(policy),
        "--now",
        "2026-11-29T08:00:00Z",
        *extra,
    ]


def test_plan_json_on_files(scenario_files, capsys) -> None:
    cluster, metrics = scenario_files
    code = cli.main(_plan_args(cluster, metrics, REPO / "policy/default.yaml", "-o", "json"))
    body = json.loads(capsys.readouterr().out)
    assert code == 0
    assert body["status"] == "planned"
    assert body["evictions"]
    assert all(e["node"] != e["expectedNode"] for e in body["evictions"])
    classes = {n["name"]: n["class"] for n in body["nodes"]}
    assert all(classes[e["node"]] == "hot" for e in body["evictions"])


def test_plan_table_on_files(scenario_files, capsys) -> None:
    cluster, metrics = scenario_files
    code = cli.main(_plan_args(cluster, metrics, REPO / "policy/default.yaml"))
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("status: planned")
    assert "EVICTIONS" in out


def test_stale_metrics_exit_3_and_refused(scenario_files, capsys) -> None:
    cluster, metrics = scenario_files
    late = ["--now", "2026-11-29T08:30:00Z"]
    args = _plan_args(cluster, metrics, REPO / "policy/default.yaml", "-o", "json")[:-4]
    code = cli.main([*args, *late, "-o", "json"])
    body = json.loads(capsys.readouterr().out)
    assert code == 3
    assert body["status"] == "refused"
    assert body["reason"].startswith("stale-metrics: node ")
    assert body["evictions"] == []


def test_bad_policy_exit_2_names_the_field(scenario_files, tmp_path, capsys) -> None:
    cluster, metrics = scenario_files
    policy = tmp_path / "bad.yaml"
    policy.write_text("metrics:\n  onStaleNode: Ignore\n")
    code = cli.main(_plan_args(cluster, metrics, policy))
    err = capsys.readouterr().err
    assert code == 2
    assert "metrics.onStaleNode" in err
    assert "Refuse" in err
    assert "Exclude" in err


def test_validate_prints_normalised_policy(capsys) -> None:
    code = cli.main(["validate", "--policy", str(REPO / "policy/default.yaml")])
    out = capsys.readouterr().out
    assert code == 0
    assert "targetThresholds:" in out
    assert "maxSampleAge: 2m" in out


def test_validate_bad_policy(tmp_path, capsys) -> None:
    policy = tmp_path / "bad.yaml"
    policy.write_text("evictor:\n  nodeFitt: true\nlimits:\n  maxNoOfPodsToEvictTotal: -1\n")
    assert cli.main(["validate", "--policy", str(policy)]) == 2
    err = capsys.readouterr().err
    assert "evictor.nodeFitt" in err
    assert "limits.maxNoOfPodsToEvictTotal" in err


def test_missing_cluster_file_is_bad_input(tmp_path, capsys) -> None:
    code = cli.main(
        _plan_args(tmp_path / "nope.json", tmp_path / "m.json", REPO / "policy/default.yaml")
    )
    assert code == 2
    assert "nope.json" in capsys.readouterr().err


def test_bad_flag_is_exit_2(capsys) -> None:
    assert cli.main(["plan", "--cluster"]) == 2


def test_simulate_builtin_scenario(capsys) -> None:
    assert cli.main(["simulate", "--scenario", "small"]) == 0
    out = capsys.readouterr().out
    assert "verdict: hot nodes 2 → 0" in out


def test_simulate_files_json(scenario_files, capsys) -> None:
    cluster, metrics = scenario_files
    assert (
        cli.main(["simulate", "--cluster", str(cluster), "--metrics", str(metrics), "-o", "json"])
        == 0
    )
    body = json.loads(capsys.readouterr().out)
    assert body["simulation"]["hotAfter"] == 0
    assert body["simulation"]["hotBefore"] >= 1


def test_unknown_scenario_is_bad_input(capsys) -> None:
    assert cli.main(["simulate", "--scenario", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_console_script_runs() -> None:
    exe = pathlib.Path(sys.executable).with_name("loadaware")
    done = subprocess.run(
        [str(exe), "simulate", "--scenario", "small"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "verdict:" in done.stdout


def test_plan_on_files_never_loads_the_kubernetes_client(scenario_files) -> None:
    # Importing the client costs every start about half a second; reading files needs none of it.
    cluster, metrics = scenario_files
    args = _plan_args(cluster, metrics, REPO / "policy/default.yaml", "-o", "json")
    script = (
        "import sys\n"
        "from loadaware import cli\n"
        f"code = cli.main({args!r})\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] == 'kubernetes')\n"
        "print(code, loaded, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "planned"
    assert done.stderr.strip().splitlines()[-1] == "0 []"


def test_simulate_warm_idle_steers_every_replacement_to_an_idle_node(capsys) -> None:
    code = cli.main(["simulate", "--scenario", "warm-idle"])
    out = capsys.readouterr().out
    assert code == 0
    # The table names each eviction's steered-away nodes, and all land as planned.
    assert out.count("steer: ") == 8
    assert "hot nodes 4 → 0; 8 evictions; 8/8 replacements landed where planned" in out
