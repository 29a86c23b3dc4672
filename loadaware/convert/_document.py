"""A descheduler/v1alpha2 policy as a LoadAwarePolicy document: one evictor, node
pool, metrics source, limits and consolidation for the whole policy, and one
loadaware profile per descheduler profile and scope."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from loadaware import errors
from loadaware.convert import _issues, _names, _profiles, _values


def convert(issues: _issues.Issues, data: Mapping[str, Any]) -> dict[str, Any]:
    """The v1alpha2 policy as a LoadAwarePolicy file has it (camelCase, only what is
    set); what differs goes to `issues`."""
    for key in data:
        if key not in _names.TOP_LEVEL_V1ALPHA2:
            issues.add(key, "changes-behaviour", "unknown field; the descheduler refuses it")
    document: dict[str, Any] = {
        "apiVersion": "loadaware.io/v1alpha1",
        "kind": "LoadAwarePolicy",
    }
    raw_profiles = data.get("profiles") or []
    if not isinstance(raw_profiles, list):
        raise errors.InputError("profiles must be a list")
    parts = [_profiles.read_profile(issues, p, i) for i, p in enumerate(raw_profiles)]

    # Metrics: which source LowNodeUtilization reads, else the one configured.
    lnu = [s for p in parts for s in p.strategies if s.plugin == "LowNodeUtilization"]
    hnu = [s for p in parts for s in p.strategies if s.plugin == "HighNodeUtilization"]
    document["metrics"] = _metrics(issues, data, lnu)

    # Node pools: the thresholds of LowNodeUtilization, on the nodes selected.
    node_selector = _node_selector(issues, data, parts)
    document["nodePools"] = [_node_pool(issues, node_selector, lnu, bool(hnu or parts))]

    document["evictor"] = _evictor(issues, data, parts)
    limits = _limits(issues, data, lnu, parts)
    if limits:
        document["limits"] = limits
    document["profiles"] = _loadaware_profiles(issues, parts)
    if hnu:
        document["consolidation"] = _consolidation(issues, hnu, lnu)
        namespaces = hnu[0].scope.namespaces
        others = [s for p in parts for s in p.strategies if s.plugin != "HighNodeUtilization"]
        if namespaces and not others:
            # Consolidation has no scope of its own; with nothing else to run, the
            # evictor's namespaces are the same thing.
            document["evictor"]["namespaces"] = dict(namespaces)
        elif namespaces:
            issues.add(
                f"profiles[{hnu[0].profile}].pluginConfig[HighNodeUtilization].args"
                ".evictableNamespaces",
                "changes-behaviour",
                "consolidation has no namespace scope of its own, and other strategies "
                "run too: these namespaces are not excluded from consolidation",
            )
    if data.get("evictionFailureEventNotification"):
        issues.add(
            "evictionFailureEventNotification",
            "note",
            "loadaware always posts an Event (LoadawareEvictionSkipped) for a planned "
            "eviction it did not make",
        )
    issues.add(
        "(whole policy)",
        "note",
        "loadaware keeps its own safety defaults: a workload moved is not moved again "
        "within limits.cooldown (30m), every replacement is verified, and a bad landing "
        "opens the breaker",
    )
    return document


def _evictor(
    issues: _issues.Issues, data: Mapping[str, Any], parts: list[_profiles.ProfileParts]
) -> dict[str, Any]:
    """One evictor for the whole policy: loadaware has no per-profile evictor."""
    first = parts[0].evictor if parts else _profiles.evictor_args(issues, {}, "profiles[]")
    evictor = {k: v for k, v in first.items() if k not in ("labelSelector", "nodeSelector")}
    for other in parts[1:]:
        for key in sorted(set(first) | set(other.evictor)):
            if key in ("labelSelector", "nodeSelector"):
                continue  # per profile (labelSelector) and per node pool (nodeSelector)
            if first.get(key) != other.evictor.get(key):
                issues.add(
                    f"profiles[{other.name}].pluginConfig[{_names.DEFAULT_EVICTOR}].args.{key}",
                    "changes-behaviour",
                    f"loadaware has one evictor: the first profile's {key} "
                    f"({first.get(key)!r}) applies to every profile",
                )
    selectors = [p.evictor.get("labelSelector") or {} for p in parts]
    if (
        selectors
        and selectors[0]
        and all(_values.canonical(s) == _values.canonical(selectors[0]) for s in selectors)
    ):
        evictor["labelSelector"] = selectors[0]
    if data.get("gracePeriodSeconds") is not None:
        evictor["gracePeriodSeconds"] = int(data["gracePeriodSeconds"])
    if not evictor["nodeFit"]:
        issues.add(
            f"profiles[].pluginConfig[{_names.DEFAULT_EVICTOR}].args.nodeFit",
            "note",
            "nodeFit: false kept, but loadaware still predicts where every replacement "
            "lands and plans no eviction whose replacement would bounce back",
        )
    return evictor


def _loadaware_profiles(
    issues: _issues.Issues, parts: list[_profiles.ProfileParts]
) -> list[dict[str, Any]]:
    """One loadaware profile per descheduler profile and scope: a loadaware profile
    has one namespaces/labelSelector for all its strategies, so plugins of one
    descheduler profile with different scopes become profiles of their own."""
    distinct_selectors = len(
        {_values.canonical(p.evictor.get("labelSelector") or {}) for p in parts}
    )
    profiles: list[dict[str, Any]] = []
    used: set[str] = set()
    for part in parts:
        groups: dict[str, list[_profiles.Strategy]] = {}
        for strategy in part.strategies:
            if strategy.plugin == "HighNodeUtilization":
                continue  # consolidation is policy-wide
            groups.setdefault(strategy.scope.key(), []).append(strategy)
        evictor_selector = (
            (part.evictor.get("labelSelector") or {}) if distinct_selectors > 1 else {}
        )
        for index, members in enumerate(groups.values()):
            name = part.name if index == 0 else f"{part.name}-{_values.kebab(members[0].plugin)}"
            while name in used:
                name += "-2"
            used.add(name)
            scope = members[0].scope
            profile: dict[str, Any] = {"name": name}
            if scope.namespaces:
                profile["namespaces"] = dict(scope.namespaces)
            selector = _values.merge_selectors(scope.label_selector, evictor_selector)
            if selector:
                profile["labelSelector"] = selector
            strategies: dict[str, Any] = {"loadBalancing": {"enabled": False}}
            for member in members:
                if member.plugin == "LowNodeUtilization":
                    strategies["loadBalancing"] = {"enabled": True}
                else:
                    strategies[member.strategy] = {"enabled": True, **member.args}
            profile["strategies"] = strategies
            profiles.append(profile)
    if not profiles:
        # No profile at all would mean loadaware's implicit one, which balances load.
        name = parts[0].name if parts else "default"
        profiles.append({"name": name, "strategies": {"loadBalancing": {"enabled": False}}})
    return profiles


def _node_selector(
    issues: _issues.Issues, data: Mapping[str, Any], parts: list[_profiles.ProfileParts]
) -> dict[str, str]:
    """The nodes the descheduler processes: the top-level nodeSelector and the
    DefaultEvictor's, both as matchLabels of the one node pool."""
    selectors: list[tuple[str, str]] = []
    if data.get("nodeSelector"):
        selectors.append(("nodeSelector", str(data["nodeSelector"])))
    evictor_selectors = {p.evictor.get("nodeSelector") for p in parts}
    if len(evictor_selectors - {None}) > 0:
        if len(evictor_selectors) > 1:
            issues.add(
                f"profiles[].pluginConfig[{_names.DEFAULT_EVICTOR}].args.nodeSelector",
                "changes-behaviour",
                "profiles select different nodes; loadaware's node pools hold for "
                "every profile: the first profile's selector is used",
            )
        first = parts[0].evictor.get("nodeSelector")
        if first:
            selectors.append(
                (f"profiles[{parts[0].name}].pluginConfig[{_names.DEFAULT_EVICTOR}].args.nodeSelector",
                 first)
            )  # fmt: skip
    labels: dict[str, str] = {}
    for where, text in selectors:
        for term in (t.strip() for t in text.split(",")):
            if not term:
                continue
            match = re.fullmatch(r"([^=!\s]+)\s*==?\s*([^=!\s]*)", term)
            if match is None:
                issues.add(
                    where,
                    "changes-behaviour",
                    f"{term!r}: node pools select by labels equal to values only; "
                    "this term is dropped and more nodes are processed",
                )
                continue
            key, value = match.groups()
            if labels.get(key, value) != value:
                issues.add(where, "changes-behaviour", f"{key} asked to be both values")
            labels[key] = value
    return labels


