"""The live cluster reader (cluster.read_cluster) through the official client, against
the simulated API.

Covered: the same ClusterState as the loader gives for the served objects
(nodes, pods with requests, owners and workloads, PDBs, workloads, priority
classes, namespace labels); pagination with small pages; a kubeconfig context
chosen by name; retries of 500, 429 and dropped connections, and a
ClusterError when they persist; 401 as UnauthorizedError `cluster-unauthorized`; a bearer
token from the kubeconfig; a missing kubeconfig as InputError; and the
acceptance check: `loadaware plan` on a `kubectl get -o json` dump of the
simulated API gives the same plan as on the scenario's own file.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Iterator

import pytest
import yaml

from loadaware import cli, cluster, errors, kube, sim
from loadaware.sim import scenarios
from tests.lib.sim import KUBECTL, NOW, kubectl, sim_server

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[sim.SimServer, pathlib.Path]]:
    with sim_server() as server:
        yield server, server.write_kubeconfig(tmp_path_factory.mktemp("kube") / "config")


@pytest.fixture
def fresh(tmp_path: pathlib.Path) -> Iterator[tuple[sim.SimServer, pathlib.Path]]:
    with sim_server() as server:
        yield server, server.write_kubeconfig(tmp_path / "config")


def _settings(config: pathlib.Path, **kw: object) -> kube.ClientSettings:
    return kube.ClientSettings(kubeconfig=str(config), **kw)  # type: ignore[arg-type]


def test_reads_the_same_state_as_the_loader(served: tuple[sim.SimServer, pathlib.Path]) -> None:
    server, config = served
    live = cluster.read_cluster(_settings(config, page_size=7))
    objects = [
        o
        for plural, group in (
            ("namespaces", ""),
            ("priorityclasses", "scheduling.k8s.io"),
            ("nodes", ""),
            ("pods", ""),
            ("poddisruptionbudgets", "policy"),
            ("replicasets", "apps"),
            ("deployments", "apps"),
            ("statefulsets", "apps"),
            ("daemonsets", "apps"),
        )
        for o in server.sim.list(plural, None, group)
    ]
    expected = cluster.cluster_state_from_objects(objects)
    assert live.nodes == expected.nodes
    assert sorted(live.pods, key=lambda p: p.key) == sorted(expected.pods, key=lambda p: p.key)
    assert sorted(live.pdbs, key=lambda p: p.key) == sorted(expected.pdbs, key=lambda p: p.key)
    assert sorted(w.key for w in live.workloads) == sorted(w.key for w in expected.workloads)
    assert dict(live.priority_classes) == dict(expected.priority_classes)
    assert dict(live.namespace_labels) == dict(expected.namespace_labels)
    scenario = scenarios.builtin_scenario("small", now=NOW)
    assert len(live.pods) == sum(1 for o in scenario.objects if o["kind"] == "Pod")
    assert all(p.workload is not None for p in live.pods)


def test_context_by_name(
    served: tuple[sim.SimServer, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    _, config = served
    document = yaml.safe_load(config.read_text())
    good = document["contexts"][0]
    document["clusters"].append({"name": "nowhere", "cluster": {"server": "http://127.0.0.1:9"}})
    document["contexts"].append(
        {"name": "broken", "context": {"cluster": "nowhere", "user": good["context"]["user"]}}
    )
    document["current-context"] = "broken"
    two = tmp_path / "two"
    two.write_text(yaml.safe_dump(document))
    state = cluster.read_cluster(_settings(two, context=good["name"]))
    assert state.nodes
    with pytest.raises(errors.ClusterError) as caught:
        cluster.read_cluster(_settings(two, retries=0, connect_timeout_seconds=1.0))
    assert caught.value.reference == "cluster-unreachable"


def test_retries_transient_failures(fresh: tuple[sim.SimServer, pathlib.Path]) -> None:
    server, config = fresh
    server.faults.add("/api/v1/pods$", status=500, times=2)
    server.faults.add("/api/v1/nodes$", status=429, times=1)
    server.faults.add("/apis/apps/v1/daemonsets$", drop=True, times=1)
    state = cluster.read_cluster(_settings(config, retries=3))
    assert state.pods
    assert state.nodes
    assert server.faults.list() == []


def test_persistent_failure_is_a_cluster_error(fresh: tuple[sim.SimServer, pathlib.Path]) -> None:
    server, config = fresh
    server.faults.add("/apis/policy/v1/poddisruptionbudgets$", status=500)
    with pytest.raises(errors.ClusterError) as caught:
        cluster.read_cluster(_settings(config, retries=1))
    assert "500" in str(caught.value)
    assert "injected fault" in str(caught.value)
    assert caught.value.exit_code == 1


def test_token_auth(tmp_path: pathlib.Path) -> None:
    with sim_server(token="s3cret") as server:
        config = server.write_kubeconfig(tmp_path / "config")
        assert cluster.read_cluster(_settings(config)).nodes
        document = yaml.safe_load(config.read_text())
        document["users"][0]["user"]["token"] = "wrong"
        config.write_text(yaml.safe_dump(document))
        with pytest.raises(errors.ClusterError) as caught:
            cluster.read_cluster(_settings(config))
        assert caught.value.reference == "cluster-unauthorized"
        assert "wrong" not in str(caught.value)


def test_missing_kubeconfig_is_bad_input(tmp_path: pathlib.Path) -> None:
    with pytest.raises(errors.InputError):
        cluster.read_cluster(kube.ClientSettings(kubeconfig=str(tmp_path / "none")))


@pytest.mark.skipif(not pathlib.Path(KUBECTL).exists(), reason="kubectl not installed")
def test_plan_on_a_kubectl_dump_equals_plan_on_the_scenario_file(
    served: tuple[sim.SimServer, pathlib.Path],
    tmp_path: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, config = served
    scenario = scenarios.builtin_scenario("small", now=NOW)
    original = tmp_path / "scenario.json"
    original.write_text(json.dumps(scenario.cluster_document()))
    metrics_file = tmp_path / "metrics.json"
    metrics_file.write_text(json.dumps(scenario.metrics))
    dump = tmp_path / "dump.json"
    dump.write_text(
        kubectl(config, "get", "nodes,pods,pdb,rs,deploy,sts,ds", "-A", "-o", "json").stdout
    )

    def plan_of(cluster_file: pathlib.Path) -> dict[str, object]:
        code = cli.main(
            [
                "plan",
                "--cluster",
                str(cluster_file),
                "--metrics",
                str(metrics_file),
                "--policy",
                str(REPO / "policy/default.yaml"),
                "--now",
                "2026-11-29T08:00:00Z",
                "-o",
                "json",
            ]
        )
        assert code == 0
        body = json.loads(capsys.readouterr().out)
        body["solver"].pop("seconds", None)
        return body

    from_file = plan_of(original)
    from_api = plan_of(dump)
    assert from_file["status"] == "planned"
    assert from_file["evictions"]
    assert from_api == from_file


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"<html>upstream timeout</html>", "the response is not JSON"),
        (b'{"kind": "PodList", "items": [', "the response is not JSON"),
        (b"[]", "the response is not a list object"),
    ],
)
def test_a_page_that_is_no_list_object_is_a_cluster_error(body: bytes, problem: str) -> None:
    with pytest.raises(errors.ClusterError, match=problem) as caught:
        cluster._live._parse("/api/v1/pods", body)
    assert caught.value.reference == "cluster-bad-response"
    assert "listing /api/v1/pods" in str(caught.value)
