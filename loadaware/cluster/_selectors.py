"""Selectors and scheduling constraints of raw objects: label selectors, node
affinity, inter-pod affinity and topology spread, as kube-scheduler reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadaware.cluster import _fields, _types

_LABEL_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})
NODE_SELECTOR_OPERATORS = _LABEL_OPERATORS | {"Gt", "Lt"}


def label_selector(r: _fields.FieldReader, value: Any, path: str) -> _types.LabelSelector | None:
    if value is None:
        return None
    selector = r.mapping(value, path)
    expressions = selector.get("matchExpressions")
    return _types.LabelSelector(
        match_labels=r.string_map(selector.get("matchLabels"), "{}.matchLabels", path),
        # Workload selectors mostly have none; their paths are not formatted for nothing.
        match_expressions=()
        if expressions is None
        else requirements(r, expressions, f"{path}.matchExpressions", _LABEL_OPERATORS),
    )


def requirements(
    r: _fields.FieldReader, value: Any, path: str, operators: frozenset[str]
) -> tuple[_types.Requirement, ...]:
    result = []
    for i, item in enumerate(r.sequence(value, path)):
        item_path = f"{path}[{i}]"
        entry = r.mapping(item, item_path)
        key = r.string(entry.get("key"), f"{item_path}.key")
        operator = r.string(entry.get("operator"), f"{item_path}.operator")
        if not key:
            r.fail(f"{item_path}.key", "missing")
        if operator not in operators:
            r.fail(
                f"{item_path}.operator",
                f"{operator!r} is not one of {', '.join(sorted(operators))}",
            )
        values = r.strings(entry.get("values"), f"{item_path}.values")
        result.append(_types.Requirement(key=key, operator=operator, values=values))
    return tuple(result)


def required_node_affinity(
    r: _fields.FieldReader, affinity: Mapping[str, Any]
) -> tuple[_types.NodeSelectorTerm, ...]:
    path = "spec.affinity.nodeAffinity"
    node_affinity = r.mapping(affinity.get("nodeAffinity"), path)
    path += ".requiredDuringSchedulingIgnoredDuringExecution"
    required = r.mapping(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"), path)
    path += ".nodeSelectorTerms"
    terms = []
    for i, item in enumerate(r.sequence(required.get("nodeSelectorTerms"), path)):
        term_path = f"{path}[{i}]"
        term = r.mapping(item, term_path)
        terms.append(
            _types.NodeSelectorTerm(
                match_expressions=requirements(
                    r,
                    term.get("matchExpressions"),
                    f"{term_path}.matchExpressions",
                    NODE_SELECTOR_OPERATORS,
                ),
                match_fields=requirements(
                    r, term.get("matchFields"), f"{term_path}.matchFields", NODE_SELECTOR_OPERATORS
                ),
            )
        )
    return tuple(terms)


def node_selector_term(r: _fields.FieldReader, item: Any, path: str) -> _types.NodeSelectorTerm:
    term = r.mapping(item, path)
    return _types.NodeSelectorTerm(
        match_expressions=requirements(
            r, term.get("matchExpressions"), f"{path}.matchExpressions", NODE_SELECTOR_OPERATORS
        ),
        match_fields=requirements(
            r, term.get("matchFields"), f"{path}.matchFields", NODE_SELECTOR_OPERATORS
        ),
    )


def preferred_node_affinity(
    r: _fields.FieldReader, affinity: Mapping[str, Any]
) -> tuple[_types.PreferredSchedulingTerm, ...]:
    path = "spec.affinity.nodeAffinity"
    node_affinity = r.mapping(affinity.get("nodeAffinity"), path)
    path += ".preferredDuringSchedulingIgnoredDuringExecution"
    terms = []
    for i, item in enumerate(
        r.sequence(node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution"), path)
    ):
        term_path = f"{path}[{i}]"
        entry = r.mapping(item, term_path)
        weight = r.integer(entry.get("weight", 0), f"{term_path}.weight")
        terms.append(
            _types.PreferredSchedulingTerm(
                weight=weight,
                preference=node_selector_term(
                    r, entry.get("preference"), f"{term_path}.preference"
                ),
            )
        )
    return tuple(terms)


_SPREAD_WHEN = frozenset({"DoNotSchedule", "ScheduleAnyway"})
_SPREAD_POLICIES = frozenset({"Honor", "Ignore"})


def spread_constraints(
    r: _fields.FieldReader, spec: Mapping[str, Any], labels: Mapping[str, str]
) -> tuple[_types.TopologySpreadConstraint, ...]:
    items = spec.get("topologySpreadConstraints")
    if not items:
        return ()
    result = []
    for i, item in enumerate(r.sequence(items, "spec.topologySpreadConstraints")):
        path = f"spec.topologySpreadConstraints[{i}]"
        entry = r.mapping(item, path)
        topology_key = r.string(entry.get("topologyKey"), f"{path}.topologyKey")
        if not topology_key:
            r.fail(f"{path}.topologyKey", "missing")
        when = r.string(entry.get("whenUnsatisfiable"), f"{path}.whenUnsatisfiable")
        if when not in _SPREAD_WHEN:
            r.fail(f"{path}.whenUnsatisfiable", f"{when!r} is not one of {sorted(_SPREAD_WHEN)}")
        max_skew = r.integer(entry.get("maxSkew", 1), f"{path}.maxSkew")
        if max_skew < 1:
            r.fail(f"{path}.maxSkew", "must be at least 1")
        min_domains = entry.get("minDomains")
        selector = label_selector(r, entry.get("labelSelector"), f"{path}.labelSelector")
        # matchLabelKeys: the pod's own values of those keys narrow the selector, as
        # kube-scheduler does (newer API servers merge them into labelSelector already).
        keys = r.strings(entry.get("matchLabelKeys"), f"{path}.matchLabelKeys")
        extra = {k: labels[k] for k in keys if k in labels}
        if selector is not None and extra:
            selector = _types.LabelSelector(
                match_labels={**selector.match_labels, **extra},
                match_expressions=selector.match_expressions,
            )
        policies = []
        for name, default in (("nodeAffinityPolicy", "Honor"), ("nodeTaintsPolicy", "Ignore")):
            value = r.string(entry.get(name), f"{path}.{name}") or default
            if value not in _SPREAD_POLICIES:
                r.fail(f"{path}.{name}", f"{value!r} is not one of Honor, Ignore")
            policies.append(value)
        result.append(
            _types.TopologySpreadConstraint(
                max_skew=max_skew,
                topology_key=topology_key,
                when_unsatisfiable=when,
                label_selector=selector,
                min_domains=(
                    None if min_domains is None else r.integer(min_domains, f"{path}.minDomains")
                ),
                node_affinity_policy=policies[0],
                node_taints_policy=policies[1],
            )
        )
    return tuple(result)


def affinity_term(r: _fields.FieldReader, item: Any, term_path: str) -> _types.PodAffinityTerm:
    term = r.mapping(item, term_path)
    topology_key = r.string(term.get("topologyKey"), f"{term_path}.topologyKey")
    if not topology_key:
        r.fail(f"{term_path}.topologyKey", "missing; pod affinity terms need a topologyKey")
    return _types.PodAffinityTerm(
        label_selector=label_selector(r, term.get("labelSelector"), f"{term_path}.labelSelector"),
        topology_key=topology_key,
        namespaces=r.strings(term.get("namespaces"), f"{term_path}.namespaces"),
        namespace_selector=label_selector(
            r, term.get("namespaceSelector"), f"{term_path}.namespaceSelector"
        ),
    )


def weighted_pod_affinity_terms(
    r: _fields.FieldReader, affinity: Mapping[str, Any], section: str
) -> tuple[_types.WeightedPodAffinityTerm, ...]:
    path = f"spec.affinity.{section}"
    rules = r.mapping(affinity.get(section), path)
    path += ".preferredDuringSchedulingIgnoredDuringExecution"
    terms = []
    for i, item in enumerate(
        r.sequence(rules.get("preferredDuringSchedulingIgnoredDuringExecution"), path)
    ):
        entry = r.mapping(item, f"{path}[{i}]")
        weight = r.integer(entry.get("weight"), f"{path}[{i}].weight")
        if not 1 <= weight <= 100:
            r.fail(f"{path}[{i}].weight", "must be between 1 and 100")
        term = affinity_term(r, entry.get("podAffinityTerm"), f"{path}[{i}].podAffinityTerm")
        terms.append(_types.WeightedPodAffinityTerm(weight=weight, term=term))
    return tuple(terms)


def pod_affinity_terms(
    r: _fields.FieldReader, affinity: Mapping[str, Any], section: str
) -> tuple[_types.PodAffinityTerm, ...]:
    # matchLabelKeys and mismatchLabelKeys need no reading: the API server merges
    # them into labelSelector when the pod is created.
    path = f"spec.affinity.{section}"
    rules = r.mapping(affinity.get(section), path)
    path += ".requiredDuringSchedulingIgnoredDuringExecution"
    terms = []
    for i, item in enumerate(
        r.sequence(rules.get("requiredDuringSchedulingIgnoredDuringExecution"), path)
    ):
        terms.append(affinity_term(r, item, f"{path}[{i}]"))
    return tuple(terms)
