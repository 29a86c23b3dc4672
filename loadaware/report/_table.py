"""The Plan as a table a person reads: nodes with before -> after bars, then the evictions."""

from __future__ import annotations

from collections.abc import Mapping

from loadaware.plan import Plan

BAR_WIDTH = 10
_CLASS_ORDER = {"hot": 0, "excluded": 1, "normal": 2, "cold": 3}


def bar(ratio: float, width: int = BAR_WIDTH) -> str:
    filled = max(0, min(width, round(ratio * width)))
    return "█" * filled + "·" * (width - filled)


def _cell(before: float, after: float) -> str:
    return f"{before * 100:4.0f}% {bar(before)} → {after * 100:4.0f}% {bar(after)}"


def render_plan_table(
    plan: Plan,
    *,
    observed: Mapping[str, Mapping[str, float]] | None = None,
    all_nodes: bool = False,
) -> str:
    """Render the plan. `observed` (node -> utilisation) replaces the planned "after"
    column, e.g. with what a simulation measured. Unchanged cold and normal nodes are
    summarised unless all_nodes is set."""
    lines = [f"status: {plan.status} — {plan.reason}"]
    if plan.nodes:
        after_of = {n.name: (observed or {}).get(n.name, n.after) for n in plan.nodes}
        shown = [
            n
            for n in plan.nodes
            if all_nodes
            or n.node_class in ("hot", "excluded")
            or any(abs(after_of[n.name][r] - n.before[r]) > 1e-9 for r in n.before)
        ]
        shown.sort(key=lambda n: (_CLASS_ORDER[n.node_class], n.name))
        width = max([len(n.name) for n in shown] + [4])
        header = "after (observed)" if observed else "after"
        lines.append("")
        resources = list(plan.nodes[0].before)  # cpu, memory, then pods if judged
        titles = [f"{r.upper()} before → {header:<22}" for r in resources]
        lines.append(f"{'NODE':<{width}}  {'CLASS':<8}  " + "  ".join(titles).rstrip())
        for n in shown:
            after = after_of[n.name]
            cells = "  ".join(_cell(n.before[r], after[r]) for r in resources)
            row = f"{n.name:<{width}}  {n.node_class:<8}  {cells}"
            if n.note:
                row += f"  ({n.note})"
            lines.append(row)
        hidden = len(plan.nodes) - len(shown)
        if hidden:
            lines.append(f"({hidden} other cold or normal nodes unchanged)")
    if plan.evictions:
        lines.append("")
        lines.append(f"EVICTIONS ({len(plan.evictions)})")
        for e in plan.evictions:
            lines.append(
                f"  {e.pod}  {e.node} → {e.expected_node or '?'}  "
                f"cpu {e.cpu_cores:.2f}  mem {e.memory_bytes / 2**20:.0f}Mi  ({e.reason})"
                + (f"  steer: {', '.join(e.steer)}" if e.steer else "")
            )
    if plan.skipped:
        lines.append("")
        lines.append(
            "not candidates: " + ", ".join(f"{k} {v}" for k, v in sorted(plan.skipped.items()))
        )
    # Per profile and rule, once profiles or strategies are in use (the implicit
    # default profile doing hotspot relief alone adds nothing to the lines above).
    rules = [(p, r, c) for p, found in plan.profiles.items() for r, c in found.items()]
    if any(r != "hotspot" for _, r, _ in rules) or len(plan.profiles) > 1:
        lines.append("")
        lines.append("PROFILES")
        for profile, rule, count in rules:
            why = ", ".join(f"{k} {v}" for k, v in count.skipped_reasons.items())
            lines.append(
                f"  {profile}  {rule}: {count.planned} planned, {count.skipped} skipped"
                + (f" ({why})" if why else "")
            )
    if plan.consolidation is not None:
        c = plan.consolidation
        lines.append("")
        lines.append(
            f"consolidation: {len(c.nodes)} of {c.candidates} candidate nodes emptied"
            + (f" ({', '.join(c.nodes)})" if c.nodes else "")
            + f", {c.evictions} evictions, {c.node_hours_saved_per_day:g} node-hours saved per day"
        )
    solver = plan.solver
    if solver.method != "none":
        bound = f", lower bound {solver.lower_bound:g}" if solver.lower_bound is not None else ""
        lines.append(f"solver: {solver.method}, {solver.seconds:.2f}s{bound}")
    return "\n".join(lines) + "\n"
