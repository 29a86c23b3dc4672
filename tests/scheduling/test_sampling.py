"""kube-scheduler's sample size (numFeasibleNodesToFind), checked against its own
test table (pkg/scheduler/schedule_one_test.go, TestNumFeasibleNodesToFind), and
the size of a landing set that no sample misses but by a stated chance."""

from __future__ import annotations

import math

import pytest

from loadaware.scheduling import _sampling


@pytest.mark.parametrize(
    ("percentage", "nodes", "expected"),
    [
        pytest.param(0, 10, 10, id="adaptive, fewer nodes than 50"),
        pytest.param(40, 10, 10, id="40 percent, fewer nodes than 50"),
        pytest.param(0, 1000, 420, id="adaptive, 1000 nodes"),
        pytest.param(40, 1000, 400, id="40 percent, 1000 nodes"),
        pytest.param(0, 6000, 300, id="adaptive, 6000 nodes: at least 5 percent"),
        pytest.param(40, 6000, 2400, id="40 percent, 6000 nodes"),
        pytest.param(0, 5000, 500, id="adaptive, 5000 nodes"),
        pytest.param(0, 100, 100, id="adaptive, 100 nodes: at least 100"),
        pytest.param(100, 1000, 1000, id="every node"),
        pytest.param(1, 1000, 100, id="1 percent: at least 100 nodes"),
    ],
)
def test_num_feasible_nodes_to_find_matches_kube_scheduler(
    percentage: int, nodes: int, expected: int
) -> None:
    assert _sampling.num_feasible_nodes_to_find(percentage, nodes) == expected


def test_miss_chance_is_the_hypergeometric_probability() -> None:
    # C(F - E, K) / C(F, K)
    feasible, sample, eligible = 60, 20, 4
    exact = math.comb(feasible - eligible, sample) / math.comb(feasible, sample)
    assert _sampling.miss_chance(feasible, sample, eligible) == pytest.approx(exact)
    assert _sampling.miss_chance(feasible, feasible, 1) == 0.0
    assert _sampling.miss_chance(feasible, sample, 0) == 1.0


@pytest.mark.parametrize(
    ("feasible", "sample", "probability"),
    [
        (1000, 420, 0.001),
        (5000, 500, 0.001),
        (1000, 100, 0.001),
        (420, 420, 0.001),
        (300, 100, 0.01),
    ],
)
def test_eligible_needed_is_the_fewest_that_meet_the_chance(
    feasible: int, sample: int, probability: float
) -> None:
    needed = _sampling.eligible_needed(feasible, sample, probability)
    assert _sampling.miss_chance(feasible, sample, needed) <= probability
    if needed > 1:
        assert _sampling.miss_chance(feasible, sample, needed - 1) > probability


def test_a_sample_of_every_feasible_node_needs_one_eligible_node() -> None:
    assert _sampling.eligible_needed(80, 100, 0.001) == 1
