"""Raw Kubernetes objects to ClusterState (cluster_state_from_objects).

Covered:
- pod requests as kube-scheduler sums them: containers, init containers (peak),
  sidecars (restartable init containers), pod overhead, limits-only containers,
  exact sums rounded once;
- QoS class: from status, else computed (Guaranteed, Burstable, BestEffort);
- owner and workload: controller reference, ReplicaSet -> Deployment,
  Job -> CronJob, absent ReplicaSet kept as is, a replaced ReplicaSet (other uid);
- PodDisruptionBudget: nil vs empty selector, missing or stale status;
- nodes: allocatable with capacity fallback, taints, readiness, unschedulable,
  status.images (names and sizes, entries shared between nodes);
- container images: init containers then containers, as written, one tuple shared
  by the replicas of a workload;
- tolerations, nodeSelector, node affinity, pod (anti-)affinity, host ports;
- volumes (local storage, PVC), resource claims, mirror pods, priority;
- terminal pods kept but not load; timestamps in UTC;
- errors name the object and the field path.
"""

from __future__ import annotations

import copy
import datetime
from typing import Any

import pytest

from loadaware.cluster import (
    ContainerImage,
    LabelSelector,
    NodeSelectorTerm,
    OwnerRef,
    PodAffinityTerm,
    Requirement,
    Taint,
    Toleration,
    cluster_state_from_objects,
)
from loadaware.errors import InputError
from tests.lib.builders import GiB, MiB

NODE: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "worker-a", "uid": "uid-a", "labels": {"zone": "a"}},
    "spec": {},
    "status": {
        "allocatable": {"cpu": "3920m", "memory": "15Gi", "pods": "110"},
        "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
        "conditions": [
            {"type": "MemoryPressure", "status": "False"},
            {"type": "Ready", "status": "True"},
        ],
    },
}


def raw_pod(name: str = "web-1", *, namespace: str = "shop", **spec: Any) -> dict[str, Any]:
    """A running pod as the API returns it; `spec` entries replace the default spec's."""
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{name}",
            "labels": {"app": "web"},
            "creationTimestamp": "2026-11-28T06:30:12Z",
        },
        "spec": {
            "nodeName": "worker-a",
            "priority": 0,
            "containers": [container("app", cpu="100m", memory="128Mi")],
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    pod["spec"].update(spec)
    return pod


def container(
    name: str,
    *,
    cpu: str | None = None,
    memory: str | None = None,
    limit_cpu: str | None = None,
    limit_memory: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    resources: dict[str, dict[str, str]] = {}
    for section, key, value in (
        ("requests", "cpu", cpu),
        ("requests", "memory", memory),
        ("limits", "cpu", limit_cpu),
        ("limits", "memory", limit_memory),
    ):
        if value is not None:
            resources.setdefault(section, {})[key] = value
    return {"name": name, "image": f"example/{name}:1", "resources": resources, **fields}


def owned_by(pod: dict[str, Any], kind: str, name: str, uid: str = "") -> dict[str, Any]:
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid, "controller": True}
    ]
    return pod


def workload(
    kind: str,
    name: str,
    *,
    uid: str = "",
    owner: tuple[str, str, str] | None = None,
    api_version: str = "apps/v1",
    **body: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "shop", "uid": uid}
    if owner is not None:
        meta["ownerReferences"] = [
            {"kind": owner[0], "name": owner[1], "uid": owner[2], "controller": True}
        ]
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **body}


def only_pod(*objects: dict[str, Any]):  # type: ignore[no-untyped-def]
    state = cluster_state_from_objects([NODE, *objects])
    assert len(state.pods) == 1
    return state.pods[0]


# --- requests --------------------------------------------------------------------------


def test_requests_sum_over_containers() -> None:
    pod = only_pod(
        raw_pod(
            containers=[
                container("app", cpu="250m", memory="512Mi"),
                container("proxy", cpu="50m", memory="64Mi"),
            ]
        )
    )
    assert (pod.cpu_request_millicores, pod.memory_request_bytes) == (300, 576 * MiB)


def test_a_large_init_container_sets_the_peak() -> None:
    pod = only_pod(
        raw_pod(
            initContainers=[
                container("migrate", cpu="2", memory="256Mi"),
                container("warm", cpu="100m", memory="1Gi"),
            ],
            containers=[container("app", cpu="500m", memory="512Mi")],
        )
    )
    # cpu from the first init container, memory from the second: each resource's own max.
    assert (pod.cpu_request_millicores, pod.memory_request_bytes) == (2000, GiB)


