"""What a round produced, as its audit record holds it: what was read, planned
and done, what the relief check found of each node it changed, and the round's
verdict. report renders it (tables, the HTML page, the audit JSON); the triggers
read it. Never a secret: it holds names, numbers and reasons only."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from loadaware import evict, plan
from loadaware.round import _completion
from loadaware.round._relief import NodeRelief


@dataclass(kw_only=True)
class RoundRecord:
    round_id: str
    trigger: str
    started_at: datetime.datetime
    dry_run: bool
    policy_hash: str
    finished_at: datetime.datetime | None = None
    inputs: dict[str, Any] = field(default_factory=dict)
    plan: plan.Plan | None = None
    execution: evict.ExecutionReport | None = None
    relief: list[NodeRelief] = field(default_factory=list)
    # The relief check's verdict on the nodes it judged (see round_verdict for the round's).
    relief_verdict: str = ""
    # How the relief check waited: timeoutSeconds, pollSeconds, waitedSeconds, reads.
    relief_wait: dict[str, Any] = field(default_factory=dict)
    budgets: dict[str, Any] = field(default_factory=dict)
    # Steering taints a killed round had left, removed before this one planned.
    leftover_taints_removed: list[str] = field(default_factory=list)
    # What a live round did of what it planned; None: nothing was executed, or a dry run.
    completion: _completion.RoundCompletion | None = None
    # The recent agreement of the model with the cluster's scheduler the round was
    # guarded by (see _model_guard); None: nothing measured it.
    model_agreement: dict[str, Any] | None = None
    # planned, noop, refused, executed, partial (stopped early or left hot nodes), aborted
    status: str = "running"
    reason: str = ""
    exit_code: int = 0


def _time(value: datetime.datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")


# Relief check verdicts a partial round's verdict need not repeat.
_NOTHING_TO_ADD = frozenset({"", "relieved", "no hotspot to verify"})


def round_verdict(record: RoundRecord) -> str:
    """The round's verdict: the relief check's, unless the round was partial,
    which no relief of the nodes it did reach makes it otherwise. The relief
    check judges only the nodes pods moved off or landed on: a hot node still
    over its targets is named whether it judged it or not."""
    completion = record.completion
    check = record.relief_verdict
    if completion is None:
        return check
    if completion.partial:
        return f"partial: {_completion.describe_completion(completion)}" + (
            f"; relief check: {check}" if check not in _NOTHING_TO_ADD else ""
        )
    if completion.left_hot:
        return f"left hot: {_completion.name_nodes(completion.left_hot)}" + (
            f"; relief check: {check}" if check not in _NOTHING_TO_ADD else ""
        )
    return check


def relief_rows(record: RoundRecord) -> list[NodeRelief]:
    """The relief check's rows, then a `left hot` row for each hot node still over
    its targets that it did not judge (no pod was moved off it: a budget, skipped
    evictions). Its figures are the plan's: before, and expected after."""
    judged = {r.node for r in record.relief if r.role == "relieved"}
    completion, planned = record.completion, record.plan
    if completion is None:
        return list(record.relief)
    reports = {n.name: n for n in planned.nodes} if planned is not None else {}
    left = [
        NodeRelief(
            node=n.node,
            before=reports[n.node].before if n.node in reports else {},
            expected=reports[n.node].after if n.node in reports else {},
            observed=None,
            verdict="left hot",
            why=n.why or f"{n.carried_out} of {n.planned} planned evictions carried out",
            targets=reports[n.node].high if n.node in reports else {},
        )
        for n in completion.nodes
        if n.result in _completion.STILL_HOT and n.node not in judged
    ]
    return sorted([*record.relief, *left], key=lambda r: (r.role != "relieved", r.node))


def relief_to_json(relief: NodeRelief) -> dict[str, Any]:
    return {
        "node": relief.node,
        "verdict": relief.verdict,
        **({"why": relief.why} if relief.why else {}),
        "before": dict(relief.before),
        "expected": dict(relief.expected),
        "observed": dict(relief.observed) if relief.observed is not None else None,
        "targets": dict(relief.targets),
        "changedBy": _time(relief.changed_by),
        "sampleTime": _time(relief.sample_time),
        "coversFrom": _time(relief.covers_from),
    }


# Where a verified replacement landed, folded into whether the plan held: planned
# (in its landing set), off-set (a good landing outside it), bad (its source, a hot or
# excluded node, or a node it takes over its targets), pending (not scheduled, not found).
LANDING_WHERE: Mapping[str, str] = {
    "expected": "planned",
    "in-set": "planned",
    "off-set": "off-set",
    "cool": "off-set",
    "excluded": "bad",
    "hot": "bad",
    "source": "bad",
    "over-targets": "bad",
    "pending": "pending",
    "not-found": "pending",
}
LANDINGS_WHERE: tuple[str, ...] = ("planned", "off-set", "bad", "pending")
