"""The Kustomize overlays of deploy/ render and validate strictly.

Covered: `kubectl kustomize` renders every overlay, and serve with
components/consolidation; every built-in object, the ValidatingAdmissionPolicy
and its binding among them, passes `kubernetes-validate --strict` against
Kubernetes 1.31's schemas (offline), and a stray field is caught (so strictness
is on); cluster-scoped objects carry no namespace; the Prometheus Operator
objects (not in those schemas) match the structure the operator expects; the
pods run non-root, read-only, without privilege escalation, with seccomp
RuntimeDefault, all capabilities dropped and resources set; serve runs two
replicas with /healthz and /readyz probes; the Service, ServiceMonitor and
NetworkPolicy select the serve pods, and only Alertmanager and Prometheus may
connect; the policy ConfigMap is a valid policy that matches the mounts; the
base policy turns soft-taint steering on, and the soft-taint overlay, kept for
compatibility, renders exactly as serve.
"""

from __future__ import annotations

import pathlib
from typing import Any

import jsonschema
import pytest
import yaml

from loadaware import policy
from tests.deploy.conftest import CONSOLIDATION, OVERLAYS, ROOT, Manifest, of_kind
from tests.deploy.validation import (
    ADMISSION_KINDS,
    CLUSTER_SCOPED,
    OPERATOR_KINDS,
    OPERATOR_SCHEMAS,
)
from tests.deploy.validation import kubernetes_validate as _kubernetes_validate


def _pod_specs(docs: list[Manifest]) -> list[dict[str, Any]]:
    specs = [d["spec"]["template"]["spec"] for d in of_kind(docs, "Deployment")]
    specs += [
        d["spec"]["jobTemplate"]["spec"]["template"]["spec"] for d in of_kind(docs, "CronJob")
    ]
    return specs


def _policy_text(docs: list[Manifest]) -> str:
    (config_map,) = [d for d in of_kind(docs, "ConfigMap") if "policy.yaml" in d.get("data", {})]
    return config_map["data"]["policy.yaml"]


@pytest.mark.parametrize("overlay", [*OVERLAYS, CONSOLIDATION])
def test_builtin_objects_validate_strictly(
    overlay: str, rendered: dict[str, list[Manifest]], tmp_path: pathlib.Path
) -> None:
    builtin = [doc for doc in rendered[overlay] if doc["kind"] not in OPERATOR_KINDS]
    others = {doc["kind"] for doc in rendered[overlay]} - {doc["kind"] for doc in builtin}
    assert others <= OPERATOR_KINDS
    assert {doc["kind"] for doc in builtin} >= ADMISSION_KINDS
    path = tmp_path / f"{overlay}.yaml"
    path.write_text(yaml.safe_dump_all(builtin))
    result = _kubernetes_validate(path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_strict_validation_rejects_a_stray_field(
    rendered: dict[str, list[Manifest]], tmp_path: pathlib.Path
) -> None:
    (deployment,) = of_kind(rendered["serve"], "Deployment")
    broken = yaml.safe_load(yaml.safe_dump(deployment))
    broken["spec"]["template"]["spec"]["containers"][0]["readOnlyRootFilesystem"] = True
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(broken))
    assert _kubernetes_validate(path).returncode != 0


def test_strict_validation_knows_the_admission_policy(
    rendered: dict[str, list[Manifest]], tmp_path: pathlib.Path
) -> None:
    (admission_policy,) = of_kind(rendered["serve"], "ValidatingAdmissionPolicy")
    broken = yaml.safe_load(yaml.safe_dump(admission_policy))
    broken["spec"]["validations"][0]["messageExpresion"] = "'typo'"
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(broken))
    assert _kubernetes_validate(path).returncode != 0


@pytest.mark.parametrize("overlay", [*OVERLAYS, CONSOLIDATION])
def test_cluster_scoped_objects_have_no_namespace(
    overlay: str, rendered: dict[str, list[Manifest]]
) -> None:
    scoped = [doc for doc in rendered[overlay] if doc["kind"] in CLUSTER_SCOPED]
    assert {doc["kind"] for doc in scoped} == CLUSTER_SCOPED
    for doc in scoped:
        assert "namespace" not in doc["metadata"], (doc["kind"], doc["metadata"]["name"])