def test_small_init_containers_do_not_add_to_the_containers() -> None:
    pod = only_pod(
        raw_pod(
            initContainers=[container("init", cpu="100m", memory="64Mi")],
            containers=[container("app", cpu="500m", memory="512Mi")],
        )
    )
    assert (pod.cpu_request_millicores, pod.memory_request_bytes) == (500, 512 * MiB)


def test_sidecars_add_to_containers_and_to_later_init_containers() -> None:
    pod = only_pod(
        raw_pod(
            initContainers=[
                container("mesh", cpu="200m", memory="128Mi", restartPolicy="Always"),
                container("migrate", cpu="900m", memory="128Mi"),
            ],
            containers=[container("app", cpu="500m", memory="512Mi")],
        )
    )
    # containers + sidecar = 700m/640Mi; migrate runs beside the sidecar: 1100m/256Mi.
    assert (pod.cpu_request_millicores, pod.memory_request_bytes) == (1100, 640 * MiB)


def test_an_init_container_before_a_sidecar_runs_without_it() -> None:
    pod = only_pod(
        raw_pod(
            initContainers=[
                container("migrate", cpu="900m"),
                container("mesh", cpu="200m", restartPolicy="Always"),
            ],
            containers=[container("app", cpu="500m")],
        )
    )
    assert pod.cpu_request_millicores == 900


def test_pod_overhead_comes_on_top() -> None:
    pod = only_pod(
        raw_pod(
            containers=[container("app", cpu="500m", memory="512Mi")],
            overhead={"cpu": "250m", "memory": "120Mi"},
        )
    )
    assert (pod.cpu_request_millicores, pod.memory_request_bytes) == (750, 632 * MiB)


def test_limits_without_requests_are_the_requests() -> None:
    pod = only_pod(
        raw_pod(containers=[container("app", limit_cpu="1", limit_memory="1Gi", memory="256Mi")])
    )
    assert (pod.cpu_request_millicores, pod.memory_request_bytes) == (1000, 256 * MiB)


def test_requests_are_summed_exactly_then_rounded_once() -> None:
    pod = only_pod(raw_pod(containers=[container("a", cpu="0.5m"), container("b", cpu="0.5m")]))
    assert pod.cpu_request_millicores == 1  # not 2, as rounding each container would give


def test_pod_level_resources_replace_the_container_sum() -> None:
    pod = only_pod(
        raw_pod(
            containers=[container("app", cpu="100m", memory="64Mi")],
            resources={"requests": {"cpu": "2"}},
        )
    )
    assert (pod.cpu_request_millicores, pod.memory_request_bytes) == (2000, 64 * MiB)


def test_containers_without_resources_request_nothing() -> None:
    pod = only_pod(raw_pod(containers=[{"name": "app", "image": "x"}]))
    assert (pod.cpu_request_millicores, pod.memory_request_bytes) == (0, 0)


def gpu_container(name: str, *, request: str | None = None, limit: str | None = None, **extra: Any):  # type: ignore[no-untyped-def]
    resources: dict[str, Any] = {"requests": {"cpu": "100m"}}
    if request is not None:
        resources["requests"]["nvidia.com/gpu"] = request
    if limit is not None:
        resources["limits"] = {"nvidia.com/gpu": limit}
    return {"name": name, "image": "x", "resources": resources, **extra}


def test_extended_requests_sum_over_containers_and_limits_alone_count() -> None:
    pod = only_pod(
        raw_pod(containers=[gpu_container("train", request="2"), gpu_container("eval", limit="1")])
    )
    assert pod.extended_requests == {"nvidia.com/gpu": 3}
    assert pod.cpu_request_millicores == 200


def test_extended_requests_of_init_containers_count_at_their_peak() -> None:
    pod = only_pod(
        raw_pod(
            initContainers=[
                gpu_container("warm", limit="1", restartPolicy="Always"),
                gpu_container("probe", request="4"),
            ],
            containers=[gpu_container("train", request="2")],
        )
    )
    # train + the sidecar = 3; probe runs beside the sidecar: 5.
    assert pod.extended_requests == {"nvidia.com/gpu": 5}


def test_pods_without_extended_resources_request_none() -> None:
    pod = only_pod(raw_pod(containers=[container("app", cpu="1", memory="1Gi")]))
    assert pod.extended_requests == {}


def test_a_bad_extended_quantity_names_the_field() -> None:
    with pytest.raises(
        InputError, match=r"spec\.containers\[0\]\.resources\.requests\.nvidia\.com/gpu"
    ):
        only_pod(raw_pod(containers=[gpu_container("train", request="lots")]))


