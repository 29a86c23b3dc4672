"""Planning ahead offline: `plan --forecast FILE` and `simulate --forecast FILE`
take the usage forecast for the coming peak in the `--metrics` format (nodes by
name, pods by pod key or by workload) and plan on it, with the current file's
sample times; the forecast and what it lacked are in the plan JSON.
"""

from __future__ import annotations

import copy
import datetime
import json
import pathlib
from typing import Any

import pytest

from loadaware import cli
from loadaware.sim import builtin_scenario

NOW = datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)
REPO = pathlib.Path(__file__).resolve().parents[2]


def _write(path: pathlib.Path, document: Any) -> pathlib.Path:
    path.write_text(json.dumps(document))
    return path


@pytest.fixture
def files(tmp_path: pathlib.Path) -> dict[str, Any]:
    scenario = builtin_scenario("small", now=NOW)
    return {
        "cluster": _write(tmp_path / "cluster.json", scenario.cluster_document()),
        "metrics": _write(tmp_path / "metrics.json", scenario.metrics),
        "document": scenario.metrics,
        "allocatable": {
            item["metadata"]["name"]: item["status"]["allocatable"]
            for item in scenario.cluster_document()["items"]
            if item["kind"] == "Node"
        },
    }


def _classes(body: dict[str, Any]) -> dict[str, str]:
    return {n["name"]: n["class"] for n in body["nodes"]}


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code = cli.main([*args, "-o", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_plan_on_a_forecast_file(files, tmp_path, capsys) -> None:
    common = ["--cluster", str(files["cluster"]), "--metrics", str(files["metrics"])]
    policy = ["--policy", str(REPO / "policy/default.yaml"), "--now", "2026-11-29T08:00:00Z"]
    code, now_body = _run(capsys, "plan", *common, *policy)
    assert code == 0
    classes = _classes(now_body)
    hot_now = sorted(n for n, c in classes.items() if c == "hot")
    cold_now = sorted(n for n, c in classes.items() if c == "cold")
    assert hot_now
    assert cold_now
    # The forecast: the first cold node at 90% cpu at the peak, every hot one calm.
    forecast = copy.deepcopy(files["document"])
    coming = cold_now[0]
    cores = float(files["allocatable"][coming]["cpu"].removesuffix("m")) / (
        1000 if files["allocatable"][coming]["cpu"].endswith("m") else 1
    )
    forecast["nodes"][coming]["cpu"] = 0.9 * cores
    for name in hot_now:
        forecast["nodes"][name]["cpu"] = 0.0
        forecast["nodes"][name]["memory"] = 0
    path = _write(tmp_path / "forecast.json", forecast)
    code, body = _run(capsys, "plan", *common, "--forecast", str(path), *policy)
    assert code == 0
    assert {n for n, c in _classes(body).items() if c == "hot"} == {coming}
    assert body["status"] == "planned"
    assert {e["node"] for e in body["evictions"]} == {coming}
    assert body["forecast"]["horizon"] == "1h"
    code, body = _run(
        capsys, "simulate", *common, "--forecast", str(path), "--forecast-horizon", "2h", *policy
    )
    assert code == 0
    assert body["forecast"]["horizon"] == "2h"
    assert {e["node"] for e in body["evictions"]} == {coming}
    assert body["simulation"]["hotBefore"] == 1


def test_forecast_goes_with_cluster(capsys) -> None:
    assert cli.main(["simulate", "--forecast", "f.json"]) == 2
    assert "--forecast go with --cluster" in capsys.readouterr().err


def test_run_once_forecast_needs_prometheus(tmp_path, capsys) -> None:
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("metrics:\n  metricsServer: {}\n")
    code = cli.main(
        ["run", "--once", "--policy", str(policy_file), "--forecast-horizon", "1h", "--dry-run"]
    )
    assert code == 2
    assert "--forecast-horizon needs metrics.prometheus" in capsys.readouterr().err
