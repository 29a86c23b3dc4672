"""assess_usage on pod samples: what its one-pass cheap test must keep.

Covers: each implausible pod value (NaN, infinite, negative, in a named
resource, too far in the future) refuses with the message of the sample's first
problem, and the edges that are not problems (0, -0.0, exactly the allowed clock
skew) pass; the first implausible pod by node name, then pod order, is named; an
implausible node beats an implausible pod, which beats stale nodes under both
onStaleNode modes; pods missing, old or lacking a named resource of their node
are stale; and for generated samples the verdict or refusal is the one of
checking plausibility of every sample first and staleness after.
"""

from __future__ import annotations

import datetime
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadaware.errors import RefusedError
from loadaware.metrics import NodeScope, Usage, UsageAssessment, UsageSample, _assess, assess_usage
from loadaware.policy import MetricsSettings
from tests.lib.builders import NOW, GiB

NAN, INF = math.nan, math.inf


def pod_sample(
    cpu: float = 0.1,
    memory: float = GiB,
    *,
    age_seconds: float = 15.0,
    named: dict[str, float] | None = None,
) -> UsageSample:
    return UsageSample(
        cpu_cores=cpu,
        memory_bytes=memory,
        timestamp=NOW - datetime.timedelta(seconds=age_seconds),
        named=named or {},
    )


def scopes(*pods_per_node: tuple[str, ...], named: tuple[str, ...] = ()) -> dict[str, NodeScope]:
    """Nodes n1, n2, ... of 4 cores and 16 GiB with the given pod keys."""
    return {
        f"n{i}": NodeScope(
            allocatable_cpu_cores=4.0,
            allocatable_memory_bytes=16 * GiB,
            pod_keys=keys,
            named=named,
        )
        for i, keys in enumerate(pods_per_node, start=1)
    }


def usage_of(nodes: dict[str, NodeScope], pods: dict[str, UsageSample], **node_samples) -> Usage:
    samples = {name: pod_sample(1.0, 4 * GiB, named={"gpu": 1.0}) for name in nodes}
    return Usage(collected_at=NOW, nodes=samples | node_samples, pods=pods)


def refusal(usage: Usage, nodes: dict[str, NodeScope], **settings) -> RefusedError:
    with pytest.raises(RefusedError) as info:
        assess_usage(usage, nodes, MetricsSettings(**settings), NOW)
    return info.value


@pytest.mark.parametrize(
    ("sample", "problem"),
    [
        pytest.param(pod_sample(NAN), "cpu value is nan", id="nan-cpu"),
        pytest.param(pod_sample(memory=NAN), "memory value is nan", id="nan-memory"),
        pytest.param(pod_sample(INF), "cpu value is inf", id="infinite-cpu"),
        pytest.param(pod_sample(memory=-INF), "memory value is -inf", id="minus-infinite"),
        pytest.param(pod_sample(-0.25), "cpu value -0.25 is negative", id="negative-cpu"),
        pytest.param(pod_sample(-1e-300), "cpu value -1e-300 is negative", id="tiny-negative"),
        pytest.param(pod_sample(-1.0, NAN), "cpu value -1 is negative", id="cpu-before-memory"),
        pytest.param(pod_sample(named={"gpu": NAN}), "gpu value is nan", id="nan-named-resource"),
        pytest.param(
            pod_sample(named={"gpu": 1.0, "fpga": -2.0}),
            "fpga value -2 is negative",
            id="negative-named-resource",
        ),
        pytest.param(
            pod_sample(named={"gpu": INF}, age_seconds=-3600),
            "gpu value is inf",
            id="value-before-clock-skew",
        ),
        pytest.param(
            pod_sample(age_seconds=-60.000001),
            "sample timestamp is 60s in the future (clock skew)",
            id="just-over-the-clock-skew",
        ),
        pytest.param(
            pod_sample(age_seconds=-600),
            "sample timestamp is 600s in the future (clock skew)",
            id="future",
        ),
    ],
)
def test_an_implausible_pod_sample_refuses_with_its_problem(
    sample: UsageSample, problem: str
) -> None:
    nodes = scopes(("shop/ok", "shop/bad"))
    error = refusal(usage_of(nodes, {"shop/ok": pod_sample(), "shop/bad": sample}), nodes)
    assert error.reference == "implausible-metrics"
    assert error.message == f"pod shop/bad {problem}"
    assert _assess._sample_problem(sample, NOW) == problem


@pytest.mark.parametrize(
    "sample",
    [
        pytest.param(pod_sample(0.0, 0.0), id="zero"),
        pytest.param(pod_sample(-0.0, -0.0), id="negative-zero"),
        pytest.param(pod_sample(1e300, 1e300), id="huge"),
        pytest.param(pod_sample(age_seconds=-60), id="exactly-the-clock-skew"),
        pytest.param(pod_sample(named={"gpu": 0.0}), id="named-zero"),
    ],
)
def test_edges_that_are_plausible(sample: UsageSample) -> None:
    nodes = scopes(("shop/edge",))
    verdict = assess_usage(usage_of(nodes, {"shop/edge": sample}), nodes, MetricsSettings(), NOW)
    assert verdict == UsageAssessment()


