"""load_cluster_file: the `--cluster FILE` formats and their errors.

Covered: a `kind: List` as `kubectl get -o yaml` prints it, the same as JSON,
multi-document YAML (empty documents, comments, unquoted numbers and
timestamps), nested Lists, a bare array, a single object, YAML flow style,
unknown kinds ignored; errors (missing file, invalid YAML or JSON with the line,
an empty file, a bad object) name the file. A JSON List, read one item at a
time, reads as when parsed whole: pods before the workloads and priority
classes they refer to, and every error the same (kinds checked first, nodes
before pods, duplicates, keys given twice, broken JSON that is YAML); the
garbage collector's frozen objects are left as they were. A file is mapped into
memory where it can be (checked for ASCII a slice at a time), else read: an
empty file, a pipe.
"""

from __future__ import annotations

import codecs
import datetime
import gc
import json
import os
import pathlib
import threading
from typing import Any

import pytest

import loadaware.cluster
from loadaware.cluster import ClusterState, OwnerRef, cluster_state_from_objects, load_cluster_file
from loadaware.errors import InputError
from tests.lib.objects import raw_pod

DATA = pathlib.Path(__file__).parent / "data"

NODE_WITHOUT_CPU = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {"name": "bare"},
    "status": {"allocatable": {"memory": "1Gi"}},
}


def summary(state: ClusterState) -> dict[str, object]:
    return {
        "nodes": [n.name for n in state.nodes],
        "pods": [p.key for p in state.pods],
        "pdbs": [p.key for p in state.pdbs],
        "workloads": [w.key for w in state.workloads],
    }


KUBECTL_DUMP = {
    "nodes": ["worker-a", "control-plane"],
    "pods": [
        "shop/web-7d9f8c6b5-x2k4q",
        "monitoring/node-exporter-8kq2z",
        "shop/report-28871234-r7w9p",
    ],
    "pdbs": ["shop/web"],
    "workloads": [
        "ReplicaSet/shop/web-7d9f8c6b5",
        "Deployment/shop/web",
        "DaemonSet/monitoring/node-exporter",
        "StatefulSet/shop/db",
    ],
}


def test_kubectl_yaml_list() -> None:
    state = load_cluster_file(DATA / "cluster.yaml")
    assert summary(state) == KUBECTL_DUMP
    web, exporter, report = state.pods
    assert web.workload is not None
    assert (web.workload.kind, web.workload.name) == ("Deployment", "web")
    assert (web.cpu_request_millicores, web.memory_request_bytes) == (250, 512 * 2**20)
    assert web.restart_count == 2
    assert exporter.is_daemonset_pod
    assert exporter.has_local_storage
    assert exporter.host_ports == (9100,)
    assert exporter.qos_class == "Guaranteed"
    assert report.is_terminal
    assert not report.is_load
    worker, control_plane = state.nodes
    assert worker.allocatable_memory_bytes == 15225804 * 1024
    assert not control_plane.ready
    assert control_plane.unschedulable


def test_kubectl_json_list_reads_the_same_as_yaml() -> None:
    assert load_cluster_file(DATA / "cluster.json") == load_cluster_file(DATA / "cluster.yaml")


def test_multi_document_yaml() -> None:
    state = load_cluster_file(str(DATA / "multi.yaml"))
    assert summary(state) == {
        "nodes": ["worker-b"],
        "pods": ["payments/api-5f6d7c8b9-abcde"],
        "pdbs": [],
        "workloads": [],
    }
    (pod,) = state.pods
    # Unquoted YAML numbers and timestamps are read as Kubernetes would read the text.
    assert (pod.cpu_request_millicores, pod.memory_request_bytes) == (1500, 10**9)
    assert pod.creation_timestamp == datetime.datetime(2026, 11, 28, 6, 30, 12, tzinfo=datetime.UTC)
    assert state.nodes[0].allocatable_cpu_millicores == 8000  # from capacity


