"""Whether a live round did what it planned: judged from what the executor
carried out (its outcomes and stop) and what the relief check observed after,
never from the plan alone.

The nodes a round sets out to relieve are those the plan classed hot, those it
planned no hotspot eviction from too (a budget ran out before them): the counts
are of the plan's hot nodes. Each is judged on evidence first: a node
observed at or under its targets is relieved even if some of its evictions were
skipped (the re-check found it cool enough, or the round stopped after its
last needed move). Without that evidence, what was carried out decides: a node
still over its targets, or short of its planned evictions, is left hot. The
plan may already say a node stays hot (a budget ran out); observed improved
after every planned eviction, or not judged, it did what was planned: left hot,
as planned, without making the round partial.

A round that stopped evicting early, or fell short on a hot node, is partial.
The stop is the executor's, taken before the relief check: a breaker the
relief check opens afterwards judges the moves, not how far the round got, and
shows up here as the nodes it finds still hot.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from loadaware import evict, plan, report

# Skips that leave nothing to do for the node: the re-check before the eviction
# found it no longer hot, or the pod had already left it. (EvictionOutcome.reason,
# as the executor writes it.)
_NOTHING_LEFT_TO_DO = frozenset({plan.SOURCE_NOT_HOT, "pod-gone", "pod-moved", "pod-terminating"})


def judge_round(
    planned: plan.Plan,
    execution: evict.ExecutionReport,
    relief: Sequence[report.NodeRelief],
    *,
    stopped: str | None,
) -> report.RoundCompletion:
    """What the round did of `planned`; `stopped` is why the executor stopped
    evicting (ExecutionReport.stopped as it was before the relief check)."""
    outcomes = {o.pod: o for o in execution.outcomes}
    reports = {n.name: n for n in planned.nodes}
    judged = {r.node: r.verdict for r in relief if r.role == "relieved"}
    sources: dict[str, list[plan.Eviction]] = {
        n.name: [] for n in planned.nodes if n.node_class == "hot"
    }
    for eviction in planned.evictions:
        node = reports.get(eviction.node)
        if eviction.reason == "hotspot" and node is not None and node.node_class == "hot":
            sources.setdefault(eviction.node, []).append(eviction)
    results = Counter(o.result for o in execution.outcomes)
    return report.RoundCompletion(
        evictions_planned=len(planned.evictions),
        evictions_carried_out=results["evicted"],
        results=dict(sorted(results.items())),
        stopped=stopped,
        nodes=tuple(
            _judge_node(reports[name], sources[name], outcomes, judged.get(name))
            for name in sorted(sources)
        ),
    )


def _judge_node(
    node: plan.NodeReport,
    evictions: list[plan.Eviction],
    outcomes: Mapping[str, evict.EvictionOutcome],
    relief: str | None,
) -> report.NodeCompletion:
    found = [outcomes.get(e.pod) for e in evictions]
    carried_out = sum(1 for o in found if o is not None and o.result == "evicted")
    # An eviction the executor never reported (the round ended first) was not done.
    done = all(
        o is not None
        and (
            o.result in ("evicted", "gone")
            or (o.result == "skipped" and o.reason in _NOTHING_LEFT_TO_DO)
        )
        for o in found
    )
    expected_within = all(node.after.get(r, 0.0) <= limit for r, limit in node.high.items())
    short = f"{carried_out} of {len(evictions)} planned evictions carried out"
    why = ""
    if relief == "relieved":
        result: report.NodeResult = "relieved"
    elif relief == "improved" and done and not expected_within:
        result = "improved-as-planned"
    elif relief in ("improved", "not improved"):
        result = "left-hot"
        why = f"{relief}, still over its targets" + ("" if done else f"; {short}")
    elif not done:
        result, why = "left-hot", short
    elif found and all(o is not None and o.reason == plan.SOURCE_NOT_HOT for o in found):
        result = "no-longer-hot"
    elif not expected_within:
        result = "hot-as-planned"
        why = node.note or (
            f"the plan leaves it over its targets after {len(evictions)} evictions"
            if evictions
            else "no evictions planned from it"
        )
    else:
        result = "unverified"
    return report.NodeCompletion(
        node=node.name,
        planned=len(evictions),
        carried_out=carried_out,
        expected_within_targets=expected_within,
        relief=relief,
        result=result,
        why=why,
    )
