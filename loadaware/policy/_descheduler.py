"""Converting a kubernetes-sigs/descheduler DeschedulerPolicy into a LoadAwarePolicy.

Reads `descheduler/v1alpha2` (profiles of plugins with their pluginConfig) and
the older `descheduler/v1alpha1` (a map of strategies with params), either bare
or inside the ConfigMap the descheduler's Helm chart mounts (`policy.yaml`).
v1alpha1 is first turned into v1alpha2 the way the descheduler itself did it
before v0.31 (one profile per enabled strategy, the top-level evict* flags and
the strategy's nodeFit and thresholdPriority as its DefaultEvictor's args), then
both go through one converter.

Every source setting either maps onto a LoadAwarePolicy field with the same
meaning, or is reported as a ConversionIssue saying why it does not:

- `changes-behaviour`: the converted policy could evict pods the source would
  have left alone, or leave alone pods it asked to move, in a way the user did
  not ask for (numberOfNodes, a plugin loadaware lacks,
  HighNodeUtilization beside LowNodeUtilization, per-profile evictor settings
  that differ). The CLI exits 2 on any of these.
- `note`: a difference that is inherent to loadaware or only makes it more
  careful (usage instead of requests, placement predicted for every eviction,
  the cooldown between rounds), or a setting with no effect.

Pure: apart from reading the file in load_descheduler_policy, no I/O.
"""

from __future__ import annotations

import os
import pathlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from loadaware import errors
from loadaware.policy import _duration, _load, _model

Severity = Literal["changes-behaviour", "note"]
RawArgs = Mapping[str, Any]

API_V1ALPHA1 = "descheduler/v1alpha1"
API_V1ALPHA2 = "descheduler/v1alpha2"
DEFAULT_EVICTOR = "DefaultEvictor"
# The key the descheduler reads a Prometheus token from in its secretReference.
PROMETHEUS_TOKEN_KEY = "prometheusAuthToken"
# Without authToken the descheduler sends its own service account token.
SERVICE_ACCOUNT_TOKEN_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/token"
# The resource name LowNodeUtilization's thresholds use with a Prometheus query.
METRIC_RESOURCE = "MetricResource"
# descheduler's defaults where loadaware's differ.
FAILED_PODS_MIN_LIFETIME_SECONDS = 3600

BALANCE_PLUGINS = frozenset(
    {
        "LowNodeUtilization",
        "HighNodeUtilization",
        "RemoveDuplicates",
        "RemovePodsViolatingTopologySpreadConstraint",
    }
)
DESCHEDULE_PLUGINS = frozenset(
    {
        "RemovePodsViolatingNodeAffinity",
        "RemovePodsViolatingNodeTaints",
        "RemovePodsViolatingInterPodAntiAffinity",
        "PodLifeTime",
        "RemovePodsHavingTooManyRestarts",
        "RemoveFailedPods",
    }
)
# descheduler plugin -> loadaware strategy (Strategies field, camelCase).
STRATEGY_OF: Mapping[str, str] = {
    "LowNodeUtilization": "loadBalancing",
    "RemovePodsViolatingNodeAffinity": "removePodsViolatingNodeAffinity",
    "RemovePodsViolatingNodeTaints": "removePodsViolatingNodeTaints",
    "RemovePodsViolatingInterPodAntiAffinity": "removePodsViolatingInterPodAntiAffinity",
    "RemoveDuplicates": "removeDuplicates",
    "RemovePodsViolatingTopologySpreadConstraint": "removePodsViolatingTopologySpreadConstraint",
    "PodLifeTime": "podLifeTime",
    "RemovePodsHavingTooManyRestarts": "removePodsHavingTooManyRestarts",
    "RemoveFailedPods": "removeFailedPods",
}
_DEPRECATED_EVICTOR_FLAGS: Mapping[str, tuple[str, str]] = {
    # flag: (podProtections list, protection)
    "evictLocalStoragePods": ("defaultDisabled", "PodsWithLocalStorage"),
    "evictDaemonSetPods": ("defaultDisabled", "DaemonSetPods"),
    "evictSystemCriticalPods": ("defaultDisabled", "SystemCriticalPods"),
    "evictFailedBarePods": ("defaultDisabled", "FailedBarePods"),
    "ignorePvcPods": ("extraEnabled", "PodsWithPVC"),
    "ignorePodsWithoutPDB": ("extraEnabled", "PodsWithoutPDB"),
}
_EVICTOR_ARGS = frozenset(
    {
        "nodeSelector",
        "labelSelector",
        "namespaceLabelSelector",
        "priorityThreshold",
        "nodeFit",
        "minReplicas",
        "minPodAge",
        "noEvictionPolicy",
        "podProtections",
        *_DEPRECATED_EVICTOR_FLAGS,
    }
)
_TOP_LEVEL_V1ALPHA2 = frozenset(
    {
        "apiVersion",
        "kind",
        "profiles",
        "nodeSelector",
        "maxNoOfPodsToEvictPerNode",
        "maxNoOfPodsToEvictPerNamespace",
        "maxNoOfPodsToEvictTotal",
        "evictionFailureEventNotification",
        "metricsCollector",
        "metricsProviders",
        "gracePeriodSeconds",
        # Listed in the descheduler README's top-level table.
        "prometheus",
    }
)
_TOP_LEVEL_V1ALPHA1 = frozenset(
    {
        "apiVersion",
        "kind",
        "strategies",
        "nodeSelector",
        "evictFailedBarePods",
        "evictLocalStoragePods",
        "evictSystemCriticalPods",
        "evictDaemonSetPods",
        "ignorePvcPods",
        "maxNoOfPodsToEvictPerNode",
        "maxNoOfPodsToEvictPerNamespace",
        "maxNoOfPodsToEvictTotal",
    }
)
_KEBAB = re.compile(r"(?<!^)(?=[A-Z])")


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversionIssue:
    source: str  # where in the DeschedulerPolicy, e.g. profiles[p].pluginConfig[X].args.y
    severity: Severity
    why: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Conversion:
    source_version: str  # descheduler/v1alpha1 or descheduler/v1alpha2
    document: dict[str, Any]  # the LoadAwarePolicy as a file has it (camelCase, only what is set)
    policy: _model.LoadAwarePolicy
    issues: tuple[ConversionIssue, ...]

    @property
    def changes_behaviour(self) -> bool:
        return any(i.severity == "changes-behaviour" for i in self.issues)


