"""`loadaware simulate --api` end to end, the simulator's public names, and the pieces
the HTTP tests reach only partly (strategic merge lists, label selector syntax).

Covered: simulate --api on the small scenario relieves the hot nodes with every
replacement placed off the hot nodes, JSON output, files given with --cluster/--metrics; the
exported names of loadaware.sim; strategic merge of containers by name and
$patch: delete; label selector set-based syntax and its 400.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from loadaware import cli
from loadaware.sim import _patch, _selectors, _status, scenarios
from tests.lib.sim import NOW


def test_simulate_through_the_api(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        ["simulate", "--scenario", "small", "--api", "--now", "2026-11-29T08:00:00Z", "-o", "json"]
    )
    body = json.loads(capsys.readouterr().out)
    assert code == 0
    assert body["status"] == "planned"
    simulation = body["simulation"]
    assert simulation["hotBefore"] > simulation["hotAfter"]
    # expectedNode is a prediction: StatefulSet replacements come back only once the
    # old pod is gone, after others of the round were placed, so two predictions
    # can swap. What must hold: every replacement placed, none on a hot node or
    # back on its source.
    hot = {n["name"] for n in body["nodes"] if n["class"] == "hot"}
    assert set(simulation["landed"]) == {e["pod"] for e in body["evictions"]}
    for eviction in body["evictions"]:
        landed = simulation["landed"][eviction["pod"]]
        assert landed is not None
        assert landed not in hot
        assert landed != eviction["node"]


def test_simulate_api_on_files(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = scenarios.builtin_scenario("small", now=NOW)
    cluster_file = tmp_path / "cluster.json"
    metrics_file = tmp_path / "metrics.json"
    cluster_file.write_text(json.dumps(scenario.cluster_document()))
    metrics_file.write_text(json.dumps(scenario.metrics))
    code = cli.main(
        ["simulate", "--api", "--cluster", str(cluster_file), "--metrics", str(metrics_file)]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "(through the simulated Kubernetes API)" in out
    assert "verdict: hot nodes 2 → 0" in out


def test_strategic_merge_lists() -> None:
    pod = {
        "spec": {
            "containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}],
            "tolerations": [{"key": "k", "operator": "Exists"}],
        },
        "metadata": {"finalizers": ["one"]},
    }
    patched = _patch.strategic_merge_patch(
        pod,
        {
            "spec": {
                "containers": [{"name": "b", "image": "y:2"}, {"name": "a", "$patch": "delete"}],
                "tolerations": [{"key": "z", "operator": "Exists"}],
            },
            "metadata": {"finalizers": ["two"]},
        },
    )
    assert patched["spec"]["containers"] == [{"name": "b", "image": "y:2"}]
    assert patched["spec"]["tolerations"] == [{"key": "z", "operator": "Exists"}]
    assert patched["metadata"]["finalizers"] == ["one", "two"]
    assert pod["spec"]["containers"][1]["image"] == "y:1"  # the input is left alone


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        ("app=web", {"app": "web"}, True),
        ("app==web,tier!=db", {"app": "web", "tier": "db"}, False),
        ("env in (prod, stage)", {"env": "stage"}, True),
        ("env notin (prod)", {}, True),
        ("gpu", {"gpu": ""}, True),
        ("!gpu", {"gpu": ""}, False),
    ],
)
def test_label_selector_syntax(selector: str, labels: dict[str, str], matches: bool) -> None:
    assert _selectors.parse_label_selector(selector)(labels) is matches


def test_bad_label_selector_is_a_400() -> None:
    with pytest.raises(_status.ApiError) as caught:
        _selectors.parse_label_selector("app in prod")
    assert caught.value.code == 400
