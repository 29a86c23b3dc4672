"""classify_nodes: pools and the hot / cold / normal / excluded classes.

Covers: hot when any judged resource is above targetThresholds; cold only when
all are below thresholds and the node is schedulable; first matching pool wins;
nodes in no pool, not Ready or with stale metrics are excluded; deviation
thresholds around the pool mean; a resource a pool does not judge is ignored.
"""

from __future__ import annotations

import pytest

from loadaware.plan import classify_nodes
from loadaware.policy import NodePool, ResourcePercents
from tests.lib.builders import GiB, make_cluster, make_node, make_usage, sample

DEFAULT = NodePool(name="default")  # thresholds 40/50, targets 70/80


def _classes(nodes, samples, pools=(DEFAULT,), excluded=None) -> dict[str, str]:
    table = classify_nodes(make_cluster(nodes), make_usage(samples), list(pools), excluded or {})
    return dict(zip(table.names, table.classes, strict=True))


@pytest.mark.parametrize(
    ("cpu", "memory", "expected"),
    [
        pytest.param(3.0, 4 * GiB, "hot", id="cpu 75% over target 70% is hot"),
        pytest.param(1.0, 13 * GiB, "hot", id="memory 81% over target 80% is hot"),
        pytest.param(2.8, 12.8 * GiB, "normal", id="exactly at both targets is not hot"),
        pytest.param(1.0, 4 * GiB, "cold", id="cpu 25% and memory 25% under thresholds is cold"),
        pytest.param(1.0, 9 * GiB, "normal", id="memory 56% over threshold 50% is not cold"),
        pytest.param(2.0, 4 * GiB, "normal", id="cpu 50% between threshold and target is normal"),
    ],
)
def test_thresholds(cpu: float, memory: float, expected: str) -> None:
    assert _classes([make_node("a")], {"a": sample(cpu, memory)}) == {"a": expected}


def test_cordoned_node_is_never_cold() -> None:
    nodes = [make_node("a", unschedulable=True)]
    assert _classes(nodes, {"a": sample(0.1, GiB)}) == {"a": "normal"}


def test_cordoned_node_can_be_hot() -> None:
    nodes = [make_node("a", unschedulable=True)]
    assert _classes(nodes, {"a": sample(3.9, GiB)}) == {"a": "hot"}


def test_not_ready_node_is_excluded() -> None:
    nodes = [make_node("a", ready=False)]
    assert _classes(nodes, {"a": sample(3.9, GiB)}) == {"a": "excluded"}


def test_stale_node_is_excluded() -> None:
    classes = _classes([make_node("a")], {"a": sample(3.9, GiB)}, excluded={"a": "stale"})
    assert classes == {"a": "excluded"}


def test_first_matching_pool_wins_and_unpooled_nodes_are_excluded() -> None:
    gpu = NodePool(
        name="gpu",
        node_selector={"pool": "gpu"},
        thresholds=ResourcePercents(cpu=10, memory=10),
        target_thresholds=ResourcePercents(cpu=20, memory=20),
    )
    general = NodePool(name="general", node_selector={"pool": "general"})
    nodes = [
        make_node("g", labels={"pool": "gpu"}),
        make_node("c", labels={"pool": "general"}),
        make_node("x", labels={"pool": "other"}),
    ]
    samples = {name: sample(1.2, 2 * GiB) for name in ("g", "c", "x")}  # cpu 30%
    table = classify_nodes(make_cluster(nodes), make_usage(samples), [gpu, general], {})
    assert dict(zip(table.names, table.classes, strict=True)) == {
        "c": "cold",
        "g": "hot",
        "x": "excluded",
    }
    assert dict(zip(table.names, table.pools, strict=True)) == {
        "c": "general",
        "g": "gpu",
        "x": None,
    }


def test_unjudged_resource_is_ignored() -> None:
    cpu_only = NodePool(
        name="cpu",
        thresholds=ResourcePercents(cpu=40),
        target_thresholds=ResourcePercents(cpu=70),
    )
    classes = _classes([make_node("a")], {"a": sample(0.4, 15.9 * GiB)}, pools=[cpu_only])
    assert classes == {"a": "cold"}


def test_deviation_thresholds_are_around_the_pool_mean() -> None:
    pool = NodePool(
        name="dev",
        use_deviation_thresholds=True,
        thresholds=ResourcePercents(cpu=10, memory=10),
        target_thresholds=ResourcePercents(cpu=10, memory=10),
    )
    nodes = [make_node(n) for n in ("a", "b", "c")]
    # cpu 20%, 50%, 80%: mean 50% -> cold under 40%, hot over 60%; memory all at the mean.
    samples = {
        "a": sample(0.8, 8 * GiB),
        "b": sample(2.0, 8 * GiB),
        "c": sample(3.2, 8 * GiB),
    }
    assert _classes(nodes, samples, pools=[pool]) == {"a": "normal", "b": "normal", "c": "hot"}
    # "a" is below on cpu but not on memory (both must be under to be cold).
    samples["a"] = sample(0.8, 2 * GiB)
    assert _classes(nodes, samples, pools=[pool])["a"] == "cold"


def _with_history(cpu_points: list[float]):
    """Node "a" (4 cores, 16 GiB) now at the last cpu point, with that history."""
    import datetime

    from loadaware.metrics import NodeHistory, UsageHistory
    from tests.lib.builders import NOW

    times = tuple(
        NOW - datetime.timedelta(minutes=len(cpu_points) - 1 - i) for i in range(len(cpu_points))
    )
    usage = make_usage({"a": sample(cpu_points[-1], 4 * GiB)})
    history = UsageHistory(
        times=times,
        nodes={
            "a": NodeHistory(
                cpu_cores=tuple(cpu_points), memory_bytes=tuple(4.0 * GiB for _ in cpu_points)
            )
        },
    )
    return make_cluster([make_node("a")]), type(usage)(
        collected_at=usage.collected_at, nodes=usage.nodes, pods=usage.pods, history=history
    )


@pytest.mark.parametrize(
    ("cpu_points", "expected"),
    [
        pytest.param([1.0, 1.0, 1.0, 1.0, 3.6], "normal", id="one spike is not a hotspot"),
        pytest.param([1.0, 1.0, 3.6, 3.6, 3.6], "hot", id="three points over target in a row"),
        pytest.param([3.6, 3.6, 3.6, 3.0, 2.9], "hot", id="confirmed and still over the target"),
    ],
)
def test_hotspot_confirmation_over_the_history(cpu_points: list[float], expected: str) -> None:
    cluster, usage = _with_history(cpu_points)
    table = classify_nodes(cluster, usage, [DEFAULT], {}, confirm_consecutive=3)
    assert dict(zip(table.names, table.classes, strict=True)) == {"a": expected}
    if expected == "normal":
        assert "not yet for 3 samples" in table.notes[0]


def test_without_history_the_current_sample_decides() -> None:
    table = classify_nodes(
        make_cluster([make_node("a")]),
        make_usage({"a": sample(3.6, 4 * GiB)}),
        [DEFAULT],
        {},
        confirm_consecutive=3,
    )
    assert table.classes == ("hot",)
