"""The shortcuts of the converter read what its checked readers read (Hypothesis).

Covered: a container's resources, a container status and a pod's tolerations,
read the quick way (objects and strings as the API server writes them, a list
of tolerations read once for the pods that share it) give the same value or
the same error as the checked reading, whatever the input; tolerations come
back the same however often a list was read before, and a list read before does
not vouch for a different one.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loadaware.cluster import _convert
from loadaware.errors import InputError

READER = _convert._Reader("Pod", "web-1", "shop")

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
    st.sampled_from(["cpu", "memory", "nvidia.com/gpu"]),
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
    quick = outcome(_convert._requests_of, READER, resources, "spec.resources")
    # Not a dict: the checked reader reads it, through the same Mapping interface.
    checked_input = MappingProxyType(resources) if type(resources) is dict else resources
    assert quick == outcome(_convert._requests_of, READER, checked_input, "spec.resources")


@settings(max_examples=250, deadline=None)
@given(CONTAINER_STATUSES, st.booleans())
def test_container_statuses_read_quickly_as_with_the_checks(item: Any, init: bool) -> None:
    path = "status.initContainerStatuses" if init else "status.containerStatuses"
    checked = outcome(_convert._read_container_status, READER, item, init, path, 0)
    try:
        quick = _convert._plain_container_status(item, init)
    except _convert._NotPlainError:
        return  # read the checked way instead
    assert checked == ("read", quick)


@settings(max_examples=250, deadline=None)
@given(st.lists(TOLERATIONS, min_size=1, max_size=4))
def test_tolerations_read_once_as_with_the_checks(lists: list[Any]) -> None:
    for items in lists + lists:  # each list again, once read before
        checked = outcome(_convert._read_tolerations, READER, items) if items else ("read", ())
        assert outcome(_convert._tolerations, READER, {"tolerations": items}) == checked
