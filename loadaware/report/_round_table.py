"""A live round as text a person reads (`run --once -o table`): what it came to
first, with the counts, then the plan's table and how each judged node fared."""

from __future__ import annotations

from collections.abc import Mapping

from loadaware.report import _completion
from loadaware.report._audit import NodeRelief, RoundRecord
from loadaware.report._table import render_plan_table


def _percent(ratio: float | None) -> str:
    return "–" if ratio is None else f"{ratio * 100:.0f}%"


def _resources(relief: NodeRelief) -> str:
    observed: Mapping[str, float] = relief.observed or {}
    return "  ".join(
        f"{r} {_percent(relief.before.get(r))} → {_percent(observed.get(r))} "
        f"(target {_percent(limit)})"
        for r, limit in relief.targets.items()
    )


def render_round_table(record: RoundRecord) -> str:
    lines = [f"round {record.round_id} ({record.trigger}{', dry run' if record.dry_run else ''})"]
    completion = record.completion
    if completion is None:
        lines.append(f"status: {record.status} — {record.reason}")
        if record.relief_verdict:
            lines.append(f"verdict: {record.relief_verdict}")
    else:
        # The counts say what the reason would, line by line.
        lines.append(f"status: {record.status}")
        if completion.nodes:
            lines.append(
                f"hot nodes relieved: {len(completion.relieved)}/{len(completion.nodes)}"
                + (
                    f" (left hot: {_completion.name_nodes(completion.left_hot)})"
                    if completion.left_hot
                    else ""
                )
            )
        results = ", ".join(f"{r} {n}" for r, n in sorted(completion.results.items()))
        lines.append(
            f"evictions carried out: {completion.evictions_carried_out}/"
            f"{completion.evictions_planned}" + (f" ({results})" if results else "")
        )
        if completion.stopped is not None:
            lines.append(f"stopped: {completion.stopped}")
        if record.relief_verdict:
            lines.append(f"relief check: {record.relief_verdict}")
    text = "\n".join(lines) + "\n"
    if record.plan is not None:
        text += "\nPLAN\n" + render_plan_table(record.plan)
    if record.relief:
        rows = sorted(record.relief, key=lambda r: (r.role != "relieved", r.node))
        width = max(len(r.node) for r in rows)
        text += "\nRELIEF (before → observed after the moves)\n"
        text += "".join(
            f"  {r.node:<{width}}  {r.role:<8}  {r.verdict:<14}  {_resources(r)}"
            + (f"  ({r.why})" if r.why else "")
            + "\n"
            for r in rows
        )
    return text
