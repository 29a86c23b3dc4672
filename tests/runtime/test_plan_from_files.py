"""runtime.plan_from_files keeps the garbage collector paused from the first file
read to the plan made, and leaves it as it found it: on after a plan, after a
refused one and after a file it cannot read; off when it was off."""

from __future__ import annotations

import datetime
import gc
import json
import pathlib

import pytest

from loadaware import errors, plan, runtime
from loadaware.sim import builtin_scenario

NOW = datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)
REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def files(tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    scenario = builtin_scenario("small", now=NOW)
    cluster = tmp_path / "cluster.json"
    metrics = tmp_path / "metrics.json"
    cluster.write_text(json.dumps(scenario.cluster_document()))
    metrics.write_text(json.dumps(scenario.metrics))
    return cluster, metrics


def _plan(cluster: pathlib.Path, metrics: pathlib.Path, now: datetime.datetime) -> plan.Plan:
    return runtime.plan_from_files(
        cluster_file=cluster,
        metrics_file=metrics,
        policy_file=REPO / "policy/default.yaml",
        now=now,
    )


def test_the_collector_is_paused_while_planning_and_on_after(files, monkeypatch) -> None:
    seen: list[bool] = []
    build = plan.plan_with_basis

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return build(*args, **kwargs)

    monkeypatch.setattr(plan, "plan_with_basis", watched)
    assert gc.isenabled()
    assert _plan(*files, NOW).status == "planned"
    assert seen == [False]
    assert gc.isenabled()
    # Refused (every sample an hour old) and unreadable: on again all the same.
    assert _plan(*files, NOW + datetime.timedelta(hours=1)).status == "refused"
    assert gc.isenabled()
    with pytest.raises(errors.InputError, match="no-such"):
        _plan(files[0].with_name("no-such.json"), files[1], NOW)
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off(files) -> None:
    gc.disable()
    try:
        assert _plan(*files, NOW).status == "planned"
        assert not gc.isenabled()
    finally:
        gc.enable()