# --- QoS -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("containers", "qos"),
    [
        ([container("a", limit_cpu="1", limit_memory="1Gi")], "Guaranteed"),
        ([container("a", cpu="1", memory="1Gi", limit_cpu="1", limit_memory="1Gi")], "Guaranteed"),
        (
            [container("a", cpu="500m", memory="1Gi", limit_cpu="1", limit_memory="1Gi")],
            "Burstable",
        ),
        ([container("a", cpu="1", memory="1Gi", limit_memory="1Gi")], "Burstable"),
        ([container("a", cpu="100m")], "Burstable"),
        ([container("a", limit_cpu="1", limit_memory="1Gi"), container("b")], "Burstable"),
        ([container("a"), {"name": "b", "image": "x"}], "BestEffort"),
        ([container("a", cpu="0")], "BestEffort"),
    ],
    ids=[
        "limits-only-guaranteed",
        "equal-requests-and-limits",
        "request-below-limit",
        "cpu-limit-missing",
        "requests-only",
        "one-container-without-limits",
        "nothing-set",
        "zero-request-counts-as-unset",
    ],
)
def test_qos_class_is_computed_when_status_lacks_it(
    containers: list[dict[str, Any]], qos: str
) -> None:
    assert only_pod(raw_pod(containers=containers)).qos_class == qos


def test_qos_class_from_status_wins() -> None:
    pod = raw_pod(containers=[container("a")])
    pod["status"]["qosClass"] = "Burstable"
    assert only_pod(pod).qos_class == "Burstable"


def test_qos_counts_init_containers() -> None:
    pod = raw_pod(
        initContainers=[container("init", cpu="100m")],
        containers=[container("a", limit_cpu="1", limit_memory="1Gi")],
    )
    assert only_pod(pod).qos_class == "Burstable"


# --- owners and workloads --------------------------------------------------------------


def test_replicaset_pods_belong_to_the_deployment() -> None:
    state = cluster_state_from_objects(
        [
            NODE,
            owned_by(raw_pod(), "ReplicaSet", "web-7d9f8c6b5", "uid-rs"),
            workload(
                "ReplicaSet",
                "web-7d9f8c6b5",
                uid="uid-rs",
                owner=("Deployment", "web", "uid-deploy"),
                spec={"replicas": 3},
            ),
            workload("Deployment", "web", uid="uid-deploy", spec={"replicas": 3}),
        ]
    )
    pod = state.pods[0]
    assert pod.owner == OwnerRef(kind="ReplicaSet", name="web-7d9f8c6b5", uid="uid-rs")
    assert pod.workload == OwnerRef(kind="Deployment", name="web", uid="uid-deploy")
    assert state.workloads_by_key["ReplicaSet/shop/web-7d9f8c6b5"].owner == pod.workload
    assert state.workloads_by_key["Deployment/shop/web"].replicas == 3


def test_an_absent_replicaset_stays_the_workload() -> None:
    pod = only_pod(owned_by(raw_pod(), "ReplicaSet", "web-7d9f8c6b5", "uid-rs"))
    assert pod.workload == OwnerRef(kind="ReplicaSet", name="web-7d9f8c6b5", uid="uid-rs")


def test_a_replaced_replicaset_does_not_lend_its_owner() -> None:
    pod = only_pod(
        owned_by(raw_pod(), "ReplicaSet", "web-1", "uid-old"),
        workload("ReplicaSet", "web-1", uid="uid-new", owner=("Deployment", "web", "uid-d")),
    )
    assert pod.workload == OwnerRef(kind="ReplicaSet", name="web-1", uid="uid-old")


def test_a_pod_carries_its_owners_selector() -> None:
    selector = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "Exists"}],
    }
    pod = only_pod(
        owned_by(raw_pod(), "ReplicaSet", "web-1", "uid-rs"),
        workload("ReplicaSet", "web-1", uid="uid-rs", spec={"selector": selector}),
    )
    assert pod.owner_selector is not None
    assert pod.owner_selector.match_labels == {"app": "web"}
    assert [r.key for r in pod.owner_selector.match_expressions] == ["tier"]


def test_an_owner_not_in_the_input_or_replaced_lends_no_selector() -> None:
    assert only_pod(owned_by(raw_pod(), "ReplicaSet", "web-1", "uid-rs")).owner_selector is None
    replaced = only_pod(
        owned_by(raw_pod(), "ReplicaSet", "web-1", "uid-old"),
        workload(
            "ReplicaSet", "web-1", uid="uid-new", spec={"selector": {"matchLabels": {"app": "web"}}}
        ),
    )
    assert replaced.owner_selector is None


def test_cronjob_pods_belong_to_the_cronjob() -> None:
    pod = only_pod(
        owned_by(raw_pod(), "Job", "report-28871234", "uid-job"),
        workload(
            "Job",
            "report-28871234",
            uid="uid-job",
            owner=("CronJob", "report", "uid-cron"),
            api_version="batch/v1",
        ),
    )
    assert pod.workload == OwnerRef(kind="CronJob", name="report", uid="uid-cron")


