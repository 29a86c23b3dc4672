"""The parts of a JSON List's items kept as they are parsed (_file._RawItem) hold
all the converter reads.

Covered: every key named in the converter's code occurs in CORPUS, objects of
every kind read with every field read; CORPUS converts to the same ClusterState
parsed with the schema as parsed in full, and so it does, or fails the same way,
with any of its objects changed anywhere (a value of another type, a key dropped
or added); an item of another shape than the schema's is parsed in full; a byte
that is not UTF-8 in a part the schema drops still gets the file refused.
"""

from __future__ import annotations

import ast
import copy
import json
import pathlib
import re
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadaware.cluster import (
    _convert,
    _fast,
    _fields,
    _file,
    _objects,
    _pod,
    _reading,
    _selectors,
    cluster_state_from_objects,
    load_cluster_file,
)
from loadaware.errors import InputError

DATA = pathlib.Path(__file__).parent / "data"


def rich_pod(name: str, **spec: Any) -> dict[str, Any]:
    """A pod with every field the converter reads; `spec` entries replace its spec's."""
    selector = {
        "matchLabels": {"app": "db"},
        "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["cache"]}],
    }
    term = {
        "topologyKey": "topology.kubernetes.io/zone",
        "labelSelector": selector,
        "namespaces": ["shop"],
        "namespaceSelector": {"matchLabels": {"team": "shop"}},
    }
    node_term = {
        "matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}],
        "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["worker-b"]}],
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": "web-7d9f8c6b5-",
            "namespace": "shop",
            "uid": f"uid-{name}",
            "resourceVersion": "4855626",
            "labels": {"app": "web", "tier": "front"},
            "annotations": {"kubernetes.io/config.mirror": "abc"},
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": "worker-a", "uid": "uid-a"},
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-7d9f8c6b5",
                    "uid": "uid-rs",
                    "controller": True,
                    "blockOwnerDeletion": True,
                },
            ],
            "creationTimestamp": "2026-11-28T06:30:12Z",
            "deletionTimestamp": "2026-11-28T07:30:12+01:00",
        },
        "spec": {
            "nodeName": "worker-a",
            "priority": 1000,
            "priorityClassName": "high",
            "schedulerName": "default-scheduler",
            "initContainers": [
                {
                    "name": "setup",
                    "image": "example/setup:1",
                    "resources": {
                        "requests": {"cpu": "2", "memory": "1Gi", "example.com/fpga": "1"}
                    },
                    "ports": [{"containerPort": 7000, "hostPort": 7000}],
                },
                {
                    "name": "mesh",
                    "image": "example/mesh:1",
                    "restartPolicy": "Always",
                    "resources": {
                        "limits": {"cpu": "100m", "memory": "64Mi", "nvidia.com/gpu": "1"}
                    },
                    "ports": [{"containerPort": 15001, "hostPort": 15001}],
                },
            ],
            "containers": [
                {
                    "name": "app",
                    "image": "example/app:1",
                    "env": [{"name": "MODE", "value": "fast"}],
                    "resources": {
                        "requests": {"cpu": "250m", "memory": "512Mi", "nvidia.com/gpu": "2"},
                        "limits": {"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": "2"},
                    },
                    "ports": [
                        {"containerPort": 53, "hostPort": 53, "protocol": "UDP"},
                        {"name": "http", "containerPort": 8080},
                    ],
                    "volumeMounts": [{"name": "cache", "mountPath": "/cache"}],
                }
            ],
            "overhead": {"cpu": "10m", "memory": "1Mi"},
            "volumes": [
                {"name": "cache", "emptyDir": {}},
                {"name": "host", "hostPath": {"path": "/var/log"}},
                {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "config", "configMap": {"name": "web"}},
            ],
            "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu"}],
            "tolerations": [
                {"key": "dedicated", "operator": "Equal", "value": "web", "effect": "NoSchedule"},
                {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            ],
            "nodeSelector": {"zone": "a"},
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [node_term]
                    },
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 5, "preference": node_term}
                    ],
                },
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [term],
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 10, "podAffinityTerm": term}
                    ],
                },
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [term],
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 20, "podAffinityTerm": term}
                    ],
                },
            },
            "topologySpreadConstraints": [
                {
                    "maxSkew": 2,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": selector,
                    "matchLabelKeys": ["tier"],
                    "minDomains": 2,
                    "nodeAffinityPolicy": "Ignore",
                    "nodeTaintsPolicy": "Honor",
                }
            ],
            **spec,
        },
        "status": {
            "phase": "Running",
            "reason": "",
            "hostIP": "10.0.0.1",
            "qosClass": "Burstable",
            "startTime": "2026-11-28T06:30:12Z",
            "conditions": [
                {
                    "type": "Initialized",
                    "status": "True",
                    "lastTransitionTime": "2026-11-28T06:30:12Z",
                },
                {"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-28T06:31:00Z"},
            ],
            "initContainerStatuses": [
                {
                    "name": "setup",
                    "image": "example/setup:1",
                    "restartCount": 0,
                    "state": {"terminated": {"reason": "Completed", "exitCode": 0}},
                },
                {"name": "mesh", "restartCount": 1, "state": {"running": {"startedAt": "x"}}},
            ],
            "containerStatuses": [
                {
                    "name": "app",
                    "imageID": "example/app@sha256:0",
                    "restartCount": 3,
                    "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}},
                    "lastState": {"terminated": {"reason": "Error", "exitCode": 1}},
                }
            ],
        },
    }


