"""LandingControl: each planned move's landing derived again from the cluster as the
evictor observed it.

Covers: a replacement bound elsewhere than planned moves its requests and usage
there, and the next move's landing follows; a source relieved by the moves
carried out is no longer a source; a move with no good landing left is skipped
with the reason; observed landings are judged bad on the source, a hot node or
one the pod takes over its targets, and good elsewhere.
"""

from __future__ import annotations

import dataclasses

from loadaware.cluster import ClusterState
from loadaware.metrics import Usage
from loadaware.plan import Eviction, LandingControl, Plan, build_plan
from loadaware.policy import LoadAwarePolicy, parse_policy
from tests.lib.builders import (
    NOW,
    GiB,
    daemonset,
    make_cluster,
    make_node,
    make_pod,
    make_usage,
    sample,
)


def _policy() -> LoadAwarePolicy:
    return parse_policy(
        {
            "apiVersion": "loadaware.io/v1alpha1",
            "kind": "LoadAwarePolicy",
            "nodePools": [
                {
                    "name": "default",
                    "thresholds": {"cpu": 20, "memory": 20},
                    "targetThresholds": {"cpu": 70, "memory": 80},
                }
            ],
        }
    )


def _cluster() -> tuple[ClusterState, Usage]:
    """ "hot" (97.5% cpu) with web-1, web-2 and web-3 to move; "roomy" (50%) has room for
    one of them and scores best (requests least); "spare" (50%) has room for one;
    "busy" (60%) for none."""
    nodes = [make_node(n) for n in ("hot", "roomy", "spare", "busy")]
    pods = [
        make_pod("agent-hot", node="hot", owner=daemonset("agent"), cpu_millicores=3000),
        make_pod("web-1", node="hot", cpu_millicores=100),
        make_pod("web-2", node="hot", cpu_millicores=100),
        make_pod("web-3", node="hot", cpu_millicores=100),
        make_pod("filler-spare", node="spare", cpu_millicores=1000),
        make_pod("filler-busy", node="busy", cpu_millicores=2000),
    ]
    node_usage = {
        "hot": sample(3.9, 4 * GiB),
        "roomy": sample(2.0, 4 * GiB),  # +0.5 is 62.5%, +1.0 is 75%: room for one
        "spare": sample(2.0, 4 * GiB),
        "busy": sample(2.4, 4 * GiB),  # +0.5 is 72.5%, over the target
    }
    pod_usage = {f"default/web-{i}": sample(0.5, 0.2 * GiB) for i in (1, 2, 3)}
    return make_cluster(nodes, pods), make_usage(node_usage, pod_usage)


def _control(planned: Plan) -> tuple[LandingControl, dict[str, Eviction]]:
    cluster, usage = _cluster()
    control = LandingControl.for_plan(cluster, usage, _policy(), NOW, planned)
    return control, {e.pod: e for e in planned.evictions}


def test_the_next_landing_follows_where_the_last_replacement_really_went() -> None:
    cluster, usage = _cluster()
    planned = build_plan(cluster, usage, _policy(), NOW)
    assert [e.pod for e in planned.evictions] == ["default/web-1", "default/web-2"]
    control, evictions = _control(planned)
    first = control.landing(evictions["default/web-1"])
    assert first.skip is None
    assert first.expected_node == "roomy"
    # It landed on "spare" instead (say, the sample held no "roomy").
    control.replacement_bound(evictions["default/web-1"], "spare", NOW)
    assert control.judge_landing(evictions["default/web-1"], "spare") is None
    second = control.landing(evictions["default/web-2"])
    assert second.skip is None
    assert second.expected_node == "roomy"
    assert "busy" not in second.landing_set


def test_a_source_the_moves_relieved_is_no_longer_a_source() -> None:
    cluster, usage = _cluster()
    # hot at 80%: web-1 alone takes it to 67.5%, under its target.
    usage = dataclasses.replace(usage, nodes={**usage.nodes, "hot": sample(3.2, 4 * GiB)})
    planned = build_plan(cluster, usage, _policy(), NOW)
    (web1,) = planned.evictions
    web2 = dataclasses.replace(web1, pod="default/web-2", uid="uid-pod-default-web-2")
    control = LandingControl.for_plan(
        cluster, usage, _policy(), NOW, dataclasses.replace(planned, evictions=(web1, web2))
    )
    assert control.landing(web2).skip is None
    control.replacement_bound(web1, "roomy", NOW)
    assert control.still_hot() == []
    assert control.landing(web2).skip == "source-no-longer-hot"


def test_a_move_without_a_good_landing_left_is_skipped_with_the_reason() -> None:
    cluster, usage = _cluster()
    planned = build_plan(cluster, usage, _policy(), NOW)
    web1, web2 = planned.evictions
    web3 = dataclasses.replace(web2, pod="default/web-3", uid="uid-pod-default-web-3")
    control, _ = _control(dataclasses.replace(planned, evictions=(web1, web2, web3)))
    control.replacement_bound(web1, "roomy", NOW)
    control.replacement_bound(web2, "spare", NOW)
    assert control.still_hot() == ["hot"]
    skip = control.landing(web3).skip
    assert skip is not None
    assert skip.startswith("no-good-landing: ")


def test_observed_landings_are_judged() -> None:
    cluster, usage = _cluster()
    planned = build_plan(cluster, usage, _policy(), NOW)
    control, evictions = _control(planned)
    web1 = evictions["default/web-1"]
    assert control.judge_landing(web1, "hot") == "source"
    assert control.judge_landing(web1, "busy") == "over-targets"
    assert control.judge_landing(web1, "spare") is None
    assert control.judge_landing(web1, "roomy") is None
