"""Whether a live round did what it planned (round._completion), from the plan,
the executor's outcomes and the relief check's verdicts.

Covered: stopped early is partial with the counts (hot nodes relieved of those
planned, evictions carried out of those planned, the stop) and names the nodes
left hot; everything carried out and every node relieved is complete; all
carried out but a node the plan would relieve still over its targets is
partial and names it; a node the plan already said stays hot (a budget ran
out) that improved after all its evictions is not left hot, and one that did
not improve is; evidence first: a node observed relieved counts as relieved
though the stop skipped its last eviction; a node the re-check found no longer
hot is not left hot; unverified after every eviction is not partial, short of
its evictions is; PDB refusals leave a node hot without any stop; evictions of
other rules count as evictions but not as hot nodes; long lists of nodes end
in "and N more"; the JSON of the audit record; every hot node of the plan counts, one the plan
planned no eviction from (a budget ran out) too, and every node still over its
targets is left hot, whether or not the round fell short on it; each hot node
whose planned evictions were all carried out has the time the last was (its
replacement bound, or found with nothing left to do), and no other has one.
"""

from __future__ import annotations

import dataclasses
import datetime

import pytest

from loadaware import evict, plan
from loadaware import round as rounds
from loadaware.round import _completion

NOW = datetime.datetime(2026, 11, 30, 8, 0, tzinfo=datetime.UTC)
TARGETS = {"cpu": 0.7, "memory": 0.8}


def node(name: str, node_class: str = "hot", *, after_cpu: float = 0.6) -> plan.NodeReport:
    return plan.NodeReport(
        name=name,
        node_class=node_class,  # type: ignore[arg-type]
        pool="default",
        before={"cpu": 0.9, "memory": 0.5},
        after={"cpu": after_cpu, "memory": 0.5},
        high=TARGETS,
    )


def eviction(pod: str, source: str, reason: str = "hotspot") -> plan.Eviction:
    return plan.Eviction(
        pod=pod, node=source, expected_node="cold-1", cpu_cores=0.5, memory_bytes=1.0, reason=reason
    )


def make_plan(*evictions: plan.Eviction, nodes: tuple[plan.NodeReport, ...] = ()) -> plan.Plan:
    sources = {e.node for e in evictions}
    known = {n.name for n in nodes}
    listed = nodes + tuple(node(name) for name in sorted(sources - known))
    return plan.Plan(
        status="planned",
        reason=f"{len(evictions)} evictions planned",
        evictions=evictions,
        nodes=(*listed, node("cold-1", "cold")),
    )


def outcome(e: plan.Eviction, result: str, reason: str | None = None) -> evict.EvictionOutcome:
    return evict.EvictionOutcome(
        pod=e.pod,
        uid="",
        node=e.node,
        expected_node=e.expected_node,
        workload=e.pod,
        result=result,  # type: ignore[arg-type]
        reason=reason or e.reason,
        at=NOW,
    )


def execution(
    *outcomes: evict.EvictionOutcome, stopped: str | None = None
) -> evict.ExecutionReport:
    done = evict.ExecutionReport(round_id="r", dry_run=False, stopped=stopped)
    done.outcomes.extend(outcomes)
    return done


def relief(name: str, verdict: str, role: str = "relieved") -> rounds.NodeRelief:
    return rounds.NodeRelief(
        node=name, before={}, expected={}, observed=None, role=role, verdict=verdict
    )


def test_stopped_early_is_partial_with_the_counts_and_the_nodes_left_hot() -> None:
    a1, a2, b1, c1 = (
        eviction("shop/a1", "hot-a"),
        eviction("shop/a2", "hot-a"),
        eviction("shop/b1", "hot-b"),
        eviction("shop/c1", "hot-c"),
    )
    stop = "breaker opened: replacement of shop/b1 is unschedulable (no node fits it)"
    done = execution(
        outcome(a1, "evicted"),
        outcome(a2, "evicted"),
        outcome(b1, "evicted"),
        outcome(c1, "skipped", f"round stopped: {stop}"),
        stopped=stop,
    )
    completion = _completion.round_completion(
        make_plan(a1, a2, b1, c1),
        done,
        [relief("hot-a", "relieved"), relief("hot-b", "unverified")],
        stopped=stop,
    )
    assert completion.partial
    assert completion.relieved == ("hot-a",)
    # hot-b got its one eviction but no evidence: unverified, not left hot.
    assert completion.left_hot == ("hot-c",)
    assert (completion.evictions_carried_out, completion.evictions_planned) == (3, 4)
    assert completion.results == {"evicted": 3, "skipped": 1}
    assert rounds.describe_completion(completion) == (
        f"1/3 hot nodes relieved, 3/4 evictions carried out (1 skipped); stopped: {stop}; "
        "left hot: hot-c"
    )
    [c] = [n for n in completion.nodes if n.node == "hot-c"]
    assert (c.planned, c.carried_out, c.why) == (1, 0, "0 of 1 planned evictions carried out")