def test_the_controller_reference_is_the_owner() -> None:
    pod = raw_pod()
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "cfg", "uid": "u1"},
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "db",
            "uid": "u2",
            "controller": True,
        },
    ]
    assert only_pod(pod).owner == OwnerRef(kind="StatefulSet", name="db", uid="u2")


def test_without_a_controller_the_first_reference_is_the_owner() -> None:
    pod = raw_pod()
    pod["metadata"]["ownerReferences"] = [
        {"kind": "Custom", "name": "a", "uid": "u1"},
        {"kind": "Other", "name": "b", "uid": "u2"},
    ]
    assert only_pod(pod).owner == OwnerRef(kind="Custom", name="a", uid="u1")


def test_the_other_references_are_kept_in_order() -> None:
    pod = raw_pod()
    pod["metadata"]["ownerReferences"] = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "cfg", "uid": "u1"},
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "name": "rs",
            "uid": "u2",
            "controller": True,
        },
        {"apiVersion": "v1", "kind": "Custom", "name": "c", "uid": "u3"},
    ]
    converted = only_pod(pod)
    assert converted.owner == OwnerRef(kind="ReplicaSet", name="rs", uid="u2")
    assert converted.other_owners == (
        OwnerRef(kind="ConfigMap", name="cfg", uid="u1"),
        OwnerRef(kind="Custom", name="c", uid="u3"),
    )


def test_a_single_reference_leaves_no_other_owners() -> None:
    pod = owned_by(raw_pod(), "ReplicaSet", "web-1", "uid-rs")
    assert only_pod(pod).other_owners == ()


def test_pods_without_owners_have_no_workload() -> None:
    pod = only_pod(raw_pod())
    assert (pod.owner, pod.workload) == (None, None)


def test_an_owner_cycle_ends() -> None:
    pod = only_pod(
        owned_by(raw_pod(), "ReplicaSet", "a"),
        workload("ReplicaSet", "a", owner=("Deployment", "b", "")),
        workload("Deployment", "b", owner=("ReplicaSet", "a", "")),
    )
    assert pod.workload is not None


def test_workload_replicas() -> None:
    state = cluster_state_from_objects(
        [
            workload("DaemonSet", "ds", status={"desiredNumberScheduled": 5}),
            workload("DaemonSet", "fresh"),
            workload("StatefulSet", "db", spec={"replicas": 2}),
            workload("Deployment", "defaulted", spec={}),
            workload("Job", "once", api_version="batch/v1", spec={"parallelism": 3}),
        ]
    )
    replicas = {w.name: w.replicas for w in state.workloads}
    assert replicas == {"ds": 5, "fresh": None, "db": 2, "defaulted": 1, "once": None}


# --- PodDisruptionBudgets ----------------------------------------------------------------


def raw_pdb(name: str = "web", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "shop", "generation": 2},
        "spec": spec,
        "status": {"disruptionsAllowed": 1, "observedGeneration": 2},
    }


def test_pdb_without_selector_selects_nothing_and_empty_selects_all() -> None:
    state = cluster_state_from_objects(
        [raw_pdb("none", minAvailable=1), raw_pdb("all", selector={})]
    )
    assert state.pdbs[0].selector is None
    assert state.pdbs[1].selector == LabelSelector()
    pod = only_pod(raw_pod())
    assert not state.pdbs[0].covers(pod)
    assert state.pdbs[1].covers(pod)


def test_pdb_v1beta1_empty_selector_selects_nothing() -> None:
    pdb = raw_pdb(selector={})
    pdb["apiVersion"] = "policy/v1beta1"
    assert cluster_state_from_objects([pdb]).pdbs[0].selector is None


def test_pdb_fields() -> None:
    pdb = raw_pdb(
        maxUnavailable=1,
        selector={
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}],
        },
    )
    (parsed,) = cluster_state_from_objects([pdb]).pdbs
    assert parsed.key == "shop/web"
    assert parsed.disruptions_allowed == 1
    assert (parsed.min_available, parsed.max_unavailable) == (None, "1")
    assert parsed.selector == LabelSelector(
        match_labels={"app": "web"},
        match_expressions=(Requirement(key="tier", operator="In", values=("front",)),),
    )


def test_pdb_without_status_allows_no_disruption() -> None:
    pdb = raw_pdb(selector={})
    del pdb["status"]
    assert cluster_state_from_objects([pdb]).pdbs[0].disruptions_allowed == 0


