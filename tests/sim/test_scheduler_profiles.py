"""The simulated kube-scheduler runs a configuration's profiles by schedulerName.

Covers: a pod naming the MostAllocated profile is bound where the model's
MostAllocated profile puts it, and not where the default profile would; a pod
naming a scheduler without a profile stays Pending, with no FailedScheduling
(nothing tried to schedule it).
"""

from __future__ import annotations

from loadaware import cluster, policy, scheduling, sim
from tests.lib.sim import call, sim_server

CONFIG = policy.KubeSchedulerConfiguration.model_validate(
    {
        "profiles": [
            {"schedulerName": "default-scheduler"},
            {
                "schedulerName": "packing",
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {"scoringStrategy": {"type": "MostAllocated"}},
                    }
                ],
            },
        ]
    }
)


def _pod(name: str, scheduler: str) -> dict:
    return {
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": scheduler,
            "containers": [
                {"name": "c", "image": "busybox:1", "resources": {"requests": {"cpu": "100m"}}}
            ],
        },
    }


def _state(server: sim.SimServer) -> cluster.ClusterState:
    return cluster.cluster_state_from_objects([*server.list("nodes"), *server.list("pods")])


def test_each_pod_is_scored_by_its_profile() -> None:
    profiles = scheduling.profiles_from_config(CONFIG)
    with sim_server("small", scheduler_profiles=profiles) as server:
        before = _state(server)
        occupancy = scheduling.Occupancy.from_cluster(before)
        names = [n.name for n in before.nodes]
        incoming = cluster.cluster_state_from_objects(
            [{**_pod("packed", "packing"), "metadata": {"name": "packed", "namespace": "shop"}}]
        ).pods[0]
        packed = scheduling.best_nodes(
            incoming, occupancy, names, profile=profiles.by_name["packing"]
        )
        spread = scheduling.best_nodes(incoming, occupancy, names)
        assert not set(packed) & set(spread)
        assert (
            call(server, "POST", "/api/v1/namespaces/shop/pods", _pod("packed", "packing"))[0]
            == 201
        )
        bound = server.wait_for(
            lambda: server.sim.get("pods", "shop", "packed")["spec"].get("nodeName")
        )
        assert bound in packed


def test_a_pod_of_another_scheduler_stays_pending() -> None:
    with sim_server("small", scheduler_profiles=scheduling.profiles_from_config(CONFIG)) as server:
        assert (
            call(server, "POST", "/api/v1/namespaces/shop/pods", _pod("other", "batch"))[0] == 201
        )
        assert (
            call(server, "POST", "/api/v1/namespaces/shop/pods", _pod("mine", "packing"))[0] == 201
        )
        # The scheduler ran after both were created: the packing pod is bound.
        server.wait_for(lambda: server.sim.get("pods", "shop", "mine")["spec"].get("nodeName"))
        pod = server.sim.get("pods", "shop", "other")
        assert not pod["spec"].get("nodeName")
        path = "/api/v1/namespaces/shop/events?fieldSelector=involvedObject.name%3Dother"
        assert call(server, "GET", path)[1]["items"] == []
