"""What a live round did of its plan: the hot nodes it set out to relieve and
what became of each, the evictions it carried out of those planned, and why it
stopped evicting, if it did. round_completion() works it out from what the
executor carried out (its outcomes and stop) and what the relief check observed
after, never from the plan alone; describe_completion() and completion_to_json()
say it in words and JSON.

The nodes a round sets out to relieve are those the plan classed hot, those it
planned no hotspot eviction from too (a budget ran out before them): the counts
are of the plan's hot nodes. Each is judged on evidence first: a node
observed at or under its targets is relieved even if some of its evictions were
skipped (the re-check found it cool enough, or the round stopped after its
last needed move). Without that evidence, what was carried out decides: a node
still over its targets, or short of its planned evictions, is left hot, whatever
kept it so (a budget, skipped evictions, replacements that landed elsewhere). The
plan may already say a node stays hot (a budget ran out, no candidates); observed
improved after every planned eviction, or not judged, it did what was planned:
left hot, as planned, without making the round partial.

Each hot node whose planned evictions were all carried out has the time the
last was (its replacement bound): the round's plan takes the hottest nodes
first, so that a round that stops early has carried out theirs.

A round that stopped evicting early, or fell short on a hot node, is partial:
not a success, whatever the relief check says of the nodes it did reach. The
stop is the executor's, taken before the relief check: a breaker the relief
check opens afterwards judges the moves, not how far the round got, and shows
up here as the nodes it finds still hot.
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from loadaware import evict, plan
from loadaware.round._relief import NodeRelief

# What became of a node the plan classed hot:
#   relieved             judged at or under its targets after the moves
#   improved-as-planned  judged lower but over its targets, as the plan said it
#                        would stay (a budget ran out), every planned eviction done
#   hot-as-planned       not judged, and the plan said it stays over its targets
#                        (no eviction planned from it, or too few), every planned
#                        eviction done
#   unverified           every planned eviction done, no sample to judge it on
#   no-longer-hot        the re-check before its evictions found it no longer hot
#   left-hot             none of the above: still over its targets, or short of
#                        its planned evictions with no evidence that it is not
NodeResult = Literal[
    "relieved",
    "improved-as-planned",
    "hot-as-planned",
    "unverified",
    "no-longer-hot",
    "left-hot",
]
# The results of a node still over its targets after the round: left hot.
STILL_HOT: frozenset[str] = frozenset({"left-hot", "improved-as-planned", "hot-as-planned"})

# How many nodes a sentence names before "and N more".
NAMED_NODES = 5
# Results of planned evictions, in the order a sentence lists those not carried out.
_NOT_CARRIED_OUT = (
    ("skipped", "skipped"),
    ("refused-pdb", "refused by PDBs"),
    ("failed", "failed"),
    ("gone", "already gone"),
    ("dry-run", "dry-run"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeCompletion:
    node: str
    planned: int  # hotspot evictions planned from it (0: the plan left it hot)
    carried_out: int  # of those, evicted
    # The plan's own expectation: within its targets after the moves, or still
    # over them (a budget or the candidates ran out).
    expected_within_targets: bool
    relief: str | None  # the relief check's verdict; None: not judged
    result: NodeResult
    why: str = ""  # for a node still hot: what fell short, or why the plan left it so
    # When every planned eviction from it was carried out, the last replacement
    # bound (or found nothing left to do); None: not all were, or none was planned.
    # Whether that relieved it is `relief`'s to say.
    carried_out_at: datetime.datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundCompletion:
    evictions_planned: int
    evictions_carried_out: int
    # Planned evictions by what happened to them (EvictionOutcome.result).
    results: Mapping[str, int] = field(default_factory=dict)
    # Why the executor stopped evicting before the end of the plan; None: it did not.
    stopped: str | None = None
    nodes: tuple[NodeCompletion, ...] = ()

    @property
    def relieved(self) -> tuple[str, ...]:
        return self._named("relieved")

    @property
    def left_hot(self) -> tuple[str, ...]:
        """Every hot node still over its targets after the round, for whatever reason."""
        return tuple(n.node for n in self.nodes if n.result in STILL_HOT)

    @property
    def fell_short(self) -> tuple[str, ...]:
        """The nodes left hot because the round did less than it planned for them."""
        return self._named("left-hot")

    @property
    def partial(self) -> bool:
        return self.stopped is not None or bool(self.fell_short)

    def _named(self, result: NodeResult) -> tuple[str, ...]:
        return tuple(n.node for n in self.nodes if n.result == result)


def name_nodes(names: Sequence[str], limit: int = NAMED_NODES) -> str:
    """'a, b, c' or, past `limit`, 'a, b, c, d, e and 75 more'."""
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[:limit])} and {len(names) - limit} more"


def describe_completion(completion: RoundCompletion) -> str:
    """One line: '6/80 hot nodes relieved, 27/239 evictions carried out (212
    skipped); stopped: ...; left hot: a, b, c, d, e and 69 more'."""
    counts = []
    if completion.nodes:
        counts.append(f"{len(completion.relieved)}/{len(completion.nodes)} hot nodes relieved")
    short = [
        f"{completion.results[result]} {words}"
        for result, words in _NOT_CARRIED_OUT
        if completion.results.get(result)
    ]
    counts.append(
        f"{completion.evictions_carried_out}/{completion.evictions_planned} evictions carried out"
        + (f" ({', '.join(short)})" if short else "")
    )
    text = ", ".join(counts)
    if completion.stopped is not None:
        text += f"; stopped: {completion.stopped}"
    if completion.left_hot:
        text += f"; left hot: {name_nodes(completion.left_hot)}"
    return text


