"""The audit record of a round: one JSON document saying what was read, what was
planned, what was done, what happened after, and which budgets were used.
Never a secret: it holds names, numbers and reasons only."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from loadaware import evict, plan


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeRelief:
    node: str
    before: Mapping[str, float]
    expected: Mapping[str, float]
    observed: Mapping[str, float] | None  # None: no fresh sample after the evictions yet


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
    relief_verdict: str = ""
    budgets: dict[str, Any] = field(default_factory=dict)
    # Steering taints a killed round had left, removed before this one planned.
    leftover_taints_removed: list[str] = field(default_factory=list)
    status: str = "running"  # planned, noop, refused, executed, aborted
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
            "relief": [
                {
                    "node": r.node,
                    "before": dict(r.before),
                    "expected": dict(r.expected),
                    "observed": dict(r.observed) if r.observed is not None else None,
                }
                for r in record.relief
            ],
            "verdict": record.relief_verdict,
            "breaker": execution.breaker if execution else None,
            "stopped": execution.stopped if execution else None,
            "landingsOffPlan": sum(
                1
                for r in (execution.replacements if execution else [])
                if r.landing in ("cool", "excluded", "hot", "source")
            ),
            "taintsApplied": execution.tainted if execution else [],
            "taintsRemoved": execution.untainted if execution else [],
            "taintsLeft": execution.taints_left if execution else [],
            "leftoverTaintsRemoved": record.leftover_taints_removed,
            "cordoned": execution.cordoned if execution else [],
        },
        "budgets": record.budgets,
    }
