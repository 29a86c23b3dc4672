"""A live round on a cluster whose scheduler scores MostAllocated.

The simulated scheduler runs a KubeSchedulerConfiguration's profile (as `sim
serve --scheduler-config` does) and loadaware is given the same file as
steering.schedulerConfig. Covers: on a generated 150-node cluster, with the
scheduler's default node sampling, every planned eviction is carried out (or
skipped because its source was relieved already), every replacement lands in
its predicted set or on another good node, none badly, nothing Pending, the
breaker closed; with percentageOfNodesToScore 100 on both sides each lands on
its expected node. `loadaware run --once` against `loadaware sim serve
--scheduler-config` (processes as a user runs them) with the same file lands
each replacement in its set; and `sim serve` refuses a configuration it cannot
run.
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import subprocess
import sys
from collections.abc import Iterator

import pytest
import yaml

from loadaware import cli, policy, report, scheduling, sim
from loadaware import round as rounds
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import NOW, sim_server

MOST_ALLOCATED = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {"scoringStrategy": {"type": "MostAllocated"}},
                }
            ],
        }
    ],
}


def _config_file(tmp_path: pathlib.Path) -> pathlib.Path:
    file = tmp_path / "scheduler-config.yaml"
    file.write_text(yaml.safe_dump(MOST_ALLOCATED))
    return file


def _server(
    config: pathlib.Path, percentage: int
) -> contextlib.AbstractContextManager[sim.SimServer]:
    generated = sim.generate_cluster(
        nodes=150, family="usage-independent", seed=3, hot_fraction=0.1, now=NOW
    )
    return sim_server(
        None,
        objects=generated.objects,
        metrics=generated.metrics,
        ready_delay=5.0,
        percentage_of_nodes_to_score=percentage,
        scheduler_profiles=scheduling.profiles_from_config(policy.load_scheduler_config(config)),
    )


def _round(server: sim.SimServer, tmp_path: pathlib.Path, **steering: object) -> dict:
    loaded = metrics_server_policy(
        metrics={"metricsServer": {}, "onStaleNode": "Exclude"}, steering=steering
    )
    record = rounds.run_round(loaded, live_context(server, tmp_path, loaded)).record
    return report.round_to_json(record)


@pytest.mark.slow
def test_most_allocated_cluster_lands_replacements_in_their_sets(tmp_path) -> None:
    config = _config_file(tmp_path)
    with _server(config, 0) as server:
        audit = _round(server, tmp_path, schedulerConfig=str(config))
    assert audit["exitCode"] == 0, audit["reason"]
    planned = audit["plan"]["evictions"]
    assert len(planned) >= 5
    evicted = [e for e in audit["evictions"] if e["result"] == "evicted"]
    skipped = [e for e in audit["evictions"] if e["result"] != "evicted"]
    assert all(e["reason"] == "source-no-longer-hot" for e in skipped), skipped
    assert len(evicted) >= 0.95 * len(planned)
    verification = audit["verification"]
    assert verification["landings"]["bad"] == 0
    assert verification["landings"]["pending"] == 0
    assert verification["breaker"] is None
    sets = {e["pod"]: set(e["landingSet"]) for e in evicted}
    in_set = [r for r in verification["replacements"] if r["node"] in sets[r["pod"]]]
    assert len(in_set) + verification["landings"]["off-set"] == len(evicted)
    assert len(in_set) >= 0.9 * len(evicted)


@pytest.mark.slow
def test_most_allocated_scoring_every_node_lands_on_the_expected_node(tmp_path) -> None:
    config = _config_file(tmp_path)
    with _server(config, 100) as server:
        audit = _round(server, tmp_path, schedulerConfig=str(config), percentageOfNodesToScore=100)
    assert audit["exitCode"] == 0, audit["reason"]
    evicted = [e for e in audit["evictions"] if e["result"] == "evicted"]
    assert evicted
    assert all(e["landingSet"] == [e["expectedNode"]] for e in evicted)
    landings = {r["pod"]: r["node"] for r in audit["verification"]["replacements"]}
    assert all(landings[e["pod"]] == e["expectedNode"] for e in evicted)
    assert audit["verification"]["breaker"] is None


def test_sim_serve_refuses_a_configuration_it_cannot_run(tmp_path, capsys) -> None:
    file = tmp_path / "scheduler-config.yaml"
    file.write_text(
        yaml.safe_dump(
            {"profiles": [{"plugins": {"score": {"enabled": [{"name": "Foo", "weight": 2}]}}}]}
        )
    )
    code = cli.main(
        ["sim", "serve", "--scenario", "small", "--port", "0", "--scheduler-config", str(file)]
    )
    assert code == 2
    assert "score plugin Foo (weight 2)" in capsys.readouterr().err


@contextlib.contextmanager
def _sim_serve_process(tmp_path: pathlib.Path, config: pathlib.Path) -> Iterator[pathlib.Path]:
    """`loadaware sim serve --scheduler-config` as a user runs it; yields its kubeconfig."""
    kubeconfig = tmp_path / "kubeconfig"
    command = [sys.executable, "-m", "loadaware", "sim", "serve", "--scenario", "peak-hour"]
    command += ["--port", "0", "--kubeconfig-out", str(kubeconfig), "--ready-delay", "0.5"]
    command += ["--scheduler-config", str(config)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("kubeconfig written to")
        yield kubeconfig
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


POLICY = """\
metrics:
  metricsServer: {}
limits:
  maxNoOfPodsToEvictTotal: 4
verify:
  timeout: 30s
state:
  namespace: default
"""


@pytest.mark.slow
def test_run_once_against_sim_serve_with_the_same_configuration(tmp_path) -> None:
    config = _config_file(tmp_path)
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(POLICY + f"steering:\n  schedulerConfig: {config}\n")
    audit = tmp_path / "audit.json"
    with _sim_serve_process(tmp_path, config) as kubeconfig:
        code = cli.main(
            [
                "run", "--once", "--policy", str(policy_file),
                "--kubeconfig", str(kubeconfig), "--audit-file", str(audit),
            ]
        )  # fmt: skip
    record = json.loads(audit.read_text())
    assert code == 0, record["reason"]
    evicted = {e["pod"]: e for e in record["evictions"] if e["result"] == "evicted"}
    assert evicted
    verification = record["verification"]
    assert verification["landings"]["bad"] == 0
    assert verification["breaker"] is None
    assert {r["pod"] for r in verification["replacements"]} == set(evicted)
    for replacement in verification["replacements"]:
        assert replacement["node"] in evicted[replacement["pod"]]["landingSet"]
