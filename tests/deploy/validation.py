"""Strict validation of rendered manifests, shared by the Kustomize and Helm tests.

Built-in kinds go through `kubernetes-validate --strict` (offline schemas of one
Kubernetes version); the Prometheus Operator's kinds, which those schemas lack,
through the parts of their CRDs that loadaware uses.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
from typing import Any

# The base needs 1.30+ (admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy),
# which these schemas have. A kind without a schema only warns, hence
# test_strict_validation_knows_the_admission_policy.
KUBERNETES_VERSION = "1.31.0"
OPERATOR_KINDS = {"ServiceMonitor", "PrometheusRule"}
ADMISSION_KINDS = {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", *ADMISSION_KINDS}

# The parts of the Prometheus Operator's CRDs (monitoring.coreos.com/v1) used here;
# unknown fields are errors, as in a structural CRD schema with pruning.
_OBJECT_META = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "namespace": {"type": "string"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["name"],
    "additionalProperties": False,
}
_LABEL_SELECTOR = {
    "type": "object",
    "properties": {"matchLabels": {"type": "object", "additionalProperties": {"type": "string"}}},
    "additionalProperties": False,
}
_RULE = {
    "type": "object",
    "properties": {
        "alert": {"type": "string"},
        "record": {"type": "string"},
        "expr": {"type": "string"},
        "for": {"type": "string", "pattern": "^(0|(([0-9]+)(y|w|d|h|m|s|ms))+)$"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    },
    "required": ["expr"],
    "additionalProperties": False,
}
OPERATOR_SCHEMAS: dict[str, dict[str, Any]] = {
    "ServiceMonitor": {
        "type": "object",
        "properties": {
            "apiVersion": {"const": "monitoring.coreos.com/v1"},
            "kind": {"const": "ServiceMonitor"},
            "metadata": _OBJECT_META,
            "spec": {
                "type": "object",
                "properties": {
                    "selector": _LABEL_SELECTOR,
                    "namespaceSelector": {
                        "type": "object",
                        "properties": {
                            "matchNames": {"type": "array", "items": {"type": "string"}}
                        },
                        "additionalProperties": False,
                    },
                    "endpoints": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "port": {"type": "string"},
                                "path": {"type": "string"},
                                "interval": {"type": "string"},
                                "honorLabels": {"type": "boolean"},
                            },
                            "additionalProperties": False,
                        },
                    },
                },
                "required": ["selector", "endpoints"],
                "additionalProperties": False,
            },
        },
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "additionalProperties": False,
    },
    "PrometheusRule": {
        "type": "object",
        "properties": {
            "apiVersion": {"const": "monitoring.coreos.com/v1"},
            "kind": {"const": "PrometheusRule"},
            "metadata": _OBJECT_META,
            "spec": {
                "type": "object",
                "properties": {
                    "groups": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "interval": {"type": "string"},
                                "rules": {"type": "array", "items": _RULE},
                            },
                            "required": ["name", "rules"],
                            "additionalProperties": False,
                        },
                    }
                },
                "additionalProperties": False,
            },
        },
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "additionalProperties": False,
    },
}


def kubernetes_validate(path: pathlib.Path) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("kubernetes-validate") or str(
        pathlib.Path(__file__).resolve().parents[2] / ".venv" / "bin" / "kubernetes-validate"
    )
    return subprocess.run(
        [tool, "--strict", "--quiet", "-k", KUBERNETES_VERSION, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