def load_descheduler_policy(path: str | os.PathLike[str]) -> Conversion:
    """Read a DeschedulerPolicy file (YAML or JSON) and convert it.

    InputError when the file cannot be read, is not a DeschedulerPolicy, or holds
    values the descheduler itself would refuse in a way nothing can be made of."""
    file = pathlib.Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise errors.InputError(f"descheduler policy file {file} does not exist") from None
    except UnicodeDecodeError as exc:
        raise errors.InputError(f"{file} is not UTF-8 text: {exc.reason}") from None
    except OSError as exc:
        raise errors.InputError(f"cannot read {file}: {exc.strerror}") from exc
    # JSON is YAML; the strict loader refuses repeated keys in both.
    data = _load._parse_yaml(text, file)
    return convert_descheduler_policy(data, source=str(file))


def convert_descheduler_policy(data: Any, *, source: str = "descheduler policy") -> Conversion:
    """The LoadAwarePolicy equivalent to a parsed DeschedulerPolicy, and what differs."""
    data = _unwrap_config_map(data, source)
    if not isinstance(data, Mapping):
        raise errors.InputError(f"{source} is not a DeschedulerPolicy (not a mapping)")
    kind = data.get("kind")
    api_version = data.get("apiVersion")
    if kind != "DeschedulerPolicy" or api_version not in (API_V1ALPHA1, API_V1ALPHA2):
        raise errors.InputError(
            f"{source} is not a DeschedulerPolicy (apiVersion {api_version!r}, kind {kind!r})",
            hint=f"expected kind DeschedulerPolicy, apiVersion {API_V1ALPHA2} or {API_V1ALPHA1}",
        )
    converter = _Converter()
    if api_version == API_V1ALPHA1:
        data = converter.v1alpha1_to_v1alpha2(data)
    document = converter.convert(data)
    try:
        converted = _load.parse_policy(document, source="converted policy")
    except errors.PolicyError as exc:
        # A value loadaware cannot hold (a threshold over 100, a negative limit):
        # the descheduler would have refused most of them too.
        raise errors.InputError(
            f"{source}: values out of range for a LoadAwarePolicy:\n"
            + "\n".join(f"  - {p}" for p in exc.problems)
        ) from None
    return Conversion(
        source_version=str(api_version),
        document=document,
        policy=converted,
        issues=tuple(converter.issues),
    )


def render_conversion_yaml(conversion: Conversion, *, source: str) -> str:
    """The converted policy as a YAML file, headed by comments naming what differs."""
    lines = [f"# Converted by `loadaware convert` from {conversion.source_version} {source}."]
    changed = [i for i in conversion.issues if i.severity == "changes-behaviour"]
    if changed:
        lines.append("# NOT equivalent: review these before using this policy:")
        lines.extend(f"#   - {i.source}: {i.why}" for i in changed)
    body = yaml.safe_dump(conversion.document, sort_keys=False, default_flow_style=False)
    return "\n".join(lines) + "\n" + body


