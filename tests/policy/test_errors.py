"""Invalid policies: one PolicyError lists every problem, each naming the field as
the file spells it and what is allowed there.

Covers unknown fields (allowed names from the model, camelCase hint), literal
values, ranges, types, required fields, cross-field rules (thresholds vs
targetThresholds, include vs exclude, one metrics source, one token source,
unique pool names, unique schedule names, the pools a schedule names), schedules,
and that secret values are never echoed.
"""

from __future__ import annotations

from typing import Any

import pytest

from loadaware import errors, policy


def problems_of(data: dict[str, Any]) -> tuple[str, ...]:
    with pytest.raises(errors.PolicyError) as info:
        policy.parse_policy(data)
    assert info.value.exit_code == 2
    return info.value.problems


def only_problem(data: dict[str, Any]) -> str:
    problems = problems_of(data)
    assert len(problems) == 1, problems
    return problems[0]


def test_unknown_field_lists_the_allowed_fields_at_that_place() -> None:
    problem = only_problem({"evictor": {"nodeFitt": True}})
    assert problem.startswith(
        "evictor.nodeFitt: unknown field; allowed fields: nodeFit, minReplicas, minPodAge, "
        "priorityThreshold, namespaces, labelSelector, podProtections"
    )
    assert problem.endswith("did you mean nodeFit?")


def test_unknown_field_inside_a_list_item() -> None:
    problem = only_problem({"nodePools": [{"name": "a"}, {"name": "b", "treshold": {}}]})
    assert problem.startswith("nodePools[1].treshold: unknown field; allowed fields: name, ")
    assert "thresholds, targetThresholds, useDeviationThresholds" in problem


def test_snake_case_is_an_unknown_field_with_a_camel_case_hint() -> None:
    problem = only_problem({"dry_run": True})
    assert problem.startswith("dry_run: unknown field; allowed fields: apiVersion, kind, ")
    assert problem.endswith("did you mean dryRun? (field names are camelCase)")


def test_literal_lists_the_allowed_values() -> None:
    problem = only_problem({"metrics": {"onStaleNode": "Bogus"}})
    assert problem == "metrics.onStaleNode: 'Bogus' is not allowed; allowed values: Refuse, Exclude"


def test_literal_inside_a_list() -> None:
    problem = only_problem({"evictor": {"podProtections": {"extraEnabled": ["PodsWithPvc"]}}})
    assert problem == (
        "evictor.podProtections.extraEnabled[0]: 'PodsWithPvc' is not allowed; "
        "allowed values: PodsWithPVC, PodsWithoutPDB, PodsWithResourceClaims"
    )


def test_wrong_api_version() -> None:
    problem = only_problem({"apiVersion": "loadaware.io/v1"})
    assert problem == (
        "apiVersion: 'loadaware.io/v1' is not allowed; allowed values: loadaware.io/v1alpha1"
    )


@pytest.mark.parametrize("value", [-1, 100.5, 250])
def test_percent_out_of_range_names_the_range(value: float) -> None:
    problems = problems_of({"nodePools": [{"name": "a", "thresholds": {"cpu": value}}]})
    assert f"nodePools[0].thresholds.cpu: must be between 0 and 100, got {value}" in problems


def test_fraction_out_of_range_names_the_range() -> None:
    problem = only_problem({"metrics": {"maxExcludedFraction": 1.5}})
    assert problem == "metrics.maxExcludedFraction: must be between 0 and 1, got 1.5"


