"""The bench's families whose cluster's kube-scheduler scores otherwise than the
default profile, one per NodeResourcesFit scoring strategy.

Each is the usage-independent instance (with its GPU pool), the same cluster for
the same size, capacity and seed, whose kube-scheduler runs a
KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) of one profile,
default-scheduler:

- most-allocated: NodeResourcesFit's MostAllocated over cpu and memory, weight 1
  each, as policy/bin-packing.yaml's default profile and GKE's
  optimize-utilization profile score: the fullest node by requests that fits.
- requested-to-capacity-ratio: RequestedToCapacityRatio over cpu, memory and
  nvidia.com/gpu (weights 1, 1 and 3) with the shape 0 % -> 0, 100 % -> 10, the
  bin packing of extended resources kube-scheduler's documentation configures.

The harness gives the planner the same configuration (steering.schedulerConfig)
and replays the plan's replacements with the configuration's profiles, so a row
shows what loadaware does on a cluster whose scheduler it was told about. The
"milp-default-profile" solver plans the same instance with loadaware left on
the default profile (no schedulerConfig) while the replay still runs the
cluster's: the landings a model of the wrong scheduler predicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Final

from bench import gpu_pool
from loadaware import policy, scheduling

MOST_ALLOCATED: Final = "most-allocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "requested-to-capacity-ratio"
BASE_FAMILY: Final = gpu_pool.FAMILY  # the instance each of them is


def _config(scoring_strategy: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": policy.DEFAULT_SCHEDULER_NAME,
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": scoring_strategy}}
                ],
            }
        ],
    }


# The KubeSchedulerConfiguration document of each family's cluster, by family.
CONFIGS: Final[Mapping[str, dict[str, Any]]] = MappingProxyType(
    {
        MOST_ALLOCATED: _config(
            {
                "type": "MostAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
            }
        ),
        REQUESTED_TO_CAPACITY_RATIO: _config(
            {
                "type": "RequestedToCapacityRatio",
                "resources": [
                    {"name": "cpu", "weight": 1},
                    {"name": "memory", "weight": 1},
                    {"name": gpu_pool.GPU_RESOURCE, "weight": 3},
                ],
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                },
            }
        ),
    }
)
FAMILIES: Final = tuple(CONFIGS)


def base_family(family: str) -> str:
    """The instance family a bench family generates: its own, or for a family of
    this module the usage-independent one."""
    return BASE_FAMILY if family in CONFIGS else family


def scheduler_config(family: str) -> policy.KubeSchedulerConfiguration | None:
    """The configuration the family's cluster schedules with; None for the default
    profile."""
    document = CONFIGS.get(family)
    if document is None:
        return None
    return policy.KubeSchedulerConfiguration.model_validate(document, by_alias=True, by_name=False)


def with_scheduler_config(
    settings: policy.LoadAwarePolicy, config: policy.KubeSchedulerConfiguration | None
) -> policy.LoadAwarePolicy:
    """The policy with steering.schedulerConfig set to `config` (None: left out, the
    default profile) and every profile of it modelled (no schedulerNames)."""
    steering = settings.steering.model_copy(
        update={"scheduler_config": config, "scheduler_names": None}
    )
    return settings.model_copy(update={"steering": steering})


def cluster_profiles(settings: policy.LoadAwarePolicy) -> scheduling.SchedulerProfiles:
    """The profiles the cluster's kube-scheduler runs, as the policy describes them
    (every profile of its steering.schedulerConfig; the default profile without
    one): what the replay places replacements with."""
    return scheduling.profiles_from_config(settings.steering.scheduler_config)
