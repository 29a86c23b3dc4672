"""Pods, workloads and nodes parsed typed and read without checks (_plain_pod,
_plain_workload, _plain_node) read as the checked readers read them.

Covered (Hypothesis): generated Pod objects, as the API server writes them and
malformed anywhere (test_pod_reading's, with affinity, topology spread, node
selectors, resource claims, volumes and owner references added), sent as JSON
through the PlainPodReader give the pod and priority flag _pod.read_pod gives with
the checked reading, or nothing, where read_pod refuses the pod or reads something
the plain reader leaves to it; one reader for every example, as for every pod of
one load. Pods as the API server writes them, compact or indented as kubectl
prints them, are read the plain way; a file of such pods loads as its objects
convert, and an odd pod among them still gets the file refused naming it.
Workloads of every kind read as one, as the API server writes them and
malformed, read as _objects.read_workload reads them, or not at all; so do
nodes, as _objects.read_node reads them.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pathlib
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from loadaware.cluster import (
    _convert,
    _fast,
    _file,
    _objects,
    _plain_node,
    _plain_pod,
    _plain_workload,
    _pod,
    _reading,
    _types,
    cluster_state_from_objects,
    load_cluster_file,
)
from loadaware.errors import InputError
from tests.cluster.test_pod_reading import (
    LABELS,
    POD,
    QUANTITY,
    RESOURCES,
    TIMESTAMP,
    WRONG,
    maybe_wrong,
)

DATA = pathlib.Path(__file__).parent / "data"

# One for every example (see the module).
PLAIN = _plain_pod.PlainPodReader(_fast.FastReading())

SELECTOR = st.fixed_dictionaries(
    {},
    optional={
        "matchLabels": maybe_wrong(LABELS),
        "matchExpressions": maybe_wrong(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "key": maybe_wrong(st.just("tier")),
                        "operator": maybe_wrong(st.sampled_from(["In", "Exists", "Near"])),
                    },
                    optional={"values": maybe_wrong(st.just(["db"]))},
                ),
                max_size=1,
            )
        ),
    },
)
NODE_TERM = st.fixed_dictionaries(
    {},
    optional={
        "matchFields": maybe_wrong(
            st.just([{"key": "metadata.name", "operator": "In", "values": ["node-a"]}])
        ),
        "matchExpressions": maybe_wrong(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "key": maybe_wrong(st.sampled_from(["zone", ""])),
                        "operator": maybe_wrong(st.sampled_from(["In", "Gt", "Near"])),
                    },
                    optional={"values": maybe_wrong(st.just(["a", "b"]))},
                ),
                max_size=2,
            )
        ),
    },
)
AFFINITY = st.fixed_dictionaries(
    {},
    optional={
        "nodeAffinity": st.fixed_dictionaries(
            {
                "requiredDuringSchedulingIgnoredDuringExecution": st.fixed_dictionaries(
                    {"nodeSelectorTerms": maybe_wrong(st.lists(NODE_TERM, max_size=2))}
                )
            },
            optional={
                "preferredDuringSchedulingIgnoredDuringExecution": maybe_wrong(
                    st.lists(
                        st.fixed_dictionaries(
                            {"weight": maybe_wrong(st.integers(0, 2)), "preference": NODE_TERM}
                        ),
                        max_size=1,
                    )
                )
            },
        ),
        "podAffinity": st.fixed_dictionaries(
            {},
            optional={
                "requiredDuringSchedulingIgnoredDuringExecution": maybe_wrong(
                    st.lists(
                        st.fixed_dictionaries(
                            {
                                "topologyKey": st.just("topology.kubernetes.io/zone"),
                                "labelSelector": SELECTOR,
                            }
                        ),
                        max_size=1,
                    )
                ),
                "preferredDuringSchedulingIgnoredDuringExecution": maybe_wrong(
                    st.lists(
                        st.fixed_dictionaries(
                            {
                                "weight": maybe_wrong(st.integers(0, 2)),
                                "podAffinityTerm": st.fixed_dictionaries(
                                    {
                                        "topologyKey": maybe_wrong(st.just("zone")),
                                        "labelSelector": SELECTOR,
                                    }
                                ),
                            }
                        ),
                        max_size=1,
                    )
                ),
            },
        ),
        "podAntiAffinity": st.fixed_dictionaries(
            {
                "requiredDuringSchedulingIgnoredDuringExecution": maybe_wrong(
                    st.lists(
                        st.fixed_dictionaries(
                            {
                                "topologyKey": maybe_wrong(st.just("kubernetes.io/hostname")),
                                "labelSelector": maybe_wrong(SELECTOR),
                            }
                        ),
                        max_size=1,
                    )
                )
            }
        ),
    },
)
SPREAD = st.lists(
    st.fixed_dictionaries(
        {
            "maxSkew": maybe_wrong(st.integers(0, 2)),
            "topologyKey": maybe_wrong(st.just("topology.kubernetes.io/zone")),
            "whenUnsatisfiable": maybe_wrong(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
            "labelSelector": maybe_wrong(SELECTOR),
        },
        optional={"matchLabelKeys": maybe_wrong(st.just(["app"]))},
    ),
    max_size=1,
)
OWNER = st.fixed_dictionaries(
    {
        "kind": maybe_wrong(st.sampled_from(["ReplicaSet", "Node"])),
        "name": maybe_wrong(st.sampled_from(["web-7d9f", "worker-a"])),
    },
    optional={
        "uid": maybe_wrong(st.just("u-1")),
        "controller": maybe_wrong(st.booleans()),
    },
)
VOLUME = st.fixed_dictionaries(
    {"name": st.just("v")},
    optional={
        "emptyDir": maybe_wrong(st.just({})),
        "hostPath": maybe_wrong(st.just({"path": "/var/log"})),
        "persistentVolumeClaim": maybe_wrong(st.just({"claimName": "data"})),
    },
)
EXTRA_SPEC = st.fixed_dictionaries(
    {},
    optional={
        "affinity": maybe_wrong(AFFINITY),
        "topologySpreadConstraints": maybe_wrong(SPREAD),
        "nodeSelector": maybe_wrong(LABELS),
        "resourceClaims": maybe_wrong(st.lists(st.just({"name": "gpu"}), max_size=1)),
        "volumes": maybe_wrong(st.lists(maybe_wrong(VOLUME), max_size=2)),
        "schedulerName": maybe_wrong(st.sampled_from(["", "other-scheduler"])),
    },
)
EXTRA_STATUS = st.fixed_dictionaries(
    {},
    optional={
        "conditions": maybe_wrong(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "type": maybe_wrong(st.sampled_from(["Ready", "PodScheduled"])),
                        "status": maybe_wrong(st.sampled_from(["True", "False"])),
                    }
                ),
                max_size=2,
            )
        ),
    },
)


@st.composite
def pods(draw: st.DrawFn) -> dict[str, Any]:
    """test_pod_reading's pods, with the fields above added (mostly read the checked way)."""
    pod = copy.deepcopy(draw(POD))
    for field, extra in (("spec", EXTRA_SPEC), ("status", EXTRA_STATUS)):
        if isinstance(pod.get(field), dict):
            pod[field].update(draw(extra))
    if isinstance(pod["metadata"], dict) and draw(st.booleans()):
        pod["metadata"]["ownerReferences"] = draw(maybe_wrong(st.lists(OWNER, max_size=3)))
    return pod


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value: keys of objects, indexes of lists."""
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return []
    found = []
    for key, item in items:
        found.append((*prefix, key))
        found.extend(paths(item, (*prefix, key)))
    return found


API_CONTAINER = st.fixed_dictionaries(
    {"name": st.sampled_from(["app", "proxy"]), "image": st.sampled_from(["web:1", "proxy:2"])},
    optional={
        "resources": RESOURCES,
        "ports": st.lists(st.fixed_dictionaries({"containerPort": st.just(8080)}), max_size=1),
    },
)
API_STATUS = st.fixed_dictionaries(
    {"name": st.sampled_from(["app", "proxy"]), "restartCount": st.integers(0, 3)},
    optional={
        "state": st.sampled_from(
            [
                {"running": {"startedAt": "2026-11-28T06:30:12Z"}},
                {"waiting": {"reason": "CrashLoopBackOff"}},
                {"terminated": {"reason": "Error", "exitCode": 1}},
                {"terminated": {}},
            ]
        )
    },
)
API_TOLERATION = st.fixed_dictionaries(
    {"operator": st.sampled_from(["Exists", "Equal", ""])},
    optional={
        "key": st.sampled_from(["node.kubernetes.io/not-ready", "dedicated"]),
        "value": st.just("gpu"),
        "effect": st.sampled_from(["NoExecute", "NoSchedule"]),
        "tolerationSeconds": st.just(300),
    },
)


@st.composite
def api_server_pods(draw: st.DrawFn) -> dict[str, Any]:
    """Pods as the API server writes them, in many variants, about half of them with
    one field changed: a value of another type or kind, or a key dropped."""
    pod = api_server_pod(draw(st.sampled_from(["web-1", "web-2"])))
    meta, spec, status = pod["metadata"], pod["spec"], pod["status"]
    spec["containers"] = draw(st.lists(API_CONTAINER, min_size=1, max_size=3))
    spec["tolerations"] = draw(st.lists(API_TOLERATION, max_size=3))
    spec["volumes"] = draw(st.lists(VOLUME, max_size=2))
    status["containerStatuses"] = draw(st.lists(API_STATUS, max_size=2))
    status["conditions"] = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "type": st.sampled_from(["Ready", "PodScheduled"]),
                    "status": st.sampled_from(["True", "False", "Unknown"]),
                }
            ),
            max_size=2,
        )
    )
    meta["ownerReferences"] = draw(st.lists(OWNER, max_size=3))
    meta["creationTimestamp"] = draw(TIMESTAMP)
    status["startTime"] = draw(TIMESTAMP)
    status["qosClass"] = draw(st.sampled_from(["Burstable", "Guaranteed", "BestEffort"]))
    for key, strategy in (
        ("priority", st.integers(0, 1000)),
        ("priorityClassName", st.sampled_from(["high", "system-node-critical"])),
        ("nodeSelector", LABELS),
        ("affinity", AFFINITY),
        ("topologySpreadConstraints", SPREAD),
        ("resourceClaims", st.just([{"name": "gpu"}])),
    ):
        if draw(st.booleans()):
            spec[key] = draw(strategy)
        else:
            spec.pop(key, None)
    if draw(st.booleans()):
        meta["deletionTimestamp"] = draw(TIMESTAMP)
    if draw(st.booleans()):
        status["initContainerStatuses"] = draw(st.lists(API_STATUS, max_size=1))
    pod = copy.deepcopy(pod)  # st.just values are shared between examples
    for place in draw(st.lists(st.sampled_from(paths(pod)), max_size=1)):
        if place == ("metadata", "name"):  # read before either reader (see _convert)
            continue
        parent: Any = pod
        for step in place[:-1]:
            parent = parent[step]
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[place[-1]]
        else:
            parent[place[-1]] = draw(WRONG)
    return pod


def checked_read(raw: Any) -> tuple[Any, bool] | None:
    """read_pod with the checked reading; None where it refuses the pod, or where the
    object is not read as a pod."""
    try:
        read_as = _convert._read_as(raw, 1)
        if read_as is None or read_as[0] != ("", "Pod"):
            return None
        return _pod.read_pod(raw, read_as[1], _reading.CheckedReading())
    except InputError:
        return None


def api_server_pod(name: str = "web-1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "uid": f"uid-{name}",
            "labels": {"app": "web"},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-7d9f",
                    "uid": "u-1",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "creationTimestamp": "2026-11-28T06:30:12Z",
        },
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "web:1",
                    "env": [{"name": "MODE", "value": "fast"}],
                    "resources": {
                        "requests": {"cpu": "250m", "memory": "64Mi"},
                        "limits": {"cpu": "500m", "memory": "128Mi"},
                    },
                    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                },
                {"name": "proxy", "image": "proxy:2", "resources": {"limits": {"cpu": "1"}}},
            ],
            "nodeName": "node-a",
            "priority": 0,
            "schedulerName": "default-scheduler",
            "tolerations": [
                {
                    "key": "node.kubernetes.io/not-ready",
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }
            ],
            "volumes": [{"name": "cache", "emptyDir": {}}],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": ["a"]}
                                ]
                            }
                        ]
                    }
                }
            },
        },
        "status": {
            "phase": "Running",
            "qosClass": "Burstable",
            "startTime": "2026-11-28T06:30:12Z",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                {"name": "app", "restartCount": 2, "state": {"running": {"startedAt": "x"}}},
                {
                    "name": "proxy",
                    "restartCount": 0,
                    "state": {"terminated": {"reason": "Error", "exitCode": 1}},
                },
            ],
        },
    }


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(pods(), api_server_pods()))
@example(api_server_pod())
def test_the_plain_reader_reads_every_pod_as_the_checked_one(raw: dict[str, Any]) -> None:
    text = msgspec.json.encode(raw)
    parsed = msgspec.json.decode(text)  # what the plain reader sees
    checked = checked_read(parsed)
    for _ in range(2):  # again, with what it kept from the first time
        plain = PLAIN.read_json(text)
        assert plain is None or plain == checked


@pytest.mark.parametrize("indent", [None, 4], ids=["compact", "indented"])
def test_pods_as_the_api_server_writes_them_are_read_the_plain_way(indent: int | None) -> None:
    pods = [api_server_pod(), *json.loads((DATA / "cluster.json").read_text())["items"]]
    # Host ports and init containers are left to the checked reader (see below).
    pods = [p for p in pods if p["kind"] == "Pod" and "hostPort" not in json.dumps(p)]
    assert len(pods) > 1
    for raw in pods:
        text = json.dumps(raw, indent=indent).encode()
        assert PLAIN.read_json(text) == checked_read(raw)


@pytest.mark.parametrize(
    "change",
    [
        lambda pod: pod["metadata"].update(name=""),
        lambda pod: pod["metadata"].update(labels={"app": 1}),
        lambda pod: pod["spec"]["containers"][0]["resources"]["requests"].update(cpu="1x"),
        lambda pod: pod["spec"].update(initContainers=[{"name": "setup", "image": "s:1"}]),
        lambda pod: pod["spec"]["containers"][0]["ports"][0].update(hostPort=80),
        lambda pod: pod["spec"]["containers"][0]["resources"]["limits"].update(
            {"nvidia.com/gpu": "1"}
        ),
        lambda pod: pod["status"].update(qosClass=""),
        lambda pod: pod["metadata"].update(creationTimestamp="2026-13-01T00:00:00Z"),
        lambda pod: pod.update(apiVersion="example.com/v1"),
    ],
    ids=[
        "no-name",
        "label-not-text",
        "bad-quantity",
        "init-containers",
        "host-port",
        "extended-resource",
        "no-qos-class",
        "bad-timestamp",
        "other-group",
    ],
)
def test_a_pod_the_plain_reader_leaves_is_left_to_the_checked_one(change: Any) -> None:
    raw = api_server_pod()
    change(raw)
    assert PLAIN.read_json(msgspec.json.encode(raw)) is None


def test_a_file_of_plain_pods_loads_as_its_objects_convert(tmp_path: pathlib.Path) -> None:
    items = [
        *json.loads((DATA / "cluster.json").read_text())["items"],
        *(api_server_pod(f"web-{i}") for i in range(3)),
    ]
    items[-1]["spec"]["initContainers"] = [{"name": "setup", "image": "s:1"}]  # checked way
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    assert load_cluster_file(path) == cluster_state_from_objects(items)


def test_an_odd_pod_among_plain_ones_is_refused_by_name(tmp_path: pathlib.Path) -> None:
    items = [api_server_pod(f"web-{i}") for i in range(3)]
    items[1]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "1x"
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    with pytest.raises(InputError, match=r"Pod shop/web-1: spec\.containers\[0\]"):
        load_cluster_file(path)


WORKLOAD = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["ReplicaSet", "Deployment", "StatefulSet", "DaemonSet", "Job"]),
        "metadata": st.fixed_dictionaries(
            {"name": st.sampled_from(["web", "web-7d9f"])},
            optional={
                "namespace": st.sampled_from(["shop", ""]),
                "uid": maybe_wrong(st.just("u-1")),
                "ownerReferences": maybe_wrong(st.lists(maybe_wrong(OWNER), max_size=2)),
            },
        ),
    },
    optional={
        "spec": maybe_wrong(
            st.fixed_dictionaries(
                {},
                optional={
                    "replicas": maybe_wrong(st.integers(0, 3)),
                    "selector": maybe_wrong(SELECTOR),
                    "template": st.just({"metadata": {"labels": {"app": "web"}}}),
                },
            )
        ),
        "status": maybe_wrong(
            st.fixed_dictionaries(
                {},
                optional={
                    "desiredNumberScheduled": maybe_wrong(st.integers(0, 3)),
                    "replicas": maybe_wrong(st.integers(0, 3)),
                },
            )
        ),
    },
)


@st.composite
def workloads(draw: st.DrawFn) -> dict[str, Any]:
    """WORKLOAD, mostly in its kind's API group."""
    raw = dict(draw(WORKLOAD))
    right = "batch/v1" if raw["kind"] == "Job" else "apps/v1"
    raw["apiVersion"] = draw(st.sampled_from([right, right, right, "v1", "example.com/v1"]))
    return raw


