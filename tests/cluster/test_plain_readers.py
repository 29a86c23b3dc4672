"""The fast reading's shortcuts read what the checked reading reads (Hypothesis).

Covered: a container's resources, a pod's containers (their requests, and that
they request no extended resource and bind no host port), a container status and
a pod's tolerations, read the quick way (objects and strings as the API server
writes them, a list of tolerations read once for the pods that share it) give the
same value or the same error as the checked reading, whatever the input;
tolerations and timestamps come back the same however often they were read
before, and a list read before does not vouch for a different one. Whole pods:
test_pod_reading.py.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from loadaware.cluster import _fast, _fields, _reading
from loadaware.errors import InputError

READER = _fields.FieldReader("Pod", "web-1", "shop")
CHECKED = _reading.CheckedReading()
# One for every example, as one load reads every pod: what it kept from an
# example must not change what it reads in the next.
FAST = _fast.FastReading()

FIELDS = [
    "requests",
    "limits",
    "cpu",
    "memory",
    "name",
    "state",
    "waiting",
    "terminated",
    "running",
    "reason",
    "exitCode",
    "restartCount",
    "key",
    "operator",
    "value",
    "effect",
    "tolerationSeconds",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.sampled_from([0.5, 1.0, 2**70, float("inf")]),
    st.sampled_from(
        ["", "1", "100m", "1.5Gi", "-1", "10Qi", "1e3", "Exists", "Equal", "NoExecute", "x"]
    ),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(FIELDS), inner),
    max_leaves=12,
)
QUANTITIES = st.dictionaries(
    # 7: YAML reads an unquoted number as a key too.
    st.sampled_from(["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "hugepages-2Mi", 7]),
    st.one_of(st.sampled_from(["250m", "1", "64Mi", "0.5Gi", "-5m", "1x", ""]), SCALARS),
    max_size=3,
)
RESOURCES = st.one_of(
    st.dictionaries(st.sampled_from(["requests", "limits", "claims"]), QUANTITIES | JSON),
    st.fixed_dictionaries({"requests": QUANTITIES}),
)
STATE_NAMES = st.sampled_from(["waiting", "terminated", "running"])
DETAILS = st.dictionaries(
    st.sampled_from(["reason", "exitCode", "startedAt"]),
    st.one_of(st.sampled_from(["Error", "CrashLoopBackOff", "2026-01-01T00:00:00Z"]), SCALARS),
)
CONTAINER_STATUSES = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {"name": st.sampled_from(["app", "sidecar"]) | SCALARS},
        optional={
            "restartCount": st.integers(0, 3) | SCALARS,
            "state": st.dictionaries(STATE_NAMES, DETAILS | SCALARS, max_size=2) | SCALARS,
        },
    ),
)
PORTS = st.lists(
    st.fixed_dictionaries(
        {"containerPort": st.integers(1, 3)},
        optional={"hostPort": st.sampled_from([0, 80, None, "", "80", True, False, 0.0])},
    )
    | JSON,
    max_size=2,
)
CONTAINER = st.fixed_dictionaries(
    {"name": st.sampled_from(["app", "proxy"])},
    optional={
        "resources": RESOURCES | SCALARS,
        "ports": PORTS | JSON,
        "restartPolicy": st.sampled_from(["Always", "Never"]),
    },
)
CONTAINERS = st.lists(CONTAINER, max_size=3) | st.lists(CONTAINER | JSON, max_size=3)
TOLERATION = st.fixed_dictionaries(
    {},
    optional={
        "key": st.sampled_from(["", "node.kubernetes.io/not-ready", "dedicated"]) | SCALARS,
        "operator": st.sampled_from(["", "Exists", "Equal"]) | SCALARS,
        "value": st.sampled_from(["", "gpu", "1"]) | SCALARS,
        "effect": st.sampled_from(["", "NoExecute", "NoSchedule"]) | SCALARS,
        "tolerationSeconds": st.sampled_from([300, 300.0, True, "300"]),
    },
)
TOLERATIONS = st.one_of(st.lists(TOLERATION | JSON, min_size=1, max_size=4), JSON)


def outcome(read: Any, *args: Any) -> tuple[str, Any]:
    try:
        return ("read", read(*args))
    except InputError as exc:
        return ("refused", exc.message)


@settings(max_examples=250, deadline=None)
@given(RESOURCES | JSON)
def test_resources_read_quickly_as_with_the_checks(resources: Any) -> None:
    quick = outcome(FAST.resources, READER, resources, "spec.resources")
    assert quick == outcome(CHECKED.resources, READER, resources, "spec.resources")


@settings(max_examples=500, deadline=None)
@given(CONTAINERS)
@example([{"name": "app", "resources": {"requests": {7: "1"}}}])  # a YAML number as a name
@example([{"name": "app", "resources": {"limits": {"nvidia.com/gpu": "1"}}}])
@example([{"name": "app", "resources": {"requests": {"cpu": "1", "hugepages-2Mi": "2Mi"}}}])
@example([{"name": "app", "ports": [{"containerPort": 53, "hostPort": 53}]}])
@example([{"name": "app", "ports": [{"containerPort": 53, "hostPort": 0}]}])
@example([{"name": "app", "ports": {}}, {"name": "proxy", "ports": "53"}])
def test_containers_read_quickly_as_with_the_checks(containers: list[Any]) -> None:
    quick = FAST.plain_container_requests(containers)
    if quick is None:
        return  # read the checked way instead
    assert outcome(CHECKED.container_requests_sum, READER, containers, []) == ("read", quick)
    assert outcome(_reading.extended_requests, READER, containers, []) == ("read", {})
    assert outcome(_reading.host_ports, READER, containers, []) == ("read", ())


@settings(max_examples=250, deadline=None)
@given(CONTAINER_STATUSES, st.booleans())
def test_container_statuses_read_quickly_as_with_the_checks(item: Any, init: bool) -> None:
    path = "status.initContainerStatuses" if init else "status.containerStatuses"
    checked = outcome(CHECKED.container_status, READER, item, init, path, 0)
    try:
        quick = FAST.plain_container_status(item, init)
    except _fast.NotPlainError:
        return  # read the checked way instead
    assert checked == ("read", quick)


@settings(max_examples=250, deadline=None)
@given(st.lists(TOLERATIONS, min_size=1, max_size=4))
def test_tolerations_read_once_as_with_the_checks(lists: list[Any]) -> None:
    for items in lists + lists:  # each list again, once read before
        checked = outcome(CHECKED.tolerations, READER, {"tolerations": items})
        assert outcome(FAST.tolerations, READER, {"tolerations": items}) == checked


MOMENT = datetime.datetime(2026, 11, 28, 6, 30, 12, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-28T06:30:12Z", ("read", MOMENT)),
        ("2026-11-28T07:30:12+01:00", ("read", MOMENT)),
        ("2026-11-28T06:30:12", ("read", MOMENT)),  # no offset: UTC
        (
            "yesterday",
            (
                "refused",
                "Pod shop/web-1: metadata.creationTimestamp: "
                "invalid timestamp 'yesterday': expected RFC 3339",
            ),
        ),
    ],
)
def test_timestamps_read_again_read_the_same(text: str, expected: tuple[str, Any]) -> None:
    path = "metadata.creationTimestamp"
    assert [outcome(FAST.timestamp, READER, text, path) for _ in range(2)] == [expected] * 2
    assert outcome(CHECKED.timestamp, READER, text, path) == expected
