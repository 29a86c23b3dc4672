"""A descheduler profile read: its DefaultEvictor's args in loadaware's names, and
its enabled plugins as strategies, each with the pods it looks at (its scope)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from loadaware import errors
from loadaware.convert import _issues, _names, _plugins, _values

RawArgs = Mapping[str, Any]


@dataclass(kw_only=True)
class Scope:
    """Which pods a strategy looks at: a plugin's namespaces and labelSelector."""

    namespaces: dict[str, list[str]] = field(default_factory=dict)
    label_selector: dict[str, Any] = field(default_factory=dict)

    def key(self) -> str:
        return repr((sorted(self.namespaces.items()), _values.canonical(self.label_selector)))


@dataclass(kw_only=True)
class Strategy:
    profile: str
    plugin: str
    strategy: str  # loadaware's Strategies field
    args: dict[str, Any]
    scope: Scope


@dataclass(kw_only=True)
class ProfileParts:
    name: str
    evictor: dict[str, Any]  # normalised DefaultEvictor args (loadaware names)
    strategies: list[Strategy] = field(default_factory=list)


def read_profile(issues: _issues.Issues, raw: Any, index: int) -> ProfileParts:
    if not isinstance(raw, Mapping):
        raise errors.InputError(f"profiles[{index}] must be a mapping")
    name = str(raw.get("name") or f"profile-{index}")
    where = f"profiles[{name}]"
    configs: dict[str, RawArgs] = {}
    for config in raw.get("pluginConfig") or []:
        if not isinstance(config, Mapping) or not config.get("name"):
            raise errors.InputError(f"{where}.pluginConfig: every entry needs a name")
        args = config.get("args") or {}
        if not isinstance(args, Mapping):
            raise errors.InputError(f"{where}.pluginConfig[{config['name']}].args: a mapping")
        configs[str(config["name"])] = args
    plugin_sets = {str(k).lower(): v for k, v in (raw.get("plugins") or {}).items()}
    enabled: list[tuple[str, str]] = []  # (extension point, plugin)
    for point in ("deschedule", "balance"):
        for plugin in (plugin_sets.get(point) or {}).get("enabled") or []:
            enabled.append((point, str(plugin)))
    for point in ("filter", "preevictionfilter"):
        plugin_set = plugin_sets.get(point) or {}
        for plugin in plugin_set.get("enabled") or []:
            if plugin != _names.DEFAULT_EVICTOR:
                issues.add(
                    f"{where}.plugins.{point}.enabled[{plugin}]",
                    "changes-behaviour",
                    "a custom evictor plugin: loadaware has only the DefaultEvictor's "
                    "checks (evictor, podProtections)",
                )
        if _names.DEFAULT_EVICTOR in (plugin_set.get("disabled") or []):
            issues.add(
                f"{where}.plugins.{point}.disabled",
                "changes-behaviour",
                "loadaware always applies the DefaultEvictor's checks",
            )
    for point in ("sort", "presort"):
        if (plugin_sets.get(point) or {}).get("enabled"):
            issues.add(
                f"{where}.plugins.{point}",
                "note",
                "loadaware's optimiser chooses which pods leave; sort plugins do not apply",
            )

    evictor = evictor_args(issues, configs.get(_names.DEFAULT_EVICTOR) or {}, where)
    parts = ProfileParts(name=name, evictor=evictor)
    seen: set[str] = set()
    for point, plugin in enabled:
        plugin_where = f"{where}.plugins.{point}.enabled[{plugin}]"
        if plugin in seen:
            continue
        seen.add(plugin)
        if plugin not in _names.BALANCE_PLUGINS | _names.DESCHEDULE_PLUGINS:
            issues.add(
                plugin_where,
                "changes-behaviour",
                "a plugin loadaware lacks: its evictions will not happen",
            )
            continue
        expected = "balance" if plugin in _names.BALANCE_PLUGINS else "deschedule"
        if point != expected:
            issues.add(
                plugin_where,
                "note",
                f"{plugin} is a {expected} plugin; the descheduler ignores it under {point}",
            )
            continue
        args = configs.get(plugin) or {}
        parts.strategies.append(
            read_strategy(issues, name, plugin, args, f"{where}.pluginConfig[{plugin}].args")
        )
    for plugin in configs:
        if plugin != _names.DEFAULT_EVICTOR and plugin not in seen:
            issues.add(
                f"{where}.pluginConfig[{plugin}]",
                "note",
                "configured but not enabled under plugins: not converted",
            )
    return parts