def test_everything_carried_out_and_relieved_is_complete() -> None:
    a1, b1 = eviction("shop/a1", "hot-a"), eviction("shop/b1", "hot-b")
    completion = _completion.round_completion(
        make_plan(a1, b1),
        execution(outcome(a1, "evicted"), outcome(b1, "evicted")),
        [
            relief("hot-a", "relieved"),
            relief("hot-b", "relieved"),
            relief("cold-1", "turned hot", "landing"),
        ],
        stopped=None,
    )
    assert not completion.partial
    assert completion.relieved == ("hot-a", "hot-b")
    assert completion.left_hot == ()
    assert rounds.describe_completion(completion) == (
        "2/2 hot nodes relieved, 2/2 evictions carried out"
    )


@pytest.mark.parametrize("verdict", ["improved", "not improved"])
def test_all_carried_out_but_a_planned_node_still_hot_is_partial_naming_it(verdict: str) -> None:
    a1, b1 = eviction("shop/a1", "hot-a"), eviction("shop/b1", "hot-b")
    completion = _completion.round_completion(
        make_plan(a1, b1),
        execution(outcome(a1, "evicted"), outcome(b1, "evicted")),
        [relief("hot-a", "relieved"), relief("hot-b", verdict)],
        stopped=None,
    )
    assert completion.partial
    assert completion.stopped is None
    assert completion.left_hot == ("hot-b",)
    [b] = [n for n in completion.nodes if n.node == "hot-b"]
    assert b.why == f"{verdict}, still over its targets"
    assert rounds.describe_completion(completion) == (
        "1/2 hot nodes relieved, 2/2 evictions carried out; left hot: hot-b"
    )


def test_a_node_the_plan_said_stays_hot_is_judged_on_whether_it_improved() -> None:
    # A budget ran out: the plan itself leaves hot-a over its cpu target.
    a1 = eviction("shop/a1", "hot-a")
    budgeted = make_plan(a1, nodes=(node("hot-a", after_cpu=0.75),))
    done = execution(outcome(a1, "evicted"))
    improved = _completion.round_completion(
        budgeted, done, [relief("hot-a", "improved")], stopped=None
    )
    assert not improved.partial
    assert [n.result for n in improved.nodes] == ["improved-as-planned"]
    assert improved.nodes[0].expected_within_targets is False
    worse = _completion.round_completion(
        budgeted, done, [relief("hot-a", "not improved")], stopped=None
    )
    assert worse.left_hot == ("hot-a",)


def test_evidence_first_a_node_observed_relieved_counts_though_an_eviction_was_skipped() -> None:
    a1, a2 = eviction("shop/a1", "hot-a"), eviction("shop/a2", "hot-a")
    stop = "SIGTERM received"
    completion = _completion.round_completion(
        make_plan(a1, a2),
        execution(outcome(a1, "evicted"), outcome(a2, "skipped", stop), stopped=stop),
        [relief("hot-a", "relieved")],
        stopped=stop,
    )
    assert completion.relieved == ("hot-a",)
    assert completion.nodes[0].carried_out == 1
    # Still partial: the round did not get through its plan.
    assert completion.partial


def test_a_node_the_recheck_found_no_longer_hot_is_not_left_hot() -> None:
    a1, a2 = eviction("shop/a1", "hot-a"), eviction("shop/a2", "hot-a")
    b1 = eviction("shop/b1", "hot-b")
    completion = _completion.round_completion(
        make_plan(a1, a2, b1),
        execution(
            outcome(a1, "evicted"),
            outcome(a2, "skipped", "source-no-longer-hot"),
            outcome(b1, "skipped", "source-no-longer-hot"),
        ),
        [relief("hot-a", "unverified")],
        stopped=None,
    )
    assert not completion.partial
    assert {n.node: n.result for n in completion.nodes} == {
        "hot-a": "unverified",
        "hot-b": "no-longer-hot",
    }


def test_unverified_after_every_eviction_is_not_partial_short_of_them_is() -> None:
    a1, a2 = eviction("shop/a1", "hot-a"), eviction("shop/a2", "hot-a")
    plan_ = make_plan(a1, a2)
    checked = [relief("hot-a", "unverified")]
    done = _completion.round_completion(
        plan_, execution(outcome(a1, "evicted"), outcome(a2, "evicted")), checked, stopped=None
    )
    assert not done.partial
    assert done.nodes[0].result == "unverified"
    budget = outcome(a2, "skipped", "budget")
    short = _completion.round_completion(
        plan_, execution(outcome(a1, "evicted"), budget), checked, stopped=None
    )
    assert short.left_hot == ("hot-a",)
    assert short.nodes[0].why == "1 of 2 planned evictions carried out"


