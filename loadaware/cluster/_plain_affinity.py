"""A pod's affinity as the API server writes it, parsed typed (see _plain_pod).

The pods of a DaemonSet each carry a required node affinity naming their own node
(matchFields on metadata.name), a tenth of a large dump's pods: PlainAffinity
types that part, read here without checks; the other parts (preferred node
affinity, pod affinity and anti-affinity) are kept as parsed and read by
_selectors, with its checks, as _pod.read_pod reads them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from loadaware.cluster import _fast, _fields, _selectors, _types


class _Struct(msgspec.Struct, rename="camel", gc=False):
    """As _plain_pod.Struct."""


class _Requirement(_Struct):
    key: str = ""
    operator: str = ""
    values: list[str] = []


class _NodeSelectorTerm(_Struct):
    match_expressions: list[_Requirement] = []
    match_fields: list[_Requirement] = []


class _NodeSelector(_Struct):
    node_selector_terms: list[_NodeSelectorTerm] = []


class _NodeAffinity(_Struct):
    required_during_scheduling_ignored_during_execution: _NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: Any = None


class PlainAffinity(_Struct):
    node_affinity: _NodeAffinity | None = None
    pod_affinity: Any = None
    pod_anti_affinity: Any = None


# What a pod's affinity reads as, in the order of the Pod fields: required node
# affinity, required pod affinity and anti-affinity, preferred node affinity,
# preferred pod affinity and anti-affinity.
Affinity = tuple[
    tuple[_types.NodeSelectorTerm, ...],
    tuple[_types.PodAffinityTerm, ...],
    tuple[_types.PodAffinityTerm, ...],
    tuple[_types.PreferredSchedulingTerm, ...],
    tuple[_types.WeightedPodAffinityTerm, ...],
    tuple[_types.WeightedPodAffinityTerm, ...],
]

NO_AFFINITY: Affinity = ((), (), (), (), (), ())


def read_affinity(affinity: PlainAffinity, r: _fields.FieldReader) -> Affinity:
    """As read_pod reads spec.affinity; NotPlainError, or InputError, where it refuses it."""
    node_affinity = affinity.node_affinity
    required: tuple[_types.NodeSelectorTerm, ...] = ()
    preferred_node: Any = None
    if node_affinity is not None:
        preferred_node = node_affinity.preferred_during_scheduling_ignored_during_execution
        selector = node_affinity.required_during_scheduling_ignored_during_execution
        if selector is not None:
            required = tuple(
                [
                    _types.NodeSelectorTerm(
                        match_expressions=_requirements(term.match_expressions),
                        match_fields=_requirements(term.match_fields),
                    )
                    for term in selector.node_selector_terms
                ]
            )
    pod_affinity, pod_anti_affinity = affinity.pod_affinity, affinity.pod_anti_affinity
    if preferred_node is None and pod_affinity is None and pod_anti_affinity is None:
        return required, (), (), (), (), ()
    # The parts kept as parsed, read as read_pod reads them: each reads its own key.
    rest = {
        "nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred_node},
        "podAffinity": pod_affinity,
        "podAntiAffinity": pod_anti_affinity,
    }
    return (
        required,
        _selectors.pod_affinity_terms(r, rest, "podAffinity"),
        _selectors.pod_affinity_terms(r, rest, "podAntiAffinity"),
        _selectors.preferred_node_affinity(r, rest),
        _selectors.weighted_pod_affinity_terms(r, rest, "podAffinity"),
        _selectors.weighted_pod_affinity_terms(r, rest, "podAntiAffinity"),
    )


def _requirements(items: list[_Requirement]) -> tuple[_types.Requirement, ...]:
    """As _selectors.requirements for a node selector term."""
    result = []
    for item in items:
        if not item.key or item.operator not in _selectors.NODE_SELECTOR_OPERATORS:
            raise _fast.NotPlainError  # refused by read_pod
        result.append(
            _types.Requirement(key=item.key, operator=item.operator, values=tuple(item.values))
        )
    return tuple(result)