def test_pdb_with_a_stale_status_allows_no_disruption() -> None:
    pdb = raw_pdb(selector={})
    pdb["status"]["observedGeneration"] = 1
    assert cluster_state_from_objects([pdb]).pdbs[0].disruptions_allowed == 0


# --- nodes -----------------------------------------------------------------------------


def test_node_fields() -> None:
    node = copy.deepcopy(NODE)
    node["spec"] = {
        "unschedulable": True,
        "taints": [
            {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
            {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
        ],
    }
    (parsed,) = cluster_state_from_objects([node]).nodes
    assert parsed.name == "worker-a"
    assert parsed.labels == {"zone": "a"}
    assert (parsed.allocatable_cpu_millicores, parsed.allocatable_memory_bytes) == (3920, 15 * GiB)
    assert parsed.allocatable_pods == 110
    assert parsed.taints == (
        Taint(key="dedicated", value="gpu", effect="NoSchedule"),
        Taint(key="node.kubernetes.io/unreachable", effect="NoExecute"),
    )
    assert parsed.unschedulable
    assert parsed.ready


def test_node_capacity_is_the_fallback_for_allocatable() -> None:
    node = copy.deepcopy(NODE)
    del node["status"]["allocatable"]
    (parsed,) = cluster_state_from_objects([node]).nodes
    assert (parsed.allocatable_cpu_millicores, parsed.allocatable_memory_bytes) == (4000, 16 * GiB)


def test_node_extended_resources() -> None:
    """A device plugin's resources (`nvidia.com/gpu`), for a named resource's capacity."""
    node = copy.deepcopy(NODE)
    node["status"]["allocatable"]["nvidia.com/gpu"] = "4"
    node["status"]["capacity"]["nvidia.com/gpu"] = "8"  # allocatable wins
    node["status"]["capacity"]["example.com/nic"] = "2"  # capacity is the fallback
    (parsed,) = cluster_state_from_objects([node]).nodes
    assert parsed.allocatable_extended == {"nvidia.com/gpu": 4.0, "example.com/nic": 2.0}
    (plain,) = cluster_state_from_objects([copy.deepcopy(NODE)]).nodes
    assert plain.allocatable_extended == {}


@pytest.mark.parametrize(
    "conditions",
    [[{"type": "Ready", "status": "False"}], [{"type": "Ready", "status": "Unknown"}], []],
    ids=["false", "unknown", "never-reported"],
)
def test_nodes_not_ready(conditions: list[dict[str, str]]) -> None:
    node = copy.deepcopy(NODE)
    node["status"]["conditions"] = conditions
    assert not cluster_state_from_objects([node]).nodes[0].ready


def test_node_without_allocatable_or_capacity_is_refused() -> None:
    node = copy.deepcopy(NODE)
    del node["status"]["allocatable"]["memory"]
    del node["status"]["capacity"]["memory"]
    with pytest.raises(InputError, match=r"Node worker-a: status\.allocatable\.memory: missing"):
        cluster_state_from_objects([node])


def node_with_images(name: str, images: list[dict[str, Any]]) -> dict[str, Any]:
    node = copy.deepcopy(NODE)
    node["metadata"]["name"] = name
    node["status"]["images"] = images
    return node


PROXY_IMAGE = {
    "names": [
        "registry.k8s.io/kube-proxy@sha256:62c496efa595c8eb7d098e43430b2b94ad66812214759a7ea9daaaa1ed901fc7",
        "registry.k8s.io/kube-proxy:v1.31.2",
    ],
    "sizeBytes": 30215623,
}


def test_node_images() -> None:
    web = {"names": ["example/web:2"], "sizeBytes": 512 * MiB}
    # sizeBytes is optional in the API; a node reporting no names lists an empty entry.
    odd = [{"names": ["example/bare"]}, {"sizeBytes": 5}]
    a, b, bare = cluster_state_from_objects(
        [
            node_with_images("worker-a", [web, PROXY_IMAGE]),
            node_with_images("worker-b", [copy.deepcopy(PROXY_IMAGE)]),
            node_with_images("worker-c", odd),
        ]
    ).nodes
    proxy = ContainerImage(names=tuple(PROXY_IMAGE["names"]), size_bytes=30215623)
    assert a.images == (ContainerImage(names=("example/web:2",), size_bytes=512 * MiB), proxy)
    # One object for the entry every node reports, however many nodes report it.
    assert b.images == (proxy,)
    assert b.images[0] is a.images[1]
    assert bare.images == (
        ContainerImage(names=("example/bare",), size_bytes=0),
        ContainerImage(names=(), size_bytes=5),
    )
    (plain,) = cluster_state_from_objects([copy.deepcopy(NODE)]).nodes
    assert plain.images == ()


@pytest.mark.parametrize(
    ("images", "message"),
    [
        ({"names": ["a"]}, r"status\.images: expected a list, got an object"),
        (["a"], r"status\.images\[0\]: expected an object, got the string 'a'"),
        ([{"names": "a"}], r"status\.images\[0\]\.names: expected a list, got the string 'a'"),
        ([{"names": ["a", 1]}], r"status\.images\[0\]\.names\[1\]: expected a string"),
        ([{"names": ["a"], "sizeBytes": "1Mi"}], r"status\.images\[0\]\.sizeBytes: expected an"),
    ],
    ids=["object", "entry-text", "names-text", "name-number", "size-text"],
)
def test_bad_node_images_are_refused(images: Any, message: str) -> None:
    node = copy.deepcopy(NODE)
    node["status"]["images"] = images
    with pytest.raises(InputError, match=rf"Node worker-a: {message}"):
        cluster_state_from_objects([node])


def test_container_images() -> None:
    init = container("setup", image="example/setup:1")
    sidecar = container("mesh", image="example/mesh@sha256:0a1b", restartPolicy="Always")
    pods = [
        raw_pod(
            f"web-{i}",
            initContainers=[init, sidecar],
            containers=[container("app", image="example/app"), container("log")],
        )
        for i in (1, 2)
    ]
    first, second = cluster_state_from_objects(pods).pods
    # As written: kube-scheduler adds ":latest" itself when it compares names.
    assert first.container_images == (
        "example/setup:1",
        "example/mesh@sha256:0a1b",
        "example/app",
        "example/log:1",
    )
    assert second.container_images is first.container_images
    (plain,) = cluster_state_from_objects([raw_pod()]).pods
    assert plain.container_images == ("example/app:1",)


def test_a_container_image_that_is_not_text_is_refused() -> None:
    pod = raw_pod(containers=[container("app", image=7)])
    with pytest.raises(
        InputError, match=r"Pod shop/web-1: spec\.containers\[0\]\.image: expected a string"
    ):
        cluster_state_from_objects([pod])


# --- pod scheduling constraints ----------------------------------------------------------


def test_tolerations_and_node_selector() -> None:
    pod = only_pod(
        raw_pod(
            nodeSelector={"disktype": "ssd"},
            tolerations=[
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                },
                {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                {"operator": "Exists"},
            ],
        )
    )
    assert pod.node_selector == {"disktype": "ssd"}
    assert pod.tolerations == (
        Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute"),
        Toleration(key="dedicated", operator="Equal", value="gpu", effect="NoSchedule"),
        Toleration(operator="Exists"),
    )
    assert pod.tolerations[1].tolerates(Taint(key="dedicated", value="gpu", effect="NoSchedule"))
    assert pod.tolerations[2].tolerates(Taint(key="anything", effect="NoExecute"))


def test_required_node_affinity() -> None:
    pod = only_pod(
        raw_pod(
            affinity={
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "zone", "operator": "In", "values": ["a", "b"]}
                                ]
                            },
                            {
                                "matchFields": [
                                    {
                                        "key": "metadata.name",
                                        "operator": "In",
                                        "values": ["worker-z"],
                                    }
                                ]
                            },
                        ]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 1,
                            "preference": {
                                "matchExpressions": [{"key": "x", "operator": "Exists"}]
                            },
                        }
                    ],
                }
            }
        )
    )
    assert pod.required_node_affinity == (
        NodeSelectorTerm(
            match_expressions=(Requirement(key="zone", operator="In", values=("a", "b")),)
        ),
        NodeSelectorTerm(
            match_fields=(Requirement(key="metadata.name", operator="In", values=("worker-z",)),)
        ),
    )