def test_evictions_refused_by_pdbs_leave_the_node_hot_without_a_stop() -> None:
    a1 = eviction("shop/a1", "hot-a")
    completion = _completion.round_completion(
        make_plan(a1),
        execution(outcome(a1, "refused-pdb", "pod-disruption-budget")),
        [],
        stopped=None,
    )
    assert completion.partial
    assert rounds.describe_completion(completion) == (
        "0/1 hot nodes relieved, 0/1 evictions carried out (1 refused by PDBs); left hot: hot-a"
    )


def test_other_rules_count_as_evictions_not_as_hot_nodes() -> None:
    duplicate = eviction("shop/d1", "normal-1", reason="RemoveDuplicates")
    from_hot = eviction("shop/d2", "hot-a", reason="RemoveDuplicates")
    completion = _completion.round_completion(
        make_plan(duplicate, from_hot, nodes=(node("normal-1", "normal"),)),
        execution(outcome(duplicate, "evicted"), outcome(from_hot, "evicted")),
        [],
        stopped=None,
    )
    # hot-a is one of the plan's hot nodes, with no hotspot eviction planned from it.
    [hot] = completion.nodes
    assert (hot.node, hot.planned, hot.carried_out) == ("hot-a", 0, 0)
    assert not completion.partial
    assert rounds.describe_completion(completion) == (
        "0/1 hot nodes relieved, 2/2 evictions carried out"
    )


def test_an_eviction_the_executor_never_reported_was_not_carried_out() -> None:
    a1, a2 = eviction("shop/a1", "hot-a"), eviction("shop/a2", "hot-a")
    completion = _completion.round_completion(
        make_plan(a1, a2), execution(outcome(a1, "evicted")), [], stopped=None
    )
    assert completion.left_hot == ("hot-a",)
    assert completion.evictions_carried_out == 1


def test_long_lists_of_nodes_end_in_and_n_more() -> None:
    evictions = [eviction(f"shop/p{i:02d}", f"hot-{i:02d}") for i in range(80)]
    stop = "breaker opened: replacement of shop/p01 landed on hot node hot-02"
    done = execution(
        *(outcome(e, "evicted") for e in evictions[:6]),
        *(outcome(e, "skipped", f"round stopped: {stop}") for e in evictions[6:]),
        stopped=stop,
    )
    completion = _completion.round_completion(
        make_plan(*evictions),
        done,
        [relief(f"hot-{i:02d}", "relieved") for i in range(6)],
        stopped=stop,
    )
    assert rounds.describe_completion(completion) == (
        f"6/80 hot nodes relieved, 6/80 evictions carried out (74 skipped); stopped: {stop}; "
        "left hot: hot-06, hot-07, hot-08, hot-09, hot-10 and 69 more"
    )
    body = rounds.completion_to_json(completion)
    assert body is not None
    assert body["result"] == "partial"
    assert body["hotNodes"]["planned"] == 80
    assert body["hotNodes"]["relieved"] == 6
    assert len(body["hotNodes"]["leftHot"]) == 74
    assert body["evictions"] == {
        "planned": 80,
        "carriedOut": 6,
        "byResult": {"evicted": 6, "skipped": 74},
    }
    assert body["stopped"] == stop
    assert body["nodes"][0] == {
        "node": "hot-00",
        "result": "relieved",
        "plannedEvictions": 1,
        "carriedOut": 1,
        "expectedWithinTargets": True,
        "relief": "relieved",
        # No replacement was seen bound: not carried out by the executor's account.
        "carriedOutAt": None,
    }
    assert body["nodes"][6]["why"] == "0 of 1 planned evictions carried out"


