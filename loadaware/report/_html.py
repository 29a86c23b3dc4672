"""A round or a plan as one self-contained HTML page.

Input is the JSON loadaware already writes (the Plan of `plan -o json`, the
audit record of `round_to_json`), so a page can also be made later from a
stored record. The page has no external assets: styles inline, bars as inline
SVG, no scripts, no links, no fonts to fetch; it opens the same offline, in a
mail attachment or in a CI artifact viewer.

A round's header says what it came to (partial when it stopped evicting early
or left hot nodes it planned to relieve). A summary follows, before any
per-node detail: hot nodes before and after (expected by the plan and, for a
round, observed), evictions carried out of those planned, the relief check's
verdicts, the breaker and the landings; hot nodes relieved are counted out of
the plan's hot nodes, and every hot node still over its targets after the round
is named left hot, whether the relief check judged it or not. Then the nodes:
those the round touched (eviction sources, expected and actual landing nodes,
steered and verified nodes) or left hot, grouped by class, with utilisation before, expected by the
plan, and observed after the evictions (audit records with verification only),
per resource, with the pool's thresholds and targetThresholds marked on each
bar; every other node sits in one collapsed section, one line of figures each,
so that a 5,000-node round stays a page to read. Then, for a round, the relief
check: each relieved and landing node's verdict with the sample it was judged
on (and, for a hot node, when its planned evictions were all carried out), and
the model's error. Then the evictions with their reasons (and
results), the budgets used, and the solver with its optimality gap.
"""

from __future__ import annotations

import datetime
import html
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from loadaware import round as rounds

CLASS_ORDER = ("hot", "excluded", "normal", "cold")
RESOURCES = ("cpu", "memory")  # always shown; others (pods) when a node has them
# Results that took a pod off its node (or would have, in a dry run): what budgets count.
_COUNTED_RESULTS = frozenset({"evicted", "dry-run"})