def test_negative_count() -> None:
    problem = only_problem({"limits": {"maxNoOfPodsToEvictTotal": -3}})
    assert problem == "limits.maxNoOfPodsToEvictTotal: must be at least 0, got -3"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param({"dryRun": "maybe"}, "dryRun: expected true or false, got 'maybe'", id="bool"),
        pytest.param(
            {"evictor": {"minReplicas": 1.5}},
            "evictor.minReplicas: expected a whole number, got 1.5",
            id="int",
        ),
        pytest.param(
            {"nodePools": [{"name": "a", "thresholds": {"cpu": "high"}}]},
            "nodePools[0].thresholds.cpu: expected a number, got 'high'",
            id="float",
        ),
        pytest.param(
            {"evictor": {"namespaces": ["a"]}},
            "evictor.namespaces: expected a mapping of fields, got a list",
            id="mapping",
        ),
        pytest.param(
            {"schedules": {"name": "x"}}, "schedules: expected a list, got a mapping", id="list"
        ),
        pytest.param(
            {"nodePools": [{"name": "gpu", "nodeSelector": {"nvidia.com/gpu.present": True}}]},
            'nodePools[0].nodeSelector["nvidia.com/gpu.present"]: expected a string, '
            "got true (quote it in YAML)",
            id="label-value-needs-quotes",
        ),
        pytest.param(
            {"metrics": {"prometheus": {"url": "prometheus:9090"}}},
            "metrics.prometheus.url: expected an http or https URL, got 'prometheus:9090'",
            id="url",
        ),
    ],
)
def test_type_errors_name_what_is_expected(data: dict[str, Any], expected: str) -> None:
    assert only_problem(data).startswith(expected)


def test_required_and_empty_fields() -> None:
    problems = problems_of({"nodePools": [{"thresholds": {}}, {"name": ""}]})
    assert "nodePools[0].name: required field is missing" in problems
    assert "nodePools[1].name: must not be empty" in problems


def test_empty_pool_list() -> None:
    assert only_problem({"nodePools": []}).startswith("nodePools: must have at least 1 items")


def test_thresholds_must_not_exceed_target_thresholds() -> None:
    problem = only_problem(
        {
            "nodePools": [
                {
                    "name": "a",
                    "thresholds": {"cpu": 80, "memory": 50},
                    "targetThresholds": {"cpu": 70, "memory": 80},
                }
            ]
        }
    )
    assert problem == (
        "nodePools[0]: thresholds.cpu (80) must not exceed targetThresholds.cpu (70)"
    )


def test_thresholds_equal_to_target_thresholds_are_allowed() -> None:
    pool = {"name": "a", "thresholds": {"cpu": 70}, "targetThresholds": {"cpu": 70}}
    assert policy.parse_policy({"nodePools": [pool]}).node_pools[0].thresholds.cpu == 70


def test_deviation_thresholds_are_distances_not_an_order() -> None:
    pool = {
        "name": "a",
        "useDeviationThresholds": True,
        "thresholds": {"cpu": 20},
        "targetThresholds": {"cpu": 10},
    }
    assert policy.parse_policy({"nodePools": [pool]}).node_pools[0].use_deviation_thresholds


def test_thresholds_must_name_the_same_resources() -> None:
    pool = {"name": "a", "thresholds": {"cpu": 20}, "targetThresholds": {"cpu": 70, "memory": 80}}
    problem = only_problem({"nodePools": [pool]})
    assert problem.startswith("nodePools[0]: thresholds and targetThresholds must name the same")


def test_namespaces_include_and_exclude_together() -> None:
    problem = only_problem({"evictor": {"namespaces": {"include": ["a"], "exclude": ["b"]}}})
    assert problem == "evictor.namespaces: set include or exclude, not both"


def test_duplicate_pool_names_are_reported_with_other_problems() -> None:
    problems = problems_of(
        {"nodePools": [{"name": "a"}, {"name": "b"}, {"name": "a"}], "dryRun": "yes please"}
    )
    assert "nodePools: nodePools names must be unique; repeated: a" in problems
    assert any(p.startswith("dryRun: ") for p in problems)


def test_two_metrics_sources() -> None:
    problem = only_problem(
        {"metrics": {"prometheus": {"url": "http://p:9090"}, "metricsServer": {}}}
    )
    assert problem == "metrics: set one metrics source: prometheus or metricsServer, not both"


def test_two_token_sources() -> None:
    source = {
        "url": "http://p:9090",
        "tokenFile": "/t",
        "authToken": {"secretReference": {"namespace": "n", "name": "s", "key": "k"}},
    }
    problem = only_problem({"metrics": {"prometheus": source}})
    assert problem == "metrics.prometheus: set at most one of authToken and tokenFile"


def test_priority_threshold_needs_exactly_one_of_value_and_name() -> None:
    problem = only_problem({"evictor": {"priorityThreshold": {}}})
    assert problem == "evictor.priorityThreshold: set exactly one of value and name"


