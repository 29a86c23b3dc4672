"""Writing policies back: normalised camelCase JSON that parses to an equal policy,
and a hash that depends on the effective settings only.
"""

from __future__ import annotations

import datetime
import json
import pathlib

import pytest

from loadaware import policy

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "policy").glob("*.yaml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_dump_then_parse_is_equal(path: pathlib.Path) -> None:
    loaded = policy.load_policy(path)
    dumped = policy.dump_policy(loaded)
    assert policy.parse_policy(json.loads(json.dumps(dumped))) == loaded
    assert policy.dump_policy(policy.parse_policy(dumped)) == dumped


def test_dump_is_camel_case_with_kubernetes_durations() -> None:
    dumped = policy.dump_policy(
        policy.parse_policy({"evictor": {"minPodAge": "1h30m"}, "metrics": {"maxSampleAge": "90s"}})
    )
    assert dumped["apiVersion"] == "loadaware.io/v1alpha1"
    assert dumped["evictor"]["minPodAge"] == "1h30m"
    assert dumped["metrics"]["maxSampleAge"] == "1m30s"
    assert dumped["nodePools"][0]["targetThresholds"] == {
        "cpu": 70.0,
        "memory": 80.0,
        "pods": None,
    }
    assert "node_pools" not in dumped


def test_hash_is_twelve_hex_chars_and_stable() -> None:
    value = policy.policy_hash(policy.parse_policy({}))
    assert len(value) == 12
    assert set(value) <= set("0123456789abcdef")
    # Two separate parses: nothing identity- or order-dependent leaks into the hash.
    assert value == policy.policy_hash(policy.parse_policy({}))


def test_hash_ignores_spelling_and_order() -> None:
    spelt_out = policy.parse_policy(
        {
            "dryRun": False,
            "metrics": {"maxSampleAge": "120s", "onStaleNode": "Refuse"},
            "nodePools": [{"name": "default", "thresholds": {"memory": 50, "cpu": 40}}],
        }
    )
    assert policy.policy_hash(spelt_out) == policy.policy_hash(policy.parse_policy({}))


def test_hash_changes_with_any_setting() -> None:
    base = policy.parse_policy({})
    changed = policy.parse_policy({"evictor": {"minPodAge": "1s"}})
    assert policy.policy_hash(base) != policy.policy_hash(changed)


def test_policies_built_in_python_dump_like_files() -> None:
    built = policy.LoadAwarePolicy(
        evictor=policy.EvictorSettings(min_pod_age=datetime.timedelta(minutes=10))
    )
    assert built == policy.parse_policy({"evictor": {"minPodAge": "10m"}})