def render_issues_table(issues: Sequence[ConversionIssue]) -> str:
    """What has no equivalent and why, as an aligned text table."""
    if not issues:
        return "every setting has an equivalent\n"
    # What needs a decision first; notes after, each group in the order found.
    ordered = sorted(issues, key=lambda i: i.severity != "changes-behaviour")
    rows = [("EFFECT", "DESCHEDULER SETTING", "WHY")] + [
        (i.severity, i.source, i.why) for i in ordered
    ]
    widths = [max(len(r[c]) for r in rows) for c in range(2)]
    return "".join(f"{r[0].ljust(widths[0])}  {r[1].ljust(widths[1])}  {r[2]}\n" for r in rows)


# --- the conversion -----------------------------------------------------------


def _unwrap_config_map(data: Any, source: str) -> Any:
    """The descheduler's Helm chart mounts its policy from a ConfigMap's `policy.yaml`."""
    if not (isinstance(data, Mapping) and data.get("kind") == "ConfigMap"):
        return data
    payload = (data.get("data") or {}).get("policy.yaml")
    if not isinstance(payload, str):
        raise errors.InputError(f"{source}: a ConfigMap without data['policy.yaml']")
    try:
        return yaml.safe_load(payload)
    except yaml.YAMLError as exc:
        raise errors.InputError(f"{source}: data['policy.yaml'] is not YAML: {exc}") from None


@dataclass(kw_only=True)
class _Scope:
    """Which pods a strategy looks at: a plugin's namespaces and labelSelector."""

    namespaces: dict[str, list[str]] = field(default_factory=dict)
    label_selector: dict[str, Any] = field(default_factory=dict)

    def key(self) -> str:
        return repr((sorted(self.namespaces.items()), _canonical(self.label_selector)))


@dataclass(kw_only=True)
class _Strategy:
    profile: str
    plugin: str
    strategy: str  # loadaware's Strategies field
    args: dict[str, Any]
    scope: _Scope


@dataclass(kw_only=True)
class _ProfileParts:
    name: str
    evictor: dict[str, Any]  # normalised DefaultEvictor args (loadaware names)
    strategies: list[_Strategy] = field(default_factory=list)


