"""metrics.prometheus.resources and the thresholds that name them.

Covers: a named resource in a pool's thresholds once the source defines it; a
threshold naming an undefined resource, or one given with metrics-server, is
refused naming the field and what is allowed; names that clash with the
built-in resources or are not names; percentages out of range; capacity as a
query or as a node allocatable resource; the example policy policy/gpu.yaml.
"""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

from loadaware import errors, policy

ROOT = pathlib.Path(__file__).resolve().parents[2]
GPU = {
    "node": "sum by (Hostname) (DCGM_FI_DEV_GPU_UTIL) / 100",
    "pod": 'sum by (namespace, pod) (DCGM_FI_DEV_GPU_UTIL{pod!=""}) / 100',
    "nodeTimestamp": "min by (Hostname) (timestamp(DCGM_FI_DEV_GPU_UTIL))",
    "podTimestamp": 'min by (namespace, pod) (timestamp(DCGM_FI_DEV_GPU_UTIL{pod!=""}))',
    "capacity": "nvidia.com/gpu",
    "nodeLabel": "Hostname",
}


def _document(resources: dict[str, Any] | None, pool: dict[str, Any]) -> dict[str, Any]:
    source: dict[str, Any] = {"url": "http://prometheus:9090"}
    if resources is not None:
        source["resources"] = resources
    return {"metrics": {"prometheus": source}, "nodePools": [{"name": "gpu", **pool}]}


def _error(document: dict[str, Any]) -> str:
    with pytest.raises(errors.PolicyError) as caught:
        policy.parse_policy(document)
    return str(caught.value)


def test_a_pool_judges_a_defined_resource() -> None:
    pool = {"thresholds": {"cpu": 40, "gpu": 30}, "targetThresholds": {"cpu": 70, "gpu": 70}}
    parsed = policy.parse_policy(_document({"gpu": GPU}, pool))
    assert parsed.node_pools[0].target_thresholds.as_dict() == {"cpu": 70.0, "gpu": 70.0}
    gpu = parsed.metrics.prometheus.resources["gpu"]  # type: ignore[union-attr]
    assert gpu.capacity_is_query is False
    query = gpu.model_copy(update={"capacity": "count by (Hostname) (DCGM_FI_DEV_GPU_UTIL)"})
    assert query.capacity_is_query is True


def test_an_undefined_resource_names_the_field_and_what_is_allowed() -> None:
    pool = {"thresholds": {"gpu": 30}, "targetThresholds": {"gpu": 70}}
    text = _error(_document({"disk": {**GPU}}, pool))
    assert "nodePools[0].thresholds.gpu: no resource of that name" in text
    assert "allowed: cpu, memory, pods, disk" in text


def test_metrics_server_has_no_named_resources() -> None:
    document = {
        "metrics": {"metricsServer": {}},
        "nodePools": [{"name": "a", "thresholds": {"gpu": 30}, "targetThresholds": {"gpu": 70}}],
    }
    text = _error(document)
    assert "nodePools[0].thresholds.gpu: metrics-server has only cpu and memory" in text


@pytest.mark.parametrize(
    ("name", "says"),
    [("cpu", "is built in"), ("pods", "is built in"), ("GPU", "not a resource name")],
)
def test_resource_names(name: str, says: str) -> None:
    pool = {"thresholds": {"cpu": 40}, "targetThresholds": {"cpu": 70}}
    text = _error(_document({name: GPU}, pool))
    assert "metrics.prometheus.resources" in text
    assert says in text


def test_a_named_percentage_out_of_range() -> None:
    pool = {"thresholds": {"gpu": 130}, "targetThresholds": {"gpu": 170}}
    assert "gpu: 130 is not a percentage (0-100)" in _error(_document({"gpu": GPU}, pool))


def test_a_named_resource_needs_its_timestamp_queries() -> None:
    partial = {k: v for k, v in GPU.items() if k != "nodeTimestamp"}
    pool = {"thresholds": {"gpu": 30}, "targetThresholds": {"gpu": 70}}
    assert 'metrics.prometheus.resources["gpu"].nodeTimestamp: required' in _error(
        _document({"gpu": partial}, pool)
    )


def test_the_gpu_example_policy() -> None:
    parsed = policy.load_policy(ROOT / "policy" / "gpu.yaml")
    gpu_pool = parsed.node_pools[0]
    assert gpu_pool.target_thresholds.as_dict()["gpu"] == 70
    assert parsed.metrics.prometheus.resources["gpu"].capacity == "nvidia.com/gpu"  # type: ignore[union-attr]


def test_consolidation_thresholds_are_checked_too() -> None:
    document = _document({"gpu": GPU}, {"thresholds": {"cpu": 40}, "targetThresholds": {"cpu": 70}})
    document["consolidation"] = {"enabled": True, "thresholds": {"disk": 10}}
    assert "consolidation.thresholds.disk: no resource of that name" in _error(document)
