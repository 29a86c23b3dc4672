"""charts/loadaware, linted, rendered and schema-checked by Helm's own Go SDK.

helm-python-sdk binds Helm v4's SDK (a C library, no helm binary): lint, the
values schema and the template engine are Helm's, not a re-implementation.

Covered: `helm lint --strict` finds no warning or error, with the defaults and
every case below; the defaults and a matrix (cronjob suspended in dry-run, serve
with two replicas, monitoring on and off, the Prometheus token, everything
switchable off) render, and every object validates strictly (built-in kinds
with kubernetes-validate as the Kustomize output, the Prometheus Operator's
against their CRDs' structure); pods run locked down with the one image
reference deploy/ names; the policy ConfigMap is a policy `loadaware validate`
accepts, with the chart's dryRun, and in serve mode it is deploy/'s policy;
suspend, replicas, leader election, the webhook Secret and each switch do what
they say; the values schema refuses a bad policy with the field named, and
accepts every example policy under policy/; RBAC and the admission policy are
the objects the Kustomize base and overlays ship, for cronjob, serve and
consolidation's cordon; the PrometheusRule is deploy/components/monitoring's;
values.schema.json and the rules file are what charts/generate.py writes now;
NOTES.txt gives the next commands of the first install (a Job from the
suspended CronJob, then dry-run off).
"""

from __future__ import annotations

import copy
import importlib.util
import pathlib
from collections.abc import Iterator
from typing import Any

import helm_python as helm
import jsonschema
import pytest
import yaml

from loadaware import policy
from tests.deploy import images
from tests.deploy.conftest import CONSOLIDATION, ROOT, Manifest, of_kind
from tests.deploy.validation import OPERATOR_KINDS, OPERATOR_SCHEMAS, kubernetes_validate

CHART = ROOT / "charts" / "loadaware"
RELEASE = "loadaware"
NAMESPACE = "loadaware"
KUBE_VERSION = "v1.31.0"
LINT_WARNING = 2  # helm's severities: 1 info, 2 warning, 3 error

CASES: dict[str, dict[str, Any]] = {
    "defaults": {},
    "cronjob-suspended-dry-run": {"mode": "cronjob", "suspend": True, "dryRun": True},
    "serve-2-replicas": {"mode": "serve", "replicas": 2},
    "serve-monitoring-on": {
        "mode": "serve",
        "serviceMonitor": {"enabled": True},
        "prometheusRule": {"enabled": True},
    },
    "serve-monitoring-off": {
        "mode": "serve",
        "serviceMonitor": {"enabled": False},
        "prometheusRule": {"enabled": False},
    },
    "cronjob-rules-and-token": {
        "prometheusRule": {"enabled": True},
        "prometheusToken": {"enabled": True},
    },
    "serve-all-off": {
        "mode": "serve",
        "replicas": 1,
        "networkPolicy": {"enabled": False},
        "admissionPolicy": {"enabled": False},
        "webhook": {"existingSecret": "my-webhook"},
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "tolerations": [
            {"key": "dedicated", "operator": "Equal", "value": "ops", "effect": "NoSchedule"}
        ],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}
                            ]
                        }
                    ]
                }
            }
        },
    },
}


@pytest.fixture(scope="module")
def chart() -> Iterator[helm.Chart]:
    with helm.Chart.load(CHART) as loaded:
        yield loaded


def render(chart: helm.Chart, values: dict[str, Any] | None = None) -> list[Manifest]:
    rendered = chart.render(values, name=RELEASE, namespace=NAMESPACE, is_install=True)
    return [
        doc
        for path, text in sorted(rendered.items())
        if path.endswith((".yaml", ".yml"))
        for doc in yaml.safe_load_all(text)
        if doc
    ]


@pytest.fixture(scope="module")
def rendered_cases(chart: helm.Chart) -> dict[str, list[Manifest]]:
    return {name: render(chart, values) for name, values in CASES.items()}


