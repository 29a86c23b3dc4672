"""One pod reader, two readings: the fast one reads every pod as the checked one does.

Covered (Hypothesis): generated Pod objects, as the API server writes them and
malformed anywhere (a wrong type or value in any field the reader reads), read
through a Converter with the fast reading and through one with the checked
reading give equal pods or the same error, message for message; the fast
converter is the same for every example, as for every pod of one load, so what
it kept from earlier pods is checked not to change what it reads. The file
loader, the live reader and the cluster cache all read through a Converter.
"""

from __future__ import annotations

import datetime
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from loadaware.cluster import _convert, _fast, _reading
from loadaware.errors import InputError

# Shared by every example (see the module).
FAST = _convert.Converter(_fast.FastReading())

# Wrong values of every JSON type, and a timestamp as YAML reads one unquoted.
WRONG = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.sampled_from([0.5, 2**70, float("inf")]),
    st.sampled_from(["", "x", "-1", "1e3", "10Qi", "Exists", "2026-13-01T00:00:00Z"]),
    st.just([]),
    st.just({}),
    st.just(datetime.datetime(2026, 11, 28, 6, 30, tzinfo=datetime.UTC)),
)


def maybe_wrong(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the value as the API server writes it, sometimes anything else: a pod
    has some thirty fields that may be wrong, and most pods should be read."""
    return st.integers(0, 15).flatmap(lambda n: WRONG if n == 0 else strategy)


QUANTITY = st.sampled_from(["100m", "250m", "1", "2", "64Mi", "1Gi", "0.5Gi", "1500m"])
RESOURCE_NAMES = st.sampled_from(["cpu", "memory", "ephemeral-storage", "nvidia.com/gpu"])
QUANTITIES = st.dictionaries(RESOURCE_NAMES, maybe_wrong(QUANTITY), max_size=3)
RESOURCES = st.fixed_dictionaries(
    {}, optional={"requests": maybe_wrong(QUANTITIES), "limits": maybe_wrong(QUANTITIES)}
)
PORT = st.fixed_dictionaries(
    {"containerPort": st.integers(1, 9000)},
    optional={"hostPort": maybe_wrong(st.sampled_from([0, 80, 9100]))},
)
CONTAINER = st.fixed_dictionaries(
    {"name": maybe_wrong(st.sampled_from(["app", "proxy"]))},
    optional={
        "image": maybe_wrong(st.sampled_from(["web:1", "proxy:2"])),
        "resources": maybe_wrong(RESOURCES),
        "ports": maybe_wrong(st.lists(maybe_wrong(PORT), max_size=2)),
        "restartPolicy": st.sampled_from(["Always", "Never"]),
    },
)
CONTAINERS = st.lists(maybe_wrong(CONTAINER), min_size=1, max_size=3)
TOLERATION = st.fixed_dictionaries(
    {},
    optional={
        "key": maybe_wrong(st.sampled_from(["node.kubernetes.io/not-ready", "dedicated"])),
        "operator": maybe_wrong(st.sampled_from(["", "Exists", "Equal"])),
        "value": maybe_wrong(st.sampled_from(["", "gpu"])),
        "effect": maybe_wrong(st.sampled_from(["", "NoExecute", "NoSchedule"])),
        "tolerationSeconds": st.sampled_from([300, 300.0, "300"]),
    },
)
TIMESTAMP = st.sampled_from(
    ["2026-11-28T06:30:12Z", "2026-11-28T07:30:12+01:00", "2026-11-28T06:30:12"]
)
STATE = st.dictionaries(
    st.sampled_from(["waiting", "terminated", "running"]),
    maybe_wrong(
        st.fixed_dictionaries(
            {},
            optional={
                "reason": maybe_wrong(st.sampled_from(["Error", "CrashLoopBackOff"])),
                "exitCode": maybe_wrong(st.integers(0, 2)),
                "startedAt": TIMESTAMP,
            },
        )
    ),
    max_size=2,
)
CONTAINER_STATUS = st.fixed_dictionaries(
    {"name": maybe_wrong(st.sampled_from(["app", "proxy"]))},
    optional={"restartCount": maybe_wrong(st.integers(0, 3)), "state": maybe_wrong(STATE)},
)
OWNER = st.fixed_dictionaries(
    {
        "kind": maybe_wrong(st.sampled_from(["ReplicaSet", "DaemonSet", "Job"])),
        "name": maybe_wrong(st.sampled_from(["web-7d9f", "agent"])),
        "uid": maybe_wrong(st.sampled_from(["u-1", "u-2"])),
    },
    optional={"controller": st.booleans()},
)
LABELS = st.dictionaries(
    st.sampled_from(["app", "tier"]), maybe_wrong(st.sampled_from(["web", "db"])), max_size=2
)
METADATA = st.fixed_dictionaries(
    {"name": st.sampled_from(["web-1", "web-2"])},
    optional={
        "namespace": st.sampled_from(["shop", ""]),
        "uid": maybe_wrong(st.sampled_from(["p-1", "p-2"])),
        "labels": maybe_wrong(LABELS),
        "annotations": maybe_wrong(LABELS),
        "ownerReferences": maybe_wrong(st.lists(maybe_wrong(OWNER), max_size=2)),
        "creationTimestamp": maybe_wrong(TIMESTAMP),
        "deletionTimestamp": maybe_wrong(TIMESTAMP),
    },
)
SPEC = st.fixed_dictionaries(
    {"containers": maybe_wrong(CONTAINERS)},
    optional={
        "initContainers": maybe_wrong(st.lists(maybe_wrong(CONTAINER), max_size=2)),
        "resources": maybe_wrong(RESOURCES),
        "overhead": maybe_wrong(QUANTITIES),
        "tolerations": maybe_wrong(st.lists(maybe_wrong(TOLERATION), max_size=3)),
        "priority": maybe_wrong(st.integers(0, 1000)),
        "priorityClassName": maybe_wrong(st.sampled_from(["", "high", "system-node-critical"])),
        "nodeName": maybe_wrong(st.sampled_from(["node-a", ""])),
        "volumes": maybe_wrong(st.lists(st.sampled_from([{"emptyDir": {}}, {"name": "v"}]))),
    },
)
STATUS = st.fixed_dictionaries(
    {},
    optional={
        "phase": maybe_wrong(st.sampled_from(["Running", "Pending", "Failed"])),
        "qosClass": maybe_wrong(st.sampled_from(["", "Burstable", "Guaranteed"])),
        "startTime": maybe_wrong(TIMESTAMP),
        "reason": maybe_wrong(st.sampled_from(["", "Evicted"])),
        "conditions": maybe_wrong(
            st.lists(st.fixed_dictionaries({"type": st.just("Ready"), "status": st.just("True")}))
        ),
        "containerStatuses": maybe_wrong(st.lists(maybe_wrong(CONTAINER_STATUS), max_size=2)),
        "initContainerStatuses": maybe_wrong(st.lists(maybe_wrong(CONTAINER_STATUS), max_size=1)),
    },
)
POD = st.fixed_dictionaries(
    {"apiVersion": st.just("v1"), "kind": st.just("Pod"), "metadata": METADATA},
    optional={"spec": maybe_wrong(SPEC), "status": maybe_wrong(STATUS)},
)


def read(converter: _convert.Converter, raw: dict[str, Any]) -> tuple[str, Any]:
    try:
        return ("read", converter.cluster_state([raw]).pods)
    except InputError as exc:
        return ("refused", exc.message)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(POD)
@example(  # as the API server writes a pod: every field read the fast way
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-1",
            "namespace": "shop",
            "uid": "p-1",
            "ownerReferences": [{"kind": "ReplicaSet", "name": "web-7d9f", "uid": "u-1"}],
            "creationTimestamp": "2026-11-28T06:30:12Z",
        },
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "web:1",
                    "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}},
                }
            ],
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}],
            "priority": 0,
        },
        "status": {
            "phase": "Running",
            "qosClass": "Burstable",
            "startTime": "2026-11-28T06:30:12Z",
            "containerStatuses": [{"name": "app", "restartCount": 0, "state": {"running": {}}}],
        },
    }
)
@example(  # a bad quantity the fast path hands to the checked one
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "shop"},
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "1x"}}}]},
    }
)
@example(  # a null init container reads as an empty one, as a null container does
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-1"},
        "spec": {"containers": [None], "initContainers": [None]},
    }
)
def test_the_fast_reading_reads_every_pod_as_the_checked_one(raw: dict[str, Any]) -> None:
    checked = read(_convert.Converter(_reading.CheckedReading()), raw)
    assert read(FAST, raw) == checked
    assert read(FAST, raw) == checked  # again, with what it kept from the first time
