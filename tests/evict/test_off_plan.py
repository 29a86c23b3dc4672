"""The breaker's reason when a replacement lands on a good node other than the planned one:
from 100 nodes up it names kube-scheduler's node sampling, the likely cause."""

from __future__ import annotations

from loadaware import scheduling
from loadaware.evict._verify import off_plan_problem


def test_small_cluster_says_where_it_landed() -> None:
    assert off_plan_problem(
        "shop/web-1", "cool-2", "cool-1", scheduling.MIN_FEASIBLE_NODES_TO_FIND - 1
    ) == ("replacement of shop/web-1 landed on cool-2, not on cool-1 as planned")


def test_sampled_cluster_names_percentage_of_nodes_to_score() -> None:
    problem = off_plan_problem("shop/web-1", "cool-2", "cool-1", 1000)
    assert problem.startswith("replacement of shop/web-1 landed on cool-2, not on cool-1")
    assert "with 1000 nodes" in problem
    assert "percentageOfNodesToScore is 100" in problem
