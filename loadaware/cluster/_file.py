"""`--cluster FILE`: a dump of real Kubernetes objects, read into a ClusterState.

Accepted: what `kubectl get ... -o yaml|json` prints (a `kind: List`), multi-document
YAML, a single object, or a bare array of objects; Lists may nest. Empty
documents are skipped; a file with no document at all is refused, since it is
far more likely a failed dump than an empty cluster.

A dump of a large cluster (150,000 pods) is hundreds of megabytes, and YAML
parsing would take minutes. A JSON List, what `kubectl get -o json` prints, is
read one item at a time with msgspec, keeping only the parts of each item that
are converted (see _read_json_list); any other JSON with the json module. Its
pods, workloads and nodes as the API server writes them are parsed into typed
Structs and read without checks (_plain_pod, _plain_workload, _plain_node), the
other items as before.
"""

from __future__ import annotations

import codecs
import json
import mmap
import os
import re
from typing import Any, BinaryIO, TypedDict

import msgspec
import numpy as np
import yaml

from loadaware import gc_freeze
from loadaware.cluster import _convert, _plain_node, _plain_pod, _plain_workload, _types
from loadaware.errors import InputError

_FIRST_CHARACTER = re.compile(r"\S")

# The C loader is an order of magnitude faster; the pure-Python one gives the same result.
_YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_cluster_file(path: str | os.PathLike[str]) -> _types.ClusterState:
    """Read a cluster dump; InputError naming the file (and line, or object and field)."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as stream:
            data = _mapped(stream)
            if data is None:
                data = stream.read()
    except OSError as exc:
        raise InputError(
            f"cannot read cluster file {name}: {exc.strerror or exc}",
            hint="dump one with: kubectl get nodes,pods,pdb,rs,deploy,sts,ds -A -o yaml > FILE",
        ) from exc

    with gc_freeze.paused():
        state = _read_json_list(data)
        if state is None:
            try:
                text = bytes(data).decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                raise InputError(f"{name}: not UTF-8 text (byte {exc.start})") from exc
            del data  # a large dump is hundreds of megabytes: hold one copy at a time
            documents = _parse_documents(name, text)
            del text
            if not documents:
                raise InputError(f"{name}: no Kubernetes objects in the file")
            try:
                state = _convert.cluster_state_from_objects(documents)
            except InputError as exc:
                raise InputError(f"{name}: {exc.message}", hint=exc.hint) from exc
            # Freed while the collector is still paused: once it runs again, its
            # first pass would otherwise walk every raw object (seconds, for nothing).
            del documents
        gc_freeze.age_built_objects()
    return state


def _mapped(stream: BinaryIO) -> mmap.mmap | None:
    """The file's bytes mapped into memory, all read in at once; None where it cannot
    be mapped (an empty file, a pipe). A dump is hundreds of megabytes: read into a
    buffer, each page of it is faulted in and copied, a fifth of the load's time. As
    with any mapped file, one truncated while it is read stops the process (SIGBUS)."""
    if not hasattr(mmap, "MAP_PRIVATE"):
        return None  # not a POSIX system
    try:
        return mmap.mmap(
            stream.fileno(),
            0,
            flags=mmap.MAP_PRIVATE | getattr(mmap, "MAP_POPULATE", 0),
            prot=mmap.PROT_READ,
        )
    except (OSError, ValueError):
        return None


def _is_ascii(data: bytes | mmap.mmap) -> bool:
    """bytes.isascii, for a mapped file too: its bytes looked at where they are mapped
    (numpy's max, vectorised: a quarter of the time of copying them a slice at a
    time to ask bytes.isascii), not copied."""
    if isinstance(data, bytes):
        return data.isascii()
    if len(data) == 0:
        return True
    view = np.frombuffer(data, dtype=np.uint8)
    try:
        return int(view.max()) < 0x80
    finally:
        del view  # the map cannot be closed while an array exports it


class _JsonList(msgspec.Struct):
    """A `*List` object, its items left unparsed (msgspec.Raw: where each one is in
    the text). A key given twice counts at its last, as json.loads keeps it."""

    kind: str
    items: list[msgspec.Raw]


# --- what the converter reads ----------------------------------------------------------
#
# Parsed with these TypedDicts, an item keeps only the keys they name (total=False: any
# may be missing): the env, probes, container statuses' image IDs, condition timestamps
# and pod templates of a large dump are skipped as msgspec parses, rather than built
# and freed. Each names every key _convert reads at its place, its value (Any) left
# for _convert to check; tests/cluster/test_item_schema.py checks that.


class _RawContainer(TypedDict, total=False):
    image: Any
    resources: Any
    ports: Any
    restartPolicy: Any


class _RawVolume(TypedDict, total=False):
    emptyDir: Any
    hostPath: Any
    persistentVolumeClaim: Any


class _RawSpec(TypedDict, total=False):
    # Pod
    containers: list[_RawContainer] | None
    initContainers: list[_RawContainer] | None
    volumes: list[_RawVolume] | None
    nodeName: Any
    schedulerName: Any
    priority: Any
    priorityClassName: Any
    tolerations: Any
    affinity: Any
    nodeSelector: Any
    resources: Any
    overhead: Any
    resourceClaims: Any
    topologySpreadConstraints: Any
    # Node
    taints: Any
    unschedulable: Any
    # workloads and PodDisruptionBudget
    replicas: Any
    selector: Any
    minAvailable: Any
    maxUnavailable: Any


class _RawContainerState(TypedDict, total=False):
    waiting: Any
    terminated: Any


class _RawContainerStatus(TypedDict, total=False):
    name: Any
    restartCount: Any
    state: _RawContainerState | None


class _RawCondition(TypedDict, total=False):
    type: Any
    status: Any


class _RawStatus(TypedDict, total=False):
    # Pod
    phase: Any
    conditions: list[_RawCondition] | None  # Node too
    qosClass: Any
    startTime: Any
    reason: Any
    containerStatuses: list[_RawContainerStatus] | None
    initContainerStatuses: list[_RawContainerStatus] | None
    # Node
    allocatable: Any
    capacity: Any
    images: Any
    # DaemonSet
    desiredNumberScheduled: Any
    # PodDisruptionBudget
    disruptionsAllowed: Any
    observedGeneration: Any


class _RawMetadata(TypedDict, total=False):
    name: Any
    namespace: Any
    uid: Any
    generation: Any
    labels: Any
    annotations: Any
    ownerReferences: Any
    creationTimestamp: Any
    deletionTimestamp: Any


class _RawItem(TypedDict, total=False):
    apiVersion: Any
    kind: Any
    metadata: _RawMetadata | None
    spec: _RawSpec | None
    status: _RawStatus | None
    items: Any  # of a nested List: parsed in full
    # PriorityClass
    value: Any
    globalDefault: Any


_JSON_LIST = msgspec.json.Decoder(_JsonList)
_JSON_ITEM = msgspec.json.Decoder(_RawItem)
_JSON_ANY = msgspec.json.Decoder()

# An item's kind as kubectl writes it, keys in order (apiVersion, then kind), within
# its first bytes, indented or not.
_KIND = re.compile(rb'"kind":\s*"([A-Za-z]+)"')
_KIND_WITHIN = 128
_WORKLOAD_KINDS = frozenset({b"ReplicaSet", b"Deployment", b"StatefulSet", b"DaemonSet", b"Job"})


def _read_item(raw: msgspec.Raw, is_ascii: bool) -> Any:
    """The item as _RawItem, or in full where it has another shape. In full too where
    its text is not all ASCII: msgspec checks the UTF-8 only of the strings it parses,
    and a byte that is not UTF-8 anywhere in the file must get it refused."""
    if is_ascii or bytes(raw).isascii():
        try:
            return _JSON_ITEM.decode(raw)
        except msgspec.ValidationError:
            pass
    return _JSON_ANY.decode(raw)


def _read_json_list(data: bytes | mmap.mmap) -> _types.ClusterState | None:
    """The cluster in a file that is one JSON `*List` object, its items parsed and
    converted one at a time: each raw item is freed before the next is parsed.
    Parsed whole, a dump of 150,000 pods is gigabytes of objects alive at once;
    scattered over that much memory they are slower to build, read and free.

    msgspec parses, twice as fast as the json module, the parts of each item that
    are converted (_RawItem), and checks the UTF-8 of the text (see _read_item); it
    refuses what json.loads reads as a number beyond JSON (NaN, Infinity, and 1e400
    in the parts it keeps) and unpaired surrogates.

    None for any other file, and for a List with anything wrong in it: the caller
    then reads the text whole, which reports the first problem in the order it
    checks them (the file's encoding, its JSON or YAML error, else the first bad
    object kind by kind). Where nothing is wrong, both ways give the same ClusterState.
    """
    start = len(codecs.BOM_UTF8) if data[: len(codecs.BOM_UTF8)] == codecs.BOM_UTF8 else 0
    try:
        listed = _JSON_LIST.decode(memoryview(data)[start:])
        if not listed.kind.endswith("List"):
            return None  # _convert.iter_objects would not flatten it
        is_ascii = _is_ascii(data)
        converter = _convert.Converter()
        stream = _convert.Stream(converter)
        pods = _plain_pod.PlainPodReader(converter.reading)
        workloads = _plain_workload.PlainWorkloadReader(converter.reading).read_json
        nodes = _plain_node.PlainNodeReader().read_json
        for raw in listed.items:
            if not (is_ascii or bytes(raw).isascii()):
                stream.add(_JSON_ANY.decode(raw))  # see _read_item
                continue
            # Most items are pods and ReplicaSets as the API server writes them,
            # parsed typed and read without checks (see _plain_pod); by their kind
            # as kubectl writes it, a guess which the typed parse checks.
            kind = _KIND.search(raw, 0, _KIND_WITHIN)
            if kind is not None:
                if kind[1] == b"Pod":
                    read = pods.read_json(raw)
                    if read is not None:
                        stream.add_pod(read)
                        continue
                elif kind[1] in _WORKLOAD_KINDS:
                    workload = workloads(raw)
                    if workload is not None:
                        stream.add_workload(workload)
                        continue
                elif kind[1] == b"Node":
                    node = nodes(raw)
                    if node is not None:
                        stream.add_node(node)
                        continue
            stream.add(_read_item(raw, True))
        return stream.cluster_state()
    except Exception:  # whatever it is, reading the text whole says it as before
        return None


def _parse_documents(name: str, text: str) -> list[Any]:
    """The file's non-empty documents; a top-level array counts as its elements."""
    first = _FIRST_CHARACTER.search(text)
    if first is not None and first.group() in ("{", "["):
        try:
            return _documents_of([json.loads(text)])
        except json.JSONDecodeError as json_error:
            # YAML flow style (`{kind: List, items: []}`) also starts this way.
            try:
                return _documents_of(_load_yaml(text))
            except yaml.YAMLError:
                raise InputError(
                    f"{name}: invalid JSON at line {json_error.lineno}, "
                    f"column {json_error.colno}: {json_error.msg}"
                ) from json_error
    try:
        return _documents_of(_load_yaml(text))
    except yaml.YAMLError as exc:
        raise InputError(
            f"{name}: invalid YAML{_yaml_position(exc)}: {_yaml_problem(exc)}"
        ) from exc


def _load_yaml(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=_YAML_LOADER))


def _documents_of(documents: list[Any]) -> list[Any]:
    result: list[Any] = []
    for document in documents:
        if document is None:
            continue
        if isinstance(document, list):
            result.extend(document)
        else:
            result.append(document)
    return result


def _yaml_position(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is None:
        return ""
    return f" at line {mark.line + 1}, column {mark.column + 1}"


def _yaml_problem(exc: yaml.YAMLError) -> str:
    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [exc.context, exc.problem]
        return ", ".join(part for part in parts if part)
    return str(exc)
