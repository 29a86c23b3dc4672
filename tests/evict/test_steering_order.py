"""The order the evictor takes a plan's evictions in while it steers (_steering_order)."""

from __future__ import annotations

from loadaware import plan
from loadaware.evict._steering_order import SteeringOrder


def eviction(pod: str, steer: str, *, reason: str = "hotspot", workload: str = "") -> plan.Eviction:
    return plan.Eviction(
        pod=f"ns/{pod}",
        node="hot",
        expected_node=None,
        cpu_cores=1.0,
        memory_bytes=1.0,
        reason=reason,
        workload=workload or f"Deployment/ns/{pod}",
        steer=tuple(steer),
    )


def taken(order: SteeringOrder, *, steering: bool = True, awaited=()) -> list[str]:
    """Every eviction's pod, each taken with the taints of the one before set."""
    tainted: set[str] = set()
    pods = []
    while order:
        writes = (lambda steer, now=tainted: len(now ^ set(steer))) if steering else None
        chosen = order.take(writes, set(awaited))
        tainted = set(chosen.steer)
        pods.append(chosen.pod.removeprefix("ns/"))
    return pods


PLAN = [eviction("a", "xy"), eviction("b", "pq"), eviction("c", "xy"), eviction("d", "pq")]


def test_without_steering_or_lookahead_the_plans_order_is_kept() -> None:
    assert taken(SteeringOrder(PLAN, 16), steering=False) == ["a", "b", "c", "d"]
    assert taken(SteeringOrder(PLAN, 1)) == ["a", "b", "c", "d"]
    assert taken(SteeringOrder(PLAN, 0)) == ["a", "b", "c", "d"]


def test_a_move_with_the_same_rivals_is_taken_ahead() -> None:
    # 2 taint changes per move in between rather than 4.
    assert taken(SteeringOrder(PLAN, 16)) == ["a", "c", "b", "d"]
    # Beyond the lookahead, nothing is taken ahead.
    far = [eviction("a", "xy"), eviction("b", "pq"), eviction("c", "rs"), eviction("d", "xy")]
    assert taken(SteeringOrder(far, 2)) == ["a", "b", "c", "d"]
    assert taken(SteeringOrder(far, 3))[:2] == ["a", "d"]


def test_an_eviction_is_passed_over_at_most_lookahead_times() -> None:
    # "b" needs other taints than all the rest: it is passed over twice, then taken.
    plan_ = [eviction("a", "x"), eviction("b", "pq"), *(eviction(f"m{i}", "x") for i in range(6))]
    pods = taken(SteeringOrder(plan_, 2))
    assert pods.index("b") == 3
    assert sorted(pods) == sorted(e.pod.removeprefix("ns/") for e in plan_)


def test_only_moves_of_the_same_reason_nor_an_awaited_workload_go_ahead() -> None:
    # A deschedule strategy's move is not taken ahead of a hotspot move, nor after.
    must = [
        eviction("a", "xy"),
        eviction("b", "pq"),
        eviction("c", "xy", reason="RemoveDuplicates"),
    ]
    assert taken(SteeringOrder(must, 16)) == ["a", "b", "c"]
    awaited = [eviction("a", "xy"), eviction("b", "pq"), eviction("c", "xy", workload="W")]
    assert taken(SteeringOrder(awaited, 16), awaited={"W"}) == ["a", "b", "c"]
    assert taken(SteeringOrder(awaited, 16)) == ["a", "c", "b"]
