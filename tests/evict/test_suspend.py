"""The suspend switch on the simulated Kubernetes API, through the official client.

Covers: suspended before a round, nothing is evicted and the round is refused
(exit 3, reason `suspended:`); suspended between two evictions, the second is
skipped as "suspended" and the round stops (the first replacement is still
verified); resumed, evictions go on; a dry run still runs while suspended; the
annotation set by hand (`kubectl annotate`) counts, and any value but "false"
suspends; `loadaware suspend` / `resume` create the ConfigMap if missing,
record who, when and why, and keep the eviction history; /status and the
`loadaware_suspended` gauge show the switch.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import kubernetes.client
import pytest

from loadaware import cli, cluster, evict, report, runtime
from loadaware import round as rounds
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import call, sim_server


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name == "KUBECONFIG" or name.startswith("LOADAWARE_"):
            monkeypatch.delenv(name)


@pytest.fixture
def server():
    with sim_server("small", ready_delay=5.0) as running:
        yield running


def _uids(server) -> dict[str, str]:
    return {
        f"{p['metadata']['namespace']}/{p['metadata']['name']}": p["metadata"]["uid"]
        for p in server.list("pods")
    }


def _store(context: rounds.RoundContext, settings) -> evict.StateStore:
    return evict.StateStore(context.kube, settings, context.clock)


def _state_config_map(server) -> dict[str, Any]:
    status, body = call(server, "GET", "/api/v1/namespaces/loadaware/configmaps/loadaware-state")
    assert status == 200, body
    return body


def test_suspended_before_a_round_evicts_nothing_and_refuses(server, tmp_path) -> None:
    settings = metrics_server_policy()
    context = live_context(server, tmp_path, settings)
    _store(context, settings).set_suspended(True, by="oncall@example", reason="incident 42")
    before = _uids(server)
    record = rounds.run_round(settings, context).record
    audit = report.round_to_json(record)
    assert record.exit_code == 3
    assert audit["status"] == "refused"
    assert audit["reason"].startswith("suspended: ")
    assert "oncall@example" in audit["reason"]
    assert "incident 42" in audit["reason"]
    assert not audit["evictions"]
    assert _uids(server) == before


def test_suspended_between_two_evictions_stops_the_second(server, tmp_path) -> None:
    settings = metrics_server_policy()
    context = live_context(server, tmp_path, settings)
    reads = {"count": 0}
    read_usage = context.read_usage

    def suspending_after_first_eviction(state: cluster.ClusterState):
        reads["count"] += 1
        if reads["count"] == 3:  # plan, re-check before the 1st eviction, then before the 2nd
            _store(context, settings).set_suspended(True, by="oncall", reason="stop now")
        return read_usage(state)

    before = _uids(server)
    record = rounds.run_round(
        settings,
        rounds.RoundContext(**{**context.__dict__, "read_usage": suspending_after_first_eviction}),
    ).record
    audit = report.round_to_json(record)
    results = [(e["result"], e["reason"]) for e in audit["evictions"]]
    assert len(results) >= 2, "the small scenario plans at least two evictions"
    assert results[0][0] == "evicted"
    assert results[1] == ("skipped", "suspended")
    assert all(result == "skipped" for result, _ in results[2:])
    assert audit["verification"]["stopped"].startswith("suspended: ")
    assert record.exit_code == 3
    after = _uids(server)
    second = audit["evictions"][1]["pod"]
    assert after[second] == before[second]
    # The one evicted before the switch is still seen through.
    replacements = audit["verification"]["replacements"]
    assert [r["pod"] for r in replacements] == [audit["evictions"][0]["pod"]]
    assert replacements[0]["ready"] is True
    # Nothing was reserved for the suspended eviction.
    pods = {r.pod for r in _store(context, settings).records()}
    assert second not in pods


def test_resume_lets_evictions_go_on(server, tmp_path) -> None:
    settings = metrics_server_policy()
    context = live_context(server, tmp_path, settings)
    store = _store(context, settings)
    store.set_suspended(True, by="oncall", reason="incident")
    assert rounds.run_round(settings, context).record.exit_code == 3
    resumed = store.set_suspended(False, by="oncall", reason="resolved")
    assert resumed.suspended is False
    record = rounds.run_round(settings, context).record
    audit = report.round_to_json(record)
    assert record.exit_code == 0, audit["reason"]
    assert any(e["result"] == "evicted" for e in audit["evictions"])


def test_a_dry_run_still_runs_while_suspended(server, tmp_path) -> None:
    settings = metrics_server_policy()
    context = live_context(server, tmp_path, settings)
    _store(context, settings).set_suspended(True, by="oncall", reason="")
    before = _uids(server)
    audit = report.round_to_json(
        rounds.run_round(settings, context, rounds.RoundOptions(dry_run=True)).record
    )
    assert audit["evictions"]
    assert {e["result"] for e in audit["evictions"]} == {"dry-run"}
    assert _uids(server) == before


@pytest.mark.parametrize(
    ("value", "suspended"),
    [("true", True), ("True", True), ("yes", True), ("1", True), ("false", False), ("", False)],
)
def test_the_annotation_set_by_hand_counts(server, tmp_path, value: str, suspended: bool) -> None:
    settings = metrics_server_policy()
    context = live_context(server, tmp_path, settings)
    core = kubernetes.client.CoreV1Api(context.kube._core.api_client)
    core.create_namespaced_config_map(
        "loadaware",
        {
            "metadata": {
                "name": "loadaware-state",
                "annotations": {"loadaware.io/suspend": value},
            }
        },
    )
    assert _store(context, settings).suspension().suspended is suspended
    record = rounds.run_round(settings, context).record
    assert (record.status == "refused") is suspended


def test_suspend_and_resume_commands(
    server, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = metrics_server_policy()
    context = live_context(server, tmp_path, settings)  # creates the loadaware namespace
    kubeconfig = tmp_path / "kubeconfig"
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("metrics:\n  metricsServer: {}\n")
    base = ["--policy", str(policy_file), "--kubeconfig", str(kubeconfig)]

    # No round has written the ConfigMap yet: suspend creates it.
    assert server.list("configmaps", "loadaware") == []
    code = cli.main(["suspend", *base, "--reason", "incident 42", "--by", "alice"])
    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    assert printed["suspended"] is True
    assert printed["configMap"] == "loadaware/loadaware-state"
    assert printed["changedBy"] == "alice"
    assert printed["reason"] == "incident 42"
    annotations = _state_config_map(server)["metadata"]["annotations"]
    assert annotations["loadaware.io/suspend"] == "true"
    assert annotations["loadaware.io/suspend-changed-by"] == "alice"
    assert annotations["loadaware.io/suspend-reason"] == "incident 42"
    assert annotations["loadaware.io/suspend-changed-at"].endswith("Z")
    assert rounds.run_round(settings, context).record.status == "refused"

    # `run --once` refuses too; its check comes before the metrics are read.
    code = cli.main(["run", "--once", *base])
    assert code == 3
    assert "refused: suspended: " in capsys.readouterr().err

    code = cli.main(["resume", *base, "--reason", "resolved"])
    printed = json.loads(capsys.readouterr().out)
    assert code == 0
    assert printed["suspended"] is False
    assert printed["changedBy"]  # user@host by default
    record = rounds.run_round(settings, context).record
    assert record.exit_code == 0
    evicted = [o for o in record.execution.outcomes if o.result == "evicted"]  # type: ignore[union-attr]
    assert evicted

    # Flipping the switch keeps the eviction history the budgets rely on.
    history = _store(context, settings).records()
    cli.main(["suspend", *base])
    capsys.readouterr()
    assert _store(context, settings).records() == history
    assert _store(context, settings).suspension().suspended is True


def test_bad_policy_file_is_exit_2(tmp_path: pathlib.Path) -> None:
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("limits: {maxNoOfPodsToEvictTotal: -1}\n")
    assert cli.main(["suspend", "--policy", str(policy_file)]) == 2


def test_status_and_gauge_show_the_switch(server, tmp_path) -> None:
    settings = metrics_server_policy()
    context = live_context(server, tmp_path, settings)
    service = runtime.Service(settings, context, clock=context.clock)
    assert service.status()["suspend"]["suspended"] is False
    assert "loadaware_suspended 0.0" in service.metrics_page()[0].decode()
    _store(context, settings).set_suspended(True, by="bob", reason="deploy freeze")
    status = service.status()["suspend"]
    assert status == {
        "suspended": True,
        "value": "true",
        "changedBy": "bob",
        "changedAt": evict.rfc3339(context.clock()),
        "reason": "deploy freeze",
    }
    assert "loadaware_suspended 1.0" in service.metrics_page()[0].decode()
    _store(context, settings).set_suspended(False, by="bob", reason="")
    assert "loadaware_suspended 0.0" in service.metrics_page()[0].decode()
