"""Reading policy files: YAML and JSON, what an unreadable or malformed file reports
(path and line), empty files, repeated keys, and the source named in errors.
"""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from loadaware import errors, policy

MINIMAL = """\
apiVersion: loadaware.io/v1alpha1
kind: LoadAwarePolicy
metrics:
  metricsServer: {}
nodePools:
- name: default
  thresholds: {cpu: 30}
  targetThresholds: {cpu: 60}
"""


def write(tmp_path: pathlib.Path, name: str, text: str) -> pathlib.Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_yaml_file(tmp_path: pathlib.Path) -> None:
    p = policy.load_policy(write(tmp_path, "p.yaml", MINIMAL))
    assert p.metrics.metrics_server is not None
    assert p.node_pools[0].target_thresholds.as_dict() == {"cpu": 60}


def test_json_file_equals_the_yaml(tmp_path: pathlib.Path) -> None:
    from_yaml = policy.load_policy(write(tmp_path, "p.yaml", MINIMAL))
    as_json = json.dumps(policy.dump_policy(from_yaml))
    assert policy.load_policy(write(tmp_path, "p.json", as_json)) == from_yaml


def test_missing_file(tmp_path: pathlib.Path) -> None:
    with pytest.raises(errors.InputError, match=r"policy file .*nope\.yaml does not exist"):
        policy.load_policy(tmp_path / "nope.yaml")


def test_directory_is_unreadable(tmp_path: pathlib.Path) -> None:
    with pytest.raises(
        errors.InputError, match=f"cannot read policy file {re.escape(str(tmp_path))}"
    ):
        policy.load_policy(tmp_path)


@pytest.mark.parametrize("text", ["", "\n", "# only a comment\n"])
def test_empty_file(tmp_path: pathlib.Path, text: str) -> None:
    path = write(tmp_path, "p.yaml", text)
    with pytest.raises(errors.PolicyError, match=f"policy file {re.escape(str(path))} is empty"):
        policy.load_policy(path)


def test_empty_json_file(tmp_path: pathlib.Path) -> None:
    with pytest.raises(errors.PolicyError, match="is empty"):
        policy.load_policy(write(tmp_path, "p.json", ""))


def test_bad_yaml_names_path_and_line(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, "p.yaml", "metrics:\n  onStaleNode: Refuse\n  maxSampleAge: [2m\n")
    with pytest.raises(errors.InputError) as info:
        policy.load_policy(path)
    assert info.value.exit_code == 2
    assert str(info.value).startswith(f"{path}:4:")
    assert "invalid YAML" in str(info.value)


def test_bad_json_names_path_and_line(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, "p.json", '{\n  "dryRun": true,\n}\n')
    with pytest.raises(errors.InputError, match=rf"^{re.escape(str(path))}:3:1: invalid JSON"):
        policy.load_policy(path)


def test_repeated_yaml_key_is_refused_with_its_line(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, "p.yaml", "dryRun: false\nmetrics: {}\ndryRun: true\n")
    with pytest.raises(
        errors.InputError, match=rf"^{re.escape(str(path))}:3:1: .*repeated key 'dryRun'"
    ):
        policy.load_policy(path)


def test_yaml_merge_keys_may_be_overridden(tmp_path: pathlib.Path) -> None:
    text = (
        "x-pool: &pool {thresholds: {cpu: 10}, targetThresholds: {cpu: 90}}\n"
        "nodePools:\n"
        "- <<: *pool\n"
        "  name: a\n"
        "  targetThresholds: {cpu: 60}\n"
    )
    # The anchor's host key is not a policy field, which proves merges reach validation.
    with pytest.raises(errors.PolicyError) as info:
        policy.load_policy(write(tmp_path, "p.yaml", text))
    assert info.value.problems[0].startswith("x-pool: unknown field")


def test_repeated_json_key_is_refused(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, "p.json", '{"dryRun": false, "dryRun": true}')
    with pytest.raises(errors.InputError, match="repeated key 'dryRun'"):
        policy.load_policy(path)


def test_multiple_yaml_documents_are_refused(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, "p.yaml", "dryRun: true\n---\ndryRun: false\n")
    with pytest.raises(errors.InputError, match=rf"^{re.escape(str(path))}:2:1: invalid YAML"):
        policy.load_policy(path)


def test_invalid_file_names_itself(tmp_path: pathlib.Path) -> None:
    path = write(tmp_path, "p.yaml", "evictor:\n  minReplicas: many\n")
    with pytest.raises(errors.PolicyError) as info:
        policy.load_policy(path)
    assert info.value.message == f"policy file {path} is invalid (1 problem)"
    assert info.value.problems == ("evictor.minReplicas: expected a whole number, got 'many'",)


def test_top_level_list_file(tmp_path: pathlib.Path) -> None:
    with pytest.raises(errors.PolicyError, match="at the top level, got a list"):
        policy.load_policy(write(tmp_path, "p.yaml", "- dryRun: true\n"))
