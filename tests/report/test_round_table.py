"""The round as text (`run --once -o table`, report.render_round_table) and the
round's verdict in the audit record (round.round_verdict).

Covered: a partial round states it on its status line, then the hot nodes
relieved and the evictions carried out of those planned, the stop, and the
relief check's own verdict, with the plan's table and the judged nodes after;
a complete round says executed with the same counts; a round without a
completion (refused, dry run) keeps its reason on the status line; the audit
record's verification.verdict is "partial: ..." only for a partial round; a
hot node the round left over its targets, judged or not (a budget left it no
eviction), is counted among the plan's hot nodes and named left hot on the
status lines, in the relief table under its header and in the audit record's
verification, without making the round partial; a hot node whose planned
evictions were all carried out has, in the relief table, when (seconds after
the round started), and the table has no such column when none was.
"""

from __future__ import annotations

import dataclasses
import datetime

from loadaware import evict, plan, report
from loadaware import round as rounds

NOW = datetime.datetime(2026, 11, 30, 8, 0, tzinfo=datetime.UTC)
STOP = "breaker opened: replacement of shop/a2 is unschedulable (no node fits it)"


def _record(completion: rounds.RoundCompletion | None, **fields: object) -> rounds.RoundRecord:
    nodes = (
        plan.NodeReport(
            name="hot-a",
            node_class="hot",
            pool="default",
            before={"cpu": 0.9, "memory": 0.5},
            after={"cpu": 0.6, "memory": 0.5},
            high={"cpu": 0.7, "memory": 0.8},
        ),
    )
    record = rounds.RoundRecord(
        round_id="r1",
        trigger="once",
        started_at=NOW,
        dry_run=False,
        policy_hash="h",
        plan=plan.Plan(status="planned", reason="1 hot node; 2 evictions planned", nodes=nodes),
        execution=evict.ExecutionReport(round_id="r1", dry_run=False),
        relief=[
            rounds.NodeRelief(
                node="hot-a",
                before={"cpu": 0.9, "memory": 0.5},
                expected={"cpu": 0.75, "memory": 0.5},
                observed={"cpu": 0.74, "memory": 0.5},
                verdict="improved",
                targets={"cpu": 0.7, "memory": 0.8},
            )
        ],
        relief_verdict="improved: still over its targets: hot-a",
        completion=completion,
    )
    for name, value in fields.items():
        setattr(record, name, value)
    return record


def _completion(*, stopped: str | None, result: rounds.NodeResult) -> rounds.RoundCompletion:
    return rounds.RoundCompletion(
        evictions_planned=2,
        evictions_carried_out=1 if stopped else 2,
        results={"evicted": 1, "skipped": 1} if stopped else {"evicted": 2},
        stopped=stopped,
        nodes=(
            rounds.NodeCompletion(
                node="hot-a",
                planned=2,
                carried_out=1 if stopped else 2,
                expected_within_targets=True,
                relief="improved",
                result=result,
            ),
        ),
    )


def test_a_partial_round_says_so_with_the_counts() -> None:
    completion = _completion(stopped=STOP, result="left-hot")
    record = _record(
        completion,
        status="partial",
        reason=rounds.describe_completion(completion),
        exit_code=1,
    )
    text = report.render_round_table(record)
    head = text.split("\n\n", 1)[0].splitlines()
    assert head == [
        "round r1 (once)",
        "status: partial",
        "hot nodes relieved: 0/1 (left hot: hot-a)",
        "evictions carried out: 1/2 (evicted 1, skipped 1)",
        f"stopped: {STOP}",
        "relief check: improved: still over its targets: hot-a",
    ]
    assert "PLAN\nstatus: planned — 1 hot node; 2 evictions planned" in text
    relief = text.split("\nRELIEF ", 1)[1].splitlines()[1:]
    assert relief == [
        "NODE   ROLE  VERDICT   CPU before → after (target)  MEMORY before → after (target)",
        "hot-a  hot   improved  90% → 74% (70%)              50% → 50% (80%)",
    ]
    verdict = report.round_to_json(record)["verification"]["verdict"]
    assert verdict == (
        f"partial: 0/1 hot nodes relieved, 1/2 evictions carried out (1 skipped); "
        f"stopped: {STOP}; left hot: hot-a; relief check: improved: still over its targets: hot-a"
    )


