"""`loadaware scheduler check` end to end, as a subprocess against `sim serve`.

Covers: on the default profile the model agrees with at least 99% of 200
bindings (exit 0, the JSON document and the text); against a packing
(MostAllocated) simulated scheduler with the policy on the default profile the
agreement drops, the disagreements are named and the exit is 1 with the stable
reason on stderr; a cluster that does not answer is exit 3; bad flags are exit 2.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import threading

import pytest

from loadaware import cli, scheduling
from tests.fidelity.test_observer_live import MOST_ALLOCATED
from tests.lib.bindings import scale_up
from tests.lib.sim import sim_server
from tests.lib.wait import poll

POLICY = """\
metrics:
  metricsServer: {}
"""
LOADAWARE = str(pathlib.Path(sys.executable).with_name("loadaware"))


def _check(
    tmp_path: pathlib.Path, profiles: scheduling.SchedulerProfiles, bindings: int, *flags: str
) -> tuple[int, str, str]:
    """Run the check as a subprocess, and once it watches, have `bindings` pods bound."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    with sim_server("peak-hour", scheduler_profiles=profiles) as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        process = subprocess.Popen(
            [
                LOADAWARE,
                "--log-level",
                "INFO",
                "scheduler",
                "check",
                "--policy",
                str(policy),
                "--kubeconfig",
                str(kubeconfig),
                "--bindings",
                str(bindings),
                "--duration",
                "2m",
                *flags,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        said: list[str] = []
        reader = threading.Thread(target=lambda: said.extend(process.stderr or ()), daemon=True)
        reader.start()
        try:
            poll(lambda: any("watching the cluster's bindings" in s for s in said), "the watch", 60)
            scale_up(server, bindings)
            # Not communicate(): it would read stderr too, beside the reader.
            out = process.stdout.read() if process.stdout else ""
            process.wait(timeout=120)
        finally:
            process.kill()
        reader.join(10)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
    return process.returncode, out, "".join(said)


@pytest.mark.slow
def test_the_default_profile_agrees(tmp_path: pathlib.Path) -> None:
    code, out, err = _check(tmp_path, scheduling.DEFAULT_PROFILES, 200, "-o", "json")
    assert code == 0, err
    found = json.loads(out)
    assert found["observed"] == 200
    assert found["ratio"] >= 0.99
    assert found["passed"] is True
    assert found["minAgreement"] == 0.95
    assert found["profiles"]["default-scheduler"]["observed"] == 200


@pytest.mark.slow
def test_a_packing_scheduler_disagrees_and_names_examples(tmp_path: pathlib.Path) -> None:
    code, out, err = _check(tmp_path, MOST_ALLOCATED, 60)
    assert code == 1, err
    assert out.startswith("scheduler model agreement: ")
    assert ": FAIL" in out.splitlines()[0]
    assert "disagreements, latest first:" in out
    assert "outscored: " in out
    assert "predicted: " in out
    assert "scheduler-model-disagrees: the model agrees with" in err


def test_an_unreachable_cluster_is_refused(tmp_path: pathlib.Path, capsys) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:9'}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\n"
        "users: [{name: u, user: {}}]\n"
    )
    args = ["scheduler", "check", "--policy", str(policy), "--kubeconfig", str(kubeconfig)]
    assert cli.main(args) == 3
    assert "refused: cluster-unreachable" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--bindings", "0", "--bindings must be 1 or more"),
        ("--min-agreement", "1.5", "--min-agreement must be a share from 0 to 1"),
        ("--duration", "0s", "--duration must be longer than 0s"),
    ],
)
def test_bad_flags_are_bad_input(
    tmp_path: pathlib.Path, capsys, flag: str, value: str, said: str
) -> None:
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    assert cli.main(["scheduler", "check", "--policy", str(policy), flag, value]) == 2
    assert said in capsys.readouterr().err