def _node_pool(
    issues: _issues.Issues,
    node_selector: dict[str, str],
    lnu: list[_profiles.Strategy],
    any_strategy: bool,
) -> dict[str, Any]:
    pool: dict[str, Any] = {"name": "default"}
    if node_selector:
        pool["nodeSelector"] = node_selector
    if not lnu:
        if any_strategy:
            issues.add(
                "(no LowNodeUtilization)",
                "note",
                "nodePools keep loadaware's default thresholds; pods that must move are "
                "placed only on nodes that stay under targetThresholds",
            )
        return pool
    first = lnu[0]
    for other in lnu[1:]:
        if _values.canonical(other.args) != _values.canonical(first.args):
            issues.add(
                f"profiles[{other.profile}].pluginConfig[LowNodeUtilization].args",
                "changes-behaviour",
                "a second LowNodeUtilization configuration: loadaware's thresholds are "
                f"per node pool, so profile {first.profile}'s hold for every profile",
            )
    where = f"profiles[{first.profile}].pluginConfig[LowNodeUtilization].args"
    thresholds = _percents(issues, first.args["thresholds"], f"{where}.thresholds")
    targets = _percents(issues, first.args["targetThresholds"], f"{where}.targetThresholds")
    if targets and set(thresholds) == set(targets):
        pool["thresholds"], pool["targetThresholds"] = thresholds, targets
    else:
        issues.add(
            f"{where}.targetThresholds",
            "changes-behaviour",
            "no cpu or memory thresholds left to judge by: loadaware's defaults are used",
        )
    if first.args["useDeviationThresholds"]:
        pool["useDeviationThresholds"] = True
    return pool