def test_required_pod_affinity_and_anti_affinity() -> None:
    pod = only_pod(
        raw_pod(
            affinity={
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {"matchLabels": {"app": "cache"}},
                            "namespaces": ["infra"],
                            "topologyKey": "topology.kubernetes.io/zone",
                        }
                    ]
                },
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "labelSelector": {
                                "matchExpressions": [
                                    {"key": "app", "operator": "In", "values": ["web"]}
                                ]
                            },
                            "namespaceSelector": {},
                            "topologyKey": "kubernetes.io/hostname",
                        },
                        {"topologyKey": "kubernetes.io/hostname"},
                    ]
                },
            }
        )
    )
    assert pod.required_pod_affinity == (
        PodAffinityTerm(
            label_selector=LabelSelector(match_labels={"app": "cache"}),
            topology_key="topology.kubernetes.io/zone",
            namespaces=("infra",),
        ),
    )
    anti, no_selector = pod.required_pod_anti_affinity
    assert anti.label_selector == LabelSelector(
        match_expressions=(Requirement(key="app", operator="In", values=("web",)),)
    )
    assert anti.namespace_selector == LabelSelector()
    assert no_selector.label_selector is None  # a nil labelSelector selects no pod


def test_host_ports_of_containers_and_sidecars() -> None:
    pod = only_pod(
        raw_pod(
            initContainers=[
                container("init", ports=[{"containerPort": 1, "hostPort": 7000}]),
                container(
                    "mesh",
                    restartPolicy="Always",
                    ports=[{"containerPort": 15001, "hostPort": 15001}],
                ),
            ],
            containers=[
                container(
                    "dns",
                    ports=[
                        {"containerPort": 53, "hostPort": 53, "protocol": "UDP"},
                        {"containerPort": 53, "hostPort": 53, "protocol": "TCP"},
                        {"containerPort": 8080},
                    ],
                )
            ],
        )
    )
    assert pod.host_ports == (53, 15001)