def test_the_first_implausible_pod_by_node_name_then_pod_order_is_named() -> None:
    nodes = {
        "b": scopes(("shop/b2", "shop/b1"))["n1"],
        "a": scopes(("shop/a2", "shop/a1", "shop/a3"))["n1"],
    }
    pods = {key: pod_sample(-1.0) for key in ("shop/b1", "shop/b2", "shop/a1", "shop/a3")}
    assert refusal(usage_of(nodes, pods), nodes).message == "pod shop/a1 cpu value -1 is negative"


def test_an_implausible_node_beats_an_implausible_pod() -> None:
    nodes = scopes(("shop/a",), ("shop/b",))
    usage = usage_of(nodes, {"shop/a": pod_sample(NAN)}, n2=pod_sample(9.0))
    assert refusal(usage, nodes).message == "node n2 cpu 9 cores is over 2x allocatable"


@pytest.mark.parametrize("on_stale_node", ["Refuse", "Exclude"])
def test_an_implausible_pod_beats_stale_nodes(on_stale_node: str) -> None:
    nodes = scopes(("shop/a",), ("shop/b",))
    usage = usage_of(nodes, {"shop/b": pod_sample(-1.0)}, n1=pod_sample(age_seconds=3600))
    error = refusal(usage, nodes, on_stale_node=on_stale_node, max_excluded_fraction=0)
    assert (error.reference, error.message) == (
        "implausible-metrics",
        "pod shop/b cpu value -1 is negative",
    )


def test_missing_old_and_lacking_pods_are_stale() -> None:
    nodes = scopes(("shop/fresh", "shop/missing", "shop/old", "shop/no-gpu"), named=("gpu",))
    pods = {
        "shop/fresh": pod_sample(named={"gpu": 0.5}),
        "shop/old": pod_sample(named={"gpu": 0.5}, age_seconds=121),
        "shop/no-gpu": pod_sample(named={"fpga": 0.5}),
    }
    verdict = assess_usage(usage_of(nodes, pods), nodes, MetricsSettings(), NOW)
    assert verdict.stale_pods == {"shop/missing", "shop/old", "shop/no-gpu"}
    assert verdict.excluded_nodes == {}


def reference_verdict(
    usage: Usage, nodes: dict[str, NodeScope], now: datetime.datetime
) -> UsageAssessment | str:
    """Every pod's plausibility, then every pod's freshness (nodes all fresh here)."""
    max_age = MetricsSettings().max_sample_age
    names = sorted(nodes)
    for name in names:
        for key in nodes[name].pod_keys:
            sample = usage.pods.get(key)
            if sample is not None and (problem := _assess._sample_problem(sample, now)):
                return f"pod {key} {problem}"
    stale = {
        key
        for name in names
        for key in nodes[name].pod_keys
        if (sample := usage.pods.get(key)) is None
        or now - sample.timestamp > max_age
        or any(r not in sample.named for r in nodes[name].named)
    }
    return UsageAssessment(stale_pods=frozenset(stale))


VALUES = st.sampled_from([0.0, -0.0, 0.5, 1e9, -1.0, NAN, INF, -INF])
SAMPLES = st.one_of(
    st.none(),
    st.builds(
        pod_sample,
        VALUES,
        VALUES,
        age_seconds=st.sampled_from([-120.0, -60.5, -60.0, 0.0, 15.0, 120.0, 120.5, 900.0]),
        named=st.dictionaries(st.sampled_from(["gpu", "fpga"]), VALUES, max_size=2),
    ),
)


@given(st.lists(st.lists(SAMPLES, max_size=4), min_size=1, max_size=4), st.booleans())
def test_the_verdict_is_plausibility_first_then_freshness(
    samples: list[list[UsageSample | None]], judges_gpu: bool
) -> None:
    nodes = scopes(
        *(tuple(f"ns/p{i}-{j}" for j in range(len(row))) for i, row in enumerate(samples)),
        named=("gpu",) if judges_gpu else (),
    )
    pods = {
        f"ns/p{i}-{j}": sample
        for i, row in enumerate(samples)
        for j, sample in enumerate(row)
        if sample is not None
    }
    usage = usage_of(nodes, pods)
    expected = reference_verdict(usage, nodes, NOW)
    if isinstance(expected, str):
        error = refusal(usage, nodes)
        assert (error.reference, error.message) == ("implausible-metrics", expected)
    else:
        assert assess_usage(usage, nodes, MetricsSettings(), NOW) == expected
