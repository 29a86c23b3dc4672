"""The pod fields the strategies read, converted from raw objects as kubectl prints them.

Covers: preferred node affinity terms with their weights; topology spread
constraints with their defaults and matchLabelKeys folded into the selector;
container statuses (init and regular, restarts, waiting and terminated
reasons, exit codes); status.startTime and status.reason; a bad value named
with its path.
"""

from __future__ import annotations

import pytest

from loadaware.cluster import cluster_state_from_objects
from loadaware.errors import InputError
from tests.lib.objects import raw_pod


def _pod(spec_extra=None, status_extra=None):
    return raw_pod(
        "web-1",
        namespace="shop",
        labels={"app": "web", "rev": "7"},
        node="a",
        container="web",
        phase="Running",
        status=status_extra,
        **(spec_extra or {}),
    )


def _convert(pod):
    (converted,) = cluster_state_from_objects([pod]).pods
    return converted


def test_preferred_node_affinity() -> None:
    pod = _convert(
        _pod(
            {
                "affinity": {
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 30,
                                "preference": {
                                    "matchExpressions": [
                                        {"key": "disk", "operator": "In", "values": ["ssd"]}
                                    ]
                                },
                            }
                        ]
                    }
                }
            }
        )
    )
    (term,) = pod.preferred_node_affinity
    assert term.weight == 30
    assert term.preference.match_expressions[0].values == ("ssd",)


def test_topology_spread_constraints() -> None:
    pod = _convert(
        _pod(
            {
                "topologySpreadConstraints": [
                    {
                        "maxSkew": 2,
                        "topologyKey": "topology.kubernetes.io/zone",
                        "whenUnsatisfiable": "ScheduleAnyway",
                        "labelSelector": {"matchLabels": {"app": "web"}},
                        "matchLabelKeys": ["rev"],
                        "minDomains": 3,
                    }
                ]
            }
        )
    )
    (constraint,) = pod.topology_spread_constraints
    assert constraint.max_skew == 2
    assert constraint.when_unsatisfiable == "ScheduleAnyway"
    assert dict(constraint.label_selector.match_labels) == {"app": "web", "rev": "7"}
    assert constraint.min_domains == 3
    assert (constraint.node_affinity_policy, constraint.node_taints_policy) == ("Honor", "Ignore")


def test_container_statuses_start_time_and_reason() -> None:
    pod = _convert(
        _pod(
            status_extra={
                "phase": "Failed",
                "reason": "Evicted",
                "startTime": "2026-11-28T08:00:00Z",
                "initContainerStatuses": [
                    {"name": "init", "restartCount": 3, "state": {"terminated": {"exitCode": 0}}}
                ],
                "containerStatuses": [
                    {
                        "name": "web",
                        "restartCount": 5,
                        "state": {"terminated": {"reason": "Error", "exitCode": 1}},
                    },
                    {
                        "name": "side",
                        "restartCount": 1,
                        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    },
                ],
            }
        )
    )
    assert pod.status_reason == "Evicted"
    assert pod.start_time is not None
    assert pod.start_time.day == 28
    init, web, side = pod.container_statuses
    assert (init.init, init.restart_count, init.exit_code) == (True, 3, 0)
    assert (web.terminated_reason, web.exit_code, web.restart_count) == ("Error", 1, 5)
    assert side.waiting_reason == "CrashLoopBackOff"
    assert pod.restart_count == 6  # the regular containers, as before


def test_bad_spread_value_is_named_with_its_path() -> None:
    bad = _pod(
        {
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "Sometimes"}
            ]
        }
    )
    with pytest.raises(InputError, match=r"topologySpreadConstraints\[0\].whenUnsatisfiable"):
        _convert(bad)
