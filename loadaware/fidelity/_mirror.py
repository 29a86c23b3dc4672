"""The cluster as kube-scheduler's cache holds it, kept by the cluster cache's changes.

Built once from a snapshot of the cluster cache (`ClusterMirror.from_state`), then
kept current change by change, in the order the cache applied them
(`cluster.CacheChange`): a pod bound, moved, marked for deletion or gone; a
node's taints, labels, allocatable or images changed; a workload added or
changed (for the selectors of the pods it owns). What it cannot follow change by
change (a node added or deleted, a namespace's labels, a kind listed again) has
it rebuilt from a new snapshot (`apply` says so).

As in kube-scheduler, a pod counts on its node until the object is gone, and a
pod marked for deletion is not counted for spreading (`terminating`).

Pure: no I/O, no clock.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

import numpy as np

from loadaware import cluster, scheduling

# Kinds whose changes the mirror follows one by one; those of any other kind it reads
# nothing from, except namespaces, whose labels inter-pod affinity reads: a change
# there has it rebuilt.
_WORKLOAD_KINDS = frozenset({"replicasets", "deployments", "statefulsets", "daemonsets", "jobs"})


class ClusterMirror:
    """The occupancy of the cluster, the pods marked for deletion and the workloads."""

    def __init__(
        self,
        occupancy: scheduling.Occupancy,
        terminating: Mapping[str, cluster.Pod],
        workloads: Mapping[str, cluster.Workload],
    ) -> None:
        self.occupancy = occupancy
        self.terminating = dict(terminating)
        self.workloads = dict(workloads)
        # Every node, in the occupancy's order: what a binding is scored over.
        self.indexes = np.arange(len(occupancy.node_names), dtype=np.int64)

    @classmethod
    def from_state(cls, state: cluster.ClusterState) -> ClusterMirror:
        occupancy = scheduling.Occupancy.from_cluster(state)
        terminating = {
            p.key: p
            for p in state.pods
            if p.is_load
            and p.deletion_timestamp is not None
            and occupancy.has_node(p.node_name or "")
        }
        return cls(occupancy, terminating, state.workloads_by_key)

    def apply(self, change: cluster.CacheChange) -> bool:
        """Follow one change; False when the mirror cannot, and must be rebuilt."""
        if change.relisted:
            return False
        if change.kind == "pods":
            self._apply_pod(change.new if change.new is not None else change.old, change.new)
            return True
        if change.kind == "nodes":
            if change.old is None or change.new is None:
                return False  # the nodeTree and every index change with the node set
            self.occupancy.replace_node(change.new)
            return True
        if change.kind == "namespaces":
            return change.old == change.new
        if change.kind in _WORKLOAD_KINDS:
            workload = change.new if change.new is not None else change.old
            if change.new is None:
                self.workloads.pop(workload.key, None)
            else:
                self.workloads[workload.key] = workload
        return True

    def _apply_pod(self, pod: cluster.Pod, new: cluster.Pod | None) -> None:
        occupancy = self.occupancy
        self.terminating.pop(pod.key, None)
        if new is not None and new.is_load and occupancy.has_node(new.node_name or ""):
            occupancy.add(new, new.node_name or "")
            if new.deletion_timestamp is not None:
                self.terminating[new.key] = new
        elif occupancy.placed_pod(pod.key) is not None:
            occupancy.remove(pod)

    def completed(self, pod: cluster.Pod) -> cluster.Pod:
        """The pod with its owner's selector, which the default topology spreading
        counts its siblings by, as the cluster cache completes pods at a snapshot."""
        owner = pod.owner
        if owner is None or pod.owner_selector is not None:
            return pod
        workload = self.workloads.get(f"{owner.kind}/{pod.namespace}/{owner.name}")
        if workload is None or workload.selector is None:
            return pod
        if owner.uid and workload.uid and owner.uid != workload.uid:
            return pod  # a same-named successor, not the pod's owner
        return dataclasses.replace(pod, owner_selector=workload.selector)
