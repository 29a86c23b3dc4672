"""Deschedule strategies end to end on the simulated Kubernetes API: read, plan,
evict, verify, through the official client.

Covers the descheduler safety guide's experiments after a node label change
leaves a pod violating its required node affinity: the round evicts it within
budgets and the replacement (created by its ReplicaSet, placed by the
simulator's kube-scheduler) lands on the node that now qualifies; with no
qualifying node nothing is evicted (nodeFit); with a PodDisruptionBudget at
disruptionsAllowed 0 nothing is evicted and the pod keeps its UID.
"""

from __future__ import annotations

import datetime
from typing import Any

import kubernetes.client
import pytest

from loadaware import kube, report
from loadaware import round as rounds
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import NOW, is_ready, pods_of, sim_server

GiB = 1024**3


def _node(name: str, disk: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {"kubernetes.io/hostname": name, "disk": disk},
        },
        "spec": {},
        "status": {
            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _deployment() -> dict[str, Any]:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}
                ]
            }
        }
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "uid": "uid-deploy-web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "affinity": affinity,
                    "containers": [
                        {
                            "name": "web",
                            "image": "registry.example/web:1",
                            "resources": {"requests": {"cpu": "200m", "memory": "256Mi"}},
                        }
                    ],
                },
            },
        },
    }


def _metrics(nodes: list[str]) -> dict[str, Any]:
    stamp = (NOW - datetime.timedelta(seconds=10)).isoformat().replace("+00:00", "Z")
    return {
        "collectedAt": NOW.isoformat().replace("+00:00", "Z"),
        "nodes": {n: {"cpu": 0.4, "memory": 2 * GiB, "timestamp": stamp} for n in nodes},
        "pods": {},
    }


@pytest.fixture
def server(tmp_path):
    # "a" has the ssd the web pod requires; "b" does not, yet.
    with sim_server(
        None,
        objects=[_node("a", "ssd"), _node("b", "hdd")],
        metrics=_metrics(["a", "b"]),
        ready_delay=5.0,
    ) as running:
        # Created through the API, so that the controllers and the scheduler act on it.
        apps = kubernetes.client.AppsV1Api(_client(running, tmp_path))
        apps.create_namespaced_deployment("default", _deployment())
        running.reconcile()
        running.advance(10)
        yield running


def _label(server, name: str, disk: str, tmp_path) -> None:
    core = kubernetes.client.CoreV1Api(_client(server, tmp_path))
    core.patch_node(name, {"metadata": {"labels": {"disk": disk}}})
    server.reconcile()


def _client(server, tmp_path):
    from loadaware.kube import ClientSettings

    return kube.api_client(ClientSettings(kubeconfig=str(server.write_kubeconfig(tmp_path / "kc"))))


def _policy(**overrides: Any):
    return metrics_server_policy(
        profiles=[
            {
                "name": "default",
                "strategies": {"removePodsViolatingNodeAffinity": {"enabled": True}},
            }
        ],
        limits={"maxNoOfPodsToEvictTotal": 5},
        **overrides,
    )


def _web(server) -> dict[str, Any]:
    (pod,) = [
        p for p in pods_of(server, "default", "web-") if not p["metadata"].get("deletionTimestamp")
    ]
    return pod


def _round(server, tmp_path, policy):
    context = live_context(server, tmp_path, policy)
    return report.round_to_json(rounds.run_round(policy, context).record)


def test_label_change_moves_the_pod_to_the_node_that_now_qualifies(server, tmp_path) -> None:
    before = _web(server)
    assert before["spec"]["nodeName"] == "a"
    _label(server, "a", "hdd", tmp_path)
    _label(server, "b", "ssd", tmp_path)
    audit = _round(server, tmp_path, _policy())
    planned = audit["plan"]["evictions"]
    assert [(e["pod"], e["node"], e["expectedNode"], e["reason"]) for e in planned] == [
        (f"default/{before['metadata']['name']}", "a", "b", "RemovePodsViolatingNodeAffinity")
    ]
    assert [e["result"] for e in audit["evictions"]] == ["evicted"]
    assert audit["plan"]["profiles"]["default"]["RemovePodsViolatingNodeAffinity"] == {
        "planned": 1,
        "skipped": 0,
    }
    after = _web(server)
    assert after["metadata"]["uid"] != before["metadata"]["uid"]
    assert after["spec"]["nodeName"] == "b"
    assert is_ready(after)
    (replacement,) = audit["verification"]["replacements"]
    assert replacement["node"] == "b"
    assert replacement["landing"] == "expected"


