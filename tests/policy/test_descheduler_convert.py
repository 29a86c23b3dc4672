"""`loadaware convert --from-descheduler`: DeschedulerPolicy (v1alpha2, v1alpha1) to
LoadAwarePolicy.

Covers: every YAML example of the descheduler README (v1alpha2 at a recent
commit, v1alpha1 as of v0.26.0; tests/policy/data/descheduler) converts into a
policy that validates, or is refused with exit 2 and a reason, and the ones
that differ name the setting; the LowNodeUtilization example's thresholds,
limits and evictor settings map exactly; each deschedule plugin's args map onto
its strategy; the top-level v1alpha1 evictor flags become podProtections; a
converted DefaultEvictor protects, on a generated cluster, exactly the pods the
source policy protects (local storage, DaemonSet, system-critical, PVC) and the
plan respects it; pods thresholds translate; Prometheus and metrics-server
sources; what must exit 2 (numberOfNodes, HighNodeUtilization beside LowNodeUtilization,
a plugin loadaware lacks, per-profile evictors that differ); plugins of one
profile with different scopes become profiles of their own; the Helm chart's
ConfigMap; the CLI's output, table and exit codes.
"""

from __future__ import annotations

import datetime
import pathlib
from typing import Any

import pytest
import yaml

from loadaware import cli, cluster, convert, errors, metrics, plan, policy, sim

DATA = pathlib.Path(__file__).parent / "data" / "descheduler"
NOW = datetime.datetime(2026, 11, 29, 8, 0, 0, tzinfo=datetime.UTC)

# README example -> the settings that keep it from being equivalent (empty: exact),
# or None when it is refused outright.
EXAMPLES: dict[str, set[str] | None] = {
    "v1alpha2-protecting-pods-using-specific-storage-classes.yaml": {
        "profiles[ProfileName].pluginConfig[DefaultEvictor].args.podProtections.config"
        ".PodsWithPVC.protectedStorageClasses"
    },
    # Placeholders (`- ...`, `[...]`) make it a sketch rather than a policy.
    "v1alpha2-example-policy.yaml": None,
    "v1alpha2-remove-duplicates.yaml": set(),
    "v1alpha2-low-node-utilization.yaml": set(),
    "v1alpha2-high-node-utilization.yaml": set(),
    "v1alpha2-remove-pods-violating-inter-pod-anti-affinity.yaml": set(),
    "v1alpha2-remove-pods-violating-node-affinity.yaml": set(),
    "v1alpha2-remove-pods-violating-node-taints.yaml": set(),
    "v1alpha2-remove-pods-violating-node-taints-2.yaml": set(),
    "v1alpha2-remove-pods-violating-topology-spread-constraint.yaml": set(),
    "v1alpha2-remove-pods-having-too-many-restarts.yaml": set(),
    "v1alpha2-pod-life-time.yaml": {
        "profiles[ProfileName].pluginConfig[PodLifeTime].args.ownerKinds",
        "profiles[ProfileName].pluginConfig[PodLifeTime].args.conditions",
    },
    "v1alpha2-pod-life-time-2.yaml": set(),
    "v1alpha2-remove-failed-pods.yaml": set(),
    "v1alpha2-namespace-filtering.yaml": set(),
    "v1alpha2-namespace-filtering-2.yaml": set(),
    "v1alpha2-priority-filtering.yaml": set(),
    "v1alpha2-priority-filtering-2.yaml": set(),
    "v1alpha2-label-filtering.yaml": set(),
    "v1alpha2-node-fit-filtering.yaml": set(),
    # `strategies: ...` is a placeholder, not a map of strategies.
    "v1alpha1-policy-and-strategies.yaml": None,
    "v1alpha1-remove-duplicates.yaml": set(),
    "v1alpha1-low-node-utilization.yaml": set(),
    "v1alpha1-high-node-utilization.yaml": set(),
    "v1alpha1-remove-pods-violating-inter-pod-anti-affinity.yaml": set(),
    "v1alpha1-remove-pods-violating-node-affinity.yaml": set(),
    "v1alpha1-remove-pods-violating-topology-spread-constraint.yaml": set(),
    "v1alpha1-remove-pods-having-too-many-restarts.yaml": set(),
    "v1alpha1-pod-life-time.yaml": set(),
    "v1alpha1-remove-failed-pods.yaml": set(),
    "v1alpha1-namespace-filtering.yaml": set(),
    "v1alpha1-namespace-filtering-2.yaml": set(),
    "v1alpha1-priority-filtering.yaml": set(),
    "v1alpha1-priority-filtering-2.yaml": set(),
    "v1alpha1-label-filtering.yaml": set(),
    "v1alpha1-node-fit-filtering.yaml": set(),
}


