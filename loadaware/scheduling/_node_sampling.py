"""Which feasible nodes kube-scheduler scores: its walk over the nodeTree.

From 100 nodes kube-scheduler does not score every feasible node
(pkg/scheduler/schedule_one.go, findNodesThatFitPod and
findNodesThatPassFilters). It filters the nodes in nodeTree order (_node_tree)
from `nextStartNodeIndex`, wrapping, until it has found
`numFeasibleNodesToFind` feasible ones (`_sampling.num_feasible_nodes_to_find`:
adaptive by default, every node with percentageOfNodesToScore 100), scores
only those, and moves the start index on by the nodes it checked, so the next
pod's walk begins where this one stopped. The pod lands on the best node of
that sample, not of the cluster, and the plugins that normalise their scores
(TaintToleration, NodeAffinity, PodTopologySpread, InterPodAffinity) normalise
over the sample.

The nodes checked are the sample, the infeasible nodes met on the way, and
those met after the last sampled node up to the next feasible one: the Go code
stops when it finds one feasible node too many, and does not count that one.
When the walk finds fewer feasible nodes than it wants it has checked every
node and the start index comes back where it was. Below 100 nodes the sample
is every feasible node.

A pod whose required node affinity names its nodes (matchFields on
metadata.name in every term, as a DaemonSet's pods have) is filtered over
those nodes only, as NodeAffinity's PreFilter result makes the Go code do;
the start index still moves modulo every node.

Sequential: kube-scheduler checks nodes on 16 goroutines and stops them once
it has enough, so which feasible nodes make the sample and how far the index
moves can differ by a few nodes from run to run; the model checks them one
after another, as a single goroutine would. Not modelled: the nominated node
tried first (preemption is not modelled), extenders.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from loadaware import errors
from loadaware.cluster import Pod, Taint
from loadaware.scheduling import _node_tree, _occupancy, _predict, _sampling

_NO_TAINTS: Mapping[str, Sequence[Taint]] = MappingProxyType({})
_NAME_FIELD = "metadata.name"

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def walk(feasible: BoolArray, start: int, to_find: int) -> tuple[IntArray, int]:
    """The positions in `feasible` (per node, in walk order) of the first `to_find`
    feasible nodes from `start`, wrapping, in the order met, and how many nodes the
    walk checked to find them (see the module docstring)."""
    count = len(feasible)
    if count == 0 or to_find <= 0:
        return np.zeros(0, dtype=np.int64), 0
    start %= count
    met = np.flatnonzero(np.concatenate((feasible[start:], feasible[:start])))
    if len(met) > to_find:
        # The walk stops at the first feasible node beyond the sample, uncounted.
        checked = int(met[to_find])
        met = met[:to_find]
    else:
        checked = count
    return (met + start) % count, checked


def named_nodes(pod: Pod) -> frozenset[str] | None:
    """The nodes NodeAffinity's PreFilter narrows the pod's filtering to: the names
    its required node affinity allows when every term names them (the values of its
    metadata.name In requirements, intersected within a term, joined across terms);
    None when any term allows nodes by other means."""
    if not pod.required_node_affinity:
        return None
    allowed: set[str] = set()
    for term in pod.required_node_affinity:
        names: set[str] | None = None
        for requirement in term.match_fields:
            if requirement.key == _NAME_FIELD and requirement.operator == "In":
                values = set(requirement.values)
                names = values if names is None else names & values
        if names is None:
            return None
        allowed |= names
    return frozenset(allowed)


class NodeSampler:
    """The walk's state across scheduling cycles: the nodeTree and the start index."""

    def __init__(self, tree: _node_tree.NodeTree, *, percentage_of_nodes_to_score: int = 0):
        """`percentage_of_nodes_to_score`: 0 is kube-scheduler's adaptive default, 100
        scores every feasible node."""
        if not 0 <= percentage_of_nodes_to_score <= 100:
            raise errors.InputError(
                "percentage of nodes to score must be 0 (adaptive) to 100, "
                f"not {percentage_of_nodes_to_score}"
            )
        self.tree = tree
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.next_start_index = 0

    def sample(
        self,
        pod: Pod,
        occupancy: _occupancy.Occupancy,
        *,
        extra_taints: Mapping[str, Sequence[Taint]] = _NO_TAINTS,
        terminating: Collection[Pod] = (),
    ) -> tuple[str, ...]:
        """The feasible nodes kube-scheduler scores for `pod`, in the order its walk
        met them, and the start index moved on for the next pod. `occupancy` holds
        every node of the tree; `extra_taints` and `terminating` are as for
        `best_nodes`, which scores the sample."""
        order = self.tree.list()
        if not order:
            return ()
        named = named_nodes(pod)
        candidates = order if named is None else tuple(n for n in order if n in named)
        indexes = occupancy.node_indexes(candidates)
        feasible = _predict.feasible_mask(
            pod, occupancy, indexes, extra_taints=extra_taints, terminating=terminating
        )
        to_find = _sampling.num_feasible_nodes_to_find(
            self.percentage_of_nodes_to_score, len(candidates)
        )
        positions, checked = walk(feasible, self.next_start_index, to_find)
        self.next_start_index = (self.next_start_index + checked) % len(order)
        return tuple(candidates[p] for p in positions.tolist())
