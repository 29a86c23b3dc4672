"""A live round as text a person reads (`run --once -o table`): what it came to
first, with the counts, then the plan's table and how each judged node fared,
and each hot node left hot."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from loadaware import round as rounds
from loadaware.report._table import render_plan_table

_RESOURCES = ("cpu", "memory")  # first, in this order; others (pods) after
# A judged node's role as the table names it: a hot node the round set out to
# relieve, or a node replacements landed on.
_ROLES = {"relieved": "hot", "landing": "landing"}


def _percent(ratio: float | None) -> str:
    return "–" if ratio is None else f"{ratio * 100:.0f}%"


def _cell(relief: rounds.NodeRelief, resource: str) -> str:
    if resource not in relief.targets and resource not in relief.before:
        return ""
    observed = (relief.observed or {}).get(resource)
    target = relief.targets.get(resource)
    return f"{_percent(relief.before.get(resource))} → {_percent(observed)}" + (
        f" ({_percent(target)})" if target is not None else ""
    )


def _carried_out(record: rounds.RoundRecord) -> dict[str, str]:
    """Hot node -> when its planned evictions were all carried out, in seconds after
    the round started ("+42s"); absent where they were not."""
    if record.completion is None:
        return {}
    return {
        n.node: f"+{(n.carried_out_at - record.started_at).total_seconds():.0f}s"
        for n in record.completion.nodes
        if n.carried_out_at is not None
    }


def _relief_table(rows: Sequence[rounds.NodeRelief], carried_out: Mapping[str, str]) -> str:
    """One row per node under a header: role, verdict, when a hot node's moves were
    all carried out (where any node's were), each resource before → observed
    (target), and why, where there is a why."""
    named = {r for row in rows for r in (*row.targets, *row.before)}
    resources = [r for r in _RESOURCES if r in named] + sorted(named - set(_RESOURCES))
    timed = bool(carried_out)
    header = [
        "NODE",
        "ROLE",
        "VERDICT",
        *(["MOVES DONE"] if timed else []),
        *(f"{r.upper()} before → after (target)" for r in resources),
    ]
    table = [
        [
            row.node,
            _ROLES.get(row.role, row.role),
            row.verdict,
            *([carried_out.get(row.node, "–") if row.role == "relieved" else ""] if timed else []),
            *(_cell(row, r) for r in resources),
        ]
        for row in rows
    ]
    widths = [max(len(line[i]) for line in (header, *table)) for i in range(len(header))]
    with_why = any(row.why for row in rows)
    lines = []
    for line, why in ((header, "WHY"), *((t, row.why) for t, row in zip(table, rows, strict=True))):
        cells = [cell.ljust(width) for cell, width in zip(line, widths, strict=True)]
        lines.append("  ".join([*cells, why if with_why else ""]).rstrip())
    return "\n".join(lines) + "\n"


def render_round_table(record: rounds.RoundRecord) -> str:
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
                    f" (left hot: {rounds.name_nodes(completion.left_hot)})"
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
    rows = rounds.relief_rows(record)
    if rows:
        text += (
            "\nRELIEF (before → observed after the moves; moves done: when a hot node's "
            "planned evictions were all carried out, after the round started; "
            "left hot: no pod moved off, not read again)\n"
        )
        text += _relief_table(rows, _carried_out(record))
    return text