def test_nested_lists_bare_arrays_and_single_objects(tmp_path: pathlib.Path) -> None:
    dump = json.loads((DATA / "cluster.json").read_text())
    nodes = [item for item in dump["items"] if item["kind"] == "Node"]
    others = [item for item in dump["items"] if item["kind"] != "Node"]
    nested = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "NodeList", "items": nodes, "metadata": {}},
            {"apiVersion": "v1", "kind": "List", "items": others},
        ],
    }
    expected = load_cluster_file(DATA / "cluster.json")

    (tmp_path / "nested.json").write_text(json.dumps(nested))
    assert load_cluster_file(tmp_path / "nested.json") == expected

    (tmp_path / "array.json").write_text(json.dumps(nodes + others))
    assert load_cluster_file(tmp_path / "array.json") == expected

    (tmp_path / "node.json").write_text("\n  " + json.dumps(nodes[0]))
    assert summary(load_cluster_file(tmp_path / "node.json"))["nodes"] == ["worker-a"]


def read_whole(path: pathlib.Path) -> ClusterState | str:
    """The file read as any file is: parsed whole, then converted; the state or the error."""
    try:
        documents = loadaware.cluster._file._parse_documents(str(path), path.read_text())
    except InputError as exc:
        return exc.message
    try:
        return cluster_state_from_objects(documents)
    except InputError as exc:
        return f"{path}: {exc.message}"


def kubectl_json(**changes: Any) -> dict[str, Any]:
    dump: dict[str, Any] = json.loads((DATA / "cluster.json").read_text())
    dump.update(changes)
    return dump


def pod_dump(name: str, **spec: Any) -> dict[str, Any]:
    return raw_pod(name, namespace="shop", **spec)


PRIORITY_CLASSES = [
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": default,
    }
    for name, value, default in (("high", 1000, False), ("base", 10, True), ("later", 5, True))
]


def test_a_json_list_read_item_by_item_reads_as_a_whole(tmp_path: pathlib.Path) -> None:
    # Pods come before the workloads and priority classes they refer to, as in kubectl's output.
    items = kubectl_json()["items"]
    items[2:2] = [pod_dump("classed", priorityClassName="high"), pod_dump("unclassed")]
    text = json.dumps(kubectl_json(items=items + PRIORITY_CLASSES))
    path = tmp_path / "cluster.json"
    path.write_text(text)
    state = load_cluster_file(path)
    assert state == read_whole(path)
    pods = {pod.name: pod for pod in state.pods}
    assert (pods["classed"].priority, pods["unclassed"].priority) == (1000, 10)
    assert pods["web-7d9f8c6b5-x2k4q"].workload == OwnerRef(
        kind="Deployment", name="web", uid="8f0a2c4e-6a8b-4c0d-9e2f-4a6c8e0a2b66"
    )


def test_a_kubectl_json_dump_is_read_item_by_item() -> None:
    # Anything going wrong on that way falls back to reading the file whole, silently
    # and slowly: a dump as kubectl prints it, compact or indented, must not.
    dump = kubectl_json()
    for text in (json.dumps(dump), json.dumps(dump, indent=4), json.dumps(dump, indent="\t")):
        assert loadaware.cluster._file._read_json_list(text.encode()) == load_cluster_file(
            DATA / "cluster.yaml"
        )


def with_items(*items: Any) -> str:
    return json.dumps(kubectl_json(items=kubectl_json()["items"] + list(items)))