# --- other pod fields --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("volume", "local", "pvc"),
    [
        ({"name": "v", "emptyDir": {}}, True, False),
        ({"name": "v", "emptyDir": {"medium": "Memory"}}, True, False),
        ({"name": "v", "hostPath": {"path": "/var/log"}}, True, False),
        ({"name": "v", "persistentVolumeClaim": {"claimName": "data"}}, False, True),
        ({"name": "v", "configMap": {"name": "cfg"}}, False, False),
    ],
    ids=["emptydir", "memory-emptydir", "hostpath", "pvc", "configmap"],
)
def test_volumes(volume: dict[str, Any], local: bool, pvc: bool) -> None:
    pod = only_pod(raw_pod(volumes=[volume]))
    assert (pod.has_local_storage, pod.has_pvc) == (local, pvc)


def test_pod_fields() -> None:
    raw = raw_pod(resourceClaims=[{"name": "gpu", "resourceClaimName": "gpu-claim"}])
    raw["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "abc"}
    raw["metadata"]["deletionTimestamp"] = "2026-11-29T09:00:00+01:00"
    raw["status"]["containerStatuses"] = [
        {"name": "a", "restartCount": 3},
        {"name": "b", "restartCount": 4},
    ]
    raw["status"]["qosClass"] = "Burstable"
    pod = only_pod(raw)
    assert pod.key == "shop/web-1"
    assert pod.uid == "uid-web-1"
    assert pod.node_name == "worker-a"
    assert (pod.phase, pod.ready) == ("Running", True)
    assert pod.labels == {"app": "web"}
    assert pod.is_mirror
    assert pod.has_resource_claims
    assert pod.restart_count == 7
    assert pod.creation_timestamp == datetime.datetime(2026, 11, 28, 6, 30, 12, tzinfo=datetime.UTC)
    assert pod.deletion_timestamp == datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)
    assert pod.deletion_timestamp.tzinfo is datetime.UTC


def test_terminal_pods_are_kept_but_are_not_load() -> None:
    done = raw_pod("done")
    done["status"] = {"phase": "Succeeded", "conditions": [{"type": "Ready", "status": "False"}]}
    state = cluster_state_from_objects([NODE, done, raw_pod("running")])
    assert [p.name for p in state.pods] == ["done", "running"]
    assert not state.pods[0].is_load
    assert not state.pods[0].ready
    assert [p.name for p in state.pods_by_node["worker-a"]] == ["running"]


def test_a_pod_without_status_is_pending_and_unbound_pods_are_not_load() -> None:
    raw = raw_pod()
    del raw["status"]
    del raw["spec"]["nodeName"]
    pod = only_pod(raw)
    assert (pod.phase, pod.ready, pod.node_name, pod.is_load) == ("Pending", False, None, False)


def test_priority_from_spec_or_from_the_class() -> None:
    classes = [
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "normal"},
            "value": 10,
            "globalDefault": True,
        },
    ]
    spec_given = raw_pod("a", priority=5, priorityClassName="high")
    from_class = raw_pod("b", priorityClassName="high")
    from_default = raw_pod("c")
    builtin = raw_pod("d", priorityClassName="system-node-critical")
    for pod in (from_class, from_default, builtin):
        del pod["spec"]["priority"]
    state = cluster_state_from_objects([*classes, spec_given, from_class, from_default, builtin])
    assert [p.priority for p in state.pods] == [5, 1000, 10, 2000001000]
    assert state.pods[1].priority_class_name == "high"
    assert state.priority_classes == {"high": 1000, "normal": 10}


def test_a_pod_of_an_unknown_priority_class_without_priority_counts_as_critical() -> None:
    pod = raw_pod(priorityClassName="critical-payments")
    del pod["spec"]["priority"]
    (converted,) = cluster_state_from_objects([pod]).pods
    assert converted.priority == 2_000_000_000


