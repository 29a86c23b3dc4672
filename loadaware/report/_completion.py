"""How much of what a live round set out to do it did: the hot nodes it planned
to relieve and what became of each, the evictions it carried out of those
planned, and why it stopped evicting, if it did.

Every node the plan classed hot counts, those it planned no eviction from
too: a node still over its targets after the round is left hot, whatever kept
it so (a budget, skipped evictions, replacements that landed elsewhere). A
round with a stop, or with a hot node left over its targets that the round
fell short on, is partial: not a success, whatever the relief check says of
the nodes it did reach. A node the plan itself left hot (a budget ran out, no
candidates) is left hot without making the round partial: the round did what
it planned. runtime judges it; this module holds the result and says it in
words and JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

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
            }
            for n in completion.nodes
        ],
    }