def test_a_complete_round_says_executed_with_the_same_counts() -> None:
    completion = _completion(stopped=None, result="relieved")
    record = _record(completion, status="executed", reason="2 evicted", relief_verdict="relieved")
    text = report.render_round_table(record)
    assert text.startswith(
        "round r1 (once)\nstatus: executed\nhot nodes relieved: 1/1\n"
        "evictions carried out: 2/2 (evicted 2)\nrelief check: relieved\n"
    )
    assert report.round_to_json(record)["verification"]["verdict"] == "relieved"
    assert report.round_to_json(record)["completion"]["result"] == "complete"


def test_a_round_without_a_completion_keeps_its_reason() -> None:
    record = rounds.RoundRecord(
        round_id="r2",
        trigger="schedule",
        started_at=NOW,
        dry_run=True,
        policy_hash="h",
        status="refused",
        reason="stale-metrics: node-a sample is 900s old (max 120s)",
    )
    text = report.render_round_table(record)
    assert text == (
        "round r2 (schedule, dry run)\n"
        "status: refused — stale-metrics: node-a sample is 900s old (max 120s)\n"
    )
    assert report.round_to_json(record)["completion"] is None


def test_a_hot_node_the_budget_left_without_an_eviction_is_left_hot_everywhere() -> None:
    budget = "still hot: budget maxNoOfPodsToEvictTotal reached"
    untouched = plan.NodeReport(
        name="hot-b",
        node_class="hot",
        pool="default",
        before={"cpu": 0.58, "memory": 0.89},
        after={"cpu": 0.58, "memory": 0.89},
        note=budget,
        high={"cpu": 0.7, "memory": 0.8},
    )
    completion = rounds.RoundCompletion(
        evictions_planned=2,
        evictions_carried_out=2,
        results={"evicted": 2},
        nodes=(
            rounds.NodeCompletion(
                node="hot-a",
                planned=2,
                carried_out=2,
                expected_within_targets=False,
                relief="improved",
                result="improved-as-planned",
            ),
            rounds.NodeCompletion(
                node="hot-b",
                planned=0,
                carried_out=0,
                expected_within_targets=False,
                relief=None,
                result="hot-as-planned",
                why=budget,
            ),
        ),
    )
    record = _record(completion, status="executed", reason="2 evicted")
    assert record.plan is not None
    record.plan = plan.Plan(
        status="planned", reason="2 hot nodes", nodes=(*record.plan.nodes, untouched)
    )
    assert not completion.partial
    text = report.render_round_table(record)
    assert text.startswith(
        "round r1 (once)\nstatus: executed\nhot nodes relieved: 0/2 (left hot: hot-a, hot-b)\n"
    )
    relief = text.split("\nRELIEF ", 1)[1].splitlines()[1:]
    assert relief == [
        "NODE   ROLE  VERDICT   CPU before → after (target)  MEMORY before → after (target)  WHY",
        "hot-a  hot   improved  90% → 74% (70%)              50% → 50% (80%)",
        "hot-b  hot   left hot  58% → – (70%)                89% → – (80%)                   "
        + budget,
    ]
    verification = report.round_to_json(record)["verification"]
    assert verification["leftHot"] == ["hot-a", "hot-b"]
    assert [(r["node"], r["verdict"]) for r in verification["relief"]] == [
        ("hot-a", "improved"),
        ("hot-b", "left hot"),
    ]
    left = verification["relief"][1]
    assert (left["observed"], left["why"]) == (None, budget)
    assert left["before"] == {"cpu": 0.58, "memory": 0.89}
    assert verification["verdict"] == (
        "left hot: hot-a, hot-b; relief check: improved: still over its targets: hot-a"
    )
    body = report.round_to_json(record)["completion"]
    assert body["result"] == "complete"
    assert body["hotNodes"]["leftHot"] == ["hot-a", "hot-b"]
    assert body["summary"] == (
        "0/2 hot nodes relieved, 2/2 evictions carried out; left hot: hot-a, hot-b"
    )