# One for every example (see the module).
PLAIN_WORKLOADS = _plain_workload.PlainWorkloadReader(_fast.FastReading())


def checked_workload(raw: Any) -> Any:
    """read_workload; None where it refuses the object or does not read it as a workload."""
    try:
        read_as = _convert._read_as(raw, 1)
        if read_as is None or read_as[0] != _convert._WORKLOAD:
            return None
        return _objects.read_workload(raw, read_as[1], _reading.CheckedReading())
    except InputError:
        return None


@settings(max_examples=1500, deadline=None)
@given(workloads())
@example(
    {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": "web-7d9f",
            "namespace": "shop",
            "uid": "u-1",
            "ownerReferences": [
                {"kind": "Deployment", "name": "web", "uid": "u-0", "controller": True}
            ],
        },
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}},
        "status": {"replicas": 3},
    }
)
def test_the_plain_reader_reads_every_workload_as_the_checked_one(raw: dict[str, Any]) -> None:
    plain = PLAIN_WORKLOADS.read_json(msgspec.json.encode(raw))
    assert plain is None or plain == checked_workload(msgspec.json.decode(msgspec.json.encode(raw)))


def test_the_plain_reader_reads_every_kind_read_as_a_workload() -> None:
    assert {
        (group, kind) for kind, group in _plain_workload._GROUP_OF_KIND.items()
    } == _convert._WORKLOAD_KINDS
    assert {kind.encode() for kind in _plain_workload._GROUP_OF_KIND} == _file._WORKLOAD_KINDS


