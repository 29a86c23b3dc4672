"""The audit record of a round: one JSON document saying what was read, what was
planned, what was done, what happened after, and which budgets were used.
Never a secret: it holds names, numbers and reasons only."""

from __future__ import annotations

import datetime
from typing import Any

from loadaware import evict, plan
from loadaware import round as rounds


def _time(value: datetime.datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")


def round_to_json(record: rounds.RoundRecord) -> dict[str, Any]:
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
        "modelAgreement": record.model_agreement,
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
            "relief": [
                rounds.relief_to_json(r) for r in rounds.relief_rows(record) if r.role == "relieved"
            ],
            "landingNodes": [
                rounds.relief_to_json(r) for r in record.relief if r.role == "landing"
            ],
            "leftHot": list(record.completion.left_hot) if record.completion else [],
            "evidence": record.relief_wait,
            "modelError": model_error(record.relief),
            "verdict": rounds.round_verdict(record),
            "breaker": execution.breaker if execution else None,
            "stopped": execution.stop_reason if execution else None,
            "landings": _landings(execution),
            "landingsOffPlan": sum(
                1
                for r in (execution.replacements if execution else [])
                if rounds.LANDING_WHERE.get(r.landing) in ("off-set", "bad")
            ),
            "taintsApplied": execution.tainted if execution else [],
            "taintsRemoved": execution.untainted if execution else [],
            "taintsLeft": execution.taints_left if execution else [],
            # Nodes carrying the steering taint as each eviction was sent.
            "taintedNodes": {
                "max": execution.tainted_most if execution else 0,
                "median": execution.tainted_median if execution else 0.0,
            },
            "leftoverTaintsRemoved": record.leftover_taints_removed,
            "cordoned": execution.cordoned if execution else [],
        },
        "budgets": record.budgets,
        "completion": rounds.completion_to_json(record.completion),
    }


def model_error(relief: list[rounds.NodeRelief]) -> dict[str, dict[str, float]]:
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


def _landings(execution: evict.ExecutionReport | None) -> dict[str, int]:
    counts = dict.fromkeys(rounds.LANDINGS_WHERE, 0)
    for replacement in execution.replacements if execution else []:
        counts[rounds.LANDING_WHERE.get(replacement.landing, "pending")] += 1
    return counts