def test_namespace_labels() -> None:
    namespace = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "shop", "labels": {"team": "payments"}},
    }
    state = cluster_state_from_objects([namespace])
    assert state.namespace_labels == {
        "shop": {"team": "payments", "kubernetes.io/metadata.name": "shop"}
    }


# --- input handling ----------------------------------------------------------------------


def test_lists_are_flattened_and_unknown_kinds_ignored() -> None:
    state = cluster_state_from_objects(
        [
            {
                "apiVersion": "v1",
                "kind": "List",
                "items": [NODE, {"apiVersion": "v1", "kind": "List", "items": [raw_pod()]}],
            },
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"}},
            {"apiVersion": "example.com/v1", "kind": "Pod", "metadata": {"name": "not-a-pod"}},
            {"apiVersion": "v1", "kind": "PodList", "items": []},
            None,
        ]
    )
    assert [n.name for n in state.nodes] == ["worker-a"]
    assert [p.name for p in state.pods] == ["web-1"]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda p: p["metadata"].pop("name"), r"Pod \(object #1\): metadata\.name: missing"),
        (
            lambda p: p["spec"]["containers"][0]["resources"]["requests"].update(cpu="1.5.5"),
            r"Pod shop/web-1: spec\.containers\[0\]\.resources\.requests\.cpu: "
            r"invalid quantity '1\.5\.5'",
        ),
        (
            lambda p: p["spec"].update(overhead={"memory": "-1Gi"}),
            r"Pod shop/web-1: spec\.overhead\.memory: '-1Gi' is negative",
        ),
        (
            lambda p: p["spec"].update(tolerations=[{"key": 3}]),
            r"Pod shop/web-1: spec\.tolerations\[0\]\.key: expected a string, got the number 3",
        ),
        (
            lambda p: p["metadata"]["labels"].update(version=2),
            r"Pod shop/web-1: metadata\.labels\.version: "
            r"expected a string, got the number 2 \(quote it\)",
        ),
        (
            lambda p: p["spec"].update(containers={"name": "app"}),
            r"Pod shop/web-1: spec\.containers: expected a list, got an object",
        ),
        (
            lambda p: p["metadata"].update(creationTimestamp="yesterday"),
            r"Pod shop/web-1: metadata\.creationTimestamp: invalid timestamp 'yesterday'",
        ),
        (
            lambda p: p["spec"].update(
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "z", "operator": "Near"}]}
                            ]
                        }
                    }
                }
            ),
            r"nodeSelectorTerms\[0\]\.matchExpressions\[0\]\.operator: 'Near' is not one of",
        ),
        (
            lambda p: p["spec"]["containers"].append(
                container("b", ports=[{"containerPort": 1, "hostPort": "80"}])
            ),
            r"spec\.containers\[1\]\.ports\[0\]\.hostPort: expected an integer",
        ),
    ],
    ids=[
        "no-name",
        "bad-quantity",
        "negative-quantity",
        "toleration-key-type",
        "unquoted-label-value",
        "containers-not-a-list",
        "bad-timestamp",
        "unknown-operator",
        "host-port-type",
    ],
)
def test_bad_objects_name_the_object_and_the_field(mutate: Any, message: str) -> None:
    pod = raw_pod()
    mutate(pod)
    with pytest.raises(InputError, match=message):
        cluster_state_from_objects([pod])


def test_an_object_without_kind_is_refused() -> None:
    with pytest.raises(InputError, match=r"object #2: kind: missing"):
        cluster_state_from_objects([NODE, {"metadata": {"name": "x"}}])


def test_the_same_pod_twice_is_refused() -> None:
    with pytest.raises(InputError, match="Pod shop/web-1 appears more than once"):
        cluster_state_from_objects([raw_pod(), raw_pod()])


def test_input_objects_are_not_modified() -> None:
    pod = raw_pod(containers=[container("a", limit_cpu="1", limit_memory="1Gi")])
    before = copy.deepcopy(pod)
    cluster_state_from_objects([NODE, pod])
    assert pod == before


def test_converted_objects_are_hashable() -> None:
    state = cluster_state_from_objects([NODE, raw_pod()])
    assert len({state.pods[0], state.pods[0]}) == 1
    assert len({state.nodes[0]}) == 1


@pytest.mark.parametrize(
    ("value", "matches"),
    [("11", True), ("+11", True), ("9", False), ("1_1", False), (" 11", False), ("x", False)],
)
def test_gt_reads_label_values_as_go_integers(value: str, matches: bool) -> None:
    requirement = Requirement(key="cores", operator="Gt", values=("10",))
    assert requirement.matches({"cores": value}) is matches