def _convert(document: dict[str, Any]) -> convert.Conversion:
    return convert.convert_descheduler_policy(document)


def _changed(conversion: convert.Conversion) -> set[str]:
    return {i.source for i in conversion.issues if i.severity == "changes-behaviour"}


def _strategies(conversion: convert.Conversion) -> dict[str, dict[str, Any]]:
    """Enabled strategies of all converted profiles, by loadaware name."""
    found: dict[str, dict[str, Any]] = {}
    for profile in conversion.document["profiles"]:
        for name, settings in profile["strategies"].items():
            if settings.get("enabled"):
                found[name] = settings
    return found


def v1alpha2(*profiles: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "apiVersion": "descheduler/v1alpha2",
        "kind": "DeschedulerPolicy",
        "profiles": list(profiles),
        **top,
    }


def profile(
    name: str = "p",
    *,
    evictor: dict[str, Any] | None = None,
    balance: dict[str, dict[str, Any]] | None = None,
    deschedule: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    configs = [{"name": "DefaultEvictor", "args": evictor}] if evictor is not None else []
    plugins: dict[str, Any] = {}
    for point, enabled in (("balance", balance), ("deschedule", deschedule)):
        for plugin, args in (enabled or {}).items():
            configs.append({"name": plugin, "args": args})
            plugins.setdefault(point, {"enabled": []})["enabled"].append(plugin)
    return {"name": name, "pluginConfig": configs, "plugins": plugins}


LNU = {"thresholds": {"cpu": 30, "memory": 40}, "targetThresholds": {"cpu": 60, "memory": 70}}


# --- the README examples -------------------------------------------------------------


def test_every_readme_example_has_an_expectation() -> None:
    assert {p.name for p in DATA.glob("*.yaml")} == set(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_readme_example_converts_or_is_refused(name: str) -> None:
    expected = EXAMPLES[name]
    if expected is None:
        with pytest.raises(errors.InputError) as refused:
            convert.load_descheduler_policy(DATA / name)
        assert refused.value.exit_code == 2
        assert str(refused.value)
        return
    conversion = convert.load_descheduler_policy(DATA / name)
    # What was printed is what validates: the document round-trips through a file.
    text = convert.render_conversion_yaml(conversion, source=name)
    assert policy.parse_policy(yaml.safe_load(text)) == conversion.policy
    assert _changed(conversion) == expected
    assert conversion.changes_behaviour is bool(expected)
    assert all(i.why for i in conversion.issues)


def test_low_node_utilization_example_maps_exactly() -> None:
    conversion = convert.load_descheduler_policy(DATA / "v1alpha2-low-node-utilization.yaml")
    converted = conversion.policy
    (pool,) = converted.node_pools
    # pods: a node's pod count over its allocatable pods, in both tools.
    assert pool.thresholds.as_dict() == {"cpu": 20, "memory": 20, "pods": 20}
    assert pool.target_thresholds.as_dict() == {"cpu": 50, "memory": 50, "pods": 50}
    assert pool.use_deviation_thresholds is False
    assert pool.node_selector == {}
    # evictionLimits.node: 5, and no other limit.
    limits = converted.limits
    assert limits.max_no_of_pods_to_evict_per_node == 5
    assert limits.max_no_of_pods_to_evict_per_namespace is None
    assert limits.max_no_of_pods_to_evict_total is None
    # The DefaultEvictor's defaults, not loadaware's (nodeFit is off in the descheduler).
    evictor = converted.evictor
    assert evictor.node_fit is False
    assert evictor.min_replicas == 0
    assert evictor.min_pod_age == datetime.timedelta(0)
    assert evictor.priority_threshold is None
    assert evictor.pod_protections == policy.PodProtections()
    assert evictor.namespaces == policy.Namespaces()
    (only,) = converted.profiles
    assert only.name == "ProfileName"
    assert _strategies(conversion) == {"loadBalancing": {"enabled": True}}
    assert converted.consolidation.enabled is False


def test_v1alpha1_low_node_utilization_with_node_fit() -> None:
    conversion = convert.load_descheduler_policy(DATA / "v1alpha1-node-fit-filtering.yaml")
    assert conversion.source_version == "descheduler/v1alpha1"
    assert conversion.policy.evictor.node_fit is True
    assert conversion.policy.node_pools[0].target_thresholds.as_dict() == {
        "cpu": 50,
        "memory": 50,
        "pods": 50,
    }


@pytest.mark.parametrize(
    ("name", "strategy", "settings"),
    [
        (
            "v1alpha2-remove-duplicates.yaml",
            "removeDuplicates",
            {"excludeOwnerKinds": ["ReplicaSet"]},
        ),
        (
            "v1alpha1-remove-duplicates.yaml",
            "removeDuplicates",
            {"excludeOwnerKinds": ["ReplicaSet"]},
        ),
        (
            "v1alpha2-remove-pods-violating-inter-pod-anti-affinity.yaml",
            "removePodsViolatingInterPodAntiAffinity",
            {},
        ),
        (
            "v1alpha2-remove-pods-violating-node-affinity.yaml",
            "removePodsViolatingNodeAffinity",
            {"nodeAffinityType": ["requiredDuringSchedulingIgnoredDuringExecution"]},
        ),
        (
            "v1alpha2-remove-pods-violating-node-taints.yaml",
            "removePodsViolatingNodeTaints",
            {"excludedTaints": ["dedicated=special-user", "reserved"]},
        ),
        (
            "v1alpha2-remove-pods-violating-node-taints-2.yaml",
            "removePodsViolatingNodeTaints",
            {"includedTaints": ["decommissioned=end-of-life", "reserved"]},
        ),
        (
            "v1alpha2-remove-pods-violating-topology-spread-constraint.yaml",
            "removePodsViolatingTopologySpreadConstraint",
            {"constraints": ["DoNotSchedule"]},
        ),
        (
            "v1alpha1-remove-pods-violating-topology-spread-constraint.yaml",
            "removePodsViolatingTopologySpreadConstraint",
            {"constraints": ["DoNotSchedule"]},
        ),
        (
            "v1alpha2-remove-pods-having-too-many-restarts.yaml",
            "removePodsHavingTooManyRestarts",
            {"podRestartThreshold": 100, "includingInitContainers": True},
        ),
        (
            "v1alpha2-pod-life-time-2.yaml",
            "podLifeTime",
            {"maxPodLifeTimeSeconds": 86400, "states": ["Pending", "PodInitializing"]},
        ),
        # Without maxPodLifeTimeSeconds the descheduler does not filter by age.
        (
            "v1alpha2-pod-life-time.yaml",
            "podLifeTime",
            {"maxPodLifeTimeSeconds": 0, "states": ["Succeeded"]},
        ),
        (
            "v1alpha2-remove-failed-pods.yaml",
            "removeFailedPods",
            {
                "reasons": ["NodeAffinity"],
                "exitCodes": [1],
                "includingInitContainers": True,
                "excludeOwnerKinds": ["Job"],
                "minPodLifetimeSeconds": 3600,
            },
        ),
        (
            "v1alpha1-remove-failed-pods.yaml",
            "removeFailedPods",
            {
                "reasons": ["NodeAffinity"],
                "includingInitContainers": True,
                "excludeOwnerKinds": ["Job"],
                "minPodLifetimeSeconds": 3600,
            },
        ),
    ],
)
def test_deschedule_plugin_args_map_onto_the_strategy(
    name: str, strategy: str, settings: dict[str, Any]
) -> None:
    conversion = convert.load_descheduler_policy(DATA / name)
    assert _strategies(conversion) == {strategy: {"enabled": True, **settings}}


def test_failed_pods_lifetime_defaults_to_the_descheduler_hour() -> None:
    conversion = _convert(v1alpha2(profile(deschedule={"RemoveFailedPods": {}})))
    failed = conversion.policy.profiles[0].strategies.remove_failed_pods
    assert failed.enabled is True
    assert failed.min_pod_lifetime_seconds == 3600


@pytest.mark.parametrize(
    ("name", "scope"),
    [
        ("v1alpha2-namespace-filtering.yaml", {"include": ["namespace1", "namespace2"]}),
        ("v1alpha2-namespace-filtering-2.yaml", {"exclude": ["namespace1", "namespace2"]}),
        ("v1alpha1-namespace-filtering.yaml", {"include": ["namespace1", "namespace2"]}),
        ("v1alpha1-namespace-filtering-2.yaml", {"exclude": ["namespace1", "namespace2"]}),
    ],
)
def test_plugin_namespaces_become_the_profile_scope(name: str, scope: dict[str, Any]) -> None:
    conversion = convert.load_descheduler_policy(DATA / name)
    (converted,) = conversion.document["profiles"]
    assert converted["namespaces"] == scope


def test_plugin_label_selector_becomes_the_profile_scope() -> None:
    conversion = convert.load_descheduler_policy(DATA / "v1alpha2-label-filtering.yaml")
    selector = conversion.policy.profiles[0].label_selector
    assert selector.match_labels == {"component": "redis"}
    assert [(e.key, e.operator, e.values) for e in selector.match_expressions] == [
        ("tier", "In", ["cache"]),
        ("environment", "NotIn", ["dev"]),
    ]


@pytest.mark.parametrize(
    ("name", "threshold"),
    [
        ("v1alpha2-priority-filtering.yaml", {"value": 10000, "name": None}),
        ("v1alpha2-priority-filtering-2.yaml", {"value": None, "name": "priorityClassName1"}),
        ("v1alpha1-priority-filtering.yaml", {"value": 10000, "name": None}),
        ("v1alpha1-priority-filtering-2.yaml", {"value": None, "name": "priorityclass1"}),
    ],
)
def test_priority_threshold(name: str, threshold: dict[str, Any]) -> None:
    converted = convert.load_descheduler_policy(DATA / name).policy.evictor.priority_threshold
    assert converted is not None
    assert {"value": converted.value, "name": converted.name} == threshold


def test_v1alpha1_top_level_flags_become_the_evictor() -> None:
    # The README's "Policy and Strategies" example, with a strategy in place of `...`.
    source = yaml.safe_load((DATA / "v1alpha1-policy-and-strategies.yaml").read_text())
    source["strategies"] = yaml.safe_load((DATA / "v1alpha1-pod-life-time.yaml").read_text())[
        "strategies"
    ]
    conversion = _convert(source)
    converted = conversion.policy
    assert converted.evictor.pod_protections.default_disabled == [
        "PodsWithLocalStorage",
        "SystemCriticalPods",
    ]
    assert converted.evictor.pod_protections.extra_enabled == []
    assert converted.node_pools[0].node_selector == {"prod": "dev"}
    assert converted.limits.max_no_of_pods_to_evict_per_node == 40
    assert not conversion.changes_behaviour


def test_v1alpha2_evictor_settings_map() -> None:
    conversion = _convert(
        v1alpha2(
            profile(
                evictor={
                    "nodeFit": True,
                    "minReplicas": 2,
                    "minPodAge": "1h30m",
                    "labelSelector": {"matchLabels": {"team": "a"}},
                    "podProtections": {
                        "defaultDisabled": ["DaemonSetPods"],
                        "extraEnabled": ["PodsWithoutPDB", "PodsWithResourceClaims"],
                    },
                    "nodeSelector": "pool=web",
                },
                balance={"LowNodeUtilization": LNU},
            ),
            maxNoOfPodsToEvictPerNode=3,
            maxNoOfPodsToEvictPerNamespace=4,
            maxNoOfPodsToEvictTotal=10,
            gracePeriodSeconds=60,
        )
    )
    evictor = conversion.policy.evictor
    assert evictor.node_fit is True
    assert evictor.min_replicas == 2
    assert evictor.min_pod_age == datetime.timedelta(hours=1, minutes=30)
    assert evictor.label_selector.match_labels == {"team": "a"}
    assert evictor.pod_protections.default_disabled == ["DaemonSetPods"]
    assert evictor.pod_protections.extra_enabled == ["PodsWithoutPDB", "PodsWithResourceClaims"]
    assert evictor.grace_period_seconds == 60
    limits = conversion.policy.limits
    assert (
        limits.max_no_of_pods_to_evict_per_node,
        limits.max_no_of_pods_to_evict_per_namespace,
        limits.max_no_of_pods_to_evict_total,
    ) == (3, 4, 10)
    assert conversion.policy.node_pools[0].node_selector == {"pool": "web"}
    assert conversion.policy.node_pools[0].thresholds.as_dict() == {"cpu": 30, "memory": 40}
    assert not conversion.changes_behaviour


# --- the same protections on a generated cluster ----------------------------------------

# DefaultEvictor args -> the protections (pod_eligibility reasons) the descheduler drops.
PROTECTION_CASES = {
    "defaults": ({}, set()),
    "evictLocalStoragePods": ({"evictLocalStoragePods": True}, {"local-storage"}),
    "evictDaemonSetPods": ({"evictDaemonSetPods": True}, {"daemonset-pod"}),
    "evictSystemCriticalPods": (
        {"evictSystemCriticalPods": True},
        {"system-critical", "priority-threshold"},
    ),
    "podProtections.defaultDisabled": (
        {"podProtections": {"defaultDisabled": ["PodsWithLocalStorage", "DaemonSetPods"]}},
        {"local-storage", "daemonset-pod"},
    ),
}
DEFAULT_PROTECTIONS = {"local-storage", "daemonset-pod", "system-critical"}


@pytest.fixture(scope="module")
def generated() -> tuple[cluster.ClusterState, metrics.Usage]:
    scenario = sim.generate_cluster(nodes=12, pods_per_node=20, seed=1, now=NOW, hot_fraction=0.3)
    return (
        cluster.cluster_state_from_objects(scenario.objects),
        metrics.usage_from_json(scenario.metrics),
    )


def _source_protects(pod: cluster.Pod, dropped: set[str], pvc: bool) -> str | None:
    """The DefaultEvictor's protections, as the descheduler README states them."""
    if pod.is_daemonset_pod and "daemonset-pod" not in dropped:
        return "daemonset-pod"
    if pod.priority >= policy.SYSTEM_CRITICAL_PRIORITY and "system-critical" not in dropped:
        return "system-critical"
    if pod.has_local_storage and "local-storage" not in dropped:
        return "local-storage"
    if pvc and pod.has_pvc:
        return "with-pvc"
    return None


@pytest.mark.parametrize("case", sorted(PROTECTION_CASES))
@pytest.mark.parametrize("ignore_pvc", [False, True], ids=["pvc-evictable", "ignorePvcPods"])
def test_converted_evictor_protects_what_the_source_protects(
    generated: tuple[cluster.ClusterState, metrics.Usage], case: str, ignore_pvc: bool
) -> None:
    args, dropped = PROTECTION_CASES[case]
    args = {**args, "ignorePvcPods": True} if ignore_pvc and "podProtections" not in args else args
    if ignore_pvc and "podProtections" in args:
        args = {
            "podProtections": {**args["podProtections"], "extraEnabled": ["PodsWithPVC"]},
        }
    conversion = _convert(v1alpha2(profile(evictor=args, balance={"LowNodeUtilization": LNU})))
    assert not conversion.changes_behaviour
    state, usage = generated
    rules = plan.EvictionRules.from_policy(conversion.policy.evictor, state)
    for pod in state.pods:
        verdict = plan.pod_eligibility(pod, rules, NOW)
        expected = _source_protects(pod, dropped, ignore_pvc)
        reason = verdict.reason
        if reason in DEFAULT_PROTECTIONS | {"with-pvc", "priority-threshold"}:
            assert reason == expected, (pod.key, reason, expected)
        else:
            # Not a protection: then the source would not have protected it either.
            assert expected is None, (pod.key, reason, expected)
    # The generated cluster has pods of each kind, so the check is not vacuous.
    assert any(p.has_local_storage for p in state.pods)
    assert any(p.is_daemonset_pod for p in state.pods)
    assert any(p.has_pvc for p in state.pods)
    assert any(p.priority >= policy.SYSTEM_CRITICAL_PRIORITY for p in state.pods)

    # Planned with the converted policy: no eviction of a pod the source protects.
    planned = plan.build_plan(state, usage, conversion.policy, NOW)
    assert planned.status in ("planned", "noop"), planned.reason
    pods = {p.key: p for p in state.pods}
    for eviction in planned.evictions:
        assert _source_protects(pods[eviction.pod], dropped, ignore_pvc) is None
    for protection in dropped:
        assert protection not in planned.skipped


def test_evict_local_storage_pods_makes_them_candidates(
    generated: tuple[cluster.ClusterState, metrics.Usage],
) -> None:
    state, usage = generated
    kept = _convert(v1alpha2(profile(evictor={}, balance={"LowNodeUtilization": LNU})))
    freed = _convert(
        v1alpha2(
            profile(evictor={"evictLocalStoragePods": True}, balance={"LowNodeUtilization": LNU})
        )
    )
    before = plan.build_plan(state, usage, kept.policy, NOW)
    after = plan.build_plan(state, usage, freed.policy, NOW)
    assert before.skipped.get("local-storage", 0) > 0
    assert after.skipped.get("local-storage", 0) == 0


# --- metrics sources -------------------------------------------------------------------


def test_prometheus_provider_and_query() -> None:
    conversion = _convert(
        v1alpha2(
            profile(
                balance={
                    "LowNodeUtilization": {
                        "thresholds": {"MetricResource": 30},
                        "targetThresholds": {"MetricResource": 60},
                        "metricsUtilization": {
                            "source": "Prometheus",
                            "prometheus": {"query": "instance:node_cpu:rate:sum"},
                        },
                    }
                }
            ),
            metricsProviders=[
                {
                    "source": "Prometheus",
                    "prometheus": {
                        "url": "http://prometheus.monitoring.svc:9090",
                        "authToken": {
                            "secretReference": {"namespace": "kube-system", "name": "authtoken"}
                        },
                    },
                }
            ],
        )
    )
    prometheus = conversion.policy.metrics.prometheus
    assert prometheus is not None
    assert str(prometheus.url).startswith("http://prometheus.monitoring.svc:9090")
    assert prometheus.auth_token is not None
    reference = prometheus.auth_token.secret_reference
    assert (reference.namespace, reference.name, reference.key) == (
        "kube-system",
        "authtoken",
        "prometheusAuthToken",
    )
    pool = conversion.policy.node_pools[0]
    assert pool.thresholds.as_dict() == {"cpu": 30, "memory": 30}
    assert pool.target_thresholds.as_dict() == {"cpu": 60, "memory": 60}
    changed = _changed(conversion)
    assert any(s.endswith("metricsUtilization.prometheus.query") for s in changed)
    assert any(s.endswith("thresholds.MetricResource") for s in changed)


def test_prometheus_without_token_uses_the_service_account_token() -> None:
    conversion = _convert(
        v1alpha2(
            profile(balance={"LowNodeUtilization": LNU}),
            metricsProviders=[{"source": "Prometheus", "prometheus": {"url": "http://p:9090"}}],
        )
    )
    prometheus = conversion.policy.metrics.prometheus
    assert prometheus is not None
    assert prometheus.token_file == "/var/run/secrets/kubernetes.io/serviceaccount/token"


@pytest.mark.parametrize("utilization", [{"metricsServer": True}, {"source": "KubernetesMetrics"}])
def test_metrics_server(utilization: dict[str, Any]) -> None:
    conversion = _convert(
        v1alpha2(
            profile(balance={"LowNodeUtilization": {**LNU, "metricsUtilization": utilization}}),
            metricsProviders=[{"source": "KubernetesMetrics"}],
        )
    )
    assert conversion.policy.metrics.metrics_server is not None
    assert conversion.policy.metrics.prometheus is None
    assert not conversion.changes_behaviour


# --- what changes behaviour --------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "source"),
    [
        (
            v1alpha2(profile(balance={"LowNodeUtilization": {**LNU, "numberOfNodes": 3}})),
            "profiles[p].pluginConfig[LowNodeUtilization].args.numberOfNodes",
        ),
        (
            v1alpha2(
                profile(
                    balance={
                        "LowNodeUtilization": {
                            "thresholds": {"cpu": 20, "nvidia.com/gpu": 10},
                            "targetThresholds": {"cpu": 50, "nvidia.com/gpu": 50},
                        }
                    }
                )
            ),
            "profiles[p].pluginConfig[LowNodeUtilization].args.thresholds.nvidia.com/gpu",
        ),
        (
            v1alpha2(
                profile("low", balance={"LowNodeUtilization": LNU}),
                profile("high", balance={"HighNodeUtilization": {"thresholds": {"cpu": 20}}}),
            ),
            "plugins.balance.enabled[HighNodeUtilization]",
        ),
        (
            v1alpha2(profile(deschedule={"RemovePodsViolatingSecurityPolicy": {}})),
            "profiles[p].plugins.deschedule.enabled[RemovePodsViolatingSecurityPolicy]",
        ),
        (
            v1alpha2(
                profile("a", evictor={"nodeFit": True}, balance={"LowNodeUtilization": LNU}),
                profile("b", evictor={"nodeFit": False}, deschedule={"PodLifeTime": {}}),
            ),
            "profiles[b].pluginConfig[DefaultEvictor].args.nodeFit",
        ),
        (
            v1alpha2(profile(evictor={"noEvictionPolicy": "Mandatory"})),
            "profiles[p].pluginConfig[DefaultEvictor].args.noEvictionPolicy",
        ),
        (
            v1alpha2(profile(balance={"LowNodeUtilization": LNU}), nodeSelector="tier!=batch"),
            "nodeSelector",
        ),
    ],
    ids=[
        "numberOfNodes",
        "extended-resource",
        "high-with-low",
        "unknown-plugin",
        "evictors-differ",
        "mandatory-no-eviction",
        "set-based-node-selector",
    ],
)
def test_what_changes_behaviour_is_named(document: dict[str, Any], source: str) -> None:
    conversion = _convert(document)
    assert source in _changed(conversion)
    assert conversion.changes_behaviour


def test_high_node_utilization_alone_is_consolidation() -> None:
    conversion = _convert(
        v1alpha2(
            profile(
                balance={
                    "HighNodeUtilization": {
                        "thresholds": {"cpu": 25, "memory": 30},
                        "evictableNamespaces": {"exclude": ["kube-system"]},
                    }
                }
            )
        )
    )
    converted = conversion.policy
    assert converted.consolidation.enabled is True
    assert converted.consolidation.thresholds.as_dict() == {"cpu": 25, "memory": 30}
    assert converted.evictor.namespaces.exclude == ["kube-system"]
    # Nothing balances load: the implicit profile would.
    assert [p.strategies.load_balancing.enabled for p in converted.profiles] == [False]
    assert not conversion.changes_behaviour


def test_plugins_with_different_scopes_become_profiles_of_their_own() -> None:
    conversion = _convert(
        v1alpha2(
            profile(
                "shop",
                balance={"LowNodeUtilization": {**LNU, "evictableNamespaces": {"exclude": ["x"]}}},
                deschedule={
                    "PodLifeTime": {"maxPodLifeTimeSeconds": 60, "namespaces": {"include": ["a"]}},
                    "RemovePodsViolatingNodeTaints": {"namespaces": {"include": ["a"]}},
                },
            )
        )
    )
    by_name = {p.name: p for p in conversion.policy.profiles}
    # Deschedule plugins come first, as the descheduler runs them first; the
    # first scope keeps the profile's name, the others add their first plugin's.
    assert set(by_name) == {"shop", "shop-low-node-utilization"}
    balancing = by_name["shop-low-node-utilization"]
    assert balancing.namespaces.exclude == ["x"]
    assert balancing.strategies.load_balancing.enabled is True
    assert balancing.strategies.pod_life_time.enabled is False
    other = by_name["shop"]
    assert other.namespaces.include == ["a"]
    assert other.strategies.load_balancing.enabled is False
    assert other.strategies.pod_life_time.enabled is True
    assert other.strategies.remove_pods_violating_node_taints.enabled is True


def test_different_evictor_label_selectors_narrow_each_profile() -> None:
    conversion = _convert(
        v1alpha2(
            profile(
                "a",
                evictor={"labelSelector": {"matchLabels": {"team": "a"}}},
                balance={"LowNodeUtilization": LNU},
            ),
            profile(
                "b",
                evictor={"labelSelector": {"matchLabels": {"team": "b"}}},
                deschedule={
                    "PodLifeTime": {
                        "maxPodLifeTimeSeconds": 60,
                        "labelSelector": {"matchLabels": {"app": "x"}},
                    }
                },
            ),
        )
    )
    by_name = {p.name: p for p in conversion.policy.profiles}
    assert by_name["a"].label_selector.match_labels == {"team": "a"}
    assert by_name["b"].label_selector.match_labels == {"app": "x", "team": "b"}
    assert conversion.policy.evictor.label_selector == policy.LabelSelectorSpec()
    assert not conversion.changes_behaviour


def test_helm_chart_config_map_is_unwrapped() -> None:
    inner = (DATA / "v1alpha2-remove-duplicates.yaml").read_text()
    conversion = _convert(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "descheduler"},
            "data": {"policy.yaml": inner},
        }
    )
    assert "removeDuplicates" in _strategies(conversion)


