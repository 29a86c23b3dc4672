"""The converter's quick Pod constructor (_types.new_pod) builds what Pod(...) builds.

Covered: for any field values, given by keyword or all in field order, an
equal pod of type Pod with the same key, hash and repr, that pickles and copies
as one; frozen as Pod is; every init field must be given; a field added to Pod
is taken without a change to new_pod; new_workload builds what Workload(...) builds.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadaware.cluster import _types
from loadaware.cluster._types import (
    LabelSelector,
    OwnerRef,
    Pod,
    Taint,
    Toleration,
    Workload,
    new_pod,
    new_workload,
)

FIELDS = [f for f in dataclasses.fields(Pod) if f.init]

MOMENTS = (
    st.datetimes(min_value=datetime.datetime(2020, 1, 1), timezones=st.just(datetime.UTC))
    | st.none()
)
TEXT = st.text(max_size=8)
LABELS = st.dictionaries(TEXT, TEXT, max_size=3)
OWNERS = st.none() | st.builds(OwnerRef, kind=TEXT, name=TEXT, uid=TEXT)

# A value of each field's type, for the fields whose default is not enough to tell
# one field from another.
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "namespace": TEXT,
    "name": TEXT,
    "uid": TEXT,
    "node_name": TEXT | st.none(),
    "phase": st.sampled_from(["Pending", "Running", "Failed"]),
    "ready": st.booleans(),
    "labels": LABELS,
    "annotations": LABELS,
    "owner": OWNERS,
    "workload": OWNERS,
    "cpu_request_millicores": st.integers(0, 10**6),
    "memory_request_bytes": st.integers(0, 10**12),
    "extended_requests": st.dictionaries(TEXT, st.integers(0, 8), max_size=2),
    "priority": st.integers(-(10**9), 2 * 10**9),
    "priority_class_name": TEXT,
    "qos_class": st.sampled_from(["Guaranteed", "Burstable", "BestEffort"]),
    "creation_timestamp": MOMENTS,
    "deletion_timestamp": MOMENTS,
    "restart_count": st.integers(0, 100),
    "has_local_storage": st.booleans(),
    "has_pvc": st.booleans(),
    "has_resource_claims": st.booleans(),
    "is_mirror": st.booleans(),
    "tolerations": st.lists(st.builds(Toleration, key=TEXT), max_size=2).map(tuple),
    "node_selector": LABELS,
    "host_ports": st.lists(st.integers(1, 65535), max_size=2).map(tuple),
    "start_time": MOMENTS,
    "status_reason": TEXT,
    "container_images": st.lists(TEXT, max_size=3).map(tuple),
}


def field_values() -> st.SearchStrategy[dict[str, Any]]:
    """Every init field: drawn where VALUES has it, else its default."""

    def default(f: dataclasses.Field[Any]) -> st.SearchStrategy[Any]:
        if f.default_factory is not dataclasses.MISSING:
            return st.builds(f.default_factory)
        return st.just(f.default)

    return st.fixed_dictionaries(
        {f.name: VALUES[f.name] if f.name in VALUES else default(f) for f in FIELDS}
    )


@settings(max_examples=200, deadline=None)
@given(field_values())
def test_new_pod_builds_what_pod_builds(values: dict[str, Any]) -> None:
    built, expected = new_pod(**values), Pod(**values)
    assert built == expected
    assert built.key == expected.key == f"{values['namespace']}/{values['name']}"
    assert hash(built) == hash(expected)
    assert repr(built) == repr(expected)
    assert all(getattr(built, f.name) is getattr(expected, f.name) for f in FIELDS)
    assert type(built) is Pod
    in_order = new_pod(*(values[f.name] for f in FIELDS))
    assert in_order == expected
    assert in_order.key == expected.key
    assert pickle.loads(pickle.dumps(built)) == expected == copy.copy(built)


def test_new_workload_builds_what_workload_builds() -> None:
    values: dict[str, Any] = {
        "kind": "ReplicaSet",
        "namespace": "shop",
        "name": "web-7d9f",
        "uid": "u-1",
        "replicas": 3,
        "owner": OwnerRef(kind="Deployment", name="web", uid="u-0"),
        "selector": LabelSelector(match_labels={"app": "web"}),
    }
    built = new_workload(**values)
    assert type(built) is Workload
    assert built == Workload(**values)
    assert repr(built) == repr(Workload(**values))
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.name = "web"  # type: ignore[misc]


def test_new_pod_is_frozen_and_takes_every_field() -> None:
    values = {f.name: getattr(Pod(namespace="shop", name="web-1"), f.name) for f in FIELDS}
    pod = new_pod(**values)
    with pytest.raises(dataclasses.FrozenInstanceError):
        pod.name = "web-2"  # type: ignore[misc]
    assert dataclasses.replace(pod, name="web-2").key == "shop/web-2"
    del values["owner_selector"]
    with pytest.raises(TypeError, match="owner_selector"):
        new_pod(**values)


def test_a_field_added_is_taken_as_the_dataclass_takes_it() -> None:
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Node2:
        name: str
        taints: tuple[Taint, ...] = ()
        key: str = dataclasses.field(init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "key", self.name.upper())

    construct = _types._slot_setting_constructor(Node2)
    taints = (Taint(key="a", effect="NoSchedule"),)
    assert construct(name="n", taints=taints) == Node2(name="n", taints=taints)
    assert construct(name="n", taints=()).key == "N"
