"""The real kubectl against `loadaware sim serve` (the in-process server, a written kubeconfig).

Covered: get nodes,pods -A -o wide (server-side columns, NODE and IP), get pdb
-A, describe pod (with its events), get events -A, top nodes and top pods, a
server-side dry-run drain (cordon and evictions requested, nothing changed,
the PDB's 429 reported), a direct eviction POST (create --raw) and its 429 on
a PDB, label and taint edits, and the `loadaware sim serve` command itself.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
from collections.abc import Iterator

import pytest

from loadaware import sim
from tests.lib.sim import KUBECTL, call, kubectl, pods_of, sim_server

pytestmark = pytest.mark.skipif(not pathlib.Path(KUBECTL).exists(), reason="kubectl not installed")


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[sim.SimServer, pathlib.Path]]:
    with sim_server() as server:
        path = server.write_kubeconfig(tmp_path_factory.mktemp("kube") / "config")
        yield server, path


def test_get_nodes_and_pods_wide(served: tuple[sim.SimServer, pathlib.Path]) -> None:
    server, config = served
    out = kubectl(config, "get", "nodes,pods", "-A", "-o", "wide").stdout
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["NAME", "STATUS", "ROLES"]
    assert "node/default-a-001" in out
    assert "INTERNAL-IP" in lines[0]
    pod_header = next(line for line in lines if line.startswith("NAMESPACE"))
    assert pod_header.split()[:6] == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert "NODE" in pod_header
    pod_lines = [line for line in lines if line.split() and line.split()[1].startswith("pod/")]
    assert len(pod_lines) == len(server.sim.list("pods"))
    assert all("Running" in line for line in pod_lines)


def test_get_pdb(served: tuple[sim.SimServer, pathlib.Path]) -> None:
    _, config = served
    out = kubectl(config, "get", "pdb", "-A").stdout
    assert out.splitlines()[0].split() == [
        "NAMESPACE",
        "NAME",
        "MIN",
        "AVAILABLE",
        "MAX",
        "UNAVAILABLE",
        "ALLOWED",
        "DISRUPTIONS",
        "AGE",
    ]
    ledger = next(line for line in out.splitlines() if " ledger " in line)
    assert ledger.split()[2:5] == ["3", "N/A", "0"]


def test_get_json_round_trips(served: tuple[sim.SimServer, pathlib.Path]) -> None:
    _, config = served
    body = json.loads(
        kubectl(config, "get", "pdb", "-n", "payments", "ledger", "-o", "json").stdout
    )
    assert body["kind"] == "PodDisruptionBudget"
    assert body["status"]["disruptionsAllowed"] == 0


def test_describe_pod_and_events(served: tuple[sim.SimServer, pathlib.Path]) -> None:
    server, config = served
    pod = pods_of(server, "shop", "frontend")[0]
    name = pod["metadata"]["name"]
    code, _ = call(
        server,
        "POST",
        "/api/v1/namespaces/shop/events",
        {
            "kind": "Event",
            "metadata": {"name": f"{name}.checked"},
            "involvedObject": {
                "kind": "Pod",
                "namespace": "shop",
                "name": name,
                "uid": pod["metadata"]["uid"],
                "apiVersion": "v1",
            },
            "reason": "LoadawareChecked",
            "message": "looked at by a test",
            "type": "Normal",
            "source": {"component": "loadaware"},
            "firstTimestamp": "2026-11-29T07:59:00Z",
            "lastTimestamp": "2026-11-29T07:59:00Z",
            "count": 1,
        },
    )
    assert code == 201
    kubectl(config, "label", "pod", "-n", "shop", name, "checked=yes")
    out = kubectl(config, "describe", "pod", "-n", "shop", name).stdout
    assert f"Name:             {name}" in out
    assert "Controlled By:  ReplicaSet/" in out
    assert "checked=yes" in out
    assert "Node:             default-" in out
    assert "LoadawareChecked" in out
    assert "looked at by a test" in out
    events = kubectl(config, "get", "events", "-A").stdout.splitlines()
    assert events[0].split() == ["NAMESPACE", "LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert any(f"pod/{name}" in line and "LoadawareChecked" in line for line in events)


def test_top(served: tuple[sim.SimServer, pathlib.Path]) -> None:
    server, config = served
    nodes = kubectl(config, "top", "nodes").stdout.splitlines()
    assert nodes[0].split()[:2] == ["NAME", "CPU(cores)"]
    assert len(nodes) == 1 + len(server.sim.list("nodes"))
    pods = kubectl(config, "top", "pods", "-A").stdout.splitlines()
    assert pods[0].split() == ["NAMESPACE", "NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert len(pods) > 50


def test_taint_and_cordon(served: tuple[sim.SimServer, pathlib.Path]) -> None:
    server, config = served
    kubectl(config, "taint", "node", "default-c-001", "loadaware.io/hotspot=true:PreferNoSchedule")
    taints = server.sim.get("nodes", None, "default-c-001")["spec"]["taints"]
    assert {"key": "loadaware.io/hotspot", "value": "true", "effect": "PreferNoSchedule"} in taints
    kubectl(config, "taint", "node", "default-c-001", "loadaware.io/hotspot-")
    assert not server.sim.get("nodes", None, "default-c-001")["spec"].get("taints")


def test_drain_dry_run_server_changes_nothing(served: tuple[sim.SimServer, pathlib.Path]) -> None:
    server, config = served
    # A node without ledger pods: their PDB allows no disruption, and drain would retry the
    # 429 every 5 s (the direct eviction test covers that answer).
    ledger_nodes = {p["spec"]["nodeName"] for p in pods_of(server, "payments", "ledger")}
    node = next(
        n["metadata"]["name"]
        for n in server.sim.list("nodes")
        if n["metadata"]["name"] not in ledger_nodes
    )
    version = server.sim.store.resource_version
    result = kubectl(
        config,
        "drain",
        node,
        "--dry-run=server",
        "--ignore-daemonsets",
        "--delete-emptydir-data",
        "--timeout=20s",
    )
    text = result.stdout + result.stderr
    assert f"node/{node} cordoned (server dry run)" in text
    assert "evicting pod" in text
    assert f"node/{node} drained (server dry run)" in text
    assert not server.sim.get("nodes", None, node)["spec"].get("unschedulable")
    assert server.sim.store.resource_version == version


def test_direct_eviction_posts(
    served: tuple[sim.SimServer, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    server, config = served
    ledger = pods_of(server, "payments", "ledger")[0]["metadata"]["name"]
    body = tmp_path / "eviction.json"
    body.write_text(
        json.dumps(
            {
                "apiVersion": "policy/v1",
                "kind": "Eviction",
                "metadata": {"name": ledger, "namespace": "payments"},
            }
        )
    )
    result = kubectl(
        config,
        "create",
        "--raw",
        f"/api/v1/namespaces/payments/pods/{ledger}/eviction",
        "-f",
        str(body),
        check=False,
    )
    assert result.returncode != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget" in result.stderr
    geo = pods_of(server, "shop", "geo-renderer")[0]["metadata"]["name"]
    body.write_text(
        json.dumps({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": geo}})
    )
    result = kubectl(
        config, "create", "--raw", f"/api/v1/namespaces/shop/pods/{geo}/eviction", "-f", str(body)
    )
    assert json.loads(result.stdout)["status"] == "Success"
    assert server.sim.get("pods", "shop", geo)["metadata"]["deletionTimestamp"]


def test_sim_serve_command(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "kubeconfig"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "loadaware",
            "sim",
            "serve",
            "--scenario",
            "small",
            "--port",
            "0",
            "--kubeconfig-out",
            str(config),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("kubeconfig written to")
        assert "simulated Kubernetes API at http://127.0.0.1:" in process.stdout.readline()
        out = kubectl(config, "get", "nodes").stdout
        assert "default-a-001" in out
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def test_admin_faults_over_http(served: tuple[sim.SimServer, pathlib.Path]) -> None:
    server, config = served
    code, _ = call(
        server, "POST", "/_sim/faults", {"path": "/api/v1/nodes$", "status": 500, "times": 1}
    )
    assert code == 201
    result = kubectl(config, "get", "nodes", check=False)
    assert result.returncode != 0
    assert "injected fault" in result.stderr
    assert kubectl(config, "get", "nodes").returncode == 0
    assert call(server, "DELETE", "/_sim/faults")[0] == 200
