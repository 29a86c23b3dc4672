"""The cluster as loadaware sees it: nodes, pods, PodDisruptionBudgets and workloads.

The job: turn Kubernetes objects into immutable, validated ClusterState values
the planner can trust, with pod requests computed as kube-scheduler computes
them (containers, init containers, sidecars, overhead) and the owner chain
resolved (Pod -> ReplicaSet -> Deployment).

Sources: raw objects from any client (`cluster_state_from_objects`), a
`kubectl get -o yaml|json` dump (`load_cluster_file`, the CLI's `--cluster FILE`),
a live API server through the official client (`read_cluster`), or a watched
cache of it (`ClusterCache`: one list, then watches; rounds read memory). Both
make their requests through loadaware.kube, the one client boundary.

Limits:
- Only cpu and memory requests are read; extended resources and ephemeral
  storage are not modelled.
- Requests are read from the spec; resizes in progress (in-place pod
  vertical scaling) are not taken into account.
- Workloads are followed only through objects present in the input; names are
  never used to guess an owner.
- A bad object refuses the whole input (InputError naming the object and the
  field) rather than being skipped: a partial cluster would plan wrongly.
"""

from loadaware.cluster._cache import STALE_CACHE, ClusterCache
from loadaware.cluster._cache_store import CacheChange, CacheListener
from loadaware.cluster._convert import RawObject, cluster_state_from_objects
from loadaware.cluster._file import load_cluster_file
from loadaware.cluster._live import read_cluster, read_objects
from loadaware.cluster._types import (
    ClusterState,
    ContainerImage,
    LabelSelector,
    Node,
    NodeSelectorTerm,
    OwnerRef,
    Pod,
    PodAffinityTerm,
    PodDisruptionBudget,
    Requirement,
    Taint,
    Toleration,
    WeightedPodAffinityTerm,
    Workload,
)
from loadaware.quantity import parse_quantity, to_bytes, to_millicores

__all__ = [
    "STALE_CACHE",
    "CacheChange",
    "CacheListener",
    "ClusterCache",
    "ClusterState",
    "ContainerImage",
    "LabelSelector",
    "Node",
    "NodeSelectorTerm",
    "OwnerRef",
    "Pod",
    "PodAffinityTerm",
    "PodDisruptionBudget",
    "RawObject",
    "Requirement",
    "Taint",
    "Toleration",
    "WeightedPodAffinityTerm",
    "Workload",
    "cluster_state_from_objects",
    "load_cluster_file",
    "parse_quantity",
    "read_cluster",
    "read_objects",
    "to_bytes",
    "to_millicores",
]