def test_a_round_that_relieved_what_it_judged_still_names_the_node_left_hot() -> None:
    completion = rounds.RoundCompletion(
        evictions_planned=1,
        evictions_carried_out=1,
        results={"evicted": 1},
        nodes=(
            rounds.NodeCompletion(
                node="hot-a",
                planned=1,
                carried_out=1,
                expected_within_targets=True,
                relief="relieved",
                result="relieved",
            ),
            rounds.NodeCompletion(
                node="hot-b",
                planned=0,
                carried_out=0,
                expected_within_targets=False,
                relief=None,
                result="hot-as-planned",
                why="no evictions planned from it",
            ),
        ),
    )
    record = _record(completion, status="executed", reason="1 evicted", relief_verdict="relieved")
    assert report.round_to_json(record)["verification"]["verdict"] == "left hot: hot-b"


def test_a_node_whose_evictions_were_all_skipped_for_budget_gets_a_left_hot_row() -> None:
    """The executor skipped both of hot-a's evictions (a window budget ran out): no
    pod left it, the relief check had nothing to judge, and the round is partial."""
    completion = rounds.RoundCompletion(
        evictions_planned=2,
        evictions_carried_out=0,
        results={"skipped": 2},
        nodes=(
            rounds.NodeCompletion(
                node="hot-a",
                planned=2,
                carried_out=0,
                expected_within_targets=True,
                relief=None,
                result="left-hot",
                why="0 of 2 planned evictions carried out",
            ),
        ),
    )
    record = _record(
        completion,
        status="partial",
        reason=rounds.describe_completion(completion),
        relief=[],
        relief_verdict="",
    )
    text = report.render_round_table(record)
    assert "hot nodes relieved: 0/1 (left hot: hot-a)\n" in text
    relief = text.split("\nRELIEF ", 1)[1].splitlines()[1:]
    assert relief[0].split()[:3] == ["NODE", "ROLE", "VERDICT"]
    assert relief[1].startswith("hot-a  hot   left hot  90% → – (70%)")
    assert relief[1].endswith("0 of 2 planned evictions carried out")
    verification = report.round_to_json(record)["verification"]
    assert [(r["node"], r["verdict"]) for r in verification["relief"]] == [("hot-a", "left hot")]
    assert verification["verdict"] == (
        "partial: 0/1 hot nodes relieved, 0/2 evictions carried out (2 skipped); left hot: hot-a"
    )


def test_the_relief_table_says_when_a_hot_node_s_moves_were_all_carried_out() -> None:
    completion = _completion(stopped=None, result="relieved")
    [node] = completion.nodes
    timed = dataclasses.replace(
        completion,
        nodes=(dataclasses.replace(node, carried_out_at=NOW + datetime.timedelta(seconds=42)),),
    )
    record = _record(timed, status="executed", reason="2 evicted", relief_verdict="relieved")
    relief = report.render_round_table(record).split("\nRELIEF ", 1)[1].splitlines()[1:]
    assert relief == [
        "NODE   ROLE  VERDICT   MOVES DONE  CPU before → after (target)  "
        "MEMORY before → after (target)",
        "hot-a  hot   improved  +42s        90% → 74% (70%)              50% → 50% (80%)",
    ]
    body = report.round_to_json(record)["completion"]
    assert body["nodes"][0]["carriedOutAt"] == "2026-11-30T08:00:42Z"
