"""Families of generated clusters (loadaware.sim.generate_cluster's `family`).

Covered: the default family is "proportional" and an unknown one is refused;
in the "usage-independent" family every workload's pods use between 0.3x and 3x
their cpu requests, spread across that whole range; among nodes that are not
hot, cpu requests say little about cpu usage (while they predict it in the
proportional family); warm nodes that request little but run just under the
targets exist (and do not in the proportional family), as do nodes that
request much and use little; about the same share of nodes runs hot in both
families, and every hot node could be relieved by its own evictable pods into
the cool headroom left on the other nodes.
"""

from __future__ import annotations

import datetime
import functools
import json
import statistics
from collections import defaultdict

import numpy as np
import pytest

from bench import checks, measure
from loadaware import cluster, metrics, policy
from loadaware.sim import Scenario, generate_cluster

NOW = datetime.datetime(2026, 11, 29, 8, 0, 0, tzinfo=datetime.UTC)
NODES = 400
TARGET_CPU = 0.70  # the default policy's targetThresholds
TARGET_MEMORY = 0.80


@functools.cache
def _generated(family: str, capacity: str = "loose") -> Scenario:
    return generate_cluster(nodes=NODES, seed=2, capacity=capacity, family=family, now=NOW)  # type: ignore[arg-type]


@functools.cache
def _loaded(family: str, capacity: str = "loose") -> tuple[cluster.ClusterState, metrics.Usage]:
    sc = _generated(family, capacity)
    return cluster.cluster_state_from_objects(sc.objects), metrics.usage_from_json(sc.metrics)


def _node_fractions(family: str, capacity: str = "loose") -> dict[str, dict[str, float]]:
    """Per ready, schedulable node of the default pool: cpu and memory requests and usage
    as fractions of allocatable."""
    state, usage = _loaded(family, capacity)
    out = {}
    for node in state.nodes:
        if not node.ready or node.unschedulable or node.labels.get("pool") != "default":
            continue
        pods = state.pods_by_node.get(node.name, ())
        sample = usage.nodes[node.name]
        cpu, memory = node.allocatable_cpu_millicores, node.allocatable_memory_bytes
        out[node.name] = {
            "cpu_requested": sum(p.cpu_request_millicores for p in pods) / cpu,
            "memory_requested": sum(p.memory_request_bytes for p in pods) / memory,
            "cpu_used": sample.cpu_cores * 1000 / cpu,
            "memory_used": sample.memory_bytes / memory,
        }
    return out


def _is_hot(f: dict[str, float]) -> bool:
    return f["cpu_used"] > TARGET_CPU or f["memory_used"] > TARGET_MEMORY


def test_the_default_family_is_proportional_and_unknown_ones_are_refused() -> None:
    plain = generate_cluster(nodes=30, seed=9, now=NOW)
    named = generate_cluster(nodes=30, seed=9, family="proportional", now=NOW)
    assert json.dumps(plain.cluster_document()) == json.dumps(named.cluster_document())
    assert plain.metrics == named.metrics
    other = generate_cluster(nodes=30, seed=9, family="usage-independent", now=NOW)
    assert other.metrics != plain.metrics
    with pytest.raises(ValueError, match="family must be"):
        generate_cluster(nodes=30, family="random", now=NOW)  # type: ignore[arg-type]


def test_workloads_use_between_a_third_and_three_times_their_cpu_requests() -> None:
    state, usage = _loaded("usage-independent")
    by_workload: dict[str, list[float]] = defaultdict(list)
    for pod in state.pods:
        # Node agents and cluster add-ons keep their well-known sizes and usage.
        if pod.is_daemonset_pod or pod.namespace == "kube-system":
            continue
        used_m = usage.pods[pod.key].cpu_cores * 1000
        # Usage is rounded to the millicore: allow that much either side.
        low = (used_m + 1) / pod.cpu_request_millicores
        high = (used_m - 1) / pod.cpu_request_millicores
        assert low >= 0.3, pod.key
        assert high <= 3.0, pod.key
        owner = pod.workload or pod.owner
        by_workload[f"{pod.namespace}/{owner.name if owner else pod.name}"].append(
            used_m / pod.cpu_request_millicores
        )
    medians = sorted(statistics.median(r) for r in by_workload.values())
    assert len(medians) >= 50
    # Heavy-tailed over the whole range, not a narrow band around one ratio.
    assert medians[len(medians) // 10] < 0.45
    assert medians[-len(medians) // 10] > 1.2
    assert sum(m > 2.2 for m in medians) >= 0.02 * len(medians)


@pytest.mark.parametrize("capacity", ["loose", "tight"])
def test_requests_say_little_about_usage_on_nodes_that_are_not_hot(capacity: str) -> None:
    def correlation(family: str) -> float:
        cool = [f for f in _node_fractions(family, capacity).values() if not _is_hot(f)]
        requested = np.array([f["cpu_requested"] for f in cool])
        used = np.array([f["cpu_used"] for f in cool])
        return float(np.corrcoef(requested, used)[0, 1])

    assert abs(correlation("usage-independent")) < 0.35
    assert correlation("proportional") > 0.5  # the contrast the family exists for


def _warm_with_few_requests(family: str) -> list[str]:
    return [
        name
        for name, f in _node_fractions(family).items()
        if 0.5 <= f["cpu_used"] <= TARGET_CPU
        and f["memory_used"] <= TARGET_MEMORY
        and f["cpu_requested"] <= 0.35
    ]


def test_some_nodes_request_little_but_run_just_under_the_targets() -> None:
    warm = _warm_with_few_requests("usage-independent")
    assert 0.05 * NODES <= len(warm) <= 0.12 * NODES
    fractions = _node_fractions("usage-independent")
    median_requested = statistics.median(f["cpu_requested"] for f in fractions.values())
    assert all(fractions[n]["cpu_requested"] < 0.7 * median_requested for n in warm)
    assert statistics.median(fractions[n]["cpu_used"] for n in warm) >= 0.55
    assert len(_warm_with_few_requests("proportional")) <= 0.01 * NODES


def test_some_nodes_hold_large_requests_and_use_little() -> None:
    reserved = [
        f
        for f in _node_fractions("usage-independent").values()
        if f["cpu_requested"] >= 0.65 and f["cpu_used"] <= 0.3
    ]
    assert len(reserved) >= 0.08 * NODES


@pytest.mark.parametrize("family", ["proportional", "usage-independent"])
def test_about_one_node_in_ten_runs_hot_and_each_can_be_relieved(family: str) -> None:
    state, usage = _loaded(family)
    settings = policy.LoadAwarePolicy()
    view = checks.ClusterView.build(state, usage, settings, NOW)
    bound = measure.cover_bound(state, usage, settings, NOW, view)
    assert 0.06 * NODES <= bound.hot <= 0.12 * NODES
    assert bound.relievable == bound.hot
    # Cool headroom: what the other nodes can take under their targets, many times over
    # what the hot nodes are above theirs.
    ratios = view.used / view.allocatable
    hot = view.hot()
    excess = np.maximum(ratios - view.high, 0.0)[hot] * view.allocatable[hot]
    room = (
        np.maximum(view.high - ratios, 0.0)[~hot & view.in_round]
        * view.allocatable[~hot & view.in_round]
    )
    assert np.all(room.sum(axis=0) > 5 * excess.sum(axis=0))