@pytest.mark.parametrize("overlay", ["serve", "soft-taint"])
def test_operator_objects_match_their_crds(
    overlay: str, rendered: dict[str, list[Manifest]]
) -> None:
    kinds = set()
    for doc in rendered[overlay]:
        if doc["kind"] in OPERATOR_KINDS:
            jsonschema.validate(doc, OPERATOR_SCHEMAS[doc["kind"]])
            kinds.add(doc["kind"])
    assert kinds == OPERATOR_KINDS


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_pods_are_locked_down(overlay: str, rendered: dict[str, list[Manifest]]) -> None:
    specs = _pod_specs(rendered[overlay])
    assert len(specs) == 1
    for spec in specs:
        assert spec["serviceAccountName"] == "loadaware"
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        for container in spec["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False
            assert context["readOnlyRootFilesystem"] is True
            assert context["runAsNonRoot"] is True
            assert context["capabilities"]["drop"] == ["ALL"]
            assert {"cpu", "memory"} <= set(container["resources"]["requests"])
            assert "memory" in container["resources"]["limits"]
            assert "--policy=/etc/loadaware/policy.yaml" in container["args"]


@pytest.mark.parametrize("overlay", ["serve", "soft-taint"])
def test_serve_runs_two_replicas_with_probes(
    overlay: str, rendered: dict[str, list[Manifest]]
) -> None:
    (deployment,) = of_kind(rendered[overlay], "Deployment")
    assert deployment["spec"]["replicas"] == 2
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["args"][0] == "serve"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    (port,) = container["ports"]
    settings = policy.parse_policy(yaml.safe_load(_policy_text(rendered[overlay])))
    assert settings.serve.listen.endswith(f":{port['containerPort']}")
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert settings.serve.webhook.token_file is not None
    assert str(pathlib.PurePosixPath(settings.serve.webhook.token_file).parent) in mounts


def test_cronjob_runs_one_round_and_serves_nothing(rendered: dict[str, list[Manifest]]) -> None:
    docs = rendered["cronjob"]
    (cronjob,) = of_kind(docs, "CronJob")
    (container,) = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert container["args"][:2] == ["run", "--once"]
    assert cronjob["spec"]["concurrencyPolicy"] == "Forbid"
    assert not of_kind(docs, "Deployment")
    assert not of_kind(docs, "Service")
    (network_policy,) = of_kind(docs, "NetworkPolicy")
    assert network_policy["spec"]["policyTypes"] == ["Ingress"]
    assert "ingress" not in network_policy["spec"]


@pytest.mark.parametrize("overlay", ["serve", "soft-taint"])
def test_service_monitor_and_network_policy_reach_only_the_serve_pods(
    overlay: str, rendered: dict[str, list[Manifest]]
) -> None:
    docs = rendered[overlay]
    (deployment,) = of_kind(docs, "Deployment")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    (service,) = of_kind(docs, "Service")
    assert service["spec"]["selector"].items() <= pod_labels.items()
    (monitor,) = of_kind(docs, "ServiceMonitor")
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    assert {e["port"] for e in monitor["spec"]["endpoints"]} == {
        p["name"] for p in service["spec"]["ports"]
    }
    (network_policy,) = of_kind(docs, "NetworkPolicy")
    spec = network_policy["spec"]
    assert spec["podSelector"]["matchLabels"].items() <= pod_labels.items()
    (rule,) = spec["ingress"]
    (peer,) = rule["from"]
    (expression,) = peer["podSelector"]["matchExpressions"]
    assert expression["operator"] == "In"
    assert sorted(expression["values"]) == ["alertmanager", "prometheus"]
    assert "namespaceSelector" in peer, "without it the peer is any namespace's pod"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_policy_config_map_is_a_valid_policy(
    overlay: str, rendered: dict[str, list[Manifest]], tmp_path: pathlib.Path
) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(_policy_text(rendered[overlay]))
    settings = policy.load_policy(path)
    assert settings.state.namespace == "loadaware"


def test_base_policy_turns_soft_taint_steering_on() -> None:
    document = yaml.safe_load((ROOT / "deploy" / "base" / "policy.yaml").read_text())
    assert document["steering"] == {"softTaint": True}
    assert policy.parse_policy(document).steering.soft_taint is True


def test_soft_taint_overlay_renders_as_serve(rendered: dict[str, list[Manifest]]) -> None:
    assert rendered["soft-taint"] == rendered["serve"]