def _policy(docs: list[Manifest]) -> dict[str, Any]:
    (config_map,) = [d for d in of_kind(docs, "ConfigMap") if "policy.yaml" in d.get("data", {})]
    return yaml.safe_load(config_map["data"]["policy.yaml"])


# Lint ------------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_lint_is_clean(case: str) -> None:
    report = helm.lint(
        CHART, CASES[case] or None, strict=True, namespace=NAMESPACE, kube_version=KUBE_VERSION
    )
    assert report["errors"] == []
    problems = [m for m in report["messages"] if m["severity"] >= LINT_WARNING]
    assert problems == []


# Rendered objects ------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_every_object_validates_strictly(
    case: str, rendered_cases: dict[str, list[Manifest]], tmp_path: pathlib.Path
) -> None:
    docs = rendered_cases[case]
    builtin = [doc for doc in docs if doc["kind"] not in OPERATOR_KINDS]
    for doc in docs:
        if doc["kind"] in OPERATOR_KINDS:
            jsonschema.validate(doc, OPERATOR_SCHEMAS[doc["kind"]])
    path = tmp_path / f"{case}.yaml"
    path.write_text(yaml.safe_dump_all(builtin))
    result = kubernetes_validate(path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("case", CASES)
def test_pods_are_locked_down_and_run_the_one_image(
    case: str, rendered_cases: dict[str, list[Manifest]]
) -> None:
    docs = rendered_cases[case]
    found = images.images(docs)
    assert len(found) == 1
    assert set(found.values()) == {images.REFERENCE}
    (workload,) = [d for d in docs if d["kind"] in images.WORKLOAD_KINDS]
    spec = images.pod_spec(workload)
    assert spec["serviceAccountName"] == RELEASE
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["runAsUser"] == 65532
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (container,) = spec["containers"]
    context = container["securityContext"]
    assert context["readOnlyRootFilesystem"] is True
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"]["drop"] == ["ALL"]
    assert "memory" in container["resources"]["limits"]
    assert "/tmp" in {m["mountPath"] for m in container["volumeMounts"]}


@pytest.mark.parametrize("case", CASES)
def test_policy_is_one_validate_accepts(
    case: str, rendered_cases: dict[str, list[Manifest]], tmp_path: pathlib.Path
) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(_policy(rendered_cases[case])))
    loaded = policy.load_policy(path)
    assert loaded.dry_run is bool(CASES[case].get("dryRun", False))
    assert loaded.state.namespace == NAMESPACE


def test_cronjob_suspended_in_dry_run(rendered_cases: dict[str, list[Manifest]]) -> None:
    docs = rendered_cases["cronjob-suspended-dry-run"]
    (cronjob,) = of_kind(docs, "CronJob")
    assert cronjob["spec"]["suspend"] is True
    (container,) = images.pod_spec(cronjob)["containers"]
    assert container["args"][:2] == ["run", "--once"]
    assert _policy(docs)["dryRun"] is True
    assert not of_kind(docs, "Deployment")
    assert not of_kind(docs, "Service")
    assert not of_kind(docs, "Secret")
    (network_policy,) = of_kind(docs, "NetworkPolicy")
    assert "ingress" not in network_policy["spec"]
    (default,) = of_kind(rendered_cases["defaults"], "CronJob")
    assert default["spec"]["suspend"] is False