def plain_pod(name: str, **spec: Any) -> dict[str, Any]:
    """A pod as most of a large dump's, read the quick way; without spec.priority, its
    priority comes from its class (the default one unless `spec` names one)."""
    pod = rich_pod(name, **spec)
    for field in ("initContainers", "affinity", "topologySpreadConstraints", "priority"):
        del pod["spec"][field]
    if "priorityClassName" not in spec:
        del pod["spec"]["priorityClassName"]
    for container in pod["spec"]["containers"]:
        container["resources"] = {"requests": {"cpu": "100m"}, "limits": {"memory": "128Mi"}}
        container["ports"] = [{"containerPort": 8080}]
    pod["status"] = {"phase": "Failed", "reason": "Evicted"}
    return pod


def workload(
    kind: str, name: str, owner: dict[str, Any] | None = None, **body: Any
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": "shop", "uid": f"uid-{name}"}
    if owner is not None:
        metadata["ownerReferences"] = [{**owner, "controller": True}]
    api_version = "batch/v1" if kind == "Job" else "apps/v1"
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata, **body}


SELECTOR = {
    "matchLabels": {"app": "web"},
    "matchExpressions": [{"key": "tier", "operator": "Exists"}],
}
TEMPLATE = {"metadata": {"labels": {"app": "web"}}, "spec": plain_pod("template")["spec"]}

CORPUS: list[dict[str, Any]] = [
    *json.loads((DATA / "cluster.json").read_text())["items"],
    rich_pod("web-1"),
    rich_pod("web-2", resources={"requests": {"cpu": "3", "memory": "2Gi"}}),
    plain_pod("web-3"),
    {
        "apiVersion": "v1",
        "kind": "PodList",
        "items": [plain_pod("web-4", priorityClassName="high")],
    },
    {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "worker-b", "uid": "uid-b", "labels": {"zone": "b"}},
        "spec": {
            "unschedulable": True,
            "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
        },
        "status": {
            "allocatable": {"cpu": "7", "memory": "30Gi", "nvidia.com/gpu": "4"},
            "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/gpu": "4"},
            "conditions": [{"type": "Ready", "status": "False", "message": "kubelet stopped"}],
            "images": [{"names": ["example/app:1"], "sizeBytes": 1000}],
        },
    },
    workload(
        "ReplicaSet",
        "web-7d9f8c6b5-b",
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web-b", "uid": "uid-web-b"},
        spec={"replicas": 3, "selector": SELECTOR, "template": TEMPLATE},
        status={"replicas": 3},
    ),
    workload(
        "Deployment", "web-b", spec={"replicas": 3, "selector": SELECTOR, "template": TEMPLATE}
    ),
    workload(
        "DaemonSet", "agent", spec={"selector": SELECTOR}, status={"desiredNumberScheduled": 2}
    ),
    workload(
        "Job",
        "report-1",
        {"apiVersion": "batch/v1", "kind": "CronJob", "name": "report", "uid": "uid-report"},
        spec={"selector": SELECTOR},
    ),
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "web-b", "namespace": "shop", "generation": 2},
        "spec": {"selector": SELECTOR, "minAvailable": "50%"},
        "status": {"disruptionsAllowed": 1, "observedGeneration": 1},
    },
    {
        "apiVersion": "policy/v1beta1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "all", "namespace": "shop"},
        "spec": {"selector": {}, "maxUnavailable": 1},
    },
    {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "shop", "labels": {"team": "shop"}},
        "spec": {"finalizers": ["kubernetes"]},
    },
    *(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": name},
            "value": value,
            "globalDefault": default,
            "description": "for tests",
        }
        for name, value, default in (("high", 1000, False), ("base", 10, True))
    ),
]