def test_every_hot_node_of_the_plan_counts_and_one_the_plan_left_hot_is_left_hot() -> None:
    """Six hot nodes, a budget that let the plan reach five: the sixth is still hot
    after the round. It is left hot (the plan's note says why), and the counts are
    of six hot nodes; the round did what it planned, so it is not partial."""
    evictions = [eviction(f"shop/p{i}", f"hot-{i}") for i in range(5)]
    budget = "still hot: budget maxNoOfPodsToEvictTotal reached"
    untouched = plan.NodeReport(
        name="hot-5",
        node_class="hot",
        pool="default",
        before={"cpu": 0.9, "memory": 0.89},
        after={"cpu": 0.9, "memory": 0.89},
        note=budget,
        high=TARGETS,
    )
    completion = _completion.round_completion(
        make_plan(*evictions, nodes=(untouched,)),
        execution(*(outcome(e, "evicted") for e in evictions)),
        [relief(f"hot-{i}", "relieved") for i in range(4)] + [relief("hot-4", "unverified")],
        stopped=None,
    )
    assert len(completion.nodes) == 6
    assert completion.left_hot == ("hot-5",)
    assert completion.fell_short == ()
    assert not completion.partial
    [left] = [n for n in completion.nodes if n.node == "hot-5"]
    assert (left.result, left.planned, left.why) == ("hot-as-planned", 0, budget)
    assert rounds.describe_completion(completion) == (
        "4/6 hot nodes relieved, 5/5 evictions carried out; left hot: hot-5"
    )
    body = rounds.completion_to_json(completion)
    assert body is not None
    assert body["hotNodes"] == {
        "planned": 6,
        "relieved": 4,
        "leftHot": ["hot-5"],
        "fellShort": [],
    }


def test_a_node_improved_as_planned_is_still_left_hot() -> None:
    a1 = eviction("shop/a1", "hot-a")
    budgeted = make_plan(a1, nodes=(node("hot-a", after_cpu=0.75),))
    completion = _completion.round_completion(
        budgeted, execution(outcome(a1, "evicted")), [relief("hot-a", "improved")], stopped=None
    )
    assert completion.left_hot == ("hot-a",)
    assert not completion.partial
    assert rounds.describe_completion(completion) == (
        "0/1 hot nodes relieved, 1/1 evictions carried out; left hot: hot-a"
    )


def test_a_node_the_plan_leaves_hot_without_a_sample_is_left_hot_as_planned() -> None:
    a1 = eviction("shop/a1", "hot-a")
    budgeted = make_plan(a1, nodes=(node("hot-a", after_cpu=0.75),))
    completion = _completion.round_completion(
        budgeted, execution(outcome(a1, "evicted")), [relief("hot-a", "unverified")], stopped=None
    )
    [a] = completion.nodes
    assert a.result == "hot-as-planned"
    assert a.why == "the plan leaves it over its targets after 1 evictions"
    assert completion.left_hot == ("hot-a",)
    assert not completion.partial


def test_a_node_has_the_time_its_evictions_were_all_carried_out_and_no_other() -> None:
    a1, a2, b1, b2, c1, d1 = (
        eviction("shop/a1", "hot-a"),
        eviction("shop/a2", "hot-a"),
        eviction("shop/b1", "hot-b"),
        eviction("shop/b2", "hot-b"),
        eviction("shop/c1", "hot-c"),
        eviction("shop/d1", "hot-d"),
    )
    stop = "lost-leadership"
    at = {name: NOW + datetime.timedelta(seconds=s) for name, s in (("a", 10), ("b", 25))}
    done = execution(
        outcome(a1, "evicted"),
        outcome(a2, "evicted"),
        outcome(b1, "evicted"),
        # The moves so far relieved hot-b: its last eviction had nothing left to do.
        dataclasses.replace(
            outcome(b2, "skipped", plan.SOURCE_NOT_HOT), at=NOW + datetime.timedelta(seconds=30)
        ),
        outcome(c1, "evicted"),
        outcome(d1, "skipped", f"round stopped: {stop}"),
        stopped=stop,
    )
    done.bound_at.update(
        {
            "shop/a1": NOW + datetime.timedelta(seconds=4),
            "shop/a2": at["a"],
            "shop/b1": at["b"],
            # shop/c1's replacement was never seen bound.
        }
    )
    completion = _completion.round_completion(
        make_plan(a1, a2, b1, b2, c1, d1),
        done,
        [relief("hot-a", "relieved"), relief("hot-b", "not improved")],
        stopped=stop,
    )
    times = {n.node: n.carried_out_at for n in completion.nodes}
    assert times == {
        "hot-a": at["a"],
        "hot-b": NOW + datetime.timedelta(seconds=30),
        "hot-c": None,
        "hot-d": None,
    }
    body = rounds.completion_to_json(completion)
    assert body is not None
    by_node = {n["node"]: n for n in body["nodes"]}
    assert by_node["hot-a"]["carriedOutAt"] == "2026-11-30T08:00:10Z"
    assert by_node["hot-a"]["relief"] == "relieved"
    # Carried out, and then found not improved by the relief check: both are said.
    assert by_node["hot-b"]["carriedOutAt"] == "2026-11-30T08:00:30Z"
    assert by_node["hot-b"]["relief"] == "not improved"
    assert by_node["hot-c"]["carriedOutAt"] is None
    assert by_node["hot-d"]["carriedOutAt"] is None
