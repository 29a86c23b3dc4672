"""The alert rules, their PrometheusRule wrapper and the Alertmanager example.

Covered: `promtool check rules` and `promtool test rules` pass; every alert has a
unit test where it fires and one where it does not; the hotspot alert waits
longer than its rate window and carries `node` and the opt-in label; the
PrometheusRule is what alerts/generate.py makes now and its groups pass promtool
too; `amtool check-config` accepts alertmanager.yml and `amtool config routes
test` sends the hotspot alert to loadaware's webhook (and only it), with a
bearer token from a file over TLS.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re
import shutil
import subprocess
from types import ModuleType
from typing import Any

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
ALERTS = ROOT / "alerts"
RULES = ALERTS / "loadaware.rules.yml"
RULE_TESTS = ALERTS / "loadaware.rules.test.yml"
ALERTMANAGER = ALERTS / "alertmanager.yml"

# What the issue asks loadaware to alert on, by alert name.
SELF_ALERTS = {
    "LoadawareNoSuccessfulRound",
    "LoadawareRefusingStaleMetrics",
    "LoadawareEvictionsFailing",
    "LoadawareBreakerOpen",
    "LoadawareBudgetExhausted",
    "LoadawareLeaderMissing",
    "LoadawareLandingsOffPlan",
    "LoadawareForecastPersistentlyWrong",
    "LoadawareSchedulerModelDisagrees",
}
HOTSPOT_ALERT = "LoadawareNodeHot"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is needed: run `make system-deps`")
    return path


def _run(*args: str, cwd: pathlib.Path = ALERTS) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=60, check=False)


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("alerts_generate", ALERTS / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rules() -> list[dict[str, Any]]:
    groups = yaml.safe_load(RULES.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def _seconds(duration: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    total = 0
    for amount, unit in re.findall(r"(\d+)([smhd])", duration):
        total += int(amount) * units[unit]
    return total


def test_promtool_check_rules_accepts_the_rule_file() -> None:
    result = _run(_tool("promtool"), "check", "rules", str(RULES))
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_unit_tests_pass() -> None:
    result = _run(_tool("promtool"), "test", "rules", str(RULE_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_loadaware_alerts_on_everything_the_issue_lists() -> None:
    names = {rule["alert"] for rule in _rules() if "alert" in rule}
    assert names >= SELF_ALERTS | {HOTSPOT_ALERT}


def test_every_alert_has_a_firing_and_a_silent_unit_test() -> None:
    fired: set[str] = set()
    silent: set[str] = set()
    for case in yaml.safe_load(RULE_TESTS.read_text())["tests"]:
        for check in case.get("alert_rule_test", []):
            (fired if check.get("exp_alerts") else silent).add(check["alertname"])
    names = {rule["alert"] for rule in _rules() if "alert" in rule}
    assert names - fired == set(), "alerts never seen firing in a unit test"
    assert names - silent == set(), "alerts never seen staying silent in a unit test"


def test_hotspot_alert_waits_longer_than_its_rate_window_and_names_the_node() -> None:
    hotspot = [rule for rule in _rules() if rule.get("alert") == HOTSPOT_ALERT]
    assert hotspot
    for rule in hotspot:
        assert rule["labels"]["loadaware_action"] == "rebalance"
        assert '"node"' in rule["expr"], "the webhook scopes the round by the node label"
        windows = [_seconds(w) for w in re.findall(r"\[(\w+)\]", rule["expr"])]
        assert _seconds(rule["for"]) > max(windows, default=0)


def test_prometheusrule_is_current() -> None:
    generator = _load_generator()
    assert generator.OUTPUT.read_text() == generator.render(), "run `make alerts`"


def test_prometheusrule_groups_pass_promtool(tmp_path: pathlib.Path) -> None:
    generator = _load_generator()
    wrapped = yaml.safe_load(generator.OUTPUT.read_text())
    assert wrapped["kind"] == "PrometheusRule"
    assert wrapped["apiVersion"] == "monitoring.coreos.com/v1"
    unwrapped = tmp_path / "rules.yml"
    unwrapped.write_text(yaml.safe_dump({"groups": wrapped["spec"]["groups"]}))
    result = _run(_tool("promtool"), "check", "rules", str(unwrapped))
    assert result.returncode == 0, result.stdout + result.stderr
    assert wrapped["spec"]["groups"] == yaml.safe_load(RULES.read_text())["groups"]


def test_amtool_accepts_the_alertmanager_example() -> None:
    result = _run(_tool("amtool"), "check-config", str(ALERTMANAGER))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


@pytest.mark.parametrize(
    ("labels", "receivers"),
    [
        pytest.param(
            ["alertname=LoadawareNodeHot", "loadaware_action=rebalance", "node=node-a"],
            "loadaware,platform",
            id="the hotspot alert reaches the webhook and the platform team",
        ),
        pytest.param(
            ["alertname=LoadawareBreakerOpen", "job=loadaware"],
            "platform",
            id="alerts about loadaware itself reach people, not the webhook",
        ),
        pytest.param(
            ["alertname=KubeNodeNotReady", "node=node-a"],
            "platform",
            id="an alert without the opt-in label never triggers a round",
        ),
    ],
)
def test_amtool_routes(labels: list[str], receivers: str) -> None:
    result = _run(
        _tool("amtool"),
        "config",
        "routes",
        "test",
        f"--config.file={ALERTMANAGER}",
        f"--verify.receivers={receivers}",
        *labels,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == receivers


def test_webhook_receiver_sends_a_bearer_token_from_a_file_over_tls() -> None:
    config = yaml.safe_load(ALERTMANAGER.read_text())
    (receiver,) = [r for r in config["receivers"] if r["name"] == "loadaware"]
    (webhook,) = receiver["webhook_configs"]
    assert webhook["url"].startswith("https://")
    assert webhook["url"].endswith("/alertmanager")
    http = webhook["http_config"]
    assert http["authorization"]["credentials_file"]
    assert "credentials" not in http["authorization"], "no token inline in the config"
    assert http["tls_config"]["ca_file"]
    assert not http["tls_config"].get("insecure_skip_verify", False)
