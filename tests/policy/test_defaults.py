"""Defaults: an empty policy means what DESIGN.md's reference policy says.

Covers every default DESIGN.md spells out, the package's public names, and the
reference policy file (policy/default.yaml) being exactly the defaults.
"""

from __future__ import annotations

import datetime
import pathlib

from loadaware import policy

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_empty_policy_has_design_defaults() -> None:
    p = policy.parse_policy({})
    assert p.api_version == "loadaware.io/v1alpha1"
    assert p.kind == "LoadAwarePolicy"
    assert p.metrics.max_sample_age == datetime.timedelta(minutes=2)
    assert p.metrics.on_stale_node == "Refuse"
    assert [pool.name for pool in p.node_pools] == ["default"]
    pool = p.node_pools[0]
    assert pool.node_selector == {}
    assert pool.thresholds.as_dict() == {"cpu": 40, "memory": 50}
    assert pool.target_thresholds.as_dict() == {"cpu": 70, "memory": 80}
    assert p.evictor.node_fit is True
    assert p.evictor.min_replicas == 0
    assert p.evictor.min_pod_age == datetime.timedelta(0)
    assert p.evictor.priority_threshold is None
    assert p.evictor.namespaces.include == []
    assert p.evictor.namespaces.exclude == []
    assert p.evictor.pod_protections.default_disabled == []
    assert p.evictor.pod_protections.extra_enabled == []
    assert p.limits == policy.Limits(
        max_no_of_pods_to_evict_per_node=None,
        max_no_of_pods_to_evict_per_namespace=None,
        max_no_of_pods_to_evict_per_workload=None,
        max_no_of_pods_to_evict_total=None,
    )
    assert p.optimizer.method == "milp"
    assert p.optimizer.time_limit == datetime.timedelta(seconds=10)
    assert p.steering.soft_taint is True
    assert p.dry_run is False
    assert p.schedules == []
    assert p.serve.listen == "0.0.0.0:8080"
    assert p.serve.webhook.action_label == {"loadaware_action": "rebalance"}
    assert p.serve.webhook.cooldown == datetime.timedelta(minutes=5)
    assert p.serve.webhook.max_body_bytes == 1024 * 1024
    assert p.serve.webhook.allow_unauthenticated is False
    assert p.serve.leader_election.enabled is True
    assert p.serve.leader_election.lease_duration == datetime.timedelta(seconds=15)
    assert p.serve.leader_election.renew_deadline == datetime.timedelta(seconds=10)
    assert p.serve.leader_election.retry_period == datetime.timedelta(seconds=2)
    assert p.profiles == []
    assert p.consolidation.enabled is False
    assert p.consolidation.max_nodes_per_round == 1
    assert p.consolidation.thresholds.as_dict() == {"cpu": 20, "memory": 20}


def test_profile_defaults_match_descheduler() -> None:
    p = policy.parse_policy({"profiles": [{"name": "default"}]})
    profile = p.profiles[0]
    assert profile.node_pools is None
    s = profile.strategies
    assert s.load_balancing.enabled is True
    assert s.remove_pods_violating_node_affinity.enabled is False
    assert s.remove_pods_violating_node_affinity.node_affinity_type == [
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert s.remove_pods_violating_node_taints.include_prefer_no_schedule is False
    assert s.remove_pods_violating_topology_spread_constraint.constraints == ["DoNotSchedule"]
    assert s.pod_life_time.max_pod_life_time_seconds == 86400
    assert s.remove_pods_having_too_many_restarts.pod_restart_threshold == 100
    assert s.remove_failed_pods.min_pod_lifetime_seconds is None


def test_profile_field_names_are_camel_case() -> None:
    document = {
        "profiles": [
            {
                "name": "p",
                "namespaces": {"include": ["shop"]},
                "labelSelector": {"matchLabels": {"tier": "web"}},
                "nodePools": ["default"],
                "strategies": {
                    "loadBalancing": {"enabled": False},
                    "removePodsViolatingNodeAffinity": {
                        "enabled": True,
                        "nodeAffinityType": [
                            "requiredDuringSchedulingIgnoredDuringExecution",
                            "preferredDuringSchedulingIgnoredDuringExecution",
                        ],
                    },
                    "removePodsViolatingNodeTaints": {
                        "enabled": True,
                        "includePreferNoSchedule": True,
                        "excludedTaints": ["a"],
                        "includedTaints": ["b=c"],
                    },
                    "removePodsViolatingInterPodAntiAffinity": {"enabled": True},
                    "removeDuplicates": {"enabled": True, "excludeOwnerKinds": ["Job"]},
                    "removePodsViolatingTopologySpreadConstraint": {
                        "enabled": True,
                        "constraints": ["DoNotSchedule", "ScheduleAnyway"],
                    },
                    "podLifeTime": {"enabled": True, "maxPodLifeTimeSeconds": 60, "states": []},
                    "removePodsHavingTooManyRestarts": {
                        "enabled": True,
                        "podRestartThreshold": 3,
                        "includingInitContainers": True,
                        "states": ["CrashLoopBackOff"],
                    },
                    "removeFailedPods": {
                        "enabled": True,
                        "minPodLifetimeSeconds": 10,
                        "reasons": ["Error"],
                        "exitCodes": [1],
                        "excludeOwnerKinds": ["Job"],
                        "includingInitContainers": True,
                    },
                },
            }
        ],
        "consolidation": {"enabled": True, "maxNodesPerRound": 2, "thresholds": {"cpu": 10}},
    }
    p = policy.parse_policy(document)
    assert p.profiles[0].strategies.remove_failed_pods.exit_codes == [1]
    assert p.consolidation.max_nodes_per_round == 2


def test_system_critical_priority_matches_descheduler() -> None:
    assert policy.SYSTEM_CRITICAL_PRIORITY == 2_000_000_000


def test_reference_file_spells_out_the_defaults() -> None:
    # default.yaml adds only a Prometheus source to what an empty file means.
    loaded = policy.load_policy(REPO / "policy" / "default.yaml")
    assert loaded.metrics.prometheus is not None
    without_source = loaded.model_copy(
        update={"metrics": loaded.metrics.model_copy(update={"prometheus": None})}
    )
    assert without_source == policy.parse_policy({})
