"""Profiles: named scopes for the strategies, with per-profile counts in the plan.

Covers: a profile's namespaces and labelSelector narrow the evictor's, and
nodePools limit the nodes it acts on; several profiles each with their own
strategies in one plan, each pod counted under the profile that named it;
loadBalancing off in every profile leaves hot nodes alone; no profiles means
one implicit "default" profile doing hotspot relief only; the profiles
section of `-o json`; profile names unique and nodePools known.
"""

from __future__ import annotations

import pytest

from loadaware.cluster import NodeSelectorTerm, Requirement
from loadaware.errors import PolicyError
from loadaware.plan import build_plan, plan_to_json
from loadaware.policy import parse_policy
from tests.lib.builders import NOW, GiB, daemonset, make_node, make_pod, make_usage, sample
from tests.plan.strategies.scenarios import cluster_of, cool_usage, moved, plan_and_check

AFFINITY = "RemovePodsViolatingNodeAffinity"
SSD = NodeSelectorTerm(match_expressions=(Requirement(key="disk", operator="In", values=("ssd",)),))


def _violators():
    nodes = [
        make_node("a", labels={"disk": "hdd", "pool": "web"}),
        make_node("b", labels={"disk": "ssd", "pool": "web"}),
        make_node("c", labels={"disk": "hdd", "pool": "db"}),
        make_node("d", labels={"disk": "ssd", "pool": "db"}),
    ]
    pods = [
        make_pod("web-1", node="a", namespace="shop", required_node_affinity=(SSD,)),
        make_pod("web-2", node="a", namespace="batch", required_node_affinity=(SSD,)),
        make_pod(
            "api-1",
            node="a",
            namespace="shop",
            labels={"app": "api", "tier": "backend"},
            required_node_affinity=(SSD,),
        ),
        make_pod("db-1", node="c", namespace="shop", required_node_affinity=(SSD,)),
        make_pod("filler-1", node="a", cpu_millicores=2000),
        make_pod("filler-2", node="c", cpu_millicores=2000),
    ]
    return nodes, pods


def _policy(profiles, **overrides):
    return parse_policy(
        {
            "nodePools": [
                {"name": "web", "nodeSelector": {"pool": "web"}},
                {"name": "db", "nodeSelector": {"pool": "db"}},
            ],
            "profiles": profiles,
            **overrides,
        }
    )


ON = {"removePodsViolatingNodeAffinity": {"enabled": True}}


def test_namespaces_and_pools_scope_a_profile() -> None:
    nodes, pods = _violators()
    policy = _policy(
        [
            {
                "name": "shop-web",
                "namespaces": {"include": ["shop"]},
                "nodePools": ["web"],
                "strategies": ON,
            }
        ]
    )
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), policy)
    assert sorted(p for p, _, _ in moved(plan)) == ["shop/api-1", "shop/web-1"]
    assert plan.profiles["shop-web"][AFFINITY].planned == 2


def test_label_selector_narrows_the_evictor() -> None:
    nodes, pods = _violators()
    policy = _policy(
        [
            {
                "name": "backend",
                "labelSelector": {"matchLabels": {"tier": "backend"}},
                "strategies": ON,
            }
        ],
        evictor={"namespaces": {"exclude": ["batch"]}},
    )
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), policy)
    assert [p for p, _, _ in moved(plan)] == ["shop/api-1"]


def test_evictor_exclusion_still_holds_inside_a_profile() -> None:
    nodes, pods = _violators()
    policy = _policy(
        [{"name": "batch", "namespaces": {"include": ["batch"]}, "strategies": ON}],
        evictor={"namespaces": {"exclude": ["batch"]}},
    )
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), policy)
    assert plan.evictions == ()


def test_each_profile_counts_what_it_named() -> None:
    nodes, pods = _violators()
    policy = _policy(
        [
            {"name": "shop", "namespaces": {"include": ["shop"]}, "strategies": ON},
            {"name": "batch", "namespaces": {"include": ["batch"]}, "strategies": ON},
            {"name": "idle", "strategies": {"loadBalancing": {"enabled": False}}},
        ]
    )
    plan = plan_and_check(cluster_of(nodes, pods), cool_usage(nodes, pods), policy)
    assert plan.profiles["shop"][AFFINITY].planned == 3
    assert plan.profiles["batch"][AFFINITY].planned == 1
    assert plan.profiles["idle"] == {}
    body = plan_to_json(plan)
    assert body["profiles"]["batch"] == {
        "hotspot": {"planned": 0, "skipped": 0},
        AFFINITY: {"planned": 1, "skipped": 0},
    }


def _hot():
    nodes = [make_node("hot"), make_node("cold")]
    agent = make_pod("agent-hot", node="hot", owner=daemonset("agent"), cpu_millicores=2000)
    web = make_pod("web-1", node="hot")
    usage = make_usage(
        {"hot": sample(3.6, 4 * GiB), "cold": sample(0.4, 2 * GiB)},
        {"default/web-1": sample(0.9, 0.25 * GiB)},
    )
    return cluster_of(nodes, [agent, web]), usage


def test_no_profiles_is_one_implicit_default_profile_balancing_load() -> None:
    cluster, usage = _hot()
    plan = build_plan(cluster, usage, parse_policy({}), NOW)
    assert moved(plan) == [("default/web-1", "hot", "cold")]
    body = plan_to_json(plan)
    assert body["profiles"] == {"default": {"hotspot": {"planned": 1, "skipped": 0}}}


def test_load_balancing_off_leaves_hot_nodes_alone() -> None:
    cluster, usage = _hot()
    policy = parse_policy(
        {"profiles": [{"name": "p", "strategies": {"loadBalancing": {"enabled": False}}}]}
    )
    plan = build_plan(cluster, usage, policy, NOW)
    assert plan.evictions == ()
    assert plan.status == "noop"


def test_load_balancing_only_in_the_profile_pools() -> None:
    cluster, usage = _hot()
    policy = parse_policy(
        {
            "nodePools": [{"name": "all"}],
            "profiles": [
                {"name": "none", "nodePools": []},
                {"name": "all", "nodePools": ["all"]},
            ],
        }
    )
    plan = build_plan(cluster, usage, policy, NOW)
    assert plan.profiles["all"]["hotspot"].planned == 1
    assert plan.profiles["none"]["hotspot"].planned == 0


@pytest.mark.parametrize(
    ("profiles", "message"),
    [
        ([{"name": "a"}, {"name": "a"}], "profiles names must be unique"),
        ([{"name": "a", "nodePools": ["nope"]}], "nodePools nope not in nodePools"),
    ],
)
def test_profile_names_unique_and_pools_known(profiles, message) -> None:
    with pytest.raises(PolicyError, match=message):
        parse_policy({"profiles": profiles})