@pytest.mark.parametrize(
    "text",
    [
        # A bad pod, then an object without kind: objects' kinds are checked first.
        with_items(pod_dump("bad", overhead={"cpu": "1Qi"}), {"metadata": {"name": "x"}}),
        # A bad pod, then a bad node: nodes are read before pods.
        with_items(pod_dump("bad", overhead={"cpu": "1Qi"}), {**NODE_WITHOUT_CPU}),
        with_items(pod_dump("twice"), pod_dump("twice")),
        with_items(*PRIORITY_CLASSES[:1], *PRIORITY_CLASSES[:1]),
        json.dumps(kubectl_json(kind="Pod")),  # not a List: the object itself is read
        json.dumps(kubectl_json(kind="PodList", items={"not": "a list"})),
        # json.loads keeps the last of a key given twice.
        '{"kind": "List", "items": [], "items": ' + json.dumps(kubectl_json()["items"]) + "}",
        '{"items": [], "kind": "NodeList", "kind": "Pod", "metadata": {"name": "p"}}',
        '{"kind": "List", "items": [{"kind": "Namespace", "metadata": {"name": "a"}}]}',
        '\n {"kind": "List", "items": [null, {"kind": "List"}, {"kind": "List", "items": null}]}',
        # Broken JSON, some of it YAML (flow style) all the same.
        '{"kind": "List", "items": [{"kind": "Namespace", "metadata": {"name": "a"}},]}',
        '{"kind": "List", "items": [], }',
        '{"kind": "List", "items": [{"kind": "Namespace", "metadata": {"name": "a"}}',
        '{"kind": "List", "items": []} {}',
        # What json.loads reads and msgspec refuses: beyond JSON, or unpaired surrogates.
        '{"kind": "List", "items": [{"kind": "Namespace", "metadata": {"name": "a"}, "x": NaN}]}',
        '{"kind": "List", "items": [{"kind": "Namespace", "metadata": {"name": "\\ud800"}}]}',
        '{"kind": "List", "items": [{"kind": "Namespace", "metadata": {"name": "a"}, "x": 1e400}]}',
        '{"kind": 7, "items": []}',
    ],
    ids=[
        "kind-before-pods",
        "nodes-before-pods",
        "same-pod-twice",
        "same-class-twice",
        "not-a-list",
        "items-not-an-array",
        "items-twice",
        "kind-twice",
        "minimal",
        "odd-items",
        "trailing-comma-in-items",
        "trailing-comma",
        "unclosed",
        "trailing-data",
        "nan",
        "unpaired-surrogate",
        "out-of-range-number",
        "kind-not-a-string",
    ],
)
def test_a_json_list_fails_or_reads_as_a_whole(tmp_path: pathlib.Path, text: str) -> None:
    path = tmp_path / "cluster.json"
    path.write_text(text)
    expected = read_whole(path)
    if isinstance(expected, str):
        with pytest.raises(InputError) as info:
            load_cluster_file(path)
        assert info.value.message == expected
    else:
        assert load_cluster_file(path) == expected