def test_the_plain_reader_gives_the_pod_fields_in_their_order() -> None:
    # It calls _types.new_pod with every field in this order, not by name (see _plain_pod).
    assert [f.name for f in dataclasses.fields(_types.Pod) if f.init] == [
        "namespace", "name", "uid", "node_name", "scheduler_name", "phase", "ready",
        "labels", "annotations", "owner", "other_owners", "workload", "owner_selector",
        "cpu_request_millicores", "memory_request_bytes", "extended_requests", "priority",
        "priority_class_name", "qos_class", "creation_timestamp", "deletion_timestamp",
        "restart_count", "has_local_storage", "has_pvc", "has_resource_claims", "is_mirror",
        "tolerations", "node_selector", "required_node_affinity", "required_pod_affinity",
        "required_pod_anti_affinity", "host_ports", "preferred_node_affinity",
        "preferred_pod_affinity", "preferred_pod_anti_affinity", "topology_spread_constraints",
        "start_time", "status_reason", "container_statuses", "container_images",
    ]  # fmt: skip


QUANTITIES_OF_NODE = st.fixed_dictionaries(
    {},
    optional={
        name: maybe_wrong(QUANTITY)
        for name in ("cpu", "memory", "pods", "nvidia.com/gpu", "ephemeral-storage")
    },
)
ALLOCATABLE = st.fixed_dictionaries(
    {"cpu": maybe_wrong(QUANTITY), "memory": maybe_wrong(QUANTITY)},
    optional={name: maybe_wrong(QUANTITY) for name in ("pods", "nvidia.com/gpu")},
)
NODE = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["v1", "v1", "v1", "example.com/v1"]),
        "kind": st.just("Node"),
        "metadata": st.fixed_dictionaries(
            {"name": st.sampled_from(["worker-a", "worker-b"])},
            optional={"uid": maybe_wrong(st.just("n-1")), "labels": maybe_wrong(LABELS)},
        ),
    },
    optional={
        "spec": maybe_wrong(
            st.fixed_dictionaries(
                {},
                optional={
                    "unschedulable": maybe_wrong(st.booleans()),
                    "taints": maybe_wrong(
                        st.lists(
                            st.fixed_dictionaries(
                                {
                                    "key": maybe_wrong(st.just("dedicated")),
                                    "effect": maybe_wrong(
                                        st.sampled_from(["NoSchedule", "NoExecute", "Sometimes"])
                                    ),
                                },
                                optional={"value": maybe_wrong(st.just("gpu"))},
                            ),
                            max_size=2,
                        )
                    ),
                },
            )
        ),
        "status": maybe_wrong(
            st.fixed_dictionaries(
                {"allocatable": maybe_wrong(ALLOCATABLE)},
                optional={
                    "capacity": maybe_wrong(QUANTITIES_OF_NODE),
                    "conditions": maybe_wrong(
                        st.lists(
                            st.fixed_dictionaries(
                                {
                                    "type": maybe_wrong(st.sampled_from(["Ready", "DiskPressure"])),
                                    "status": maybe_wrong(st.sampled_from(["True", "False"])),
                                }
                            ),
                            max_size=2,
                        )
                    ),
                    "images": maybe_wrong(
                        st.lists(
                            st.fixed_dictionaries(
                                {},
                                optional={
                                    "names": maybe_wrong(st.just(["web:1", "web@sha256:0"])),
                                    "sizeBytes": maybe_wrong(st.sampled_from([0, 1000])),
                                },
                            ),
                            max_size=2,
                        )
                    ),
                },
            )
        ),
    },
)

# One for every example (see the module).
PLAIN_NODES = _plain_node.PlainNodeReader()


def checked_node(raw: Any) -> Any:
    """read_node; None where it refuses the object or does not read it as a node."""
    try:
        read_as = _convert._read_as(raw, 1)
        if read_as is None or read_as[0] != ("", "Node"):
            return None
        return _objects.read_node(raw, read_as[1], _reading.CheckedReading())
    except InputError:
        return None


@settings(max_examples=1500, deadline=None)
@given(NODE)
@example(json.loads((DATA / "cluster.json").read_text())["items"][0])
def test_the_plain_reader_reads_every_node_as_the_checked_one(raw: dict[str, Any]) -> None:
    text = msgspec.json.encode(raw)
    for _ in range(2):  # again, with the images it kept
        plain = PLAIN_NODES.read_json(text)
        assert plain is None or plain == checked_node(msgspec.json.decode(text))
