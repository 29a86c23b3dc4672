"""Wrap the plain rule files of alerts/ in a PrometheusRule for the Prometheus Operator.

    python alerts/generate.py          # (re)write the PrometheusRule
    python alerts/generate.py --check  # exit 1 if it is out of date

The plain files stay the source: promtool checks and unit-tests them, and
Prometheus without the operator loads them as they are. The PrometheusRule goes
with the ServiceMonitor into deploy/components/monitoring/.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from typing import Any

import yaml

ALERTS_DIR = pathlib.Path(__file__).resolve().parent
RULE_FILES = (ALERTS_DIR / "loadaware.rules.yml",)
OUTPUT = ALERTS_DIR.parent / "deploy" / "components" / "monitoring" / "prometheusrule.yaml"

HEADER = "# Generated from alerts/loadaware.rules.yml by `make alerts`; edit that file instead.\n"


class _Dumper(yaml.SafeDumper):
    """Writes multi-line strings (PromQL) as literal blocks, as a person would."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def prometheus_rule(rule_files: tuple[pathlib.Path, ...] = RULE_FILES) -> dict[str, Any]:
    groups: list[dict[str, Any]] = []
    for path in rule_files:
        groups.extend(yaml.safe_load(path.read_text())["groups"])
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {
            "name": "loadaware",
            "labels": {
                "app.kubernetes.io/name": "loadaware",
                "app.kubernetes.io/component": "alerts",
                # kube-prometheus-stack's default ruleSelector picks rules by this label.
                "release": "kube-prometheus-stack",
            },
        },
        "spec": {"groups": groups},
    }


def render() -> str:
    body = yaml.dump(prometheus_rule(), Dumper=_Dumper, sort_keys=False, width=1000)
    return HEADER + body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the output is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not OUTPUT.exists() or OUTPUT.read_text() != text:
            sys.stderr.write(f"{OUTPUT} is out of date: run `make alerts`\n")
            return 1
        return 0
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    OUTPUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