def test_selector_operator() -> None:
    expression = {"key": "tier", "operator": "Equals", "values": ["web"]}
    problem = only_problem({"evictor": {"labelSelector": {"matchExpressions": [expression]}}})
    assert problem == (
        "evictor.labelSelector.matchExpressions[0].operator: 'Equals' is not allowed; "
        "allowed values: In, NotIn, Exists, DoesNotExist"
    )


@pytest.mark.parametrize(
    ("schedule", "expected"),
    [
        pytest.param(
            {"name": "p", "cron": "*/10 8-20 * *"},
            "schedules[0].cron: cron '*/10 8-20 * *' must have 5 fields",
            id="four-fields",
        ),
        pytest.param(
            {"name": "p", "cron": "0 8 * * *", "timezone": "Europe/Berln"},
            "schedules[0].timezone: unknown time zone 'Europe/Berln'",
            id="time-zone",
        ),
    ],
)
def test_schedule_problems(schedule: dict[str, Any], expected: str) -> None:
    assert only_problem({"schedules": [schedule]}).startswith(expected)


def test_schedule_names_are_unique() -> None:
    schedules = [{"name": n, "cron": "0 8 * * *"} for n in ("peak", "night", "peak")]
    assert only_problem({"schedules": schedules}) == "schedules: repeated name 'peak'"


def test_a_schedule_names_only_pools_of_the_policy() -> None:
    document = {
        "nodePools": [{"name": "web"}, {"name": "batch"}],
        "schedules": [
            {"name": "peak", "cron": "0 8 * * *", "pools": ["web", "gpu"]},
            {"name": "night", "cron": "0 2 * * *", "pools": ["batch"]},
        ],
    }
    assert only_problem(document) == "schedules[peak].pools: unknown pool 'gpu'"
    document["schedules"][0]["pools"] = ["web"]
    assert [s.pools for s in policy.parse_policy(document).schedules] == [["web"], ["batch"]]


def test_all_problems_are_reported_at_once() -> None:
    problems = problems_of(
        {
            "metrics": {"onStaleNode": "Bogus", "maxSampleAge": "soon"},
            "nodePools": [{"name": "a", "thresholds": {"cpu": 200}}],
            "evictor": {"nodeFitt": True},
            "limits": {"maxNoOfPodsToEvictPerNode": -1},
        }
    )
    assert [p.split(":")[0] for p in problems] == [
        "metrics.maxSampleAge",
        "metrics.onStaleNode",
        "nodePools[0].thresholds.cpu",
        "evictor.nodeFitt",
        "limits.maxNoOfPodsToEvictPerNode",
    ]


def test_message_counts_and_lists_the_problems() -> None:
    with pytest.raises(errors.PolicyError) as info:
        policy.parse_policy({"dryRun": 3, "kind": "Policy"}, source="policy file p.yaml")
    text = str(info.value)
    assert text.startswith("policy file p.yaml is invalid (2 problems)\n  - ")
    assert "  - kind: 'Policy' is not allowed; allowed values: LoadAwarePolicy" in text


def test_top_level_must_be_a_mapping() -> None:
    with pytest.raises(errors.PolicyError, match="mapping of fields at the top level, got a list"):
        policy.parse_policy([{"dryRun": True}])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(
            {"metrics": {"prometheus": {"url": "http://p", "headers": {"Authorization": 12345}}}},
            id="header",
        ),
        pytest.param(
            {"metrics": {"prometheus": {"url": "http://p", "tokenFile": 12345}}},
            id="token-file",
        ),
        pytest.param(
            {
                "metrics": {
                    "prometheus": {
                        "url": "http://p",
                        "authToken": {"secretReference": {"namespace": "n", "name": 12345}},
                    }
                }
            },
            id="secret-reference",
        ),
        pytest.param({"serve": {"webhook": {"tokenFile": 12345}}}, id="webhook-token"),
    ],
)
def test_secret_values_are_not_echoed(data: dict[str, Any]) -> None:
    with pytest.raises(errors.PolicyError) as info:
        policy.parse_policy(data)
    assert "12345" not in str(info.value)
    assert "got a number" in str(info.value)
