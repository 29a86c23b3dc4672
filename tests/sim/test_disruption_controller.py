"""The simulated disruption controller keeps a PodDisruptionBudget's status with its
workloads: a Deployment scaled moves the budget's expected pods, while the status
updates every eviction brings to ReplicaSets and Deployments leave it alone; a
disrupted pod the eviction API recorded counts against its budget until the entry
expires."""

from __future__ import annotations

from loadaware import sim
from loadaware.sim import _clock, _resources
from loadaware.sim.controllers._disruption import DISRUPTED_POD_TIMEOUT
from tests.lib.sim import NOW, call, sim_server


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


def test_a_disrupted_pod_counts_against_its_budget_until_the_entry_expires() -> None:
    """An eviction the API recorded but whose pod was not deleted (disruptedPods) keeps
    the pod out of currentHealthy for DISRUPTED_POD_TIMEOUT seconds, then is forgotten;
    the controllers' next timer is that moment."""
    cluster_ = sim.build_cluster(scenario="small", clock=sim.SimClock(NOW, speed=0.0))
    cluster_.reconcile()
    pdb = cluster_.get("poddisruptionbudgets", "data", "zookeeper", "policy")
    before = pdb["status"]
    assert before["disruptionsAllowed"] == 1
    pod = next(
        p
        for p in cluster_.list("pods", "data")
        if p["metadata"]["labels"].get("app.kubernetes.io/name") == "zookeeper"
    )
    name = pod["metadata"]["name"]
    stamp = _clock.rfc3339(cluster_.clock.time())
    recorded = {**before, "disruptedPods": {name: stamp}, "disruptionsAllowed": 0}
    cluster_.store.update(
        _resources.PDBS, "data", "zookeeper", {**pdb, "status": recorded}, subresource="status"
    )
    cluster_.reconcile()
    status = cluster_.get("poddisruptionbudgets", "data", "zookeeper", "policy")["status"]
    assert status["disruptedPods"] == {name: stamp}
    assert status["currentHealthy"] == before["currentHealthy"] - 1
    assert status["disruptionsAllowed"] == 0
    assert cluster_.controllers.next_due() == cluster_.clock.time() + DISRUPTED_POD_TIMEOUT

    cluster_.advance(DISRUPTED_POD_TIMEOUT - 1)
    status = cluster_.get("poddisruptionbudgets", "data", "zookeeper", "policy")["status"]
    assert status["disruptedPods"] == {name: stamp}

    cluster_.advance(1)
    status = cluster_.get("poddisruptionbudgets", "data", "zookeeper", "policy")["status"]
    assert "disruptedPods" not in status
    assert status["currentHealthy"] == before["currentHealthy"]
    assert status["disruptionsAllowed"] == 1
    assert cluster_.controllers.next_due() is None