def _percents(issues: _issues.Issues, raw: Any, where: str) -> dict[str, float]:
    if not isinstance(raw, Mapping):
        raise errors.InputError(f"{where} must map resource names to percentages")
    percents: dict[str, float] = {}
    for resource, value in raw.items():
        if resource in ("cpu", "memory", "pods"):
            # pods: the node's pod count over allocatable pods, in both tools.
            percents[resource] = _values.number(value)
        elif resource == _names.METRIC_RESOURCE:
            # One 0-1 value per node from the user's query: loadaware judges cpu and
            # memory separately with its own queries, so the same percentage is applied
            # to both, which is a guess.
            issues.add(
                f"{where}.{resource}",
                "changes-behaviour",
                "a Prometheus query's single utilisation value has no equivalent: "
                "loadaware judges cpu and memory with its own queries; "
                "this percentage was applied to both",
            )
            percents.setdefault("cpu", _values.number(value))
            percents.setdefault("memory", _values.number(value))
        else:
            issues.add(
                f"{where}.{resource}",
                "changes-behaviour",
                "loadaware has no thresholds for extended resources",
            )
    # The descheduler treats a resource it is not given as 100%; loadaware does not
    # judge it, which is the same for hot (never over 100) and for cold.
    return percents


def _metrics(
    issues: _issues.Issues, data: Mapping[str, Any], lnu: list[_profiles.Strategy]
) -> dict[str, Any]:
    providers: dict[str, Mapping[str, Any]] = {}
    if (data.get("metricsCollector") or {}).get("enabled"):
        providers["KubernetesMetrics"] = {}
    for provider in data.get("metricsProviders") or []:
        source = str((provider or {}).get("source") or "")
        providers.setdefault(source, provider or {})
    if data.get("prometheus"):
        providers.setdefault("Prometheus", {"prometheus": data["prometheus"]})
    wanted = ""
    if lnu:
        utilization = lnu[0].args["metricsUtilization"]
        if utilization.get("metricsServer") or utilization.get("source") == ("KubernetesMetrics"):
            wanted = "KubernetesMetrics"
        elif utilization.get("source") == "Prometheus" or utilization.get("prometheus"):
            wanted = "Prometheus"
            if (utilization.get("prometheus") or {}).get("query"):
                issues.add(
                    "pluginConfig[LowNodeUtilization].args.metricsUtilization.prometheus.query",
                    "changes-behaviour",
                    "loadaware reads node and pod cpu and memory with its own queries "
                    "(metrics.prometheus.queries), not one utilisation value per node",
                )
        else:
            issues.add(
                "pluginConfig[LowNodeUtilization].args",
                "note",
                "the descheduler judged pod requests; loadaware judges what nodes and "
                "pods use, from the metrics source below",
            )
    if not wanted:
        wanted = "KubernetesMetrics" if "KubernetesMetrics" in providers else ""
        wanted = wanted or ("Prometheus" if "Prometheus" in providers else "")
    if wanted == "Prometheus" and "Prometheus" in providers:
        return {"prometheus": _prometheus(issues, providers["Prometheus"])}
    if wanted == "Prometheus":
        issues.add(
            "metricsProviders",
            "changes-behaviour",
            "LowNodeUtilization reads Prometheus but no Prometheus provider is "
            "configured: metrics-server is used",
        )
    elif not wanted:
        issues.add(
            "metricsProviders",
            "note",
            "none configured: loadaware reads usage from metrics-server (metrics.k8s.io)",
        )
    return {"metricsServer": {}}


