"""Scheduler profiles in the model: a KubeSchedulerConfiguration's profiles score
as they say.

Covers: no configuration, or one naming only the default profile, is the
default profile itself; MostAllocated binds to the fullest node where the
default profile picks the emptiest; a profile that disables TaintToleration
for scoring cannot be steered by the soft taint; plugin weights from the
configuration weight the totals; percentageOfNodesToScore per profile, else
the configuration's; PodTopologySpread's List defaulting with no constraints
turns the system defaults off; BalancedAllocation over cpu, memory and a GPU;
the scoringStrategy path with the default resources equals the default
profile's LeastAllocated.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from loadaware import policy, scheduling
from loadaware.scheduling import Occupancy, _scores
from tests.lib.builders import GiB, make_cluster, make_node, make_pod


def _profiles(config: dict[str, Any]) -> scheduling.SchedulerProfiles:
    return scheduling.profiles_from_config(policy.KubeSchedulerConfiguration.model_validate(config))


def _profile(**profile: Any) -> scheduling.SchedulerProfile:
    found = _profiles({"profiles": [{"schedulerName": "default-scheduler", **profile}]})
    return found.by_name["default-scheduler"]


MOST_ALLOCATED = {
    "pluginConfig": [
        {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
    ]
}


def _three_nodes() -> Occupancy:
    nodes = [make_node("a"), make_node("b"), make_node("c")]
    pods = [
        make_pod("x", node="a", cpu_millicores=2000, memory_bytes=8 * GiB),
        make_pod("y", node="b", cpu_millicores=500, memory_bytes=2 * GiB),
        make_pod("z", node="c", cpu_millicores=1000, memory_bytes=4 * GiB),
    ]
    return Occupancy.from_cluster(make_cluster(nodes, pods))


def test_the_policy_knows_the_plugins_the_model_scores() -> None:
    defaults = policy.merged_score_weights(policy.KubeSchedulerProfile())
    assert defaults == dict(scheduling.DEFAULT_PROFILE.weights)


def test_default_profile_when_omitted_or_named_alone() -> None:
    assert scheduling.profiles_from_config(None).names == ("default-scheduler",)
    assert _profile() is scheduling.DEFAULT_PROFILE
    assert _profiles({}).by_name["default-scheduler"] is scheduling.DEFAULT_PROFILE


def test_most_allocated_binds_to_the_fullest_node() -> None:
    occupancy = _three_nodes()
    incoming = make_pod("new", node=None, cpu_millicores=100, memory_bytes=GiB)
    assert scheduling.best_nodes(incoming, occupancy, ["a", "b", "c"]) == ("b",)
    most = _profile(**MOST_ALLOCATED)
    assert scheduling.best_nodes(incoming, occupancy, ["a", "b", "c"], profile=most) == ("a",)


def test_taint_toleration_disabled_for_scoring_cannot_be_steered() -> None:
    occupancy = _three_nodes()
    pod = make_pod("y", node="b", cpu_millicores=500, memory_bytes=2 * GiB)
    indexes = occupancy.node_indexes(["a", "b", "c"])
    profile = _profile(plugins={"score": {"disabled": [{"name": "TaintToleration"}]}})
    scores = scheduling.score_replacement(pod, occupancy, indexes, profile=profile)
    assert "TaintToleration" not in scores.plugins
    steer = np.ones(len(scores.indexes), dtype=np.bool_)
    assert np.array_equal(scores.with_steering(steer), scores.totals)
    default = scheduling.score_replacement(pod, occupancy, indexes)
    steer = np.array([False, True, True])
    assert not np.array_equal(default.with_steering(steer), default.totals)


def test_configured_weights_weight_the_totals() -> None:
    occupancy = _three_nodes()
    pod = make_pod("new", node=None, cpu_millicores=100, memory_bytes=GiB)
    indexes = occupancy.node_indexes(["a", "b", "c"])
    profile = _profile(plugins={"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 7}]}})
    scores = scheduling.score_replacement(pod, occupancy, indexes, profile=profile)
    expected = sum(profile.weight(name) * score for name, score in scores.plugins.items())
    assert profile.weight("NodeResourcesFit") == 7
    assert np.array_equal(scores.totals, expected)


def test_percentage_of_nodes_to_score_per_profile_else_global() -> None:
    profiles = _profiles(
        {
            "percentageOfNodesToScore": 30,
            "profiles": [
                {"schedulerName": "default-scheduler", "percentageOfNodesToScore": 100},
                {"schedulerName": "packing"},
            ],
        }
    )
    assert profiles.by_name["default-scheduler"].percentage_of_nodes_to_score == 100
    assert profiles.by_name["packing"].percentage_of_nodes_to_score == 30
    assert _profile().percentage_of_nodes_to_score is None


def test_list_defaulting_without_constraints_turns_default_spreading_off() -> None:
    profile = _profile(
        pluginConfig=[{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]
    )
    assert profile.default_spread == ()
    nodes = [make_node("a", zone="z1"), make_node("b", zone="z2")]
    siblings = [make_pod(f"w{i}", node="a", labels={"app": "w"}) for i in range(3)]
    occupancy = Occupancy.from_cluster(make_cluster(nodes, siblings))
    scores = scheduling.score_replacement(
        siblings[0], occupancy, occupancy.node_indexes(["a", "b"]), profile=profile
    )
    assert "PodTopologySpread" not in scores.plugins
    default = scheduling.score_replacement(
        siblings[0], occupancy, occupancy.node_indexes(["a", "b"])
    )
    assert "PodTopologySpread" in default.plugins


def test_balanced_allocation_over_three_resources() -> None:
    """NodeResourcesBalancedAllocation with resources cpu, memory and a GPU: the
    standard deviation of three fractions (balanced_allocation.go's > 2 branch)."""
    profile = _profile(
        pluginConfig=[
            {
                "name": "NodeResourcesBalancedAllocation",
                "args": {
                    "resources": [
                        {"name": "cpu", "weight": 1},
                        {"name": "memory", "weight": 1},
                        {"name": "nvidia.com/gpu", "weight": 1},
                    ]
                },
            }
        ]
    )
    assert profile.balanced_resources == ("cpu", "memory", "nvidia.com/gpu")
    nodes = [
        dataclasses.replace(
            make_node(name, cpu_millicores=4000, memory_bytes=8 * GiB),
            allocatable_extended={"nvidia.com/gpu": gpus},
        )
        for name, gpus in (("four", 4), ("two", 2))
    ]
    occupancy = Occupancy.from_cluster(make_cluster(nodes, []))
    pod = dataclasses.replace(
        make_pod("trainer", node=None, cpu_millicores=1000, memory_bytes=2 * GiB),
        extended_requests={"nvidia.com/gpu": 1},
    )
    scores = scheduling.score_replacement(
        pod, occupancy, occupancy.node_indexes(["four", "two"]), profile=profile
    )
    # four: 1/4 of each, no deviation; two: 1/4, 1/4, 1/2, deviation sqrt(1/72).
    assert scores.plugins["NodeResourcesBalancedAllocation"].tolist() == [
        100,
        int((1 - math.sqrt(1 / 72)) * 100),
    ]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 10**6),
            st.integers(0, 10**6),
            st.integers(0, 10**12),
            st.integers(0, 10**12),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_general_least_allocated_equals_the_default_fast_path(
    rows: list[tuple[int, int, int, int]],
) -> None:
    """The scoringStrategy code path, given the default strategy's resources, scores
    as the default profile's own LeastAllocated does (zero allocatable included)."""
    cpu, alloc_cpu, mem, alloc_mem = (
        np.array(column, dtype=np.int64) for column in zip(*rows, strict=True)
    )
    general = _scores.resource_fit_score(
        "LeastAllocated", (), [(1, cpu, alloc_cpu), (1, mem, alloc_mem)]
    )
    assert general.tolist() == _scores.least_allocated(cpu, alloc_cpu, mem, alloc_mem).tolist()
