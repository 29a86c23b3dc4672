"""The kube-scheduler model: where a scheduler profile would bind a new pod.

loadaware does not bind pods; it evicts them and lets kube-scheduler place the
replacements, so the planner, the evictor's re-checks and the simulated
cluster all need the same answer to "where would this pod land". This package
is that answer, shared by `plan`, `evict` and `sim`:

- the scheduler's cache as the model sees it: the nodes and a ledger of what
  is placed where (requests, pod counts, host ports), with the indexes the
  inter-pod affinity and topology spread plugins read (`Occupancy`);
- the Filter plugins, each a function, and their first failing reason
  (`FIT_REASONS`); the Score plugins with the Go code's integer arithmetic
  (`best_nodes`, `predict_replacement`), weighted as a profile says: the default
  profile's, or one of a KubeSchedulerConfiguration's (`SchedulerProfile`,
  `profiles_from_config`), with NodeResourcesFit's LeastAllocated, MostAllocated
  or RequestedToCapacityRatio scoring;
- which feasible nodes kube-scheduler scores on a large cluster: how many it
  looks for (`num_feasible_nodes_to_find`), its walk over the nodeTree
  (`NodeTree`, `NodeSampler`), and how many good nodes a sample cannot miss
  (`eligible_needed`).

Pure: no I/O, no clock, no Kubernetes client. The caller hands in the
cluster's nodes and pods (`loadaware.cluster` types) and gets names back.
"""

from loadaware.scheduling._agreement import (
    AgreementWindow,
    Binding,
    ModelAgreement,
    ProfileAgreement,
)
from loadaware.scheduling._filters import FIT_REASONS, HARD_TAINT_EFFECTS, node_admits, tolerates
from loadaware.scheduling._node_sampling import NodeSampler
from loadaware.scheduling._node_tree import NodeTree
from loadaware.scheduling._nodes import BoolArray, IntArray
from loadaware.scheduling._occupancy import Occupancy
from loadaware.scheduling._predict import (
    STEERING_TAINT,
    NodeScores,
    best_nodes,
    feasible_mask,
    predict_replacement,
    recreated_after_deletion,
    replacement_of,
    scheduling_replacement,
    score_pod,
    score_replacement,
)
from loadaware.scheduling._profiles import (
    DEFAULT_PROFILE,
    DEFAULT_PROFILES,
    DEFAULT_SCHEDULER_NAME,
    ResourceWeight,
    SchedulerProfile,
    SchedulerProfiles,
    ScoringStrategy,
    modelled_profiles,
    profiles_from_config,
)
from loadaware.scheduling._sampling import (
    MIN_FEASIBLE_NODES_TO_FIND,
    eligible_needed,
    num_feasible_nodes_to_find,
)
from loadaware.scheduling._spread import spread_filter_mask

__all__ = [
    "DEFAULT_PROFILE",
    "DEFAULT_PROFILES",
    "DEFAULT_SCHEDULER_NAME",
    "FIT_REASONS",
    "HARD_TAINT_EFFECTS",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "STEERING_TAINT",
    "AgreementWindow",
    "Binding",
    "BoolArray",
    "IntArray",
    "ModelAgreement",
    "NodeSampler",
    "NodeScores",
    "NodeTree",
    "Occupancy",
    "ProfileAgreement",
    "ResourceWeight",
    "SchedulerProfile",
    "SchedulerProfiles",
    "ScoringStrategy",
    "best_nodes",
    "eligible_needed",
    "feasible_mask",
    "modelled_profiles",
    "node_admits",
    "num_feasible_nodes_to_find",
    "predict_replacement",
    "profiles_from_config",
    "recreated_after_deletion",
    "replacement_of",
    "scheduling_replacement",
    "score_pod",
    "score_replacement",
    "spread_filter_mask",
    "tolerates",
]
