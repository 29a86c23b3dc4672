"""The bench's families whose cluster's kube-scheduler scores with MostAllocated and
RequestedToCapacityRatio (bench.scheduler_families).

Covered: each family's KubeSchedulerConfiguration is one loadaware models, read as
that strategy over its resources (RequestedToCapacityRatio weighing nvidia.com/gpu);
each family is the usage-independent instance, planned with its configuration as
steering.schedulerConfig (on top of --policy too), while milp-default-profile plans
it without one; the replay places a replacement with the cluster's profile (a
MostAllocated cluster takes it to the fuller node a default one avoids), samples
with the profile's percentageOfNodesToScore, and leaves a pod naming no profile of
the cluster pending; the descheduler-order baseline predicts with the policy's
profile. End to end on a small instance, loadaware told about the scheduler lands
every replacement as planned and none bad, while loadaware left on the default
profile lands some off its sets or on bad nodes; the default-profile row appears
only in these families; by default they run up to --scheduler-families-max-size
nodes, at every size when named in --families. `python -m bench.generate --family
requested-to-capacity-ratio` writes the usage-independent instance with the cluster's
scheduler configuration and the policy that names it.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any

import pytest

from bench import checks, descheduler_baseline, generate, harness, measure, scheduler_families
from loadaware import policy, scheduling
from loadaware.plan import Eviction
from tests.lib.builders import NOW, GiB, make_cluster, make_node, make_pod, make_usage, sample

FAMILIES = scheduler_families.FAMILIES


def _policy(**overrides: Any) -> policy.LoadAwarePolicy:
    return policy.parse_policy(
        {"apiVersion": "loadaware.io/v1alpha1", "kind": "LoadAwarePolicy", **overrides}
    )


# --- the families' configurations and policies -------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_each_familys_configuration_is_modelled(family: str) -> None:
    config = scheduler_families.scheduler_config(family)
    assert config is not None
    assert policy.unmodelled_settings(config) == []
    # A policy carrying it validates as a policy file would.
    settings = _policy(steering={"schedulerConfig": scheduler_families.CONFIGS[family]})
    assert settings.steering.scheduler_config == config


def test_the_families_score_with_their_strategies() -> None:
    most = scheduling.profiles_from_config(
        scheduler_families.scheduler_config(scheduler_families.MOST_ALLOCATED)
    ).get(policy.DEFAULT_SCHEDULER_NAME)
    assert most is not None
    assert most.scoring_strategy.type == "MostAllocated"
    assert [r.name for r in most.scoring_strategy.resources] == ["cpu", "memory"]
    ratio = scheduling.profiles_from_config(
        scheduler_families.scheduler_config(scheduler_families.REQUESTED_TO_CAPACITY_RATIO)
    ).get(policy.DEFAULT_SCHEDULER_NAME)
    assert ratio is not None
    assert ratio.scoring_strategy.type == "RequestedToCapacityRatio"
    assert [(r.name, r.weight) for r in ratio.scoring_strategy.resources] == [
        ("cpu", 1),
        ("memory", 1),
        ("nvidia.com/gpu", 3),
    ]
    assert ratio.scoring_strategy.shape == ((0, 0), (100, 100))


def test_the_families_are_the_usage_independent_instance() -> None:
    for family in FAMILIES:
        assert scheduler_families.base_family(family) == "usage-independent"
    assert scheduler_families.base_family("proportional") == "proportional"
    assert scheduler_families.scheduler_config("proportional") is None


def test_a_family_is_planned_with_its_configuration_and_the_default_profile_without(
    tmp_path: pathlib.Path,
) -> None:
    options = harness.Options()
    family = scheduler_families.MOST_ALLOCATED
    settings = harness.family_policy(family, options)
    assert settings.steering.scheduler_config == scheduler_families.scheduler_config(family)
    # The family's GPU pool is judged as usage-independent's is.
    base = harness.family_policy("usage-independent", options)
    assert [p.name for p in settings.node_pools] == [p.name for p in base.node_pools]
    assert base.steering.scheduler_config is None
    blind = scheduler_families.with_scheduler_config(settings, None)
    assert blind.steering.scheduler_config is None
    assert scheduler_families.cluster_profiles(blind) == scheduling.DEFAULT_PROFILES
    # On top of a policy file, the file's settings stay and the configuration is added.
    path = tmp_path / "policy.yaml"
    path.write_text(
        "apiVersion: loadaware.io/v1alpha1\nkind: LoadAwarePolicy\n"
        "limits: {maxNoOfPodsToEvictTotal: 7}\n"
    )
    from_file = harness.family_policy(family, harness.Options(policy_file=path))
    assert from_file.limits.max_no_of_pods_to_evict_total == 7
    assert from_file.steering.scheduler_config == settings.steering.scheduler_config


# --- the replay and the baseline under a cluster's profile -------------------------------------


def _warm_and_idle() -> tuple[Any, Any]:
    """ "warm" requests least but runs at 65% cpu; "idle" requests 75% of its cpu and
    memory and uses 12%: the default profile (LeastAllocated) sends web-1's
    replacement to "warm", a MostAllocated one to "idle"."""
    nodes = [make_node("hot"), make_node("warm"), make_node("idle")]
    pods = [
        make_pod("web-1", node="hot", cpu_millicores=500),
        make_pod("stream-1", node="warm", cpu_millicores=200),
        make_pod("report-1", node="idle", cpu_millicores=3000, memory_bytes=12 * GiB),
    ]
    usage = make_usage(
        {"hot": sample(3.6, GiB), "warm": sample(2.6, GiB), "idle": sample(0.5, GiB)},
        {p.key: sample(1.0 if p.name == "web-1" else 0.01, 0.1 * GiB) for p in pods},
    )
    return make_cluster(nodes, pods), usage


def _most_allocated() -> scheduling.SchedulerProfiles:
    return scheduling.profiles_from_config(
        scheduler_families.scheduler_config(scheduler_families.MOST_ALLOCATED)
    )


def _eviction(expected: str) -> Eviction:
    return Eviction(
        pod="default/web-1", node="hot", expected_node=expected, cpu_cores=1.0, memory_bytes=0
    )


@pytest.mark.parametrize("scoring", measure.SCORINGS)
def test_the_replay_places_replacements_with_the_clusters_profile(scoring: str) -> None:
    cluster, usage = _warm_and_idle()
    view = checks.ClusterView.build(cluster, usage, _policy(), NOW)
    evictions = (_eviction("warm"),)
    default = measure.replay_plan(evictions, cluster, usage, view, scoring=scoring)
    assert default.landed_as_planned == 1
    assert default.hot_left == 1  # "warm" turned hot
    packing = measure.replay_plan(
        evictions, cluster, usage, view, scoring=scoring, profiles=_most_allocated()
    )
    assert packing.landed_as_planned == 0  # it went to "idle"
    assert packing.bad_landings == 0
    assert packing.hot_left == 0


def test_the_sampled_replay_takes_the_profiles_percentage_of_nodes_to_score() -> None:
    cluster, usage = _warm_and_idle()
    view = checks.ClusterView.build(cluster, usage, _policy(), NOW)
    config = scheduler_families.CONFIGS[scheduler_families.MOST_ALLOCATED]
    profiles = scheduling.profiles_from_config(
        policy.KubeSchedulerConfiguration.model_validate(
            {**config, "percentageOfNodesToScore": 100}, by_alias=True, by_name=False
        )
    )
    outcome = measure.replay_plan(
        (_eviction("idle"),),
        cluster,
        usage,
        view,
        scoring=measure.SAMPLED,
        profiles=profiles,
    )
    assert outcome.landed_as_planned == 1


def test_a_pod_naming_no_profile_of_the_cluster_stays_pending() -> None:
    cluster, usage = _warm_and_idle()
    pods = [
        dataclasses.replace(p, scheduler_name="batch-scheduler") if p.name == "web-1" else p
        for p in cluster.pods
    ]
    cluster = make_cluster(cluster.nodes, pods)
    view = checks.ClusterView.build(cluster, usage, _policy(), NOW)
    outcome = measure.replay_plan((_eviction("idle"),), cluster, usage, view)
    assert outcome.pending == 1
    assert outcome.bad_landings == outcome.landed_as_planned == 0


def test_the_baseline_predicts_with_the_policys_profile() -> None:
    cluster, usage = _warm_and_idle()
    family = scheduler_families.MOST_ALLOCATED
    told = _policy(steering={"schedulerConfig": scheduler_families.CONFIGS[family]})
    default = descheduler_baseline.plan_descheduler_order(cluster, usage, _policy(), NOW)
    packing = descheduler_baseline.plan_descheduler_order(cluster, usage, told, NOW)
    assert [e.expected_node for e in default.evictions] == ["warm"]
    assert [e.expected_node for e in packing.evictions] == ["idle"]


# --- the harness -------------------------------------------------------------------------------


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_harness_shows_each_scoring_strategy_and_the_default_profiles_gap(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    instance = ["--sizes", "20", "--capacity", "tight", "--scoring", "full"]
    families = ["--families", ",".join(("usage-independent", *FAMILIES))]
    code = harness.main([*instance, *families, "--in-process", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    rows = [_cells(line) for line in out.splitlines() if line.startswith("| 20 ")]
    family, solver = harness.COLUMNS.index("family"), harness.COLUMNS.index("solver")
    plans = [(r[family], r[solver]) for r in rows if len(r) == len(harness.COLUMNS)]
    assert plans == [
        ("usage-independent", "milp"),
        ("usage-independent", "greedy"),
        ("usage-independent", "descheduler-order"),
        *(
            (f, s)
            for f in FAMILIES
            for s in ("milp", "greedy", "descheduler-order", "milp, default profile")
        ),
    ]
    [written] = tmp_path.glob("bench-*.json")
    results = json.loads(written.read_text())
    by_plan = {(r["family"], r["requested"]): r for r in results["rows"]}
    for row in results["rows"]:
        assert "error" not in row, row.get("error")
        assert row["violations"] == 0, row["violation_examples"]
    for f in FAMILIES:
        told = by_plan[f, "milp"]
        assert told["hot_left"] == told["bad_landings"] == told["off_set_landings"] == 0
        assert told["landed_as_planned"] == told["evictions"] > 0
        blind = by_plan[f, "milp-default-profile"]
        assert blind["landed_as_planned"] < blind["evictions"]
        assert blind["bad_landings"] + blind["off_set_landings"] > 0
    # The same instance as usage-independent's, one table row each.
    nodes = {i["family"]: (i["nodes"], i["pods"], i["hot"]) for i in results["instances"]}
    assert len(set(nodes.values())) == 1


def test_harness_runs_the_families_only_up_to_their_size_unless_named(
    capsys: pytest.CaptureFixture[str],
) -> None:
    quick = ["--capacity", "loose", "--pods-per-node", "12", "--solvers", "greedy"]
    quick += ["--scoring", "sampled", "--in-process", "--no-json"]
    family = harness.COLUMNS.index("family")

    def families_run(*extra: str) -> set[str]:
        assert harness.main(["--sizes", "12", *quick, *extra]) == 0
        lines = capsys.readouterr().out.splitlines()
        rows = [_cells(line) for line in lines if line.startswith("| 12 ")]
        return {r[family] for r in rows if len(r) == len(harness.COLUMNS)}

    everything = {"proportional", "usage-independent", *FAMILIES}
    assert families_run("--scheduler-families-max-size", "11") == {
        "proportional",
        "usage-independent",
    }
    assert families_run() >= everything  # 12 nodes: under the default 1,000
    named = ["--families", FAMILIES[0], "--scheduler-families-max-size", "11"]
    assert families_run(*named) == {FAMILIES[0]}


# --- bench.generate ----------------------------------------------------------------------------


def test_generate_writes_the_instance_its_scheduler_config_and_policy(
    tmp_path: pathlib.Path,
) -> None:
    family = scheduler_families.REQUESTED_TO_CAPACITY_RATIO
    argv = ["--nodes", "30", "--seed", "2", "--now", "2026-11-29T08:00:00Z"]
    told, base = tmp_path / "told", tmp_path / "base"
    assert generate.main([*argv, "--family", family, "--out", str(told)]) == 0
    assert generate.main([*argv, "--family", "usage-independent", "--out", str(base)]) == 0
    # The usage-independent instance, on a cluster scheduling otherwise.
    for name in ("cluster.json", "metrics.json"):
        assert (told / name).read_bytes() == (base / name).read_bytes()
    config = scheduler_families.scheduler_config(family)
    assert policy.load_scheduler_config(told / "scheduler-config.yaml") == config
    assert policy.load_policy(told / "policy.yaml").steering.scheduler_config == config
    assert not (base / "scheduler-config.yaml").exists()
    assert not (base / "policy.yaml").exists()