@pytest.mark.parametrize(
    "document",
    [
        {"apiVersion": "v1", "kind": "Pod"},
        {"apiVersion": "descheduler/v1alpha3", "kind": "DeschedulerPolicy"},
        ["not", "a", "mapping"],
        v1alpha2(profile(deschedule={"RemovePodsHavingTooManyRestarts": {}})),
        v1alpha2(
            profile(
                balance={
                    "LowNodeUtilization": {
                        "thresholds": {"cpu": 120},
                        "targetThresholds": {"cpu": 150},
                    }
                }
            )
        ),
    ],
    ids=[
        "not-a-policy",
        "unknown-version",
        "not-a-mapping",
        "restarts-without-threshold",
        "over-100",
    ],
)
def test_bad_input_is_refused(document: Any) -> None:
    with pytest.raises(errors.InputError):
        _convert(document)


# --- the CLI ---------------------------------------------------------------------------


def test_cli_exact_conversion_exits_0(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(
        ["convert", "--from-descheduler", str(DATA / "v1alpha2-remove-failed-pods.yaml")]
    )
    out, err = capsys.readouterr()
    assert code == 0
    assert out.startswith("# Converted by `loadaware convert`")
    written = tmp_path / "policy.yaml"
    written.write_text(out)
    assert cli.main(["validate", "--policy", str(written)]) == 0
    assert "EFFECT" in err
    assert "changes-behaviour" not in err


def test_cli_conversion_that_differs_exits_2_and_still_writes(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "converted.yaml"
    code = cli.main(
        [
            "convert",
            "--from-descheduler",
            str(DATA / "v1alpha2-pod-life-time.yaml"),
            "-o",
            str(target),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    text = target.read_text()
    assert "# NOT equivalent" in text
    assert "args.ownerKinds" in text
    assert policy.parse_policy(yaml.safe_load(text)).profiles
    lines = err.splitlines()
    assert lines[0].split() == ["EFFECT", "DESCHEDULER", "SETTING", "WHY"]
    # What needs a decision comes first.
    assert lines[1].startswith("changes-behaviour")
    assert "does not filter by owner kind" in err


def test_cli_refusal_exits_2_with_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        ["convert", "--from-descheduler", str(DATA / "v1alpha1-policy-and-strategies.yaml")]
    )
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.startswith("error: strategies must be a map")


def test_cli_missing_file_exits_2(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["convert", "--from-descheduler", str(tmp_path / "nope.yaml")]) == 2
    assert "does not exist" in capsys.readouterr().err
