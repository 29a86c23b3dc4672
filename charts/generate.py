"""Write what charts/loadaware takes from the rest of the repository.

    python charts/generate.py            # (re)write both files
    python charts/generate.py --check    # exit 1 if either is stale

- values.schema.json: the chart's own values, and `policy` checked against
  policy/schema.json (the schema `loadaware validate` follows; its definitions
  move to the top, where its references point).
- files/prometheusrule-spec.yaml: the alert rules of alerts/*.rules.yml, as
  alerts/generate.py writes them for deploy/components/monitoring.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import pathlib
import sys
from types import ModuleType
from typing import Any

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHART = ROOT / "charts" / "loadaware"
POLICY_SCHEMA = ROOT / "policy" / "schema.json"
VALUES_SCHEMA = CHART / "values.schema.json"
RULES_SPEC = CHART / "files" / "prometheusrule-spec.yaml"
POLICY_DEF = "LoadAwarePolicy"

_STRINGS = {"type": "object", "additionalProperties": {"type": "string"}}
_OBJECT = {"type": "object"}


def _switch(**more: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {"enabled": {"type": "boolean"}, **more},
    }


def _chart_properties() -> dict[str, Any]:
    name = {"type": "string", "minLength": 1}
    return {
        "global": _OBJECT,
        "mode": {
            "enum": ["cronjob", "serve"],
            "description": "cronjob: `loadaware run --once` on a schedule; serve: a Deployment.",
        },
        "image": {
            "type": "object",
            "additionalProperties": False,
            "required": ["repository"],
            "properties": {
                "repository": name,
                "tag": {"type": "string"},
                "digest": {"type": "string", "pattern": "^(sha256:[0-9a-f]{64})?$"},
                "pullPolicy": {"enum": ["Always", "IfNotPresent", "Never"]},
            },
        },
        "imagePullSecrets": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name"],
                "properties": {"name": name},
                "additionalProperties": False,
            },
        },
        "suspend": {"type": "boolean"},
        "dryRun": {"type": "boolean"},
        "schedule": name,
        "timeZone": name,
        "replicas": {"type": "integer", "minimum": 1},
        "serviceAccount": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"name": {"type": "string"}},
        },
        "prometheusToken": _switch(secretName=name, key=name),
        "webhook": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"token": {"type": "string"}, "existingSecret": {"type": "string"}},
        },
        "resources": _OBJECT,
        "podSecurityContext": _OBJECT,
        "securityContext": _OBJECT,
        "podAnnotations": _STRINGS,
        "podLabels": _STRINGS,
        "nodeSelector": _STRINGS,
        "tolerations": {"type": "array", "items": _OBJECT},
        "affinity": _OBJECT,
        "priorityClassName": {"type": "string"},
        "serviceMonitor": _switch(interval=name, labels=_STRINGS),
        "prometheusRule": _switch(labels=_STRINGS),
        "networkPolicy": _switch(
            monitoringNamespace=name, peerNames={"type": "array", "items": name, "minItems": 1}
        ),
        "admissionPolicy": _switch(allowCordon={"type": "boolean"}),
        "policy": {
            "$ref": f"#/$defs/{POLICY_DEF}",
            "description": "The LoadAwarePolicy (docs/reference/policy.md).",
        },
    }


def values_schema(policy_schema: dict[str, Any]) -> dict[str, Any]:
    policy = copy.deepcopy(policy_schema)
    definitions = policy.pop("$defs", {})
    for key in ("$schema", "$id"):
        policy.pop(key, None)
    if POLICY_DEF in definitions:
        raise ValueError(f"policy/schema.json already defines {POLICY_DEF}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "loadaware chart values",
        "type": "object",
        "additionalProperties": False,
        "required": ["mode", "image", "policy"],
        "properties": _chart_properties(),
        "$defs": {**definitions, POLICY_DEF: policy},
    }


def _alerts_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "alerts_generate", ROOT / "alerts" / "generate.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def render() -> dict[pathlib.Path, str]:
    schema = values_schema(json.loads(POLICY_SCHEMA.read_text()))
    alerts = _alerts_generator()
    spec = alerts.prometheus_rule()["spec"]
    rules = yaml.dump(spec, Dumper=alerts._Dumper, sort_keys=False, width=1000)
    header = "# Written by `make chart` from alerts/*.rules.yml; edit those instead.\n"
    return {
        VALUES_SCHEMA: json.dumps(schema, indent=2, ensure_ascii=False) + "\n",
        RULES_SPEC: header + rules,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if a file is stale")
    args = parser.parse_args(argv)
    stale = []
    for path, text in render().items():
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(path)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for path in stale:
        sys.stderr.write(f"{path.relative_to(ROOT)} is out of date: run `make chart`\n")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