def test_serve_runs_replicas_with_leader_election(
    rendered_cases: dict[str, list[Manifest]],
) -> None:
    docs = rendered_cases["serve-2-replicas"]
    (deployment,) = of_kind(docs, "Deployment")
    assert deployment["spec"]["replicas"] == 2
    (container,) = images.pod_spec(deployment)["containers"]
    assert container["args"][0] == "serve"
    settings = policy.parse_policy(_policy(docs))
    assert settings.serve.leader_election.enabled
    assert settings.serve.leader_election.lease_namespace == NAMESPACE
    leases = [
        rule
        for role in of_kind(docs, "Role")
        for rule in role["rules"]
        if rule["apiGroups"] == ["coordination.k8s.io"]
    ]
    assert leases, "serve with leader election needs its Lease"
    # The webhook token: a Secret the chart made, mounted where the policy reads it.
    (secret,) = of_kind(docs, "Secret")
    assert set(secret["data"]) == {"token"}
    volumes = {v["name"]: v for v in images.pod_spec(deployment)["volumes"]}
    assert volumes["webhook-token"]["secret"]["secretName"] == secret["metadata"]["name"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert settings.serve.webhook.token_file == f"{mounts['webhook-token']}/token"
    (port,) = container["ports"]
    assert settings.serve.listen.endswith(f":{port['containerPort']}")


def test_monitoring_objects_follow_their_switches(
    rendered_cases: dict[str, list[Manifest]],
) -> None:
    on = rendered_cases["serve-monitoring-on"]
    (service,) = of_kind(on, "Service")
    (monitor,) = of_kind(on, "ServiceMonitor")
    assert (
        monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    )
    assert of_kind(on, "PrometheusRule")
    off = rendered_cases["serve-monitoring-off"]
    assert not of_kind(off, "ServiceMonitor")
    assert not of_kind(off, "PrometheusRule")
    # A Job is not scraped: the rules, but no ServiceMonitor.
    cronjob = rendered_cases["cronjob-rules-and-token"]
    assert of_kind(cronjob, "PrometheusRule")
    assert not of_kind(cronjob, "ServiceMonitor")


def test_switches_off_leave_their_objects_out(rendered_cases: dict[str, list[Manifest]]) -> None:
    docs = rendered_cases["serve-all-off"]
    kinds = {doc["kind"] for doc in docs}
    assert not kinds & {"NetworkPolicy", "ValidatingAdmissionPolicy", "Secret"}
    assert "ValidatingAdmissionPolicyBinding" not in kinds
    (deployment,) = of_kind(docs, "Deployment")
    spec = images.pod_spec(deployment)
    assert spec["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert spec["tolerations"][0]["key"] == "dedicated"
    assert "nodeAffinity" in spec["affinity"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["webhook-token"]["secret"]["secretName"] == "my-webhook"


def test_prometheus_token_by_secret_reference(rendered_cases: dict[str, list[Manifest]]) -> None:
    docs = rendered_cases["cronjob-rules-and-token"]
    settings = policy.parse_policy(_policy(docs))
    assert settings.metrics.prometheus is not None
    token = settings.metrics.prometheus.auth_token
    assert token is not None
    reference = token.secret_reference
    assert (reference.namespace, reference.name, reference.key) == (
        NAMESPACE,
        "prometheus-token",
        "token",
    )
    (role,) = [r for r in of_kind(docs, "Role") if r["metadata"]["name"] == RELEASE]
    secrets = [rule for rule in role["rules"] if rule["resources"] == ["secrets"]]
    assert secrets == [
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "resourceNames": ["prometheus-token"],
            "verbs": ["get"],
        }
    ]


# The values schema -----------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "field"),
    [
        (
            {"policy": {"limits": {"maxNoOfPodsToEvictTotal": -1}}},
            "/policy/limits/maxNoOfPodsToEvictTotal",
        ),
        ({"policy": {"metrics": {"onStaleNode": "Sometimes"}}}, "/policy/metrics/onStaleNode"),
        ({"policy": {"evictor": {"nodeFitt": True}}}, "nodeFitt"),
        ({"policy": {"metrics": {"maxSampleAge": "two minutes"}}}, "/policy/metrics/maxSampleAge"),
        (
            {"policy": {"nodePools": [{"name": "p", "thresholds": {"cpu": 140}}]}},
            "/policy/nodePools/0/thresholds/cpu",
        ),
        ({"mode": "daemon"}, "/mode"),
        ({"replicas": 0}, "/replicas"),
    ],
)
def test_values_schema_refuses_bad_values_naming_the_field(
    chart: helm.Chart, values: dict[str, Any], field: str
) -> None:
    with pytest.raises(helm.HelmValuesError) as refused:
        chart.validate_schema(chart.merge_values(values))
    assert field in str(refused.value)
    with pytest.raises(helm.HelmValuesError):
        chart.render(values, name=RELEASE, namespace=NAMESPACE)


@pytest.mark.parametrize(
    "path", sorted((ROOT / "policy").glob("*.yaml")), ids=lambda path: path.name
)
def test_values_schema_accepts_every_example_policy(chart: helm.Chart, path: pathlib.Path) -> None:
    document = yaml.safe_load(path.read_text())
    policy.parse_policy(document)  # what `loadaware validate` accepts...
    values = copy.deepcopy(chart.values)
    values["policy"] = document
    chart.validate_schema(values)  # ...the chart accepts


def test_generated_files_are_fresh() -> None:
    spec = importlib.util.spec_from_file_location(
        "charts_generate", ROOT / "charts" / "generate.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for path, text in module.render().items():
        assert path.read_text() == text, f"{path.relative_to(ROOT)} is stale: run `make chart`"


# The same objects as deploy/ -------------------------------------------------

SHARED_KINDS = (
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
)


def _shared(docs: list[Manifest]) -> dict[tuple[str, str], Manifest]:
    """RBAC and the admission policy by kind and name, without labels (each tool sets its own)."""
    shared = {}
    for doc in docs:
        if doc["kind"] in SHARED_KINDS:
            stripped = copy.deepcopy(doc)
            stripped["metadata"].pop("labels", None)
            shared[(doc["kind"], doc["metadata"]["name"])] = stripped
    return shared


@pytest.mark.parametrize(
    ("overlay", "values"),
    [
        ("cronjob", {"mode": "cronjob"}),
        ("serve", {"mode": "serve"}),
        (CONSOLIDATION, {"mode": "serve", "admissionPolicy": {"allowCordon": True}}),
    ],
)
def test_rbac_and_admission_policy_are_the_kustomize_objects(
    chart: helm.Chart,
    rendered: dict[str, list[Manifest]],
    overlay: str,
    values: dict[str, Any],
) -> None:
    from_chart = _shared(render(chart, values))
    from_kustomize = _shared(rendered[overlay])
    assert sorted(from_chart) == sorted(from_kustomize)
    for key, expected in from_kustomize.items():
        assert from_chart[key] == expected, key


def test_serve_policy_is_the_kustomize_policy(
    rendered_cases: dict[str, list[Manifest]], rendered: dict[str, list[Manifest]]
) -> None:
    from_chart = policy.parse_policy(_policy(rendered_cases["serve-2-replicas"]))
    from_kustomize = policy.parse_policy(_policy(rendered["serve"]))
    assert policy.dump_policy(from_chart) == policy.dump_policy(from_kustomize)


def test_prometheus_rule_is_the_kustomize_one(
    rendered_cases: dict[str, list[Manifest]], rendered: dict[str, list[Manifest]]
) -> None:
    (from_chart,) = of_kind(rendered_cases["serve-monitoring-on"], "PrometheusRule")
    (from_kustomize,) = of_kind(rendered["serve"], "PrometheusRule")
    assert from_chart["spec"] == from_kustomize["spec"]


def test_default_image_is_the_kustomize_one(
    rendered_cases: dict[str, list[Manifest]], rendered: dict[str, list[Manifest]]
) -> None:
    for overlay in ("serve", "cronjob"):
        assert set(images.images(rendered[overlay]).values()) == {images.REFERENCE}
    assert set(images.images(rendered_cases["defaults"]).values()) == {images.REFERENCE}


def test_notes_give_the_next_commands(chart: helm.Chart) -> None:
    values = CASES["cronjob-suspended-dry-run"]
    notes = chart.render(values, name=RELEASE, namespace=NAMESPACE)["loadaware/templates/NOTES.txt"]
    assert "kubectl -n loadaware create job --from=cronjob/loadaware loadaware-first" in notes
    assert "--set dryRun=false --set suspend=false" in notes
    serve = chart.render({"mode": "serve"}, name=RELEASE, namespace=NAMESPACE)
    assert "/alertmanager" in serve["loadaware/templates/NOTES.txt"]
    assert "create job" not in serve["loadaware/templates/NOTES.txt"]