class _Converter:
    def __init__(self) -> None:
        self.issues: list[ConversionIssue] = []

    def issue(self, source: str, severity: Severity, why: str) -> None:
        self.issues.append(ConversionIssue(source=source, severity=severity, why=why))

    # v1alpha1 ------------------------------------------------------------------

    def v1alpha1_to_v1alpha2(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """As the descheduler's own v1alpha1 migration (pkg/api/v1alpha1, until v0.31):
        one profile per enabled strategy, named strategy-<Name>-profile."""
        for key in data:
            if key not in _TOP_LEVEL_V1ALPHA1:
                self.issue(key, "changes-behaviour", "unknown field; the descheduler refuses it")
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
                self.issue(where, "note", "not enabled: nothing to convert")
                continue
            if name not in STRATEGY_OF and name != "HighNodeUtilization":
                # The descheduler refuses an unknown strategy; loadaware cannot run it either.
                self.issue(where, "changes-behaviour", "unknown strategy: not converted")
                continue
            if strategy.get("weight"):
                self.issue(f"{where}.weight", "note", "weights were never used by the descheduler")
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
            kind = "balance" if name in BALANCE_PLUGINS else "deschedule"
            profiles.append(
                {
                    "name": f"strategy-{name}-profile",
                    "pluginConfig": [
                        {"name": DEFAULT_EVICTOR, "args": evictor},
                        {"name": name, "args": _v1alpha1_args(name, params)},
                    ],
                    "plugins": {kind: {"enabled": [name]}},
                }
            )
        converted: dict[str, Any] = {
            "apiVersion": API_V1ALPHA2,
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

    # v1alpha2 ------------------------------------------------------------------

    def convert(self, data: Mapping[str, Any]) -> dict[str, Any]:
        for key in data:
            if key not in _TOP_LEVEL_V1ALPHA2:
                self.issue(key, "changes-behaviour", "unknown field; the descheduler refuses it")
        document: dict[str, Any] = {
            "apiVersion": "loadaware.io/v1alpha1",
            "kind": "LoadAwarePolicy",
        }
        raw_profiles = data.get("profiles") or []
        if not isinstance(raw_profiles, list):
            raise errors.InputError("profiles must be a list")
        parts = [self._profile(p, i) for i, p in enumerate(raw_profiles)]

        # Metrics: which source LowNodeUtilization reads, else the one configured.
        lnu = [s for p in parts for s in p.strategies if s.plugin == "LowNodeUtilization"]
        hnu = [s for p in parts for s in p.strategies if s.plugin == "HighNodeUtilization"]
        document["metrics"] = self._metrics(data, lnu)

        # Node pools: the thresholds of LowNodeUtilization, on the nodes selected.
        node_selector = self._node_selector(data, parts)
        document["nodePools"] = [self._node_pool(node_selector, lnu, bool(hnu or parts))]

        document["evictor"] = self._evictor(data, parts)
        limits = self._limits(data, lnu, parts)
        if limits:
            document["limits"] = limits
        document["profiles"] = self._profiles(parts)
        if hnu:
            document["consolidation"] = self._consolidation(hnu, lnu)
            namespaces = hnu[0].scope.namespaces
            others = [s for p in parts for s in p.strategies if s.plugin != "HighNodeUtilization"]
            if namespaces and not others:
                # Consolidation has no scope of its own; with nothing else to run, the
                # evictor's namespaces are the same thing.
                document["evictor"]["namespaces"] = dict(namespaces)
            elif namespaces:
                self.issue(
                    f"profiles[{hnu[0].profile}].pluginConfig[HighNodeUtilization].args"
                    ".evictableNamespaces",
                    "changes-behaviour",
                    "consolidation has no namespace scope of its own, and other strategies "
                    "run too: these namespaces are not excluded from consolidation",
                )
        if data.get("evictionFailureEventNotification"):
            self.issue(
                "evictionFailureEventNotification",
                "note",
                "loadaware always posts an Event (LoadawareEvictionSkipped) for a planned "
                "eviction it did not make",
            )
        self.issue(
            "(whole policy)",
            "note",
            "loadaware keeps its own safety defaults: a workload moved is not moved again "
            "within limits.cooldown (30m), every replacement is verified, and a bad landing "
            "opens the breaker",
        )
        return document

    def _profile(self, raw: Any, index: int) -> _ProfileParts:
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
                if plugin != DEFAULT_EVICTOR:
                    self.issue(
                        f"{where}.plugins.{point}.enabled[{plugin}]",
                        "changes-behaviour",
                        "a custom evictor plugin: loadaware has only the DefaultEvictor's "
                        "checks (evictor, podProtections)",
                    )
            if DEFAULT_EVICTOR in (plugin_set.get("disabled") or []):
                self.issue(
                    f"{where}.plugins.{point}.disabled",
                    "changes-behaviour",
                    "loadaware always applies the DefaultEvictor's checks",
                )
        for point in ("sort", "presort"):
            if (plugin_sets.get(point) or {}).get("enabled"):
                self.issue(
                    f"{where}.plugins.{point}",
                    "note",
                    "loadaware's optimiser chooses which pods leave; sort plugins do not apply",
                )

        evictor = self._evictor_args(configs.get(DEFAULT_EVICTOR) or {}, where)
        parts = _ProfileParts(name=name, evictor=evictor)
        seen: set[str] = set()
        for point, plugin in enabled:
            plugin_where = f"{where}.plugins.{point}.enabled[{plugin}]"
            if plugin in seen:
                continue
            seen.add(plugin)
            if plugin not in BALANCE_PLUGINS | DESCHEDULE_PLUGINS:
                self.issue(
                    plugin_where,
                    "changes-behaviour",
                    "a plugin loadaware lacks: its evictions will not happen",
                )
                continue
            expected = "balance" if plugin in BALANCE_PLUGINS else "deschedule"
            if point != expected:
                self.issue(
                    plugin_where,
                    "note",
                    f"{plugin} is a {expected} plugin; the descheduler ignores it under {point}",
                )
                continue
            args = configs.get(plugin) or {}
            parts.strategies.append(
                self._strategy(name, plugin, args, f"{where}.pluginConfig[{plugin}].args")
            )
        for plugin in configs:
            if plugin != DEFAULT_EVICTOR and plugin not in seen:
                self.issue(
                    f"{where}.pluginConfig[{plugin}]",
                    "note",
                    "configured but not enabled under plugins: not converted",
                )
        return parts

    # DefaultEvictor ------------------------------------------------------------

    def _evictor_args(self, args: RawArgs, where: str) -> dict[str, Any]:
        where = f"{where}.pluginConfig[{DEFAULT_EVICTOR}].args"
        for key in args:
            if key not in _EVICTOR_ARGS:
                self.issue(f"{where}.{key}", "changes-behaviour", "unknown DefaultEvictor arg")
        evictor: dict[str, Any] = {
            # The descheduler's default is false; loadaware's is true.
            "nodeFit": bool(args.get("nodeFit", False)),
            "minReplicas": int(args.get("minReplicas") or 0),
        }
        if args.get("minPodAge"):
            evictor["minPodAge"] = _go_duration(args["minPodAge"], f"{where}.minPodAge")
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
        for flag, (target, protection) in _DEPRECATED_EVICTOR_FLAGS.items():
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
            self.issue(
                f"{where}.podProtections.config.PodsWithPVC.protectedStorageClasses",
                "changes-behaviour",
                "loadaware protects every pod with a PVC, not only those of these storage "
                "classes: pods with other PVCs will not be evicted",
            )
        policy = args.get("noEvictionPolicy") or "Preferred"
        if policy == "Mandatory":
            self.issue(
                f"{where}.noEvictionPolicy",
                "changes-behaviour",
                "loadaware treats descheduler.alpha.kubernetes.io/prefer-no-eviction as a "
                "preference (Preferred); annotate such pods loadaware.io/evict: never instead",
            )
        if args.get("namespaceLabelSelector"):
            self.issue(
                f"{where}.namespaceLabelSelector",
                "changes-behaviour",
                "loadaware selects namespaces by name only (evictor.namespaces): pods of "
                "every namespace become candidates",
            )
        if args.get("labelSelector"):
            evictor["labelSelector"] = _label_selector(args["labelSelector"])
        if args.get("nodeSelector"):
            evictor["nodeSelector"] = str(args["nodeSelector"])
        return evictor

    def _evictor(self, data: Mapping[str, Any], parts: list[_ProfileParts]) -> dict[str, Any]:
        """One evictor for the whole policy: loadaware has no per-profile evictor."""
        first = parts[0].evictor if parts else self._evictor_args({}, "profiles[]")
        evictor = {k: v for k, v in first.items() if k not in ("labelSelector", "nodeSelector")}
        for other in parts[1:]:
            for key in sorted(set(first) | set(other.evictor)):
                if key in ("labelSelector", "nodeSelector"):
                    continue  # per profile (labelSelector) and per node pool (nodeSelector)
                if first.get(key) != other.evictor.get(key):
                    self.issue(
                        f"profiles[{other.name}].pluginConfig[{DEFAULT_EVICTOR}].args.{key}",
                        "changes-behaviour",
                        f"loadaware has one evictor: the first profile's {key} "
                        f"({first.get(key)!r}) applies to every profile",
                    )
        selectors = [p.evictor.get("labelSelector") or {} for p in parts]
        if (
            selectors
            and selectors[0]
            and all(_canonical(s) == _canonical(selectors[0]) for s in selectors)
        ):
            evictor["labelSelector"] = selectors[0]
        if data.get("gracePeriodSeconds") is not None:
            evictor["gracePeriodSeconds"] = int(data["gracePeriodSeconds"])
        if not evictor["nodeFit"]:
            self.issue(
                f"profiles[].pluginConfig[{DEFAULT_EVICTOR}].args.nodeFit",
                "note",
                "nodeFit: false kept, but loadaware still predicts where every replacement "
                "lands and plans no eviction whose replacement would bounce back",
            )
        return evictor

    # Strategies ----------------------------------------------------------------

    def _strategy(self, profile: str, plugin: str, args: RawArgs, where: str) -> _Strategy:
        scope = _Scope()
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
            scope.label_selector = _label_selector(args["labelSelector"])
        handler = _ARGS_HANDLERS[plugin]
        known, converted = handler(self, args, where)
        for key in args:
            if key not in known | {namespaces_key, "labelSelector"}:
                self.issue(f"{where}.{key}", "changes-behaviour", f"unknown {plugin} arg")
        return _Strategy(
            profile=profile,
            plugin=plugin,
            strategy=STRATEGY_OF.get(plugin, ""),
            args=converted,
            scope=scope,
        )

    def _low_node_utilization(
        self, args: RawArgs, where: str
    ) -> tuple[frozenset[str], dict[str, Any]]:
        converted: dict[str, Any] = {
            "thresholds": args.get("thresholds") or {},
            "targetThresholds": args.get("targetThresholds") or {},
            "useDeviationThresholds": bool(args.get("useDeviationThresholds")),
        }
        if int(args.get("numberOfNodes") or 0) > 0:
            self.issue(
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

    def _high_node_utilization(
        self, args: RawArgs, where: str
    ) -> tuple[frozenset[str], dict[str, Any]]:
        if int(args.get("numberOfNodes") or 0) > 0:
            self.issue(
                f"{where}.numberOfNodes",
                "changes-behaviour",
                "consolidation empties nodes however few are underutilised",
            )
        if args.get("evictionModes"):
            self.issue(
                f"{where}.evictionModes",
                "note",
                "consolidation moves a node's pods only when every one of them has a "
                "feasible target, whatever it requests",
            )
        return frozenset({"thresholds", "numberOfNodes", "evictionModes"}), {
            "thresholds": args.get("thresholds") or {}
        }

    def _node_affinity(self, args: RawArgs, where: str) -> tuple[frozenset[str], dict[str, Any]]:
        types = list(args.get("nodeAffinityType") or [])
        if not types:
            self.issue(
                f"{where}.nodeAffinityType",
                "note",
                "not set (the descheduler refuses that); "
                "requiredDuringSchedulingIgnoredDuringExecution assumed",
            )
            types = ["requiredDuringSchedulingIgnoredDuringExecution"]
        return frozenset({"nodeAffinityType"}), {"nodeAffinityType": types}

    def _node_taints(self, args: RawArgs, where: str) -> tuple[frozenset[str], dict[str, Any]]:
        converted: dict[str, Any] = {}
        if args.get("includePreferNoSchedule"):
            converted["includePreferNoSchedule"] = True
        for key in ("excludedTaints", "includedTaints"):
            if args.get(key):
                converted[key] = [str(t) for t in args[key]]
        return frozenset({"includePreferNoSchedule", "excludedTaints", "includedTaints"}), (
            converted
        )

    def _anti_affinity(self, args: RawArgs, where: str) -> tuple[frozenset[str], dict[str, Any]]:
        return frozenset(), {}

    def _duplicates(self, args: RawArgs, where: str) -> tuple[frozenset[str], dict[str, Any]]:
        kinds = [str(k) for k in args.get("excludeOwnerKinds") or []]
        return frozenset({"excludeOwnerKinds"}), ({"excludeOwnerKinds": kinds} if kinds else {})

    def _topology_spread(self, args: RawArgs, where: str) -> tuple[frozenset[str], dict[str, Any]]:
        constraints = list(args.get("constraints") or ["DoNotSchedule"])
        if args.get("topologyBalanceNodeFit") is False:
            self.issue(
                f"{where}.topologyBalanceNodeFit",
                "note",
                "loadaware balances topology domains only onto nodes the pod fits",
            )
        return frozenset({"constraints", "topologyBalanceNodeFit"}), {"constraints": constraints}

    def _pod_life_time(self, args: RawArgs, where: str) -> tuple[frozenset[str], dict[str, Any]]:
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
                self.issue(f"{where}.{key}", "changes-behaviour", why)
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

    def _too_many_restarts(
        self, args: RawArgs, where: str
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

    def _failed_pods(self, args: RawArgs, where: str) -> tuple[frozenset[str], dict[str, Any]]:
        lifetime = args.get("minPodLifetimeSeconds")
        converted: dict[str, Any] = {
            # The descheduler defaults it to an hour; loadaware's default is no minimum.
            "minPodLifetimeSeconds": int(
                FAILED_PODS_MIN_LIFETIME_SECONDS if lifetime is None else lifetime
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

    # Profiles ------------------------------------------------------------------

    def _profiles(self, parts: list[_ProfileParts]) -> list[dict[str, Any]]:
        """One loadaware profile per descheduler profile and scope: a loadaware profile
        has one namespaces/labelSelector for all its strategies, so plugins of one
        descheduler profile with different scopes become profiles of their own."""
        distinct_selectors = len({_canonical(p.evictor.get("labelSelector") or {}) for p in parts})
        profiles: list[dict[str, Any]] = []
        used: set[str] = set()
        for part in parts:
            groups: dict[str, list[_Strategy]] = {}
            for strategy in part.strategies:
                if strategy.plugin == "HighNodeUtilization":
                    continue  # consolidation is policy-wide
                groups.setdefault(strategy.scope.key(), []).append(strategy)
            evictor_selector = (
                (part.evictor.get("labelSelector") or {}) if distinct_selectors > 1 else {}
            )
            for index, members in enumerate(groups.values()):
                name = part.name if index == 0 else f"{part.name}-{_kebab(members[0].plugin)}"
                while name in used:
                    name += "-2"
                used.add(name)
                scope = members[0].scope
                profile: dict[str, Any] = {"name": name}
                if scope.namespaces:
                    profile["namespaces"] = dict(scope.namespaces)
                selector = _merge_selectors(scope.label_selector, evictor_selector)
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

    # Node pools, metrics, limits, consolidation --------------------------------

    def _node_selector(self, data: Mapping[str, Any], parts: list[_ProfileParts]) -> dict[str, str]:
        """The nodes the descheduler processes: the top-level nodeSelector and the
        DefaultEvictor's, both as matchLabels of the one node pool."""
        selectors: list[tuple[str, str]] = []
        if data.get("nodeSelector"):
            selectors.append(("nodeSelector", str(data["nodeSelector"])))
        evictor_selectors = {p.evictor.get("nodeSelector") for p in parts}
        if len(evictor_selectors - {None}) > 0:
            if len(evictor_selectors) > 1:
                self.issue(
                    f"profiles[].pluginConfig[{DEFAULT_EVICTOR}].args.nodeSelector",
                    "changes-behaviour",
                    "profiles select different nodes; loadaware's node pools hold for "
                    "every profile: the first profile's selector is used",
                )
            first = parts[0].evictor.get("nodeSelector")
            if first:
                selectors.append(
                    (f"profiles[{parts[0].name}].pluginConfig[{DEFAULT_EVICTOR}].args.nodeSelector",
                     first)
                )  # fmt: skip
        labels: dict[str, str] = {}
        for where, text in selectors:
            for term in (t.strip() for t in text.split(",")):
                if not term:
                    continue
                match = re.fullmatch(r"([^=!\s]+)\s*==?\s*([^=!\s]*)", term)
                if match is None:
                    self.issue(
                        where,
                        "changes-behaviour",
                        f"{term!r}: node pools select by labels equal to values only; "
                        "this term is dropped and more nodes are processed",
                    )
                    continue
                key, value = match.groups()
                if labels.get(key, value) != value:
                    self.issue(where, "changes-behaviour", f"{key} asked to be both values")
                labels[key] = value
        return labels

    def _node_pool(
        self, node_selector: dict[str, str], lnu: list[_Strategy], any_strategy: bool
    ) -> dict[str, Any]:
        pool: dict[str, Any] = {"name": "default"}
        if node_selector:
            pool["nodeSelector"] = node_selector
        if not lnu:
            if any_strategy:
                self.issue(
                    "(no LowNodeUtilization)",
                    "note",
                    "nodePools keep loadaware's default thresholds; pods that must move are "
                    "placed only on nodes that stay under targetThresholds",
                )
            return pool
        first = lnu[0]
        for other in lnu[1:]:
            if _canonical(other.args) != _canonical(first.args):
                self.issue(
                    f"profiles[{other.profile}].pluginConfig[LowNodeUtilization].args",
                    "changes-behaviour",
                    "a second LowNodeUtilization configuration: loadaware's thresholds are "
                    f"per node pool, so profile {first.profile}'s hold for every profile",
                )
        where = f"profiles[{first.profile}].pluginConfig[LowNodeUtilization].args"
        thresholds = self._percents(first.args["thresholds"], f"{where}.thresholds")
        targets = self._percents(first.args["targetThresholds"], f"{where}.targetThresholds")
        if targets and set(thresholds) == set(targets):
            pool["thresholds"], pool["targetThresholds"] = thresholds, targets
        else:
            self.issue(
                f"{where}.targetThresholds",
                "changes-behaviour",
                "no cpu or memory thresholds left to judge by: loadaware's defaults are used",
            )
        if first.args["useDeviationThresholds"]:
            pool["useDeviationThresholds"] = True
        return pool

    def _percents(self, raw: Any, where: str) -> dict[str, float]:
        if not isinstance(raw, Mapping):
            raise errors.InputError(f"{where} must map resource names to percentages")
        percents: dict[str, float] = {}
        for resource, value in raw.items():
            if resource in ("cpu", "memory", "pods"):
                # pods: the node's pod count over allocatable pods, in both tools.
                percents[resource] = _number(value)
            elif resource == METRIC_RESOURCE:
                # One 0-1 value per node from the user's query: loadaware judges cpu and
                # memory separately with its own queries, so the same percentage is applied
                # to both, which is a guess.
                self.issue(
                    f"{where}.{resource}",
                    "changes-behaviour",
                    "a Prometheus query's single utilisation value has no equivalent: "
                    "loadaware judges cpu and memory with its own queries; "
                    "this percentage was applied to both",
                )
                percents.setdefault("cpu", _number(value))
                percents.setdefault("memory", _number(value))
            else:
                self.issue(
                    f"{where}.{resource}",
                    "changes-behaviour",
                    "loadaware has no thresholds for extended resources",
                )
        # The descheduler treats a resource it is not given as 100%; loadaware does not
        # judge it, which is the same for hot (never over 100) and for cold.
        return percents

    def _metrics(self, data: Mapping[str, Any], lnu: list[_Strategy]) -> dict[str, Any]:
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
            if utilization.get("metricsServer") or utilization.get("source") == (
                "KubernetesMetrics"
            ):
                wanted = "KubernetesMetrics"
            elif utilization.get("source") == "Prometheus" or utilization.get("prometheus"):
                wanted = "Prometheus"
                if (utilization.get("prometheus") or {}).get("query"):
                    self.issue(
                        "pluginConfig[LowNodeUtilization].args.metricsUtilization.prometheus.query",
                        "changes-behaviour",
                        "loadaware reads node and pod cpu and memory with its own queries "
                        "(metrics.prometheus.queries), not one utilisation value per node",
                    )
            else:
                self.issue(
                    "pluginConfig[LowNodeUtilization].args",
                    "note",
                    "the descheduler judged pod requests; loadaware judges what nodes and "
                    "pods use, from the metrics source below",
                )
        if not wanted:
            wanted = "KubernetesMetrics" if "KubernetesMetrics" in providers else ""
            wanted = wanted or ("Prometheus" if "Prometheus" in providers else "")
        if wanted == "Prometheus" and "Prometheus" in providers:
            return {"prometheus": self._prometheus(providers["Prometheus"])}
        if wanted == "Prometheus":
            self.issue(
                "metricsProviders",
                "changes-behaviour",
                "LowNodeUtilization reads Prometheus but no Prometheus provider is "
                "configured: metrics-server is used",
            )
        elif not wanted:
            self.issue(
                "metricsProviders",
                "note",
                "none configured: loadaware reads usage from metrics-server (metrics.k8s.io)",
            )
        return {"metricsServer": {}}

    def _prometheus(self, provider: Mapping[str, Any]) -> dict[str, Any]:
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
                    "key": PROMETHEUS_TOKEN_KEY,
                }
            }
        else:
            prometheus["tokenFile"] = SERVICE_ACCOUNT_TOKEN_FILE
        return prometheus

    def _limits(
        self, data: Mapping[str, Any], lnu: list[_Strategy], parts: list[_ProfileParts]
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
            others = [
                s.plugin for p in parts for s in p.strategies if s.plugin != "LowNodeUtilization"
            ]
            if others:
                self.issue(
                    "pluginConfig[LowNodeUtilization].args.evictionLimits.node",
                    "note",
                    "loadaware's limits are shared by all strategies: this per-node limit "
                    f"now also bounds {', '.join(sorted(set(others)))}",
                )
        return limits

    def _consolidation(self, hnu: list[_Strategy], lnu: list[_Strategy]) -> dict[str, Any]:
        where = f"profiles[{hnu[0].profile}].pluginConfig[HighNodeUtilization].args.thresholds"
        thresholds = self._percents(hnu[0].args["thresholds"], where)
        if lnu:
            self.issue(
                "plugins.balance.enabled[HighNodeUtilization]",
                "changes-behaviour",
                "HighNodeUtilization together with LowNodeUtilization: one empties nodes the "
                "other fills; loadaware plans both in one round, which the descheduler never "
                "did",
            )
        self.issue(
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


_ArgsHandler = Callable[[_Converter, RawArgs, str], tuple[frozenset[str], dict[str, Any]]]
_ARGS_HANDLERS: Mapping[str, _ArgsHandler] = {
    "LowNodeUtilization": _Converter._low_node_utilization,
    "HighNodeUtilization": _Converter._high_node_utilization,
    "RemovePodsViolatingNodeAffinity": _Converter._node_affinity,
    "RemovePodsViolatingNodeTaints": _Converter._node_taints,
    "RemovePodsViolatingInterPodAntiAffinity": _Converter._anti_affinity,
    "RemoveDuplicates": _Converter._duplicates,
    "RemovePodsViolatingTopologySpreadConstraint": _Converter._topology_spread,
    "PodLifeTime": _Converter._pod_life_time,
    "RemovePodsHavingTooManyRestarts": _Converter._too_many_restarts,
    "RemoveFailedPods": _Converter._failed_pods,
}


def _v1alpha1_args(name: str, params: Mapping[str, Any]) -> dict[str, Any]:
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


# --- small helpers ------------------------------------------------------------


def _label_selector(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, Mapping):
        raise errors.InputError(f"a labelSelector must be a mapping, got {raw!r}")
    selector: dict[str, Any] = {}
    if raw.get("matchLabels"):
        selector["matchLabels"] = {str(k): str(v) for k, v in raw["matchLabels"].items()}
    if raw.get("matchExpressions"):
        selector["matchExpressions"] = [
            {
                "key": str(e.get("key")),
                "operator": str(e.get("operator")),
                **({"values": [str(v) for v in e["values"]]} if e.get("values") else {}),
            }
            for e in raw["matchExpressions"]
        ]
    return selector


def _merge_selectors(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """Both selectors at once (a pod must match each): labels that disagree become
    In-expressions, which together match nothing, as the two selectors would."""
    if not second:
        return dict(first)
    if not first:
        return dict(second)
    labels = dict(first.get("matchLabels") or {})
    expressions = list(first.get("matchExpressions") or []) + list(
        second.get("matchExpressions") or []
    )
    for key, value in (second.get("matchLabels") or {}).items():
        if labels.get(key, value) == value:
            labels[key] = value
        else:
            expressions.append({"key": key, "operator": "In", "values": [value]})
    merged: dict[str, Any] = {}
    if labels:
        merged["matchLabels"] = labels
    if expressions:
        merged["matchExpressions"] = expressions
    return merged


def _go_duration(value: Any, where: str) -> str:
    """A metav1.Duration (Go's time.ParseDuration text) as loadaware writes durations."""
    try:
        return _duration.format_duration(_duration.parse_duration(str(value)))
    except ValueError as exc:
        raise errors.InputError(f"{where}: {exc}") from None


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise errors.InputError(f"a threshold must be a number, got {value!r}")
    return int(value) if float(value).is_integer() else float(value)


def _canonical(value: Any) -> str:
    return repr(_sorted(value))


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _sorted(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_sorted(v) for v in value)
    return value


def _kebab(name: str) -> str:
    return _KEBAB.sub("-", name).lower()