_BAR_WIDTH = 240
_BAR_HEIGHT = 10
_SERIES = (  # name, colour, label
    ("before", "#c0392b", "before"),
    ("expected", "#2471a3", "expected"),
    ("observed", "#1e8449", "observed"),
)
_THRESHOLD_COLOUR = "#5dade2"  # under every threshold: cold
_TARGET_COLOUR = "#e67e22"  # over any target threshold: hot
_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1b1b1b; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 24px 0 8px; border-bottom: 1px solid #ddd; }
h3 { font-size: 14px; margin: 16px 0 4px; text-transform: capitalize; }
table { border-collapse: collapse; margin: 4px 0 12px; }
th, td { text-align: left; padding: 3px 10px 3px 0; vertical-align: middle; }
th { font-weight: 600; border-bottom: 1px solid #ccc; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td:first-child { white-space: nowrap; }
.status { display: inline-block; padding: 1px 8px; border-radius: 3px; color: #fff; }
.status-planned, .status-executed { background: #1e8449; }
.status-noop { background: #7f8c8d; }
.status-refused, .status-aborted { background: #c0392b; }
.status-partial { background: #b9770e; }
.legend span { margin-right: 14px; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
.muted { color: #666; }
details { margin: 8px 0 12px; }
summary { cursor: pointer; font-weight: 600; }
table.summary th { font-weight: 600; border-bottom: none; padding-right: 16px; }
"""
# What "touched" means on a plan's page and on a round's (see _touched).
_TOUCHED = {
    "plan": "evictions' sources, expected nodes, nodes steered away from",
    "round": "evictions' sources, expected and actual landing nodes, nodes steered away "
    "from, nodes verified",
}
# Relief verdicts of a node still over its targets after the round.
_STILL_HOT_VERDICTS = frozenset({"improved", "not improved", "turned hot"})
# Relief verdicts of a hot node the round left over its targets, judged or not.
_LEFT_HOT_VERDICTS = frozenset({"improved", "not improved", "left hot"})


@dataclass(frozen=True, slots=True, kw_only=True)
class _NodeView:
    name: str
    node_class: str
    before: Mapping[str, float]
    expected: Mapping[str, float]
    observed: Mapping[str, float] | None
    note: str = ""
    low: Mapping[str, float] = field(default_factory=dict)  # thresholds (ratios)
    high: Mapping[str, float] = field(default_factory=dict)  # targetThresholds (ratios)


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _percent(ratio: float | None) -> str:
    return "–" if ratio is None else f"{ratio * 100:.0f}%"


def _bars(view: _NodeView, resource: str) -> str:
    """Inline SVG: one bar per series, 0–100% of allocatable (clipped beyond 120%)."""
    values = [
        (colour, label, series.get(resource) if series is not None else None)
        for (name, colour, label), series in zip(
            _SERIES, (view.before, view.expected, view.observed), strict=True
        )
        if name != "observed" or view.observed is not None
    ]
    height = len(values) * (_BAR_HEIGHT + 2)
    parts = [
        f'<svg width="{_BAR_WIDTH + 50}" height="{height}" role="img" '
        f'aria-label="{_e(view.name)} {resource}">'
    ]
    for row, (colour, label, value) in enumerate(values):
        y = row * (_BAR_HEIGHT + 2)
        parts.append(
            f'<rect x="0" y="{y}" width="{_BAR_WIDTH}" height="{_BAR_HEIGHT}" fill="#eee"/>'
        )
        if value is not None:
            width = max(0.0, min(1.2, value)) / 1.2 * _BAR_WIDTH
            parts.append(
                f'<rect x="0" y="{y}" width="{width:.1f}" height="{_BAR_HEIGHT}" '
                f'fill="{colour}"><title>{label}: {_percent(value)}</title></rect>'
            )
        parts.append(
            f'<text x="{_BAR_WIDTH + 4}" y="{y + _BAR_HEIGHT - 1}" font-size="10">'
            f"{_percent(value)}</text>"
        )
    # The 100% mark: bars run to 120% so overcommitted nodes stay visible.
    mark = _BAR_WIDTH / 1.2
    parts.append(
        f'<line x1="{mark:.1f}" y1="0" x2="{mark:.1f}" y2="{height}" stroke="#333" '
        'stroke-dasharray="2,2"/>'
    )
    for limits, colour, label in (
        (view.low, _THRESHOLD_COLOUR, "threshold"),
        (view.high, _TARGET_COLOUR, "target threshold"),
    ):
        limit = limits.get(resource)
        if limit is None:
            continue
        x = max(0.0, min(1.2, limit)) / 1.2 * _BAR_WIDTH
        parts.append(
            f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height}" stroke="{colour}" '
            f'stroke-width="2" class="{label.replace(" ", "-")}">'
            f"<title>{label}: {_percent(limit)}</title></line>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _resources(views: Iterable[_NodeView]) -> tuple[str, ...]:
    extra = sorted({r for v in views for r in v.before} - set(RESOURCES))
    return RESOURCES + tuple(extra)


def _class_order(views: Iterable[_NodeView]) -> list[str]:
    order = {name: index for index, name in enumerate(CLASS_ORDER)}
    return sorted({v.node_class for v in views}, key=lambda c: (order.get(c, 99), c))


def _is_over(values: Mapping[str, float] | None, high: Mapping[str, float]) -> bool:
    """Over any of its targetThresholds."""
    if not values:
        return False
    return any(r in values and values[r] > limit for r, limit in high.items())


def _nodes_section(views: Sequence[_NodeView], shown: Iterable[str], *, of: str) -> str:
    """Bars for the nodes in `shown` and the hot ones, grouped by class; one line of
    figures for each other node, in a collapsed section."""
    if not views:
        return '<h2>Nodes</h2><p class="muted">No nodes in this plan.</p>'
    names = set(shown)
    main = [v for v in views if v.name in names or v.node_class == "hot"]
    rest = [v for v in views if not (v.name in names or v.node_class == "hot")]
    with_observed = any(v.observed is not None for v in main)
    legend = "".join(
        f'<span><span class="swatch" style="background:{colour}"></span>{label}</span>'
        for name, colour, label in _SERIES
        if name != "observed" or with_observed
    )
    out = [
        f"<h2>Nodes</h2><p>{len(main)} of {len(views)} nodes: those the {of} touched "
        f"({_TOUCHED[of]}) and those hot.</p>",
    ]
    if main:
        out.append(
            f'<p class="legend">{legend}<span class="muted">dashed line: 100% of allocatable; '
            f'<span style="color:{_THRESHOLD_COLOUR}">&#9474;</span> thresholds, '
            f'<span style="color:{_TARGET_COLOUR}">&#9474;</span> targetThresholds'
            "</span></p>"
        )
    for node_class in _class_order(main):
        members = sorted((v for v in main if v.node_class == node_class), key=lambda v: v.name)
        out.append(f"<h3>{_e(node_class)} ({len(members)})</h3>")
        out.append('<table class="nodes"><thead><tr><th>node</th>')
        resources = _resources(members)
        out.extend(f"<th>{resource}</th>" for resource in resources)
        out.append("<th>note</th></tr></thead><tbody>")
        for view in members:
            out.append(f"<tr><td>{_e(view.name)}</td>")
            out.extend(f"<td>{_bars(view, resource)}</td>" for resource in resources)
            out.append(f'<td class="muted">{_e(view.note)}</td></tr>')
        out.append("</tbody></table>")
    if rest:
        out.append(_other_nodes(rest))
    return "".join(out)


def _other_nodes(rest: Sequence[_NodeView]) -> str:
    """The untouched nodes that are not hot, collapsed: class and figures, no bars."""
    counts = Counter(v.node_class for v in rest)
    by_class = ", ".join(f"{counts[c]} {_e(c)}" for c in _class_order(rest))
    resources = _resources(rest)
    with_observed = any(v.observed is not None for v in rest)
    series = "before / expected" + (" / observed" if with_observed else "")
    out = [
        f'<details class="other-nodes"><summary>{len(rest)} other nodes, untouched and not '
        f"hot ({by_class})</summary>",
        "<table><thead><tr><th>node</th><th>class</th>",
    ]
    out.extend(f"<th>{r} {series}</th>" for r in resources)
    out.append("<th>note</th></tr></thead><tbody>")
    order = {c: i for i, c in enumerate(_class_order(rest))}
    for view in sorted(rest, key=lambda v: (order[v.node_class], v.name)):
        cells = [f"<td>{_e(view.name)}</td><td>{_e(view.node_class)}</td>"]
        for resource in resources:
            values = [view.before.get(resource), view.expected.get(resource)]
            if with_observed:
                values.append((view.observed or {}).get(resource))
            cells.append(f'<td class="num">{" / ".join(_percent(v) for v in values)}</td>')
        cells.append(f'<td class="muted">{_e(view.note)}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></details>")
    return "".join(out)


def _touched(
    evictions: Iterable[Mapping[str, Any]], verification: Mapping[str, Any] | None = None
) -> set[str]:
    """The nodes a plan or round touched: each eviction's source, expected node and
    steered nodes; for a round, where replacements landed and the nodes verified."""
    names: set[str] = set()
    for eviction in evictions:
        names.update(str(n) for n in (eviction.get("node"), eviction.get("expectedNode")) if n)
        names.update(str(n) for n in eviction.get("steer") or ())
    verification = verification or {}
    names.update(str(r["node"]) for r in verification.get("replacements") or () if r.get("node"))
    for key in ("relief", "landingNodes"):
        names.update(str(r["node"]) for r in verification.get(key) or () if r.get("node"))
    return names


def _named(names: Sequence[str]) -> str:
    return f"{len(names)}" + (f": {rounds.name_nodes(names)}" if names else "")


def _nodes(count: int, kind: str = "") -> str:
    return f"{count} {kind + ' ' if kind else ''}node{'' if count == 1 else 's'}"


def _counted(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {name}" for name, n in counts.items() if n) or "–"


def _summary_section(rows: Sequence[tuple[str, object]]) -> str:
    out = ['<h2>Summary</h2><table class="summary"><tbody>']
    out.extend(
        f"<tr><th>{_e(name)}</th><td>{_e('–' if value is None else value)}</td></tr>"
        for name, value in rows
    )
    out.append("</tbody></table>")
    return "".join(out)


def _plan_summary(
    views: Sequence[_NodeView], evictions: Sequence[Mapping[str, Any]]
) -> list[tuple[str, object]]:
    """Rows a plan and a round share: nodes by class, hot before and expected after,
    evictions planned and where from and to."""
    classes = Counter(v.node_class for v in views)
    hot_before = sorted(v.name for v in views if v.node_class == "hot")
    hot_after = sorted(v.name for v in views if _is_over(v.expected, v.high))
    sources = {str(e.get("node")) for e in evictions if e.get("node")}
    landings = {str(e.get("expectedNode")) for e in evictions if e.get("expectedNode")}
    steered = {str(n) for e in evictions for n in e.get("steer") or ()}
    return [
        ("nodes", f"{len(views)} ({_counted({c: classes[c] for c in _class_order(views)})})"),
        ("hot nodes before", _named(hot_before)),
        ("hot nodes after, expected", _named(hot_after)),
        (
            "evictions planned",
            f"{len(evictions)} from {_nodes(len(sources))} to {_nodes(len(landings), 'expected')}"
            + (f", {_nodes(len(steered))} steered away from" if steered else ""),
        ),
    ]


def _evictions_section(evictions: Sequence[Mapping[str, Any]], *, with_results: bool) -> str:
    if not evictions:
        return '<h2>Evictions</h2><p class="muted">None.</p>'
    columns = ["pod", "from node", "expected node", "steered away from", "reason"]
    if with_results:
        columns += ["result", "budget"]
    out = ["<h2>Evictions</h2><table><thead><tr>"]
    out.extend(f"<th>{c}</th>" for c in columns)
    out.append("</tr></thead><tbody>")
    for eviction in evictions:
        cells = [
            eviction.get("pod"),
            eviction.get("node"),
            eviction.get("expectedNode") or "–",
            ", ".join(eviction.get("steer") or ()) or "–",
            eviction.get("reason"),
        ]
        if with_results:
            cells += [eviction.get("result"), eviction.get("budget") or "–"]
        out.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _most(values: Iterable[str]) -> str:
    counts = Counter(values)
    if not counts:
        return "0"
    name, count = max(counts.items(), key=lambda item: (item[1], item[0]))
    return f"{count} ({name})"


def _budgets_section(
    evictions: Sequence[Mapping[str, Any]], limits: Mapping[str, Any] | None
) -> str:
    """Budgets used: the most any node, namespace or workload used, against its limit."""
    counted = [
        e for e in evictions if e.get("result") is None or e.get("result") in _COUNTED_RESULTS
    ]
    round_limits = (limits or {}).get("round") or {}
    rows = [
        ("total", str(len(counted)), round_limits.get("maxNoOfPodsToEvictTotal")),
        (
            "per node",
            _most(str(e.get("node")) for e in counted),
            round_limits.get("maxNoOfPodsToEvictPerNode"),
        ),
        (
            "per namespace",
            _most(str(e.get("pod", "")).split("/", 1)[0] for e in counted),
            round_limits.get("maxNoOfPodsToEvictPerNamespace"),
        ),
        (
            "per workload",
            _most(str(e["workload"]) for e in counted if e.get("workload")),
            round_limits.get("maxNoOfPodsToEvictPerWorkload"),
        ),
    ]
    out = ["<h2>Budgets used</h2><table><thead><tr><th>budget</th><th>used (most)</th>"]
    out.append("<th>limit per round</th></tr></thead><tbody>")
    for name, used, limit in rows:
        shown = "none" if limit is None else limit
        out.append(
            f'<tr><td>{name}</td><td class="num">{_e(used)}</td>'
            f'<td class="num">{_e(shown)}</td></tr>'
        )
    out.append("</tbody></table>")
    if limits:
        extra = {k: v for k, v in limits.items() if k != "round"}
        if extra:
            out.append("<table><tbody>")
            out.extend(
                f'<tr><td>{_e(k)}</td><td class="num">{_e("none" if v is None else v)}</td></tr>'
                for k, v in sorted(extra.items())
            )
            out.append("</tbody></table>")
    return "".join(out)


def solver_gap(solver: Mapping[str, Any]) -> float | None:
    """(objective - lower bound) / objective; None without both (the greedy has no bound)."""
    objective, bound = solver.get("objective"), solver.get("lowerBound")
    if objective is None or bound is None:
        return None
    if objective == 0:
        return 0.0
    return max(0.0, (float(objective) - float(bound)) / abs(float(objective)))


def _solver_section(solver: Mapping[str, Any] | None, skipped: Mapping[str, int]) -> str:
    out = ["<h2>Solver</h2>"]
    if solver:
        gap = solver_gap(solver)
        rows = [
            ("method", solver.get("method")),
            ("seconds", solver.get("seconds")),
            ("objective", solver.get("objective")),
            ("lower bound", solver.get("lowerBound")),
            ("gap", "–" if gap is None else f"{gap * 100:.2f}%"),
        ]
        out.append("<table><tbody>")
        out.extend(
            f'<tr><th>{name}</th><td class="num">{_e("–" if v is None else v)}</td></tr>'
            for name, v in rows
        )
        out.append("</tbody></table>")
    if skipped:
        out.append("<h3>pods on hot nodes not chosen, by rule</h3><table><tbody>")
        out.extend(
            f'<tr><td>{_e(rule)}</td><td class="num">{_e(count)}</td></tr>'
            for rule, count in sorted(skipped.items())
        )
        out.append("</tbody></table>")
    return "".join(out)


def _page(title: str, header: str, body: Sequence[str]) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{_CSS}</style></head>"
        f"<body>{header}{''.join(body)}</body></html>\n"
    )


def _status(status: str, reason: str) -> str:
    return f'<p><span class="status status-{_e(status)}">{_e(status)}</span> {_e(reason)}</p>'


def _plan_views(
    plan_json: Mapping[str, Any], observed: Mapping[str, Mapping[str, float] | None]
) -> list[_NodeView]:
    return [
        _NodeView(
            name=node["name"],
            node_class=node.get("class", "normal"),
            before=node.get("before") or {},
            expected=node.get("after") or {},
            observed=observed.get(node["name"]),
            note=node.get("note", ""),
            low=node.get("thresholds") or {},
            high=node.get("targetThresholds") or {},
        )
        for node in plan_json.get("nodes") or []
    ]


def _carried_out(audit: Mapping[str, Any]) -> dict[str, str]:
    """Hot node -> when its planned evictions were all carried out, in seconds after
    the round started ("+42s"); absent where they were not (or an older record)."""
    started = audit.get("startedAt")
    nodes = (audit.get("completion") or {}).get("nodes") or []
    if not started:
        return {}
    start = datetime.datetime.fromisoformat(str(started))
    return {
        str(n["node"]): "+{:.0f}s".format(
            (datetime.datetime.fromisoformat(str(n["carriedOutAt"])) - start).total_seconds()
        )
        for n in nodes
        if n.get("node") and n.get("carriedOutAt")
    }


def _relief_section(
    verification: Mapping[str, Any], carried_out: Mapping[str, str] | None = None
) -> str:
    """Each node the round changed, judged on a sample taken after the change; for a
    hot node, when its planned evictions were all carried out (`carried_out`)."""
    rows = [("relieved", r) for r in verification.get("relief") or []] + [
        ("landing", r) for r in verification.get("landingNodes") or []
    ]
    if not rows:
        return ""
    done = carried_out or {}
    extra = sorted({r for _, row in rows for r in row.get("before") or {}} - set(RESOURCES))
    resources = (*RESOURCES, *extra)
    out = ["<h2>Relief</h2><table><thead><tr><th>node</th><th>role</th><th>verdict</th>"]
    if done:
        out.append("<th>moves done</th>")
    out.extend(f"<th>{r} before / expected / observed</th>" for r in resources)
    out.append("<th>sample</th><th>why</th></tr></thead><tbody>")
    for role, row in rows:
        observed = row.get("observed") or {}
        cells = [f"<td>{_e(row.get('node'))}</td><td>{role}</td><td>{_e(row.get('verdict'))}</td>"]
        if done:
            when = done.get(str(row.get("node")), "–") if role == "relieved" else ""
            cells.append(f'<td class="num">{_e(when)}</td>')
        for resource in resources:
            values = [
                (row.get("before") or {}).get(resource),
                (row.get("expected") or {}).get(resource),
                observed.get(resource),
            ]
            cells.append(f'<td class="num">{" / ".join(_percent(v) for v in values)}</td>')
        cells.append(f'<td class="muted">{_e(row.get("sampleTime") or "–")}</td>')
        cells.append(f'<td class="muted">{_e(row.get("why", ""))}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    errors = verification.get("modelError") or {}
    if errors:
        out.append("<h3>model error (mean |observed - expected|)</h3><table><tbody>")
        for role, by_resource in sorted(errors.items()):
            shown = ", ".join(f"{r} {v * 100:.1f} pp" for r, v in sorted(by_resource.items()))
            out.append(f"<tr><td>{_e(role)}</td><td>{_e(shown)}</td></tr>")
        out.append("</tbody></table>")
    return "".join(out)


def render_plan_html(plan_json: Mapping[str, Any]) -> str:
    """The page for a Plan as `loadaware plan -o json` prints it."""
    status = str(plan_json.get("status", ""))
    header = "<h1>loadaware plan</h1>" + _status(status, str(plan_json.get("reason", "")))
    evictions = plan_json.get("evictions") or []
    views = _plan_views(plan_json, {})
    return _page(
        f"loadaware plan: {status}",
        header,
        [
            _summary_section(_plan_summary(views, evictions)),
            _nodes_section(views, _touched(evictions), of="plan"),
            _evictions_section(evictions, with_results=False),
            _budgets_section(evictions, None),
            _solver_section(plan_json.get("solver"), plan_json.get("skipped") or {}),
        ],
    )


def render_round_html(audit: Mapping[str, Any]) -> str:
    """The page for a round's audit record (`round_to_json`): the plan, what was done,
    and the utilisation observed after the evictions where it was measured."""
    plan_json: Mapping[str, Any] = audit.get("plan") or {}
    verification = audit.get("verification") or {}
    relief = {r["node"]: r for r in verification.get("relief") or []}
    landings = {r["node"]: r for r in verification.get("landingNodes") or []}
    views = _plan_views(
        plan_json,
        {name: r.get("observed") for name, r in {**landings, **relief}.items()},
    )
    # A node verified but missing from the plan's list still gets its row.
    known = {v.name for v in views}
    views += [
        _NodeView(
            name=name,
            node_class="hot",
            before=r.get("before") or {},
            expected=r.get("expected") or {},
            observed=r.get("observed"),
        )
        for name, r in relief.items()
        if name not in known
    ]
    status = str(audit.get("status", ""))
    facts = [
        ("round", audit.get("round")),
        ("trigger", audit.get("trigger")),
        ("started", audit.get("startedAt")),
        ("finished", audit.get("finishedAt")),
        ("dry run", "yes" if audit.get("dryRun") else "no"),
        ("policy", audit.get("policyHash")),
    ]
    header = (
        "<h1>loadaware round</h1>"
        + _status(status, str(audit.get("reason", "")))
        + "<table><tbody>"
        + "".join(
            f"<tr><th>{name}</th><td>{_e('–' if value is None else value)}</td></tr>"
            for name, value in facts
        )
        + "</tbody></table>"
    )
    evictions = audit.get("evictions") or []
    # The plan's evictions when nothing was executed (a refused or planned-only round).
    shown = evictions or plan_json.get("evictions") or []
    left_hot = _left_hot(audit)
    return _page(
        f"loadaware round {audit.get('round', '')}: {status}",
        header,
        [
            _summary_section(_round_summary(audit, views, shown)),
            _nodes_section(views, _touched(shown, verification) | set(left_hot), of="round"),
            _relief_section(verification, _carried_out(audit)),
            _evictions_section(shown, with_results=bool(evictions)),
            _budgets_section(shown, audit.get("budgets")),
            _solver_section(plan_json.get("solver"), plan_json.get("skipped") or {}),
        ],
    )


def _left_hot(audit: Mapping[str, Any]) -> list[str]:
    """Every hot node still over its targets after the round: those the round's
    completion names, and any the relief check found still over them (an audit
    record written before the completion named them all)."""
    verification = audit.get("verification") or {}
    names = list(((audit.get("completion") or {}).get("hotNodes") or {}).get("leftHot") or [])
    names += verification.get("leftHot") or []
    names += [
        str(r["node"])
        for r in verification.get("relief") or []
        if r.get("node") and r.get("verdict") in _LEFT_HOT_VERDICTS
    ]
    return list(dict.fromkeys(names))


def _round_summary(
    audit: Mapping[str, Any], views: Sequence[_NodeView], shown: Sequence[Mapping[str, Any]]
) -> list[tuple[str, object]]:
    verification = audit.get("verification") or {}
    completion = audit.get("completion") or {}
    plan_evictions = (audit.get("plan") or {}).get("evictions") or []
    rows = _plan_summary(views, plan_evictions or shown)
    judged = [*(verification.get("relief") or []), *(verification.get("landingNodes") or [])]
    if any(r.get("observed") is not None for r in judged):
        still_hot = sorted(
            str(r["node"]) for r in judged if r.get("verdict") in _STILL_HOT_VERDICTS
        )
        # Left hot without a pod moved off: still over its targets, though not read again.
        unread = [str(r["node"]) for r in judged if r.get("verdict") == "left hot"]
        after = next(i for i, (name, _) in enumerate(rows) if name == "hot nodes after, expected")
        rows.insert(
            after + 1,
            (
                "hot nodes after, observed",
                _named(still_hot)
                + (f"; left hot, not read again: {rounds.name_nodes(unread)}" if unread else ""),
            ),
        )
    if completion:
        hot, done = completion.get("hotNodes") or {}, completion.get("evictions") or {}
        # Of every hot node of the plan (an older record counted only those with
        # planned evictions).
        planned_hot = sum(
            1 for n in (audit.get("plan") or {}).get("nodes") or [] if n.get("class") == "hot"
        )
        rows += [
            (
                "hot nodes relieved",
                f"{hot.get('relieved', 0)}/{max(planned_hot, hot.get('planned', 0))}",
            ),
            (
                "evictions carried out",
                f"{done.get('carriedOut', 0)}/{done.get('planned', 0)}"
                + (f" ({_counted(done['byResult'])})" if done.get("byResult") else ""),
            ),
            ("left hot", rounds.name_nodes(_left_hot(audit)) or "–"),
        ]
    elif audit.get("evictions"):
        results = Counter(str(e.get("result")) for e in audit["evictions"])
        rows.append(
            (
                "evictions carried out",
                f"{results.get('evicted', 0)}/{len(plan_evictions) or len(shown)}"
                f" ({_counted(results)})",
            )
        )
    relieved = Counter(str(r.get("verdict")) for r in verification.get("relief") or [])
    landed = Counter(str(r.get("verdict")) for r in verification.get("landingNodes") or [])
    rows += [
        ("verdict", verification.get("verdict") or "–"),
        ("relief of hot nodes", _counted(relieved)),
        ("landing nodes", _counted(landed)),
    ]
    counts = verification.get("landings") or {}
    if any(counts.values()):
        rows.append(("replacements landed", _counted(counts)))
    rows += [
        ("breaker", verification.get("breaker") or "closed"),
        ("stopped", completion.get("stopped") or verification.get("stopped") or "–"),
    ]
    return rows
