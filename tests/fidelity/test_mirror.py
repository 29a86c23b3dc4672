"""The scheduler's view kept by the cluster cache's changes (fidelity.ClusterMirror).

Covers: a pod bound, marked for deletion (still counted, listed as terminating)
and gone; a pod that finished stops counting; a changed node is replaced in
place, a node added or deleted, a namespace's labels changed or a kind listed
again call for a rebuild; a pod of a workload the mirror knows gets its owner's
selector, one of a same-named successor does not.
"""

from __future__ import annotations

import dataclasses

from loadaware import cluster, fidelity
from tests.lib.builders import NOW, make_cluster, make_node, make_pod


def _change(
    kind: str, old: object = None, new: object = None, **fields: object
) -> cluster.CacheChange:
    return cluster.CacheChange(kind=kind, sequence=1, old=old, new=new, **fields)  # type: ignore[arg-type]


def _mirror() -> fidelity.ClusterMirror:
    return fidelity.ClusterMirror.from_state(
        make_cluster(
            [make_node("a"), make_node("b")],
            workloads=[
                cluster.Workload(
                    kind="ReplicaSet",
                    namespace="default",
                    name="web-rs",
                    uid="uid-rs-web-rs",
                    selector=cluster.LabelSelector(match_labels={"app": "web"}),
                )
            ],
        )
    )


def test_a_pod_counts_from_its_binding_until_it_is_gone() -> None:
    mirror = _mirror()
    pending = make_pod("web-1", node=None, cpu_millicores=500)
    bound = dataclasses.replace(pending, node_name="a")
    assert mirror.apply(_change("pods", None, pending))
    assert mirror.occupancy.placement(pending) is None
    assert mirror.apply(_change("pods", pending, bound))
    assert mirror.occupancy.requested("a")[0] == 500
    deleting = dataclasses.replace(bound, deletion_timestamp=NOW)
    assert mirror.apply(_change("pods", bound, deleting))
    assert mirror.occupancy.requested("a")[0] == 500
    assert mirror.terminating == {"default/web-1": deleting}
    assert mirror.apply(_change("pods", deleting, None))
    assert mirror.occupancy.requested("a")[0] == 0
    assert mirror.terminating == {}


def test_a_finished_pod_stops_counting() -> None:
    mirror = _mirror()
    bound = make_pod("job-1", node="b", cpu_millicores=300, owner=None)
    mirror.apply(_change("pods", None, bound))
    assert mirror.occupancy.requested("b")[0] == 300
    mirror.apply(_change("pods", bound, dataclasses.replace(bound, phase="Succeeded")))
    assert mirror.occupancy.requested("b")[0] == 0


def test_what_it_cannot_follow_calls_for_a_rebuild() -> None:
    mirror = _mirror()
    cordoned = make_node("a", unschedulable=True)
    assert mirror.apply(_change("nodes", make_node("a"), cordoned))
    assert mirror.occupancy.fit_failure(make_pod("p", node=None), "a") == "node-unschedulable"
    assert not mirror.apply(_change("nodes", None, make_node("c")))
    assert not mirror.apply(_change("nodes", make_node("b"), None))
    assert not mirror.apply(_change("namespaces", {}, {"team": "x"}))
    assert mirror.apply(_change("namespaces", {"team": "x"}, {"team": "x"}))
    assert not mirror.apply(_change("pods", relisted=True))


def test_a_pod_gets_its_owners_selector() -> None:
    mirror = _mirror()
    pod = make_pod("web-1", node=None)
    assert pod.owner is not None
    assert pod.owner.name == "web-rs"
    assert mirror.completed(pod).owner_selector == cluster.LabelSelector(
        match_labels={"app": "web"}
    )
    successor = dataclasses.replace(pod, owner=dataclasses.replace(pod.owner, uid="other"))
    assert mirror.completed(successor).owner_selector is None
