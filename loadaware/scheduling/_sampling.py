"""How many nodes kube-scheduler scores, and how many good nodes a sample cannot miss.

From 100 nodes kube-scheduler stops filtering once it has found
`numFeasibleNodesToFind` feasible nodes, walking its node order from a start
index that moves on with every pod (pkg/scheduler/schedule_one.go), and scores
only those. A replacement's landing is then the best node of a sample, not of
the cluster: a move is safe when its eligible good nodes are so many that the
sample contains one of them, and every bad node that could outscore them
carries the soft taint.

The walk's order is the nodeTree's (zones round-robin), which loadaware cannot
observe; so the chance that a sample misses every eligible node is taken as if
the sample were drawn at random from the feasible nodes, which the order makes
no worse for a set chosen without regard to it.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from functools import lru_cache

# pkg/scheduler/schedule_one.go
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage_of_nodes_to_score: int, num_all_nodes: int) -> int:
    """kube-scheduler's numFeasibleNodesToFind: how many feasible nodes it looks for
    before it stops filtering. `percentage_of_nodes_to_score` 0 is its adaptive
    default (50 less 1 per 125 nodes, at least 5)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    percentage = percentage_of_nodes_to_score
    if percentage == 0:
        # Go's int32 division truncates toward zero.
        percentage = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num_nodes = num_all_nodes * percentage // 100
    return max(num_nodes, MIN_FEASIBLE_NODES_TO_FIND)


def miss_chance(feasible: int, sample: int, eligible: int) -> float:
    """The chance that `sample` nodes drawn at random from `feasible` include none of
    `eligible` of them (hypergeometric: C(feasible - eligible, sample) / C(feasible, sample))."""
    if sample >= feasible:
        return 0.0 if eligible > 0 else 1.0
    chance = 1.0
    for i in range(eligible):
        remaining = feasible - sample - i
        if remaining <= 0:
            return 0.0
        chance *= remaining / (feasible - i)
    return chance


# A landing prediction asks it for every move, with the same few arguments in a round.
@lru_cache(maxsize=256)
def eligible_needed(feasible: int, sample: int, miss_probability: float) -> int:
    """The fewest eligible nodes among `feasible` that a random sample of `sample`
    misses altogether with a chance of at most `miss_probability`; 1 when the
    sample is every feasible node."""
    if sample >= feasible:
        return 1
    chance = 1.0
    for count in range(1, feasible + 1):
        remaining = feasible - sample - (count - 1)
        if remaining <= 0:
            return count
        chance *= remaining / (feasible - (count - 1))
        if chance <= miss_probability:
            return count
    return feasible
