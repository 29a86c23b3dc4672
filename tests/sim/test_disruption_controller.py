"""The simulated disruption controller keeps a PodDisruptionBudget's status with its
workloads: a Deployment scaled moves the budget's expected pods, while the status
updates every eviction brings to ReplicaSets and Deployments leave it alone."""

from __future__ import annotations

from loadaware import sim
from tests.lib.sim import call, sim_server


def _deployment_with_pods(server: sim.SimServer) -> tuple[str, str, dict]:
    for deployment in server.list("deployments", group="apps"):
        meta = deployment["metadata"]
        labels = deployment["spec"]["selector"]["matchLabels"]
        if labels:
            return meta["namespace"], meta["name"], labels
    raise AssertionError("the scenario has no Deployment")


def test_scaling_a_deployment_moves_its_budgets_expected_pods() -> None:
    with sim_server() as server:
        namespace, name, labels = _deployment_with_pods(server)
        replicas = server.get("deployments", namespace, name, "apps")["spec"]["replicas"]
        code, _ = call(
            server,
            "POST",
            f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets",
            {
                "metadata": {"name": "scaled"},
                "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels}},
            },
        )
        assert code == 201
        server.advance(1)
        status = server.get("poddisruptionbudgets", namespace, "scaled", "policy")["status"]
        assert status["expectedPods"] == replicas
        code, _ = call(
            server,
            "PATCH",
            f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
            {"spec": {"replicas": replicas + 2}},
            content_type="application/merge-patch+json",
        )
        assert code == 200
        server.advance(1)
        status = server.get("poddisruptionbudgets", namespace, "scaled", "policy")["status"]
        assert status["expectedPods"] == replicas + 2