def test_no_qualifying_node_evicts_nothing(server, tmp_path) -> None:
    before = _web(server)
    _label(server, "a", "hdd", tmp_path)
    audit = _round(server, tmp_path, _policy())
    assert audit["plan"]["evictions"] == []
    assert audit["plan"]["profiles"]["default"]["RemovePodsViolatingNodeAffinity"] == {
        "planned": 0,
        "skipped": 1,
        "skippedReasons": {"no-fit": 1},
    }
    assert _web(server)["metadata"]["uid"] == before["metadata"]["uid"]


def test_pdb_at_zero_evicts_nothing(server, tmp_path) -> None:
    before = _web(server)
    policy_api = kubernetes.client.PolicyV1Api(_client(server, tmp_path))
    policy_api.create_namespaced_pod_disruption_budget(
        "default",
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "web"},
            "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "web"}}},
        },
    )
    server.reconcile()
    _label(server, "a", "hdd", tmp_path)
    _label(server, "b", "ssd", tmp_path)
    audit = _round(server, tmp_path, _policy())
    assert audit["plan"]["evictions"] == []
    assert audit["plan"]["skipped"]["pdb-blocks"] == 1
    assert _web(server)["metadata"]["uid"] == before["metadata"]["uid"]


def test_failed_pod_is_cleaned_up_without_waiting_for_a_replacement(tmp_path) -> None:
    from tests.lib.sim import call, sim_server

    with sim_server("small", ready_delay=5.0) as server:
        victim = next(
            p
            for p in server.list("pods")
            if (p["metadata"].get("ownerReferences") or [{}])[0].get("kind") == "ReplicaSet"
        )
        namespace, name = victim["metadata"]["namespace"], victim["metadata"]["name"]
        status, _ = call(
            server,
            "PATCH",
            f"/api/v1/namespaces/{namespace}/pods/{name}/status",
            {"status": {"phase": "Failed", "reason": "Evicted"}},
            content_type="application/merge-patch+json",
        )
        assert status == 200
        server.reconcile()
        policy = metrics_server_policy(
            profiles=[
                {
                    "name": "cleanup",
                    "strategies": {
                        "loadBalancing": {"enabled": False},
                        "removeFailedPods": {"enabled": True, "minPodLifetimeSeconds": 0},
                    },
                }
            ],
            verify={"timeout": "60s"},
        )
        record = rounds.run_round(policy, live_context(server, tmp_path, policy)).record
        audit = report.round_to_json(record)
        assert record.exit_code == 0, audit["reason"]
        assert [(e["pod"], e["result"], e["reason"]) for e in audit["evictions"]] == [
            (f"{namespace}/{name}", "evicted", "RemoveFailedPods")
        ]
        # No replacement is awaited for a clean-up, so no breaker.
        assert audit["verification"]["replacements"] == []
        assert audit["verification"]["breaker"] is None


def test_consolidation_cordons_the_node_it_empties(tmp_path) -> None:
    from tests.lib.sim import sim_server

    policy = metrics_server_policy(
        consolidation={
            "enabled": True,
            "maxNodesPerRound": 1,
            "thresholds": {"cpu": 40, "memory": 40},
        },
        profiles=[{"name": "consolidate", "strategies": {"loadBalancing": {"enabled": False}}}],
    )
    with sim_server("small", ready_delay=5.0) as server:
        record = rounds.run_round(policy, live_context(server, tmp_path, policy)).record
        audit = report.round_to_json(record)
        emptied = audit["plan"]["consolidation"]["nodes"]
        assert record.exit_code == 0, audit["reason"]
        assert emptied
        assert audit["verification"]["cordoned"] == emptied
        nodes = {n["metadata"]["name"]: n for n in server.list("nodes")}
        assert all(nodes[name]["spec"].get("unschedulable") for name in emptied)
        evicted = [e for e in audit["evictions"] if e["result"] == "evicted"]
        assert evicted
        assert {e["reason"] for e in evicted} == {"HighNodeUtilization"}
        for replacement in audit["verification"]["replacements"]:
            assert replacement["ready"]
            assert replacement["node"] not in emptied
        running_on_emptied = [
            p
            for p in server.list("pods")
            if p["spec"].get("nodeName") in emptied
            and not p["metadata"].get("deletionTimestamp")
            and (p["metadata"].get("ownerReferences") or [{}])[0].get("kind") != "DaemonSet"
        ]
        assert running_on_emptied == []
