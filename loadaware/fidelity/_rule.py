"""When the model agrees with a binding: the rule, on one pod and the cluster just
before it was bound.

From 100 nodes kube-scheduler scores only `numFeasibleNodesToFind` (k) feasible
nodes, those its walk over the nodeTree meets first from a start index that moves
on with every pod; the pod goes to the best node of that sample, not of the
cluster. Which sample a pod got cannot be seen from outside the scheduler, so the
rule asks whether the bound node could have won some sample of that size:

    agreed  when the bound node passes the model's Filters for the pod, and at
            most F - k of the F feasible nodes score strictly more than it
            (a sample of k that holds it can leave all of them out).

When the sample is every feasible node (fewer than 100 nodes, percentage 100, or
F <= k) that is: the bound node is among the best-scoring nodes, any of which
kube-scheduler may pick. Scores are taken over all the feasible nodes, where
kube-scheduler normalises some plugins (TaintToleration, NodeAffinity,
PodTopologySpread, InterPodAffinity) over its sample; for a sampled pod the rule
is therefore a close reading, not an exact one. The rule never trusts the walk's
order, which loadaware cannot observe (see scheduling's `_sampling`).

`predicted` names the best-scoring nodes (up to PREDICTED_KEPT of them): the
landing set with every feasible node scored; under sampling the landing set is
every node the rule would agree with. A disagreement says why: the bound node is
not one the model knows, does not pass a Filter (the first failing, as
`Occupancy.fit_failure` names it), or too many nodes outscore it.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from loadaware import cluster, scheduling

# How many of the best-scoring nodes a binding names.
PREDICTED_KEPT = 5


def compare_binding(
    pod: cluster.Pod,
    node: str,
    occupancy: scheduling.Occupancy,
    *,
    profile: scheduling.SchedulerProfile = scheduling.DEFAULT_PROFILE,
    percentage_of_nodes_to_score: int = 0,
    terminating: Collection[cluster.Pod] = (),
    indexes: scheduling.IntArray | None = None,
    seen_at: float = 0.0,
) -> scheduling.Binding:
    """Whether the model agrees that `pod`, not yet placed in `occupancy`, was bound to
    `node` (see the module). `percentage_of_nodes_to_score`: the profile's, else the
    policy's (0: kube-scheduler's adaptive default). `indexes`: every node of
    `occupancy` (given when the caller keeps them)."""
    names = occupancy.node_names
    if indexes is None:
        indexes = np.arange(len(names), dtype=np.int64)
    percentage = profile.sample_percentage(percentage_of_nodes_to_score)
    scores = scheduling.score_pod(pod, occupancy, indexes, terminating=terminating, profile=profile)
    predicted = scores.best_names(names)[:PREDICTED_KEPT]

    def binding(agreed: bool, reason: str = "") -> scheduling.Binding:
        return scheduling.Binding(
            pod=pod.key,
            scheduler_name=pod.scheduler_name,
            node=node,
            agreed=agreed,
            predicted=predicted,
            reason=reason,
            seen_at=seen_at,
        )

    if not occupancy.has_node(node):
        return binding(False, f"unknown-node: {node} is not a node the model knows")
    bound = occupancy.node_indexes([node])[0]
    position = np.flatnonzero(scores.indexes == bound)
    if not position.size:
        failure = occupancy.fit_failure(pod, node) or "pod-topology-spread"
        return binding(False, f"infeasible: {node} fails {failure} for the pod")
    feasible = len(scores.indexes)
    sample = scheduling.num_feasible_nodes_to_find(percentage, len(indexes))
    room = max(feasible - sample, 0)
    total = int(scores.totals[position[0]])
    above = int(np.count_nonzero(scores.totals > total))
    if above <= room:
        return binding(True)
    best = int(scores.totals.max())
    if room == 0:
        why = f"{above} of {feasible} feasible nodes outscore {node} ({total} against {best})"
    else:
        why = (
            f"{above} of {feasible} feasible nodes outscore {node} ({total} against {best}); "
            f"a sample of {sample} leaves out at most {room}"
        )
    return binding(False, f"outscored: {why}")
