"""The binding observer on a live cluster cache against `sim serve`.

Covers: Deployments scaled up through the API, the simulated controllers create
pods and its scheduler binds them; on the default profile the model agrees with
at least 99% of 200 bindings; when the simulated scheduler packs
(MostAllocated) and the observer models the default profile, the agreement
drops and the disagreements are named (pod, bound node, predicted set, reason);
what the observer reads back as a ModelAgreement is what the guard would;
pods deleted with kubectl are replaced while they terminate (their requests
still counted, their spreading not) and the model agrees with where the
replacements go; a node added mid-way has the observer start again from a
snapshot, and the new node's bindings agree too; pods of a scheduler the
policy does not model are bound but not compared.
"""

from __future__ import annotations

import copy
import pathlib
from collections.abc import Iterator
from contextlib import contextmanager

from loadaware import cluster, fidelity, kube, policy, scheduling, sim
from tests.lib.bindings import scale_up
from tests.lib.sim import call, kubectl, sim_server
from tests.lib.wait import poll

MOST_ALLOCATED = scheduling.profiles_from_config(
    policy.KubeSchedulerConfiguration.model_validate(
        {
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "pluginConfig": [
                        {
                            "name": "NodeResourcesFit",
                            "args": {"scoringStrategy": {"type": "MostAllocated"}},
                        }
                    ],
                }
            ]
        }
    )
)


@contextmanager
def _observing(server: sim.SimServer, tmp_path: pathlib.Path) -> Iterator[fidelity.BindingObserver]:
    kubeconfig = server.write_kubeconfig(tmp_path / "kubeconfig")
    api = kube.api_client(kube.ClientSettings(kubeconfig=str(kubeconfig)))
    with cluster.ClusterCache(api) as cache, fidelity.BindingObserver(cache) as observer:
        assert cache.wait_synced(60)
        assert observer.wait_idle(60)
        yield observer


def _compared(observer: fidelity.BindingObserver, count: int) -> scheduling.ModelAgreement:
    poll(lambda: observer.stats()["compared"] >= count, f"{count} bindings compared", 60)
    return observer.snapshot()


def test_on_the_default_profile_the_model_agrees(tmp_path: pathlib.Path) -> None:
    with sim_server("peak-hour") as server, _observing(server, tmp_path) as observer:
        scale_up(server, 200)
        agreement = _compared(observer, 200)
    assert agreement.observed == 200
    assert agreement.ratio is not None
    assert agreement.ratio >= 0.99, agreement.examples
    assert set(agreement.by_profile) == {"default-scheduler"}
    assert not agreement.below(0.95, 50)


def test_a_packing_scheduler_is_seen_to_disagree(tmp_path: pathlib.Path) -> None:
    with (
        sim_server("peak-hour", scheduler_profiles=MOST_ALLOCATED) as server,
        _observing(server, tmp_path) as observer,
    ):
        scale_up(server, 100)
        agreement = _compared(observer, 100)
        pods = {
            f"{p['metadata']['namespace']}/{p['metadata']['name']}": p for p in server.list("pods")
        }
    assert agreement.ratio is not None
    assert agreement.ratio < 0.5
    assert agreement.below(0.95, 50)
    assert agreement.examples
    for example in agreement.examples:
        assert not example.agreed
        assert pods[example.pod]["spec"]["nodeName"] == example.node
        assert example.predicted
        assert example.node not in example.predicted
        assert example.reason.startswith(("outscored: ", "infeasible: "))


def test_replacements_of_terminating_pods_agree(tmp_path: pathlib.Path) -> None:
    with sim_server("peak-hour") as server, _observing(server, tmp_path) as observer:
        kubeconfig = server.write_kubeconfig(tmp_path / "kubectl")
        shop = sorted(
            p["metadata"]["name"]
            for p in server.list("pods", "shop")
            if p["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
        )[:20]
        kubectl(kubeconfig, "-n", "shop", "delete", "pod", "--wait=false", *shop)
        agreement = _compared(observer, 20)
        terminating = [p for p in server.list("pods", "shop") if p["metadata"]["name"] in shop]
    # The clock stands still: every predecessor still terminates, and counts.
    assert len(terminating) == 20
    assert agreement.observed == 20
    assert agreement.agreed == 20, agreement.examples


def test_a_node_added_has_the_observer_start_again(tmp_path: pathlib.Path) -> None:
    with sim_server("peak-hour") as server, _observing(server, tmp_path) as observer:
        node = copy.deepcopy(server.list("nodes")[0])
        node["metadata"] = {
            "name": "added-node",
            "labels": {**node["metadata"]["labels"], "kubernetes.io/hostname": "added-node"},
        }
        assert call(server, "POST", "/api/v1/nodes", node)[0] == 201
        poll(lambda: observer.stats()["rebuilds"] >= 2, "the observer rebuilt", 30)
        scale_up(server, 30)
        agreement = _compared(observer, 30)
        on_the_new_node = [
            p for p in server.list("pods") if p["spec"].get("nodeName") == "added-node"
        ]
    assert on_the_new_node
    assert agreement.agreed == 30, agreement.examples


def _bare_pod(name: str, scheduler: str) -> dict:
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


def test_pods_of_a_scheduler_not_modelled_are_not_compared(tmp_path: pathlib.Path) -> None:
    two = scheduling.profiles_from_config(
        policy.KubeSchedulerConfiguration.model_validate(
            {"profiles": [{"schedulerName": "default-scheduler"}, {"schedulerName": "batch"}]}
        )
    )
    with (
        sim_server("small", scheduler_profiles=two) as server,
        _observing(server, tmp_path) as observer,
    ):
        for i in range(3):
            for scheduler in ("default-scheduler", "batch"):
                path = "/api/v1/namespaces/shop/pods"
                assert (
                    call(server, "POST", path, _bare_pod(f"{scheduler}-{i}", scheduler))[0] == 201
                )
        poll(
            lambda: all(
                p["spec"].get("nodeName")
                for p in server.list("pods", "shop")
                if p["metadata"]["name"].startswith(("default-scheduler-", "batch-"))
            ),
            "the six pods bound",
        )
        # The observer follows changes in order: once a pod bound after the six is
        # compared, so is every one of them that it would compare.
        sentinel = _bare_pod("sentinel", "default-scheduler")
        assert call(server, "POST", "/api/v1/namespaces/shop/pods", sentinel)[0] == 201
        agreement = _compared(observer, 4)
    assert set(agreement.by_profile) == {"default-scheduler"}
    assert agreement.observed == 4
    assert agreement.agreed == 4
