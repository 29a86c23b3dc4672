"""Workloads as the API server writes them, parsed typed and read without checks.

A large dump holds a ReplicaSet for every rollout of every Deployment, and reads
only a few fields of each. As _plain_pod does for pods, msgspec parses them into
the Structs below, typed as the API server writes them, and PlainWorkloadReader
reads them by attribute; a workload of another shape, or with a selector's
matchExpressions, is left to the checked way (None): _objects.read_workload.
"""

from __future__ import annotations

from typing import Any

import msgspec

from loadaware.cluster import _fast, _plain_pod, _reading, _types

# The API group of each kind read as a workload (as _convert._WORKLOAD_KINDS).
_GROUP_OF_KIND = {
    "ReplicaSet": "apps",
    "Deployment": "apps",
    "StatefulSet": "apps",
    "DaemonSet": "apps",
    "Job": "batch",
}


class _Struct(msgspec.Struct, rename="camel", gc=False):
    """As _plain_pod.Struct."""


class _Metadata(_Struct):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    owner_references: list[_plain_pod.OwnerReference] = []


class _Selector(_Struct):
    match_labels: dict[str, str] = {}
    match_expressions: Any = None  # any value makes the workload one for read_workload


class _Spec(_Struct):
    replicas: int | None = None
    selector: _Selector | None = None


class _Status(_Struct):
    desired_number_scheduled: int | None = None


class PlainWorkload(_Struct):
    api_version: str = ""
    kind: str = ""
    metadata: _Metadata | None = None
    spec: _Spec | None = None
    status: _Status | None = None


_DECODER = msgspec.json.Decoder(PlainWorkload)


class PlainWorkloadReader:
    """Workloads parsed into PlainWorkload, read without checks (see the module)."""

    __slots__ = ("_reading",)

    def __init__(self, reading: _reading.CheckedReading) -> None:
        self._reading = reading

    def read_json(self, text: Any) -> _types.Workload | None:
        """The workload in this JSON text, as read_workload reads it; None for one
        read_workload must read, and for any other object. ASCII text only (see
        _plain_pod)."""
        try:
            return self.read(_DECODER.decode(text))
        except msgspec.ValidationError:
            return None

    def read(self, item: PlainWorkload) -> _types.Workload | None:
        meta, spec, kind, api_version = item.metadata, item.spec, item.kind, item.api_version
        group = api_version.split("/", 1)[0] if "/" in api_version else ""
        if _GROUP_OF_KIND.get(kind) != group or meta is None or spec is None or not meta.name:
            return None
        selector = spec.selector
        if selector is not None and selector.match_expressions is not None:
            return None
        replicas: int | None
        if kind == "DaemonSet":
            # Unknown until the controller has reported, as in read_workload.
            replicas = None if item.status is None else item.status.desired_number_scheduled
        elif kind == "Job":
            replicas = None
        else:
            replicas = 1 if spec.replicas is None else spec.replicas  # API default
        try:
            owner = _plain_pod.owners(meta.owner_references, self._reading.owner_ref)[0]
        except _fast.NotPlainError:
            return None
        return _types.new_workload(
            kind=kind,
            namespace=meta.namespace or "default",
            name=meta.name,
            uid=meta.uid,
            replicas=replicas,
            owner=owner,
            selector=None
            if selector is None
            else _types.LabelSelector(match_labels=selector.match_labels, match_expressions=()),
        )
