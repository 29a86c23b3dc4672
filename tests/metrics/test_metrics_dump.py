"""`loadaware metrics dump` against a real Prometheus, as a user runs it.

Covers: the written file holds the true values for the cluster file's nodes and
pods (and only those) with sample times; -o FILE and standard output; exit 3
with the stable code and a reason naming the node and its age when a node's
samples are stale although an instant query still returns them (the lookback
trap) or are gone; exit 2 without --cluster or without a metrics source; the
console script; the live cluster and metrics-server, of the kubeconfig context
--context names.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
from typing import Any

import pytest

from bench.prometheus import GiB
from loadaware import cli
from loadaware.errors import InputError
from loadaware.runtime import dump_metrics
from tests.lib.objects import raw_pod
from tests.lib.sim import sim_server
from tests.metrics.conftest import PrometheusWithHistory


def node_object(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "labels": {}},
        "status": {
            "allocatable": {"cpu": "8", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def pod_object(key: str, node: str) -> dict[str, Any]:
    namespace, name = key.split("/")
    return raw_pod(
        name, namespace=namespace, uid=f"uid-{name}", node=node, cpu="100m", phase="Running"
    )


def write_inputs(
    directory: pathlib.Path, url: str, nodes: list[str], pods: dict[str, str]
) -> tuple[pathlib.Path, pathlib.Path]:
    items = [node_object(n) for n in nodes] + [pod_object(k, n) for k, n in pods.items()]
    cluster_file = directory / "cluster.json"
    cluster_file.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    policy_file = directory / "policy.yaml"
    policy_file.write_text(f"metrics:\n  maxSampleAge: 2m\n  prometheus:\n    url: {url}\n")
    return cluster_file, policy_file


def run(*args: str) -> int:
    return cli.main(["metrics", "dump", *args])


def test_dump_writes_the_true_values(
    prometheus: PrometheusWithHistory, tmp_path: pathlib.Path
) -> None:
    cluster_file, policy_file = write_inputs(
        tmp_path,
        prometheus.url,
        ["node-a", "node-b"],
        {"shop/web-1": "node-a", "batch/job-1": "node-b"},
    )
    out = tmp_path / "metrics.json"
    code = run("--policy", str(policy_file), "--cluster", str(cluster_file), "-o", str(out))
    assert code == 0
    written = json.loads(out.read_text())
    assert set(written["nodes"]) == {"node-a", "node-b"}
    assert written["nodes"]["node-a"]["cpu"] == pytest.approx(1.5, rel=0.01)
    assert written["nodes"]["node-b"]["memory"] == 9 * GiB
    assert set(written["pods"]) == {"shop/web-1", "batch/job-1"}
    assert written["pods"]["shop/web-1"]["cpu"] == pytest.approx(0.45, rel=0.01)
    assert written["pods"]["batch/job-1"]["memory"] == 2 * GiB
    assert written["nodes"]["node-a"]["timestamp"].endswith("Z")


def test_dump_to_standard_output(
    prometheus: PrometheusWithHistory, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster_file, policy_file = write_inputs(tmp_path, prometheus.url, ["node-c"], {})
    assert run("--policy", str(policy_file), "--cluster", str(cluster_file)) == 0
    written = json.loads(capsys.readouterr().out)
    assert written["nodes"]["node-c"]["cpu"] == pytest.approx(0.8, rel=0.01)


@pytest.mark.parametrize(
    ("node", "reason"),
    [
        ("node-lookback", "node node-lookback sample is 2"),  # 240s and a few seconds
        ("node-stale", "node node-stale sample is 6"),
        ("node-ghost", "node node-ghost no sample"),
    ],
)
def test_dump_refuses_stale_nodes(
    prometheus: PrometheusWithHistory,
    tmp_path: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
    node: str,
    reason: str,
) -> None:
    cluster_file, policy_file = write_inputs(tmp_path, prometheus.url, ["node-a", node], {})
    out = tmp_path / "metrics.json"
    code = run("--policy", str(policy_file), "--cluster", str(cluster_file), "-o", str(out))
    err = capsys.readouterr().err
    assert code == 3
    assert err.startswith("refused: stale-metrics: ")
    assert reason in err
    assert len(err.splitlines()) == 1, "the refusal is said once"
    assert not out.exists()


def test_dump_needs_a_cluster_and_a_source(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("metrics: {prometheus: {url: 'http://127.0.0.1:9'}}\n")
    # No cluster file and no API to read one from.
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(InputError, match="Kubernetes configuration"):
        dump_metrics(policy_file=policy_file)
    cluster_file, _ = write_inputs(tmp_path, "http://127.0.0.1:9", ["node-a"], {})
    policy_file.write_text("metrics: {}\n")
    assert run("--policy", str(policy_file), "--cluster", str(cluster_file)) == 2


def test_dump_console_script(prometheus: PrometheusWithHistory, tmp_path: pathlib.Path) -> None:
    cluster_file, policy_file = write_inputs(tmp_path, prometheus.url, ["node-d"], {})
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "loadaware",
            "metrics",
            "dump",
            "--policy",
            str(policy_file),
            "--cluster",
            str(cluster_file),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["nodes"]["node-d"]["memory"] == 12 * GiB


def test_dump_reads_the_live_cluster_and_metrics_server(tmp_path: pathlib.Path) -> None:
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("metrics: {metricsServer: {}}\n")
    out = tmp_path / "metrics.json"
    # The simulator's clock runs from the real time: samples are judged against now.
    with sim_server("small", wall_clock=True, ready_delay=2.0) as server:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
        code = run("--policy", str(policy_file), "--kubeconfig", str(kubeconfig), "-o", str(out))
        nodes = {n["metadata"]["name"] for n in server.list("nodes")}
    assert code == 0
    written = json.loads(out.read_text())
    assert set(written["nodes"]) == nodes
    assert written["pods"]


def test_dump_reads_the_cluster_of_the_context_it_is_given(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A kubeconfig whose current context names no cluster: without --context the
    dump stops on it (exit 2), with --context it reads the simulated cluster."""

    import yaml

    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text("metrics: {metricsServer: {}}\n")
    out = tmp_path / "metrics.json"
    with sim_server("small", wall_clock=True, ready_delay=2.0) as server:
        config = server.kubeconfig(name="simulated")
        config["contexts"].append({"name": "elsewhere", "context": {"cluster": "absent"}})
        config["current-context"] = "elsewhere"
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(yaml.safe_dump(config))
        current = run("--policy", str(policy_file), "--kubeconfig", str(kubeconfig))
        assert current == 2, capsys.readouterr().err
        code = run(
            "--policy",
            str(policy_file),
            "--kubeconfig",
            str(kubeconfig),
            "--context",
            "simulated",
            "-o",
            str(out),
        )
        nodes = {n["metadata"]["name"] for n in server.list("nodes")}
    assert code == 0, capsys.readouterr().err
    assert set(json.loads(out.read_text())["nodes"]) == nodes