def completion_to_json(completion: RoundCompletion | None) -> dict[str, Any] | None:
    if completion is None:
        return None
    return {
        "result": "partial" if completion.partial else "complete",
        "summary": describe_completion(completion),
        "stopped": completion.stopped,
        "hotNodes": {
            "planned": len(completion.nodes),
            "relieved": len(completion.relieved),
            "leftHot": list(completion.left_hot),
            "fellShort": list(completion.fell_short),
        },
        "evictions": {
            "planned": completion.evictions_planned,
            "carriedOut": completion.evictions_carried_out,
            "byResult": dict(completion.results),
        },
        "nodes": [
            {
                "node": n.node,
                "result": n.result,
                **({"why": n.why} if n.why else {}),
                "plannedEvictions": n.planned,
                "carriedOut": n.carried_out,
                "expectedWithinTargets": n.expected_within_targets,
                "relief": n.relief,
                "carriedOutAt": _time(n.carried_out_at),
            }
            for n in completion.nodes
        ],
    }


def _time(value: datetime.datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")


# Skips that leave nothing to do for the node: the re-check before the eviction
# found it no longer hot, or the pod had already left it. (EvictionOutcome.reason,
# as the executor writes it.)
_NOTHING_LEFT_TO_DO = frozenset({plan.SOURCE_NOT_HOT, "pod-gone", "pod-moved", "pod-terminating"})


def round_completion(
    planned: plan.Plan,
    execution: evict.ExecutionReport,
    relief: Sequence[NodeRelief],
    *,
    stopped: str | None,
) -> RoundCompletion:
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
    return RoundCompletion(
        evictions_planned=len(planned.evictions),
        evictions_carried_out=results["evicted"],
        results=dict(sorted(results.items())),
        stopped=stopped,
        nodes=tuple(
            _node_completion(
                reports[name], sources[name], outcomes, judged.get(name), execution.bound_at
            )
            for name in sorted(sources)
        ),
    )


def _node_completion(
    node: plan.NodeReport,
    evictions: list[plan.Eviction],
    outcomes: Mapping[str, evict.EvictionOutcome],
    relief: str | None,
    bound_at: Mapping[str, datetime.datetime],
) -> NodeCompletion:
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
    # An eviction is carried out once its replacement is bound; one that found
    # nothing left to do, once it was found so.
    carried_out_at: datetime.datetime | None = None
    if evictions and done:
        times = [
            bound_at.get(o.pod) if o.result == "evicted" else o.at for o in found if o is not None
        ]
        if all(t is not None for t in times):
            carried_out_at = max(t for t in times if t is not None)
    expected_within = all(node.after.get(r, 0.0) <= limit for r, limit in node.high.items())
    short = f"{carried_out} of {len(evictions)} planned evictions carried out"
    why = ""
    if relief == "relieved":
        result: NodeResult = "relieved"
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
    return NodeCompletion(
        node=node.name,
        planned=len(evictions),
        carried_out=carried_out,
        expected_within_targets=expected_within,
        relief=relief,
        result=result,
        why=why,
        carried_out_at=carried_out_at,
    )
