"""steering.schedulerConfig: a KubeSchedulerConfiguration inline or as a file path.

Covers: inline and file forms read into the same configuration; bad values
named by field (scoringStrategy.type, shape order, repeated schedulerName);
an out-of-tree score plugin with a weight, a prioritizing extender and a
disabled Filter plugin reported by `loadaware validate` (exit 2, naming them)
unless softTaint is off; a missing file named; the merge of a profile's
plugins with the defaults (multiPoint, score enabled/disabled, "*").
"""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import yaml

from loadaware import cli, errors, policy

MOST_ALLOCATED: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "leaderElection": {"leaderElect": True},  # kube-scheduler's own: ignored
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {"scoringStrategy": {"type": "MostAllocated"}},
                }
            ],
        }
    ],
}


def _policy(scheduler_config: object, **steering: object) -> dict[str, Any]:
    return {"steering": {"schedulerConfig": scheduler_config, **steering}}


def test_inline_and_file_give_the_same_configuration(tmp_path: pathlib.Path) -> None:
    file = tmp_path / "scheduler.yaml"
    file.write_text(yaml.safe_dump(MOST_ALLOCATED))
    inline = policy.parse_policy(_policy(MOST_ALLOCATED))
    from_file = policy.parse_policy(_policy(str(file)))
    assert inline.steering.scheduler_config == from_file.steering.scheduler_config
    config = inline.steering.scheduler_config
    assert config is not None
    assert config.scheduler_names == ("default-scheduler",)
    fit = config.profiles[0].plugin_config[0].typed_args()
    assert isinstance(fit, policy.NodeResourcesFitArgs)
    assert fit.scoring_strategy.type == "MostAllocated"


def test_omitted_is_none() -> None:
    assert policy.parse_policy({}).steering.scheduler_config is None


def test_missing_file_is_named(tmp_path: pathlib.Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(errors.PolicyError) as raised:
        policy.parse_policy(_policy(str(missing)))
    assert str(missing) in "\n".join(raised.value.problems)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (
            {
                "pluginConfig": [
                    {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Most"}}}
                ]
            },
            "scoringStrategy.type",
        ),
        (
            {
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {
                            "scoringStrategy": {
                                "type": "RequestedToCapacityRatio",
                                "requestedToCapacityRatio": {
                                    "shape": [
                                        {"utilization": 50, "score": 1},
                                        {"utilization": 10, "score": 5},
                                    ]
                                },
                            }
                        },
                    }
                ]
            },
            "requestedToCapacityRatio.shape",
        ),
        (
            {
                "pluginConfig": [
                    {
                        "name": "NodeResourcesFit",
                        "args": {"scoringStrategy": {"resources": [{"name": "cpu", "weight": 0}]}},
                    }
                ]
            },
            "resources[0].weight",
        ),
        ({"percentageOfNodesToScore": 101}, "percentageOfNodesToScore"),
    ],
    ids=["unknown-scoring-type", "shape-not-increasing", "zero-resource-weight", "percentage"],
)
def test_bad_values_name_the_field(change: dict[str, Any], field: str) -> None:
    config = {"profiles": [{"schedulerName": "default-scheduler", **change}]}
    with pytest.raises(errors.PolicyError) as raised:
        policy.parse_policy(_policy(config))
    assert field in "\n".join(raised.value.problems)


def test_repeated_scheduler_name_is_an_error() -> None:
    config = {"profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]}
    with pytest.raises(errors.PolicyError) as raised:
        policy.parse_policy(_policy(config))
    assert "'a' is repeated" in "\n".join(raised.value.problems)


OUT_OF_TREE = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"score": {"enabled": [{"name": "LoadAwareScoring", "weight": 5}]}},
        }
    ]
}


def test_validate_names_an_unmodelled_plugin(tmp_path: pathlib.Path, capsys) -> None:
    file = tmp_path / "policy.yaml"
    file.write_text(yaml.safe_dump(_policy(OUT_OF_TREE)))
    assert cli.main(["validate", "--policy", str(file)]) == 2
    err = capsys.readouterr().err
    assert "steering" in err
    assert "LoadAwareScoring (weight 5)" in err


def test_unmodelled_plugin_allowed_with_steering_off(tmp_path: pathlib.Path) -> None:
    file = tmp_path / "policy.yaml"
    file.write_text(yaml.safe_dump(_policy(OUT_OF_TREE, softTaint=False)))
    assert cli.main(["validate", "--policy", str(file)]) == 0


def test_plugin_disabled_for_scoring_is_modelled() -> None:
    config = {
        "profiles": [
            {
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "LoadAwareScoring"}]},
                    "score": {"disabled": [{"name": "LoadAwareScoring"}]},
                },
            }
        ]
    }
    parsed = policy.KubeSchedulerConfiguration.model_validate(config)
    assert policy.unmodelled_settings(parsed) == [
        "profiles[0] (default-scheduler): plugins.multiPoint.enabled adds plugins "
        "loadaware does not model: LoadAwareScoring"
    ]


def test_extender_and_filter_changes_are_unmodelled() -> None:
    config = policy.KubeSchedulerConfiguration.model_validate(
        {
            "extenders": [{"urlPrefix": "http://ext", "prioritizeVerb": "prioritize", "weight": 2}],
            "profiles": [{"plugins": {"filter": {"disabled": [{"name": "TaintToleration"}]}}}],
        }
    )
    problems = policy.unmodelled_settings(config)
    assert any("http://ext" in p for p in problems)
    assert any("plugins.filter" in p and "TaintToleration" in p for p in problems)


@pytest.mark.parametrize(
    ("plugins", "weights"),
    [
        (None, dict(policy.merged_score_weights(policy.KubeSchedulerProfile()))),
        (
            {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": 5}]}},
            {"NodeResourcesFit": 5},
        ),
        ({"score": {"disabled": [{"name": "ImageLocality"}]}}, {"ImageLocality": None}),
        (
            {
                "score": {
                    "disabled": [{"name": "*"}],
                    "enabled": [{"name": "NodeResourcesFit", "weight": 0}],
                }
            },
            "only-fit",
        ),
        ({"multiPoint": {"disabled": [{"name": "TaintToleration"}]}}, {"TaintToleration": None}),
    ],
    ids=["defaults", "score-weight", "score-disabled", "star-then-one", "multipoint-disabled"],
)
def test_merged_score_weights(plugins: dict[str, Any] | None, weights: object) -> None:
    profile = policy.KubeSchedulerProfile.model_validate({"plugins": plugins})
    merged = policy.merged_score_weights(profile)
    if weights == "only-fit":
        assert merged == {"NodeResourcesFit": 1}
        return
    assert isinstance(weights, dict)
    for name, weight in weights.items():
        assert merged.get(name) == weight
    assert merged["TaintToleration" if "TaintToleration" not in weights else "NodeAffinity"] in (
        2,
        3,
    )


def test_scheduler_names_need_a_profile_in_the_configuration() -> None:
    with pytest.raises(errors.PolicyError) as raised:
        policy.parse_policy(
            _policy(MOST_ALLOCATED, schedulerNames=["default-scheduler", "batch-scheduler"])
        )
    assert "schedulerNames batch-scheduler have no profile" in "\n".join(raised.value.problems)
    without_config = policy.parse_policy({"steering": {"schedulerNames": ["batch-scheduler"]}})
    assert without_config.steering.scheduler_names == ["batch-scheduler"]