def test_a_json_list_with_trailing_data_is_refused(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "cluster.json"
    path.write_text('{"kind": "List", "items": []}\n{}')
    with pytest.raises(InputError, match="invalid JSON at line 2, column 1: Extra data"):
        load_cluster_file(path)


def test_yaml_flow_style_and_a_bom(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "flow.yaml"
    path.write_text(
        "\ufeff{kind: List, apiVersion: v1, items: [{apiVersion: v1, kind: Namespace, "
        "metadata: {name: shop}}]}\n",
        encoding="utf-8",
    )
    assert load_cluster_file(path).namespace_labels == {
        "shop": {"kubernetes.io/metadata.name": "shop"}
    }


def test_an_empty_list_is_an_empty_cluster(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "empty-list.yaml"
    path.write_text('apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: ""\n')
    state = load_cluster_file(path)
    assert (state.nodes, state.pods) == ((), ())


def test_a_missing_file_is_named(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(InputError, match=f"cannot read cluster file {path}") as info:
        load_cluster_file(path)
    assert info.value.exit_code == 2
    assert "kubectl get" in str(info.value.hint)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "no Kubernetes objects"),
        ("---\n# nothing\n---\n", "no Kubernetes objects"),
        ("kind: List\nitems:\n- a: [1, 2\n", r"invalid YAML at line 4"),
        ("kind: Pod\n  metadata: x\n bad", r"invalid YAML at line 2"),
        ('{\n  "kind": "List",\n  "items": [,]\n}\n', r"invalid JSON at line 3, column 13"),
        ("- 1\n- 2\n", "expected a Kubernetes object, got the number 1"),
        (
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
            "  - name: a\n    resources:\n      requests:\n        cpu: 10Qi\n",
            r"Pod default/p: spec\.containers\[0\]\.resources\.requests\.cpu: "
            r"invalid quantity '10Qi'",
        ),
    ],
    ids=[
        "empty",
        "only-empty-documents",
        "unclosed-flow",
        "bad-indent",
        "bad-json",
        "not-objects",
        "bad-quantity",
    ],
)
def test_errors_name_the_file(tmp_path: pathlib.Path, content: str, message: str) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as info:
        load_cluster_file(path)
    assert str(info.value).startswith(f"{path}: ")


def test_non_utf8_is_refused(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"kind: Namespace\nmetadata:\n  name: caf\xe9\n")
    with pytest.raises(InputError, match="not UTF-8"):
        load_cluster_file(path)


def test_a_json_list_with_non_utf8_in_a_string_is_refused(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(
        b'{"kind": "List", "items": [{"kind": "Namespace", "metadata": {"name": "caf\xe9"}}]}'
    )
    with pytest.raises(InputError, match=r"not UTF-8 text \(byte 74\)"):
        load_cluster_file(path)


def test_a_json_list_after_a_bom_is_read_item_by_item() -> None:
    text = json.dumps(kubectl_json())
    listed = loadaware.cluster._file._read_json_list(codecs.BOM_UTF8 + text.encode())
    assert listed == load_cluster_file(DATA / "cluster.yaml")


def test_public_names() -> None:
    assert set(loadaware.cluster.__all__) == {
        "STALE_CACHE",
        "CacheChange",
        "CacheListener",
        "ClusterCache",
        "ClusterState",
        "ContainerImage",
        "LabelSelector",
        "Node",
        "NodeSelectorTerm",
        "OwnerRef",
        "Pod",
        "PodAffinityTerm",
        "PodDisruptionBudget",
        "RawObject",
        "Requirement",
        "Taint",
        "Toleration",
        "WeightedPodAffinityTerm",
        "Workload",
        "cluster_state_from_objects",
        "load_cluster_file",
        "parse_quantity",
        "read_cluster",
        "read_objects",
        "to_bytes",
        "to_millicores",
    }
    for name in loadaware.cluster.__all__:
        assert getattr(loadaware.cluster, name) is not None


def test_garbage_collection_is_left_as_it_was(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Pod\nmetadata: {}\n")
    with pytest.raises(InputError):
        load_cluster_file(bad)
    assert gc.isenabled()
    gc.disable()
    try:
        load_cluster_file(DATA / "multi.yaml")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_loading_freezes_nothing_and_unfreezes_nothing() -> None:
    # The loaded objects are handed to the oldest generation through gc.freeze and
    # gc.unfreeze: nothing may stay frozen, and what the caller froze stays so.
    load_cluster_file(DATA / "cluster.json")
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        load_cluster_file(DATA / "cluster.json")
        assert gc.get_freeze_count() == frozen > 0
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("where", [0, 5, 6, 11, 12, 40])
def test_a_mapped_file_is_ascii_as_its_bytes_are(tmp_path: pathlib.Path, where: int) -> None:
    # A byte past ASCII anywhere: the first, within, the last.
    path = tmp_path / "cluster.json"
    text = bytearray(b'{"kind": "List", "items": []}          ')
    for content in (bytes(text), bytes(text[:where] + b"\xe9" + text[where + 1 :])):
        path.write_bytes(content)
        with path.open("rb") as stream:
            mapped = loadaware.cluster._file._mapped(stream)
        assert mapped is not None
        assert loadaware.cluster._file._is_ascii(mapped) is content.isascii()


def test_a_file_that_cannot_be_mapped_is_read(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "cluster.json"
    path.write_bytes(b"")
    with path.open("rb") as stream:
        assert loadaware.cluster._file._mapped(stream) is None
    with pytest.raises(InputError, match="no Kubernetes objects"):
        load_cluster_file(path)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_text, args=(json.dumps(kubectl_json()),))
    writer.start()
    try:
        assert load_cluster_file(fifo) == load_cluster_file(DATA / "cluster.yaml")
    finally:
        writer.join()