# DefaultEvictor ------------------------------------------------------------


def evictor_args(issues: _issues.Issues, args: RawArgs, where: str) -> dict[str, Any]:
    where = f"{where}.pluginConfig[{_names.DEFAULT_EVICTOR}].args"
    for key in args:
        if key not in _names.EVICTOR_ARGS:
            issues.add(f"{where}.{key}", "changes-behaviour", "unknown DefaultEvictor arg")
    evictor: dict[str, Any] = {
        # The descheduler's default is false; loadaware's is true.
        "nodeFit": bool(args.get("nodeFit", False)),
        "minReplicas": int(args.get("minReplicas") or 0),
    }
    if args.get("minPodAge"):
        evictor["minPodAge"] = _values.go_duration(args["minPodAge"], f"{where}.minPodAge")
    threshold = args.get("priorityThreshold")
    if isinstance(threshold, Mapping):
        value, name = threshold.get("value"), threshold.get("name")
        if value is not None and name:
            raise errors.InputError(
                f"{where}.priorityThreshold: set value or name, not both "
                "(the descheduler refuses both)"
            )
        if value is not None:
            evictor["priorityThreshold"] = {"value": int(value)}
        elif name:
            evictor["priorityThreshold"] = {"name": str(name)}
    protections = args.get("podProtections") or {}
    disabled = list(protections.get("defaultDisabled") or [])
    extra = list(protections.get("extraEnabled") or [])
    for flag, (target, protection) in _names.DEPRECATED_EVICTOR_FLAGS.items():
        if args.get(flag) is True:
            (disabled if target == "defaultDisabled" else extra).append(protection)
    if disabled or extra:
        evictor["podProtections"] = {
            key: list(dict.fromkeys(values))
            for key, values in (("defaultDisabled", disabled), ("extraEnabled", extra))
            if values
        }
    config = protections.get("config") or {}
    classes = ((config.get("PodsWithPVC") or {}).get("protectedStorageClasses")) or []
    if classes:
        issues.add(
            f"{where}.podProtections.config.PodsWithPVC.protectedStorageClasses",
            "changes-behaviour",
            "loadaware protects every pod with a PVC, not only those of these storage "
            "classes: pods with other PVCs will not be evicted",
        )
    policy = args.get("noEvictionPolicy") or "Preferred"
    if policy == "Mandatory":
        issues.add(
            f"{where}.noEvictionPolicy",
            "changes-behaviour",
            "loadaware treats descheduler.alpha.kubernetes.io/prefer-no-eviction as a "
            "preference (Preferred); annotate such pods loadaware.io/evict: never instead",
        )
    if args.get("namespaceLabelSelector"):
        issues.add(
            f"{where}.namespaceLabelSelector",
            "changes-behaviour",
            "loadaware selects namespaces by name only (evictor.namespaces): pods of "
            "every namespace become candidates",
        )
    if args.get("labelSelector"):
        evictor["labelSelector"] = _values.label_selector(args["labelSelector"])
    if args.get("nodeSelector"):
        evictor["nodeSelector"] = str(args["nodeSelector"])
    return evictor


def read_strategy(
    issues: _issues.Issues, profile: str, plugin: str, args: RawArgs, where: str
) -> Strategy:
    scope = Scope()
    namespaces_key = (
        "evictableNamespaces"
        if plugin in ("LowNodeUtilization", "HighNodeUtilization")
        else "namespaces"
    )
    raw_namespaces = args.get(namespaces_key) or {}
    include = list(raw_namespaces.get("include") or [])
    exclude = list(raw_namespaces.get("exclude") or [])
    if include and exclude:
        raise errors.InputError(
            f"{where}.{namespaces_key}: set include or exclude, not both "
            "(the descheduler refuses both)"
        )
    if include:
        scope.namespaces["include"] = include
    if exclude:
        scope.namespaces["exclude"] = exclude
    if args.get("labelSelector"):
        scope.label_selector = _values.label_selector(args["labelSelector"])
    handler = _plugins.ARGS_HANDLERS[plugin]
    known, converted = handler(issues, args, where)
    for key in args:
        if key not in known | {namespaces_key, "labelSelector"}:
            issues.add(f"{where}.{key}", "changes-behaviour", f"unknown {plugin} arg")
    return Strategy(
        profile=profile,
        plugin=plugin,
        strategy=_names.STRATEGY_OF.get(plugin, ""),
        args=converted,
        scope=scope,
    )
