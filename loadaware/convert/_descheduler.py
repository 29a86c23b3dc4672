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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from loadaware import errors
from loadaware import policy as _policy
from loadaware.convert import _document, _issues, _names, _v1alpha1


@dataclass(frozen=True, slots=True, kw_only=True)
class Conversion:
    source_version: str  # descheduler/v1alpha1 or descheduler/v1alpha2
    document: dict[str, Any]  # the LoadAwarePolicy as a file has it (camelCase, only what is set)
    policy: _policy.LoadAwarePolicy
    issues: tuple[_issues.ConversionIssue, ...]

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
    data = _policy.parse_yaml_text(text, file)
    return convert_descheduler_policy(data, source=str(file))


def convert_descheduler_policy(data: Any, *, source: str = "descheduler policy") -> Conversion:
    """The LoadAwarePolicy equivalent to a parsed DeschedulerPolicy, and what differs."""
    data = _unwrap_config_map(data, source)
    if not isinstance(data, Mapping):
        raise errors.InputError(f"{source} is not a DeschedulerPolicy (not a mapping)")
    kind = data.get("kind")
    api_version = data.get("apiVersion")
    if kind != "DeschedulerPolicy" or api_version not in (_names.API_V1ALPHA1, _names.API_V1ALPHA2):
        raise errors.InputError(
            f"{source} is not a DeschedulerPolicy (apiVersion {api_version!r}, kind {kind!r})",
            hint=(
                "expected kind DeschedulerPolicy, apiVersion "
                f"{_names.API_V1ALPHA2} or {_names.API_V1ALPHA1}"
            ),
        )
    issues = _issues.Issues()
    if api_version == _names.API_V1ALPHA1:
        data = _v1alpha1.to_v1alpha2(issues, data)
    document = _document.convert(issues, data)
    try:
        converted = _policy.parse_policy(document, source="converted policy")
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
        issues=tuple(issues.found),
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


def render_issues_table(issues: Sequence[_issues.ConversionIssue]) -> str:
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
