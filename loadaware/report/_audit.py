"""The audit record of a round: one JSON document saying what was read, what was
planned, what was done, what happened after, and which budgets were used.
Never a secret: it holds names, numbers and reasons only."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from loadaware import evict, plan
from loadaware.report import _completion


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeRelief:
    """One node the round changed, judged on a sample taken after the change.

    role "relieved": a hot node pods were moved off; verdict relieved (at or
    under its targets), improved (lower than before, still over), not improved,
    or unverified; or a hot node no pod was moved off, still over its targets
    after the round: left hot, not judged on a sample (see relief_rows). role
    "landing": a node replacements landed on; verdict within targets, turned
    hot, or unverified. `why` says why unverified or left hot."""

    node: str
    before: Mapping[str, float]
    expected: Mapping[str, float]
    observed: Mapping[str, float] | None  # None: no sample covering only time after the change
    role: str = "relieved"
    verdict: str = "unverified"
    why: str = ""
    targets: Mapping[str, float] = field(default_factory=dict)
    # The sample must cover only time after this: the evicted pods stopped, the
    # replacements Ready.
    changed_by: datetime.datetime | None = None
    sample_time: datetime.datetime | None = None
    covers_from: datetime.datetime | None = None

    def error(self) -> dict[str, float]:
        """|observed - expected| per resource (utilisation ratio), where observed."""
        if self.observed is None:
            return {}
        return {
            r: round(abs(self.observed[r] - self.expected[r]), 4)
            for r in self.observed
            if r in self.expected
        }


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
    # planned, noop, refused, executed, partial (stopped early or left hot nodes), aborted
    status: str = "running"
    reason: str = ""
    exit_code: int = 0


def _time(value: datetime.datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")


def round_to_json(record: RoundRecord) -> dict[str, Any]:
    execution = record.execution
    return {
        "round": record.round_id,
        "trigger": record.trigger,
        "startedAt": _time(record.started_at),
        "finishedAt": _time(record.finished_at),
        "dryRun": record.dry_run,
        "policyHash": record.policy_hash,
        "status": record.status,
        "reason": record.reason,
        "exitCode": record.exit_code,
        "inputs": record.inputs,
        "plan": plan.plan_to_json(record.plan) if record.plan is not None else None,
        "evictions": [
            {
                "pod": o.pod,
                "node": o.node,
                "expectedNode": o.expected_node,
                "workload": o.workload,
                "result": o.result,
                "reason": o.reason,
                "budget": o.budget or None,
                "steer": list(o.steer),
                "landingSet": list(o.landing_set),
                "at": _time(o.at),
            }
            for o in (execution.outcomes if execution else [])
        ],
        "verification": {
            "replacements": [
                {
                    "pod": r.pod,
                    "replacement": r.replacement,
                    "node": r.node,
                    "ready": r.ready,
                    "secondsToReady": r.seconds_to_ready,
                    "landing": r.landing,
                }
                for r in (execution.replacements if execution else [])
            ],
            "relief": [relief_to_json(r) for r in relief_rows(record) if r.role == "relieved"],
            "landingNodes": [relief_to_json(r) for r in record.relief if r.role == "landing"],
            "leftHot": list(record.completion.left_hot) if record.completion else [],
            "evidence": record.relief_wait,
            "modelError": model_error(record.relief),
            "verdict": round_verdict(record),
            "breaker": execution.breaker if execution else None,
            "stopped": execution.stop_reason if execution else None,
            "landings": _landings(execution),
            "landingsOffPlan": sum(
                1
                for r in (execution.replacements if execution else [])
                if LANDING_WHERE.get(r.landing) in ("off-set", "bad")
            ),
            "taintsApplied": execution.tainted if execution else [],
            "taintsRemoved": execution.untainted if execution else [],
            "taintsLeft": execution.taints_left if execution else [],
            "leftoverTaintsRemoved": record.leftover_taints_removed,
            "cordoned": execution.cordoned if execution else [],
        },
        "budgets": record.budgets,
        "completion": _completion.completion_to_json(record.completion),
    }


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


def model_error(relief: list[NodeRelief]) -> dict[str, dict[str, float]]:
    """The mean absolute error of expected against observed utilisation, per role
    and resource, over the nodes with an observation."""
    errors: dict[str, dict[str, list[float]]] = {}
    for row in relief:
        for resource, value in row.error().items():
            errors.setdefault(row.role, {}).setdefault(resource, []).append(value)
    return {
        role: {r: round(sum(v) / len(v), 4) for r, v in by_resource.items()}
        for role, by_resource in errors.items()
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


def _landings(execution: evict.ExecutionReport | None) -> dict[str, int]:
    counts = dict.fromkeys(LANDINGS_WHERE, 0)
    for replacement in execution.replacements if execution else []:
        counts[LANDING_WHERE.get(replacement.landing, "pending")] += 1
    return counts
