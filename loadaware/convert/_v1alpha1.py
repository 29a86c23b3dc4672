"""descheduler/v1alpha1 as v1alpha2, the way the descheduler itself migrated it
(pkg/api/v1alpha1, until v0.31): one profile per enabled strategy, named
strategy-<Name>-profile, with the top-level evict* flags and the strategy's
nodeFit and thresholdPriority as its DefaultEvictor's args."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadaware import errors
from loadaware.convert import _issues, _names


def to_v1alpha2(issues: _issues.Issues, data: Mapping[str, Any]) -> dict[str, Any]:
    """As the descheduler's own v1alpha1 migration (pkg/api/v1alpha1, until v0.31):
    one profile per enabled strategy, named strategy-<Name>-profile."""
    for key in data:
        if key not in _names.TOP_LEVEL_V1ALPHA1:
            issues.add(key, "changes-behaviour", "unknown field; the descheduler refuses it")
    evictor_flags = {
        flag: True
        for flag in (
            "evictLocalStoragePods",
            "evictDaemonSetPods",
            "evictSystemCriticalPods",
            "evictFailedBarePods",
            "ignorePvcPods",
        )
        if data.get(flag) is True
    }
    strategies = data.get("strategies") or {}
    if not isinstance(strategies, Mapping):
        raise errors.InputError(
            f"strategies must be a map of strategy name to settings, got {strategies!r}"
        )
    profiles: list[dict[str, Any]] = []
    for name, raw_strategy in strategies.items():
        where = f"strategies.{name}"
        strategy = raw_strategy if isinstance(raw_strategy, Mapping) else {}
        if not strategy.get("enabled"):
            issues.add(where, "note", "not enabled: nothing to convert")
            continue
        if name not in _names.STRATEGY_OF and name != "HighNodeUtilization":
            # The descheduler refuses an unknown strategy; loadaware cannot run it either.
            issues.add(where, "changes-behaviour", "unknown strategy: not converted")
            continue
        if strategy.get("weight"):
            issues.add(f"{where}.weight", "note", "weights were never used by the descheduler")
        params = strategy.get("params") or {}
        evictor: dict[str, Any] = dict(evictor_flags)
        if name != "PodLifeTime":  # the migration never gave PodLifeTime nodeFit
            evictor["nodeFit"] = bool(params.get("nodeFit"))
        if params.get("thresholdPriority") is not None:
            evictor["priorityThreshold"] = {"value": params["thresholdPriority"]}
        if params.get("thresholdPriorityClassName"):
            evictor.setdefault("priorityThreshold", {})["name"] = params[
                "thresholdPriorityClassName"
            ]
        kind = "balance" if name in _names.BALANCE_PLUGINS else "deschedule"
        profiles.append(
            {
                "name": f"strategy-{name}-profile",
                "pluginConfig": [
                    {"name": _names.DEFAULT_EVICTOR, "args": evictor},
                    {"name": name, "args": plugin_args(name, params)},
                ],
                "plugins": {kind: {"enabled": [name]}},
            }
        )
    converted: dict[str, Any] = {
        "apiVersion": _names.API_V1ALPHA2,
        "kind": "DeschedulerPolicy",
        "profiles": profiles,
    }
    for key in (
        "nodeSelector",
        "maxNoOfPodsToEvictPerNode",
        "maxNoOfPodsToEvictPerNamespace",
        "maxNoOfPodsToEvictTotal",
    ):
        if data.get(key) is not None:
            converted[key] = data[key]
    return converted


def plugin_args(name: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """A v1alpha1 strategy's params as its v1alpha2 plugin's args (pkg/api/v1alpha1
    strategymigration.go, with includedTaints and maxNoOfPodsToEvictTotal kept,
    which that migration dropped)."""
    args: dict[str, Any] = {}
    scoped = name not in ("LowNodeUtilization", "HighNodeUtilization")
    if params.get("namespaces"):
        args["namespaces" if scoped else "evictableNamespaces"] = params["namespaces"]
    if params.get("labelSelector") and name not in (
        "RemoveDuplicates",
        "LowNodeUtilization",
        "HighNodeUtilization",
    ):
        args["labelSelector"] = params["labelSelector"]
    thresholds = params.get("nodeResourceUtilizationThresholds") or {}
    if name == "LowNodeUtilization":
        for key in ("thresholds", "targetThresholds", "useDeviationThresholds", "numberOfNodes"):
            if thresholds.get(key) is not None:
                args[key] = thresholds[key]
    elif name == "HighNodeUtilization":
        for key in ("thresholds", "numberOfNodes"):
            if thresholds.get(key) is not None:
                args[key] = thresholds[key]
    elif name == "RemovePodsViolatingNodeAffinity":
        args["nodeAffinityType"] = params.get("nodeAffinityType") or []
    elif name == "RemovePodsViolatingNodeTaints":
        for key in ("includePreferNoSchedule", "excludedTaints", "includedTaints"):
            if params.get(key):
                args[key] = params[key]
    elif name == "RemovePodsViolatingTopologySpreadConstraint":
        args["constraints"] = ["DoNotSchedule"] + (
            ["ScheduleAnyway"] if params.get("includeSoftConstraints") else []
        )
    elif name == "RemovePodsHavingTooManyRestarts":
        restarts = params.get("podsHavingTooManyRestarts") or {}
        args["podRestartThreshold"] = restarts.get("podRestartThreshold") or 0
        if restarts.get("includingInitContainers"):
            args["includingInitContainers"] = True
    elif name == "PodLifeTime":
        lifetime = params.get("podLifeTime") or {}
        for key in ("maxPodLifeTimeSeconds", "states", "podStatusPhases"):
            if lifetime.get(key) is not None:
                args[key] = lifetime[key]
    elif name == "RemoveDuplicates":
        kinds = (params.get("removeDuplicates") or {}).get("excludeOwnerKinds")
        if kinds:
            args["excludeOwnerKinds"] = kinds
    elif name == "RemoveFailedPods":
        failed = params.get("failedPods") or {}
        for key in (
            "excludeOwnerKinds",
            "minPodLifetimeSeconds",
            "reasons",
            "includingInitContainers",
        ):
            if failed.get(key) is not None:
                args[key] = failed[key]
    return args