def _prometheus(issues: _issues.Issues, provider: Mapping[str, Any]) -> dict[str, Any]:
    raw = provider.get("prometheus") or {}
    url = raw.get("url")
    if not url:
        raise errors.InputError("metricsProviders: a Prometheus provider needs prometheus.url")
    prometheus: dict[str, Any] = {"url": str(url)}
    reference = (raw.get("authToken") or {}).get("secretReference")
    if reference:
        prometheus["authToken"] = {
            "secretReference": {
                "namespace": str(reference.get("namespace") or ""),
                "name": str(reference.get("name") or ""),
                "key": _names.PROMETHEUS_TOKEN_KEY,
            }
        }
    else:
        prometheus["tokenFile"] = _names.SERVICE_ACCOUNT_TOKEN_FILE
    return prometheus


def _limits(
    issues: _issues.Issues,
    data: Mapping[str, Any],
    lnu: list[_profiles.Strategy],
    parts: list[_profiles.ProfileParts],
) -> dict[str, Any]:
    limits: dict[str, Any] = {}
    for key in (
        "maxNoOfPodsToEvictPerNode",
        "maxNoOfPodsToEvictPerNamespace",
        "maxNoOfPodsToEvictTotal",
    ):
        if data.get(key) is not None:
            limits[key] = int(data[key])
    node_limits = [s.args["nodeLimit"] for s in lnu if "nodeLimit" in s.args]
    if node_limits:
        node_limit = min(node_limits)
        current = limits.get("maxNoOfPodsToEvictPerNode")
        limits["maxNoOfPodsToEvictPerNode"] = (
            node_limit if current is None else min(current, node_limit)
        )
        others = [s.plugin for p in parts for s in p.strategies if s.plugin != "LowNodeUtilization"]
        if others:
            issues.add(
                "pluginConfig[LowNodeUtilization].args.evictionLimits.node",
                "note",
                "loadaware's limits are shared by all strategies: this per-node limit "
                f"now also bounds {', '.join(sorted(set(others)))}",
            )
    return limits


def _consolidation(
    issues: _issues.Issues, hnu: list[_profiles.Strategy], lnu: list[_profiles.Strategy]
) -> dict[str, Any]:
    where = f"profiles[{hnu[0].profile}].pluginConfig[HighNodeUtilization].args.thresholds"
    thresholds = _percents(issues, hnu[0].args["thresholds"], where)
    if lnu:
        issues.add(
            "plugins.balance.enabled[HighNodeUtilization]",
            "changes-behaviour",
            "HighNodeUtilization together with LowNodeUtilization: one empties nodes the "
            "other fills; loadaware plans both in one round, which the descheduler never "
            "did",
        )
    issues.add(
        "plugins.balance.enabled[HighNodeUtilization]",
        "note",
        "consolidation empties at most consolidation.maxNodesPerRound (1) nodes per "
        "round, and only nodes whose every pod has a target; it does not need "
        "kube-scheduler's MostAllocated scoring",
    )
    consolidation: dict[str, Any] = {"enabled": True}
    if thresholds:
        consolidation["thresholds"] = thresholds
    return consolidation
