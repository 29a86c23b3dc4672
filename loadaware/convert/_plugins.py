"""Each descheduler plugin's args as its loadaware strategy's: which args are known,
what they convert to, and what has no equivalent (issues)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from loadaware import errors
from loadaware.convert import _issues, _names

RawArgs = Mapping[str, Any]


def low_node_utilization(
    issues: _issues.Issues, args: RawArgs, where: str
) -> tuple[frozenset[str], dict[str, Any]]:
    converted: dict[str, Any] = {
        "thresholds": args.get("thresholds") or {},
        "targetThresholds": args.get("targetThresholds") or {},
        "useDeviationThresholds": bool(args.get("useDeviationThresholds")),
    }
    if int(args.get("numberOfNodes") or 0) > 0:
        issues.add(
            f"{where}.numberOfNodes",
            "changes-behaviour",
            "loadaware acts whenever a node is hot and a cooler one can take the pod, "
            "however few nodes are underutilised",
        )
    node_limit = (args.get("evictionLimits") or {}).get("node")
    if node_limit is not None:
        converted["nodeLimit"] = int(node_limit)
    converted["metricsUtilization"] = args.get("metricsUtilization") or {}
    return frozenset(
        {
            "thresholds",
            "targetThresholds",
            "useDeviationThresholds",
            "numberOfNodes",
            "evictionLimits",
            "metricsUtilization",
        }
    ), converted


def high_node_utilization(
    issues: _issues.Issues, args: RawArgs, where: str
) -> tuple[frozenset[str], dict[str, Any]]:
    if int(args.get("numberOfNodes") or 0) > 0:
        issues.add(
            f"{where}.numberOfNodes",
            "changes-behaviour",
            "consolidation empties nodes however few are underutilised",
        )
    if args.get("evictionModes"):
        issues.add(
            f"{where}.evictionModes",
            "note",
            "consolidation moves a node's pods only when every one of them has a "
            "feasible target, whatever it requests",
        )
    return frozenset({"thresholds", "numberOfNodes", "evictionModes"}), {
        "thresholds": args.get("thresholds") or {}
    }


def node_affinity(
    issues: _issues.Issues, args: RawArgs, where: str
) -> tuple[frozenset[str], dict[str, Any]]:
    types = list(args.get("nodeAffinityType") or [])
    if not types:
        issues.add(
            f"{where}.nodeAffinityType",
            "note",
            "not set (the descheduler refuses that); "
            "requiredDuringSchedulingIgnoredDuringExecution assumed",
        )
        types = ["requiredDuringSchedulingIgnoredDuringExecution"]
    return frozenset({"nodeAffinityType"}), {"nodeAffinityType": types}


def node_taints(
    issues: _issues.Issues, args: RawArgs, where: str
) -> tuple[frozenset[str], dict[str, Any]]:
    converted: dict[str, Any] = {}
    if args.get("includePreferNoSchedule"):
        converted["includePreferNoSchedule"] = True
    for key in ("excludedTaints", "includedTaints"):
        if args.get(key):
            converted[key] = [str(t) for t in args[key]]
    return frozenset({"includePreferNoSchedule", "excludedTaints", "includedTaints"}), (converted)


def anti_affinity(
    issues: _issues.Issues, args: RawArgs, where: str
) -> tuple[frozenset[str], dict[str, Any]]:
    return frozenset(), {}


def duplicates(
    issues: _issues.Issues, args: RawArgs, where: str
) -> tuple[frozenset[str], dict[str, Any]]:
    kinds = [str(k) for k in args.get("excludeOwnerKinds") or []]
    return frozenset({"excludeOwnerKinds"}), ({"excludeOwnerKinds": kinds} if kinds else {})


def topology_spread(
    issues: _issues.Issues, args: RawArgs, where: str
) -> tuple[frozenset[str], dict[str, Any]]:
    constraints = list(args.get("constraints") or ["DoNotSchedule"])
    if args.get("topologyBalanceNodeFit") is False:
        issues.add(
            f"{where}.topologyBalanceNodeFit",
            "note",
            "loadaware balances topology domains only onto nodes the pod fits",
        )
    return frozenset({"constraints", "topologyBalanceNodeFit"}), {"constraints": constraints}


def pod_life_time(
    issues: _issues.Issues, args: RawArgs, where: str
) -> tuple[frozenset[str], dict[str, Any]]:
    # Without maxPodLifeTimeSeconds the descheduler does not filter by age: 0 is every age.
    converted: dict[str, Any] = {
        "maxPodLifeTimeSeconds": int(args.get("maxPodLifeTimeSeconds") or 0)
    }
    states = list(args.get("states") or []) + list(args.get("podStatusPhases") or [])
    if states:
        converted["states"] = list(dict.fromkeys(states))
    for key, why in (
        ("ownerKinds", "loadaware's PodLifeTime does not filter by owner kind"),
        ("conditions", "loadaware's PodLifeTime does not filter by pod conditions"),
        ("exitCodes", "loadaware's PodLifeTime does not filter by exit codes"),
        ("includingInitContainers", "loadaware's PodLifeTime reads app containers only"),
        ("includingEphemeralContainers", "loadaware's PodLifeTime reads app containers only"),
    ):
        if args.get(key):
            issues.add(f"{where}.{key}", "changes-behaviour", why)
    return frozenset(
        {
            "maxPodLifeTimeSeconds",
            "states",
            "podStatusPhases",
            "ownerKinds",
            "conditions",
            "exitCodes",
            "includingInitContainers",
            "includingEphemeralContainers",
        }
    ), converted


def too_many_restarts(
    issues: _issues.Issues, args: RawArgs, where: str
) -> tuple[frozenset[str], dict[str, Any]]:
    threshold = int(args.get("podRestartThreshold") or 0)
    if threshold < 1:
        raise errors.InputError(
            f"{where}.podRestartThreshold must be at least 1 (the descheduler refuses less)"
        )
    converted: dict[str, Any] = {"podRestartThreshold": threshold}
    if args.get("includingInitContainers"):
        converted["includingInitContainers"] = True
    if args.get("states"):
        converted["states"] = list(args["states"])
    return frozenset({"podRestartThreshold", "includingInitContainers", "states"}), converted


def failed_pods(
    issues: _issues.Issues, args: RawArgs, where: str
) -> tuple[frozenset[str], dict[str, Any]]:
    lifetime = args.get("minPodLifetimeSeconds")
    converted: dict[str, Any] = {
        # The descheduler defaults it to an hour; loadaware's default is no minimum.
        "minPodLifetimeSeconds": int(
            _names.FAILED_PODS_MIN_LIFETIME_SECONDS if lifetime is None else lifetime
        )
    }
    for key in ("reasons", "excludeOwnerKinds"):
        if args.get(key):
            converted[key] = [str(v) for v in args[key]]
    if args.get("exitCodes"):
        converted["exitCodes"] = [int(v) for v in args["exitCodes"]]
    if args.get("includingInitContainers"):
        converted["includingInitContainers"] = True
    return frozenset(
        {
            "minPodLifetimeSeconds",
            "reasons",
            "exitCodes",
            "excludeOwnerKinds",
            "includingInitContainers",
        }
    ), converted


ArgsHandler = Callable[[_issues.Issues, RawArgs, str], tuple[frozenset[str], dict[str, Any]]]
ARGS_HANDLERS: Mapping[str, ArgsHandler] = {
    "LowNodeUtilization": low_node_utilization,
    "HighNodeUtilization": high_node_utilization,
    "RemovePodsViolatingNodeAffinity": node_affinity,
    "RemovePodsViolatingNodeTaints": node_taints,
    "RemovePodsViolatingInterPodAntiAffinity": anti_affinity,
    "RemoveDuplicates": duplicates,
    "RemovePodsViolatingTopologySpreadConstraint": topology_spread,
    "PodLifeTime": pod_life_time,
    "RemovePodsHavingTooManyRestarts": too_many_restarts,
    "RemoveFailedPods": failed_pods,
}