# Words in the converter's code that name no field.
NOT_KEYS = {
    "apps",
    "batch",
    "policy",
    "default",
    "missing",
    "null",
    "workload",
    "reading",
}


# The modules that read raw objects' fields.
CONVERTER_MODULES = (_convert, _fields, _objects, _pod, _reading, _fast, _selectors)


def keys_named_in_the_converter() -> set[str]:
    keys: set[str] = set()
    for module in CONVERTER_MODULES:
        tree = ast.parse(pathlib.Path(module.__file__ or "").read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
            and ast.get_docstring(node) is not None
        }
        keys |= {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and re.fullmatch("[a-z][A-Za-z]*", node.value)
            and id(node) not in docstrings
        }
    return keys - NOT_KEYS


def keys_in(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from keys_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from keys_in(item)


def through_the_schema(objects: list[Any]) -> list[Any]:
    return [_file._read_item(msgspec.Raw(msgspec.json.encode(obj)), True) for obj in objects]


def outcome(objects: list[Any]) -> tuple[str, Any]:
    try:
        return ("read", cluster_state_from_objects(objects))
    except Exception as exc:  # the same error, whatever it is
        return ("failed", (type(exc), exc.message if isinstance(exc, InputError) else str(exc)))


def test_the_corpus_holds_every_key_the_converter_names() -> None:
    # A key read anywhere but in the corpus could be one the schema drops.
    assert keys_named_in_the_converter() - set(keys_in(CORPUS)) == set()


def test_the_corpus_reads_the_same_parsed_with_the_schema() -> None:
    # Not through _read_item: no object may be parsed in full for want of a match.
    parsed = [_file._JSON_ITEM.decode(msgspec.json.encode(obj)) for obj in CORPUS]
    assert not any("template" in obj.get("spec", {}) for obj in parsed)  # dropped: not read
    assert cluster_state_from_objects(parsed) == cluster_state_from_objects(CORPUS)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a JSON value: keys of objects, indexes of lists."""
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, item in items:
        yield (*prefix, key)
        yield from paths(item, (*prefix, key))


KEYS = sorted(keys_named_in_the_converter() | {"image", "running", "x-unknown"})
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1, 2),
    st.sampled_from([0.5, "", "1", "100m", "Exists", "True", "Always", "2026-11-28T06:30:12Z"]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_changed_objects_read_the_same_parsed_with_the_schema(data: st.DataObject) -> None:
    objects = copy.deepcopy(CORPUS)
    index = data.draw(st.integers(0, len(objects) - 1))
    path = data.draw(st.sampled_from(list(paths(objects[index]))))
    parent: Any = objects[index]
    for step in path[:-1]:
        parent = parent[step]
    change = data.draw(st.sampled_from(["replace", "drop", "add"]))
    if change == "replace":
        parent[path[-1]] = data.draw(VALUES)
    elif change == "drop":
        del parent[path[-1]]
    elif isinstance(parent[path[-1]], dict):
        parent[path[-1]][data.draw(st.sampled_from(KEYS))] = data.draw(VALUES)
    assert outcome(through_the_schema(objects)) == outcome(objects)


@pytest.mark.parametrize(
    "item",
    [
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w"},
            "spec": "odd",
        },
        {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": {"name": "app"}}},
        {"kind": "Node", "metadata": {"name": "n"}, "status": {"conditions": {"Ready": True}}},
    ],
    ids=["spec-text", "containers-object", "conditions-object"],
)
def test_an_item_of_another_shape_is_parsed_in_full(item: dict[str, Any]) -> None:
    assert through_the_schema([item]) == [item]


def test_a_byte_not_utf8_where_the_schema_drops_it_is_refused(tmp_path: pathlib.Path) -> None:
    pod = plain_pod("web-5")
    pod["spec"]["containers"][0]["env"][0]["value"] = "caf\udce9"  # the byte 0xe9 alone
    path = tmp_path / "cluster.json"
    path.write_bytes(
        json.dumps({"kind": "List", "items": [pod]}, ensure_ascii=False).encode(
            "utf-8", "surrogateescape"
        )
    )
    with pytest.raises(InputError, match="not UTF-8 text"):
        load_cluster_file(path)
