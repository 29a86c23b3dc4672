"""assess_usage: freshness and plausibility of usage.

Covers: fresh usage passes; a stale or missing node refuses the round under
onStaleNode=Refuse and is excluded under Exclude; the excluded-fraction cap;
NaN, Inf, negative, absurd (over 2x allocatable) and future samples refuse with
implausible-metrics; pods without a fresh sample are reported stale.
"""

from __future__ import annotations

import datetime

import pytest

from loadaware.errors import RefusedError
from loadaware.metrics import NodeScope, assess_usage
from loadaware.policy import MetricsSettings
from tests.lib.builders import NOW, GiB, make_usage, sample


def _cluster(n: int = 3) -> dict[str, NodeScope]:
    """n nodes of 4 cores and 16 GiB, each with one pod default/web-i."""
    return {
        f"n{i}": NodeScope(
            allocatable_cpu_cores=4.0,
            allocatable_memory_bytes=16 * GiB,
            pod_keys=(f"default/web-{i}",),
        )
        for i in range(1, n + 1)
    }


def _usage(n: int = 3, **overrides):
    nodes = {f"n{i}": sample(1.0, 4 * GiB) for i in range(1, n + 1)}
    pods = {f"default/web-{i}": sample(0.1, 0.1 * GiB) for i in range(1, n + 1)}
    nodes.update(overrides)
    return make_usage(nodes, pods)


def test_fresh_usage_passes() -> None:
    verdict = assess_usage(_usage(), _cluster(), MetricsSettings(), NOW)
    assert verdict.excluded_nodes == {}
    assert verdict.stale_pods == frozenset()


def test_stale_node_refuses_round_by_default() -> None:
    usage = _usage(n2=sample(1.0, GiB, age_seconds=900))
    with pytest.raises(RefusedError) as info:
        assess_usage(usage, _cluster(), MetricsSettings(), NOW)
    assert info.value.reference == "stale-metrics"
    assert "n2" in str(info.value)
    assert "900s old (max 120s)" in str(info.value)
    assert info.value.exit_code == 3


def test_missing_node_counts_as_stale() -> None:
    usage = _usage()
    del usage.nodes["n3"]
    with pytest.raises(RefusedError, match="n3 no sample"):
        assess_usage(usage, _cluster(), MetricsSettings(), NOW)


def test_sample_just_inside_max_age_is_fresh() -> None:
    usage = _usage(n1=sample(1.0, GiB, age_seconds=120))
    assert assess_usage(usage, _cluster(), MetricsSettings(), NOW).excluded_nodes == {}


def test_exclude_mode_excludes_the_stale_node() -> None:
    settings = MetricsSettings(on_stale_node="Exclude")
    usage = _usage(n2=sample(1.0, GiB, age_seconds=600))
    verdict = assess_usage(usage, _cluster(), settings, NOW)
    assert list(verdict.excluded_nodes) == ["n2"]
    assert "600s old" in verdict.excluded_nodes["n2"]


def test_exclude_mode_refuses_when_too_many_nodes_are_stale() -> None:
    settings = MetricsSettings(on_stale_node="Exclude", max_excluded_fraction=0.1)
    stale = {f"n{i}": sample(1.0, GiB, age_seconds=600) for i in (1, 2, 3)}
    usage = _usage(n=20, **stale)
    with pytest.raises(RefusedError, match="maxExcludedFraction"):
        assess_usage(usage, _cluster(20), settings, NOW)


def test_exclude_mode_allows_fraction() -> None:
    settings = MetricsSettings(on_stale_node="Exclude", max_excluded_fraction=0.1)
    stale = {f"n{i}": sample(1.0, GiB, age_seconds=600) for i in (1, 2)}
    verdict = assess_usage(_usage(n=20, **stale), _cluster(20), settings, NOW)
    assert sorted(verdict.excluded_nodes) == ["n1", "n2"]


@pytest.mark.parametrize(
    ("node_sample", "message"),
    [
        pytest.param(sample(float("nan"), GiB), "cpu value is nan", id="NaN cpu"),
        pytest.param(sample(1.0, float("inf")), "memory value is inf", id="infinite memory"),
        pytest.param(sample(-0.5, GiB), "negative", id="negative cpu"),
        pytest.param(sample(9.0, GiB), "over 2x allocatable", id="cpu over twice allocatable"),
        pytest.param(
            sample(1.0, 40 * GiB), "over 2x allocatable", id="memory over twice allocatable"
        ),
        pytest.param(
            sample(1.0, GiB, age_seconds=-600), "in the future", id="sample from the future"
        ),
    ],
)
def test_implausible_node_sample_refuses(node_sample, message: str) -> None:
    with pytest.raises(RefusedError, match=message) as info:
        assess_usage(_usage(n1=node_sample), _cluster(), MetricsSettings(), NOW)
    assert info.value.reference == "implausible-metrics"
    assert "n1" in str(info.value)


def test_implausible_pod_sample_refuses() -> None:
    usage = _usage()
    usage.pods["default/web-2"] = sample(float("nan"), GiB)
    with pytest.raises(RefusedError, match="pod default/web-2") as info:
        assess_usage(usage, _cluster(), MetricsSettings(), NOW)
    assert info.value.reference == "implausible-metrics"


def test_implausible_beats_exclude() -> None:
    settings = MetricsSettings(on_stale_node="Exclude")
    with pytest.raises(RefusedError, match=r"implausible|negative"):
        assess_usage(_usage(n1=sample(-1, GiB)), _cluster(), settings, NOW)


def test_stale_and_missing_pods_are_reported() -> None:
    usage = _usage()
    usage.pods["default/web-1"] = sample(0.1, GiB, age_seconds=300)
    del usage.pods["default/web-2"]
    verdict = assess_usage(usage, _cluster(), MetricsSettings(), NOW)
    assert verdict.stale_pods == {"default/web-1", "default/web-2"}


def test_max_sample_age_is_configurable() -> None:
    settings = MetricsSettings(max_sample_age=datetime.timedelta(minutes=15))
    usage = _usage(n2=sample(1.0, GiB, age_seconds=600))
    assert assess_usage(usage, _cluster(), settings, NOW).excluded_nodes == {}
