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
    assert p.steering.soft_taint is False
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


def test_public_names_are_pinned() -> None:
    assert sorted(policy.__all__) == sorted(
        [
            "SCHEMA_ID",
            "OptimizerSettings",
            "EvictionWindow",
            "StateSettings",
            "VerifySettings",
            "SteeringSettings",
            "SYSTEM_CRITICAL_PRIORITY",
            "AuthToken",
            "DefaultProtection",
            "Duration",
            "EvictorSettings",
            "ExtraProtection",
            "LabelSelectorSpec",
            "Limits",
            "LoadAwarePolicy",
            "MetricsServerSource",
            "MetricsSettings",
            "Namespaces",
            "NodePool",
            "PodProtections",
            "PriorityThreshold",
            "PrometheusQueries",
            "PrometheusSource",
            "ResourcePercents",
            "Schedule",
            "SecretReference",
            "SelectorRequirement",
            "ServeSettings",
            "WebhookSettings",
            "WebhookBasicAuth",
            "LeaderElectionSettings",
            "dump_policy",
            "format_duration",
            "load_policy",
            "parse_duration",
            "parse_policy",
            "policy_hash",
            "policy_json_schema",
        ]
    )
    for name in policy.__all__:
        assert hasattr(policy, name), name
