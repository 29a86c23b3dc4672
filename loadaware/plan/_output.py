"""The Plan as the `-o json` document of DESIGN.md."""

from __future__ import annotations

import datetime
from typing import Any

from loadaware import metrics, policy
from loadaware.plan._types import ConsolidationReport, Plan


def plan_to_json(plan: Plan) -> dict[str, Any]:
    return {
        "status": plan.status,
        "reason": plan.reason,
        "evictions": [
            {
                "pod": e.pod,
                "node": e.node,
                "expectedNode": e.expected_node,
                "cpu": round(e.cpu_cores, 6),
                "memory": round(e.memory_bytes),
                "reason": e.reason,
                "workload": e.workload,
                "steer": list(e.steer),
                "landingSet": list(e.landing_set),
                **({"named": dict(e.named)} if e.named else {}),
            }
            for e in plan.evictions
        ],
        "nodes": [
            {
                "name": n.name,
                "class": n.node_class,
                "pool": n.pool,
                "before": dict(n.before),
                "after": dict(n.after),
                **({"note": n.note} if n.note else {}),
                **({"thresholds": dict(n.low)} if n.low else {}),
                **({"targetThresholds": dict(n.high)} if n.high else {}),
            }
            for n in plan.nodes
        ],
        "solver": {
            "method": plan.solver.method,
            "seconds": round(plan.solver.seconds, 4),
            "objective": plan.solver.objective,
            "lowerBound": plan.solver.lower_bound,
        },
        "skipped": dict(plan.skipped),
        # Additive to DESIGN.md's contract: what each profile's rules did.
        "profiles": {
            profile: {
                rule: {
                    "planned": count.planned,
                    "skipped": count.skipped,
                    **({"skippedReasons": dict(count.skipped_reasons)} if count.skipped else {}),
                }
                for rule, count in rules.items()
            }
            for profile, rules in plan.profiles.items()
        },
        **({"consolidation": _consolidation(plan.consolidation)} if plan.consolidation else {}),
        **(
            {"steeringWouldRelieve": plan.steering_would_relieve}
            if plan.steering_would_relieve is not None
            else {}
        ),
        **({"forecast": forecast_to_json(plan.forecast)} if plan.forecast else {}),
    }


def forecast_to_json(info: metrics.ForecastInfo) -> dict[str, Any]:
    """The forecast a plan was made on: its window, and what had none, with why."""
    return {
        "at": info.at.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z"),
        "horizon": policy.format_duration(info.horizon),
        "weeks": info.weeks,
        "minWeeks": info.min_weeks,
        "quantile": info.quantile,
        "nodes": info.nodes,
        "workloads": info.workloads,
        "uncoveredNodes": dict(sorted(info.uncovered_nodes.items())),
        "uncoveredWorkloads": dict(sorted(info.uncovered_workloads.items())),
    }


def _consolidation(report: ConsolidationReport) -> dict[str, Any]:
    return {
        "nodes": list(report.nodes),
        "evictions": report.evictions,
        "nodeHoursSavedPerDay": report.node_hours_saved_per_day,
        "candidates": report.candidates,
        **({"note": report.note} if report.note else {}),
    }
