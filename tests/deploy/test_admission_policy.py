"""The ValidatingAdmissionPolicy that keeps loadaware's node patches to its own taints.

The policy and its binding come from the rendered overlays; the consolidation
variant is serve with deploy/components/consolidation. Their CEL runs on
cel-expr-python (the CEL project's Python binding of cel-cpp) with the optional
types and strings extensions, both part of Kubernetes' CEL environment too, and
nothing Kubernetes lacks. `admit` follows kube-apiserver: object, oldObject and
request are plain maps (it binds them as unstructured JSON, not schema types);
the match constraints select the request, a false matchCondition skips the
policy; variables are evaluated in order and read as `variables.NAME`, one that
fails is missing for the expressions that use it; every validation is
evaluated, a false one refuses with its messageExpression (its message when that
fails); and any expression that fails refuses too (failurePolicy Fail).
Kubernetes also refuses list and map literals of mixed types
(HomogeneousAggregateLiterals), which cel-cpp does not check; the policy has none.

Covered: loadaware's ServiceAccount is matched and no other user, nor node
status; adding and removing PreferNoSchedule taints with a loadaware.io/ key is
allowed, as the evictor's own add_hotspot_taint and remove_hotspot_taint write
them; refused, with the field or taint named: labels, annotations, finalizers,
ownerReferences, another taint added, removed or changed, a NoSchedule or
NoExecute taint whatever its key, a look-alike key, every other spec field, and
the cordon except with the consolidation component, which allows the cordon
alone (not the uncordon); the component refuses to build if the variable it
replaces has moved; binding and policy fit together and fail closed.
"""

from __future__ import annotations

import copy
import functools
import pathlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import pytest
from cel_expr_python import cel
from cel_expr_python.ext import ext_optional, ext_strings

from loadaware import evict
from tests.deploy.conftest import (
    CONSOLIDATION,
    OVERLAYS,
    ROOT,
    Manifest,
    of_kind,
    render,
    write_overlay,
)

RawNode = dict[str, Any]
POLICY_NAME = "loadaware-node-writes"
LOADAWARE = "system:serviceaccount:loadaware:loadaware"
HOTSPOT = {"key": "loadaware.io/hotspot", "value": "true", "effect": "PreferNoSchedule"}
CONTROL_PLANE = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
DEDICATED = {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}
BASE = "serve"


# The evaluator ---------------------------------------------------------------


@functools.cache
def _environment() -> cel.Env:
    dynamic = {name: cel.Type.DYN for name in ("object", "oldObject", "request", "variables")}
    return cel.NewEnv(
        variables=dynamic,
        extensions=[ext_optional.ExtOptional(), ext_strings.ExtStrings()],
    )


@functools.cache
def _compiled(expression: str) -> cel.Expression:
    # A compile error is a broken policy (or CEL the environment lacks), not a
    # verdict: it raises.
    return _environment().compile(expression)


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    value: Any = None
    error: str | None = None


def _evaluate(expression: str, activation: dict[str, Any]) -> Outcome:
    result = _compiled(expression).eval(data=activation)
    if result.type() == cel.Type.ERROR:
        return Outcome(error=str(result.plain_value()))
    return Outcome(value=result.plain_value())


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    matched: bool
    refusals: tuple[str, ...] = ()

    @property
    def allowed(self) -> bool:
        return not self.refusals


def _request(node: RawNode, username: str, subresource: str = "") -> dict[str, Any]:
    return {
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": "", "version": "v1", "kind": "Node"},
        "resource": {"group": "", "version": "v1", "resource": "nodes"},
        "subResource": subresource,
        "name": node["metadata"]["name"],
        "operation": "UPDATE",
        "userInfo": {
            "username": username,
            "uid": "0b2e9a0c-1d35-4c0e-9f3e-6c0f8f1d2a77",
            "groups": ["system:serviceaccounts", "system:authenticated"],
        },
        "dryRun": False,
    }


def _matches_constraints(spec: dict[str, Any], request: dict[str, Any]) -> bool:
    resource = request["resource"]["resource"]
    if request["subResource"]:
        resource += "/" + request["subResource"]
    return any(
        request["resource"]["group"] in rule["apiGroups"]
        and request["resource"]["version"] in rule["apiVersions"]
        and request["operation"] in rule["operations"]
        and resource in rule["resources"]
        for rule in spec["matchConstraints"]["resourceRules"]
    )


def admit(
    admission_policy: Manifest,
    old: RawNode,
    new: RawNode,
    *,
    username: str = LOADAWARE,
    subresource: str = "",
) -> Verdict:
    spec = admission_policy["spec"]
    assert spec["failurePolicy"] == "Fail"
    request = _request(new, username, subresource)
    if not _matches_constraints(spec, request):
        return Verdict(matched=False)
    activation: dict[str, Any] = {"object": new, "oldObject": old, "request": request}
    errors = []
    for condition in spec.get("matchConditions", []):
        outcome = _evaluate(condition["expression"], activation)
        if outcome.error is not None:
            errors.append(f"matchCondition {condition['name']}: {outcome.error}")
        elif outcome.value is False:
            return Verdict(matched=False)
        else:
            assert outcome.value is True, condition
    if errors:
        return Verdict(matched=True, refusals=tuple(errors))
    variables: dict[str, Any] = {}
    activation["variables"] = variables
    for variable in spec.get("variables", []):
        outcome = _evaluate(variable["expression"], activation)
        if outcome.error is None:
            variables[variable["name"]] = outcome.value
    refusals = []
    for validation in spec["validations"]:
        outcome = _evaluate(validation["expression"], activation)
        if outcome.error is not None:
            refusals.append(f"{validation['expression']}: {outcome.error}")
            continue
        assert isinstance(outcome.value, bool), validation
        if outcome.value:
            continue
        message = validation.get("message") or f"failed expression: {validation['expression']}"
        if "messageExpression" in validation:
            text = _evaluate(validation["messageExpression"], activation)
            if text.error is None and text.value:
                assert isinstance(text.value, str)
                message = text.value
        refusals.append(message)
    return Verdict(matched=True, refusals=tuple(refusals))


# Nodes -----------------------------------------------------------------------


def raw_node(
    name: str = "node-a",
    *,
    taints: list[dict[str, str]] | None = None,
    unschedulable: bool = False,
) -> RawNode:
    """A Node as kube-apiserver hands it to admission: optional fields left out when empty."""
    node: RawNode = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-node-{name}",
            "resourceVersion": "4711",
            "creationTimestamp": "2026-11-29T06:00:00Z",
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": "m6i.xlarge",
                "topology.kubernetes.io/zone": "eu-west-1a",
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
            "managedFields": [
                {
                    "manager": "kubelet",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-11-29T06:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {}}},
                }
            ],
        },
        "spec": {
            "podCIDR": "10.244.1.0/24",
            "podCIDRs": ["10.244.1.0/24"],
            "providerID": f"aws:///eu-west-1a/i-0{name.encode().hex()[:16]}",
        },
        "status": {
            "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    if taints:
        node["spec"]["taints"] = copy.deepcopy(taints)
    if unschedulable:
        node["spec"]["unschedulable"] = True
    return node


def written(old: RawNode, change: Callable[[RawNode], object]) -> RawNode:
    """`old` after a write that makes `change`, with what kube-apiserver changes on every
    write besides: resourceVersion and managedFields."""
    new = copy.deepcopy(old)
    change(new)
    new["metadata"]["resourceVersion"] = str(int(old["metadata"]["resourceVersion"]) + 1)
    new["metadata"]["managedFields"].append(
        {
            "manager": "loadaware",
            "operation": "Update",
            "apiVersion": "v1",
            "time": "2026-11-29T08:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:taints": {}}},
        }
    )
    return new


def _set_taints(taints: list[dict[str, str]] | None) -> Callable[[RawNode], object]:
    def change(node: RawNode) -> None:
        if taints is None:
            node["spec"].pop("taints", None)
        else:
            node["spec"]["taints"] = copy.deepcopy(taints)

    return change


def _set(path: tuple[str, ...], value: Any) -> Callable[[RawNode], object]:
    *parents, last = path

    def change(node: RawNode) -> None:
        target = node
        for key in parents:
            target = target.setdefault(key, {})
        target[last] = value

    return change


def _remove(path: tuple[str, ...]) -> Callable[[RawNode], object]:
    *parents, last = path

    def change(node: RawNode) -> None:
        target = node
        for key in parents:
            target = target[key]
        del target[last]

    return change


def _both(*changes: Callable[[RawNode], object]) -> Callable[[RawNode], object]:
    def change(node: RawNode) -> None:
        for one in changes:
            one(node)

    return change


# Fixtures --------------------------------------------------------------------


def _admission_policy(docs: list[Manifest]) -> Manifest:
    (admission_policy,) = of_kind(docs, "ValidatingAdmissionPolicy")
    return admission_policy


@pytest.fixture(scope="module")
def base(rendered: dict[str, list[Manifest]]) -> Manifest:
    return _admission_policy(rendered[BASE])


@pytest.fixture(scope="module")
def consolidation(rendered: dict[str, list[Manifest]]) -> Manifest:
    return _admission_policy(rendered[CONSOLIDATION])


@pytest.fixture(scope="module", params=[BASE, CONSOLIDATION])
def either(request: pytest.FixtureRequest, rendered: dict[str, list[Manifest]]) -> Manifest:
    return _admission_policy(rendered[request.param])


# What loadaware does ---------------------------------------------------------

ALLOWED = [
    pytest.param(None, [HOTSPOT], id="add loadaware's taint to a node without taints"),
    pytest.param(
        [CONTROL_PLANE, DEDICATED],
        [CONTROL_PLANE, DEDICATED, HOTSPOT],
        id="add loadaware's taint after others",
    ),
    pytest.param([HOTSPOT], [], id="remove loadaware's taint, leaving taints empty"),
    pytest.param([HOTSPOT], None, id="remove loadaware's taint, leaving no taints"),
    pytest.param(
        [CONTROL_PLANE, HOTSPOT, DEDICATED],
        [CONTROL_PLANE, DEDICATED],
        id="remove loadaware's taint from among others",
    ),
    pytest.param(
        [HOTSPOT],
        [HOTSPOT, {"key": "loadaware.io/steer", "effect": "PreferNoSchedule"}],
        id="add another loadaware.io/ key, PreferNoSchedule",
    ),
    pytest.param(
        [DEDICATED, HOTSPOT],
        [DEDICATED, {**HOTSPOT, "value": "round-42"}],
        id="change the value of loadaware's taint",
    ),
    pytest.param(
        [CONTROL_PLANE, HOTSPOT], [CONTROL_PLANE, HOTSPOT], id="write the taints back unchanged"
    ),
]


@pytest.mark.parametrize(("before", "after"), ALLOWED)
def test_loadaware_may_add_and_remove_its_own_soft_taints(
    before: list[dict[str, str]] | None, after: list[dict[str, str]] | None, either: Manifest
) -> None:
    old = raw_node(taints=before)
    verdict = admit(either, old, written(old, _set_taints(after)))
    assert verdict.matched
    assert verdict.allowed, verdict.refusals


class RecordingKube:
    """The node calls the evictor's taint code makes, on one node, answered as
    kube-apiserver answers a JSON merge patch of spec.taints: the list replaced whole."""

    def __init__(self, node: RawNode) -> None:
        self.node = node
        self.writes: list[tuple[RawNode, RawNode]] = []

    def cached_node(self, name: str) -> RawNode | None:
        return None  # no cluster cache: every write starts from a read

    def read_node(self, name: str) -> RawNode:
        assert name == self.node["metadata"]["name"]
        return copy.deepcopy(self.node)

    def list_nodes(self) -> list[RawNode]:
        return [copy.deepcopy(self.node)]

    def set_node_taints(
        self,
        name: str,
        taints: list[dict[str, Any]],
        resource_version: str,
        *,
        dry_run: bool = False,
    ) -> None:
        assert resource_version == self.node["metadata"]["resourceVersion"]
        new = written(self.node, _set_taints(taints))
        # A dry run is admitted like the write itself and changes nothing.
        self.writes.append((self.node, new))
        if not dry_run:
            self.node = new


def test_the_evictors_own_taint_writes_are_admitted(base: Manifest) -> None:
    assert evict.HOTSPOT_TAINT_KEY.startswith("loadaware.io/")
    kube = RecordingKube(raw_node(taints=[CONTROL_PLANE, DEDICATED]))
    evict.add_hotspot_taint(cast(evict.Kube, kube), "node-a")
    tainted = kube.node
    evict.remove_hotspot_taint(cast(evict.Kube, kube), "node-a")
    ours = [t for t in tainted["spec"]["taints"] if t["key"] == evict.HOTSPOT_TAINT_KEY]
    assert ours == [{"key": evict.HOTSPOT_TAINT_KEY, "value": "true", "effect": "PreferNoSchedule"}]
    assert kube.node["spec"]["taints"] == [CONTROL_PLANE, DEDICATED]
    assert kube.writes
    for old, new in kube.writes:
        verdict = admit(base, old, new)
        assert verdict.matched
        assert verdict.allowed, verdict.refusals


# What it may not do ----------------------------------------------------------


def _label(key: str, value: str) -> Callable[[RawNode], object]:
    return _set(("metadata", "labels", key), value)


REFUSED_FIELDS = [
    pytest.param(_label("example.com/pool", "batch"), "metadata.labels", id="add a label"),
    pytest.param(
        _remove(("metadata", "labels", "topology.kubernetes.io/zone")),
        "metadata.labels",
        id="remove a label",
    ),
    pytest.param(_label("kubernetes.io/os", "windows"), "metadata.labels", id="change a label"),
    pytest.param(
        _set(("metadata", "annotations", "node.alpha.kubernetes.io/ttl"), "30"),
        "metadata.annotations",
        id="change an annotation",
    ),
    pytest.param(
        _set(("metadata", "finalizers"), ["example.com/keep"]),
        "metadata.finalizers",
        id="add a finalizer",
    ),
    pytest.param(
        _set(
            ("metadata", "ownerReferences"),
            [{"apiVersion": "v1", "kind": "Namespace", "name": "loadaware", "uid": "u-1"}],
        ),
        "metadata.ownerReferences",
        id="add an ownerReference",
    ),
    pytest.param(_set(("spec", "podCIDR"), "10.244.9.0/24"), "spec.podCIDR", id="change podCIDR"),
    pytest.param(
        _set(("spec", "podCIDRs"), ["10.244.1.0/24", "fd00:10:244:1::/64"]),
        "spec.podCIDRs",
        id="change podCIDRs",
    ),
    pytest.param(
        _set(("spec", "providerID"), "aws:///eu-west-1a/i-0ffff"),
        "spec.providerID",
        id="change providerID",
    ),
    pytest.param(_remove(("spec", "providerID")), "spec.providerID", id="remove providerID"),
    pytest.param(_set(("spec", "externalID"), "i-0ffff"), "spec.externalID", id="set externalID"),
    pytest.param(
        _set(
            ("spec", "configSource"),
            {"configMap": {"name": "kubelet", "namespace": "kube-system", "kubeletConfigKey": "k"}},
        ),
        "spec.configSource",
        id="set configSource",
    ),
]


@pytest.mark.parametrize(("change", "field"), REFUSED_FIELDS)
def test_any_other_field_is_refused_and_named(
    change: Callable[[RawNode], object], field: str, either: Manifest
) -> None:
    old = raw_node(taints=[HOTSPOT])
    verdict = admit(either, old, written(old, change))
    assert verdict.matched
    (refusal,) = verdict.refusals
    assert field in refusal
    assert "node-a" in refusal


MAINTENANCE = {"key": "example.com/maintenance", "effect": "PreferNoSchedule"}
DRAIN = {"key": "example.com/drain", "effect": "NoExecute", "timeAdded": "2026-11-29T08:00:00Z"}
REFUSED_TAINTS = [
    pytest.param(
        [HOTSPOT],
        [HOTSPOT, MAINTENANCE],
        "example.com/maintenance:PreferNoSchedule",
        id="add another key's PreferNoSchedule taint",
    ),
    pytest.param(
        [CONTROL_PLANE, HOTSPOT],
        [HOTSPOT],
        "node-role.kubernetes.io/control-plane:NoSchedule",
        id="remove another taint",
    ),
    pytest.param(
        [DEDICATED],
        [{**DEDICATED, "value": "batch"}],
        "dedicated:NoSchedule",
        id="change another taint's value",
    ),
    pytest.param(
        [DEDICATED],
        [{**DEDICATED, "effect": "PreferNoSchedule"}],
        "dedicated:NoSchedule",
        id="change another taint's effect",
    ),
    pytest.param(
        None,
        [{**HOTSPOT, "effect": "NoExecute"}],
        "loadaware.io/hotspot:NoExecute",
        id="add NoExecute with loadaware's key",
    ),
    pytest.param(
        [HOTSPOT],
        [HOTSPOT, {"key": "loadaware.io/fence", "effect": "NoSchedule"}],
        "loadaware.io/fence:NoSchedule",
        id="add NoSchedule with a loadaware.io/ key",
    ),
    pytest.param(None, [DRAIN], "example.com/drain:NoExecute", id="add NoExecute, another key"),
    pytest.param(
        [HOTSPOT],
        [{**HOTSPOT, "effect": "NoSchedule"}],
        "loadaware.io/hotspot:NoSchedule",
        id="turn loadaware's taint into NoSchedule",
    ),
    pytest.param(
        [{**HOTSPOT, "effect": "NoSchedule"}],
        [],
        "loadaware.io/hotspot:NoSchedule",
        id="remove a NoSchedule taint with a loadaware.io/ key",
    ),
    pytest.param(
        None,
        [{**HOTSPOT, "key": "loadaware.io.example.com/hotspot"}],
        "loadaware.io.example.com/hotspot:PreferNoSchedule",
        id="add a look-alike key",
    ),
    pytest.param(
        None,
        [{**HOTSPOT, "key": "example.com/loadaware.io/hotspot"}],
        "example.com/loadaware.io/hotspot:PreferNoSchedule",
        id="add a key with loadaware.io/ inside",
    ),
    pytest.param(
        [CONTROL_PLANE],
        [DEDICATED, HOTSPOT],
        "node-role.kubernetes.io/control-plane",
        id="swap another taint while adding loadaware's",
    ),
]


@pytest.mark.parametrize(("before", "after", "named"), REFUSED_TAINTS)
def test_other_taints_and_hard_effects_are_refused_and_named(
    before: list[dict[str, str]] | None,
    after: list[dict[str, str]] | None,
    named: str,
    either: Manifest,
) -> None:
    old = raw_node(taints=before)
    verdict = admit(either, old, written(old, _set_taints(after)))
    assert verdict.matched
    (refusal,) = verdict.refusals
    assert named in refusal
    assert "node-a" in refusal


def test_a_taint_and_a_label_at_once_are_both_named(either: Manifest) -> None:
    old = raw_node()
    change = _both(_set_taints([HOTSPOT, MAINTENANCE]), _label("pool", "x"))
    verdict = admit(either, old, written(old, change))
    assert len(verdict.refusals) == 2
    assert "metadata.labels" in verdict.refusals[0]
    assert "example.com/maintenance:PreferNoSchedule" in verdict.refusals[1]


# Cordoning, for consolidation --------------------------------------------------


def test_the_base_refuses_the_cordon_and_says_how_to_allow_it(base: Manifest) -> None:
    old = raw_node()
    verdict = admit(base, old, written(old, _set(("spec", "unschedulable"), True)))
    assert verdict.matched
    (refusal,) = verdict.refusals
    assert "spec.unschedulable" in refusal
    assert "deploy/components/consolidation" in refusal


def test_the_consolidation_component_allows_the_cordon(consolidation: Manifest) -> None:
    old = raw_node(taints=[HOTSPOT])
    verdict = admit(consolidation, old, written(old, _set(("spec", "unschedulable"), True)))
    assert verdict.matched
    assert verdict.allowed, verdict.refusals


def test_the_consolidation_component_still_refuses_the_uncordon(consolidation: Manifest) -> None:
    old = raw_node(unschedulable=True)
    verdict = admit(consolidation, old, written(old, _remove(("spec", "unschedulable"))))
    (refusal,) = verdict.refusals
    assert "spec.unschedulable" in refusal
    assert "deploy/components/consolidation" not in refusal


def test_the_consolidation_component_allows_nothing_else_with_the_cordon(
    consolidation: Manifest,
) -> None:
    old = raw_node()
    change = _both(_set(("spec", "unschedulable"), True), _label("drained", "true"))
    (refusal,) = admit(consolidation, old, written(old, change)).refusals
    assert "metadata.labels" in refusal
    assert "spec.unschedulable" not in refusal


def test_the_consolidation_component_changes_only_may_cordon(
    base: Manifest, consolidation: Manifest
) -> None:
    relaxed = copy.deepcopy(consolidation["spec"])
    strict = copy.deepcopy(base["spec"])
    assert relaxed["variables"][0] == {"name": "mayCordon", "expression": "true"}
    assert strict["variables"][0] == {"name": "mayCordon", "expression": "false"}
    del relaxed["variables"][0], strict["variables"][0]
    assert relaxed == strict


def test_the_consolidation_component_refuses_to_build_when_may_cordon_moved(
    tmp_path: pathlib.Path,
) -> None:
    deploy = tmp_path / "deploy"
    shutil.copytree(ROOT / "deploy", deploy)
    path = deploy / "base" / "admission-policy.yaml"
    text = path.read_text()
    moved = text.replace('    - name: mayCordon\n      expression: "false"\n', "", 1).replace(
        "  variables:\n",
        '  variables:\n    - name: spare\n      expression: "false"\n'
        '    - name: mayCordon\n      expression: "false"\n',
        1,
    )
    assert moved.count("mayCordon") == text.count("mayCordon")
    path.write_text(moved)
    user = write_overlay(tmp_path / "user", deploy, "serve", ["consolidation"])
    with pytest.raises(AssertionError, match="testing value /spec/variables/0/name failed"):
        render(user)


# Who and what it applies to ----------------------------------------------------


@pytest.mark.parametrize(
    "username",
    [
        "system:serviceaccount:kube-system:node-controller",
        "system:node:node-a",
        "kubernetes-admin",
        "system:serviceaccount:loadaware:loadaware-canary",
        "system:serviceaccount:loadaware-test:loadaware",
        "system:serviceaccount:other:loadaware",
    ],
)
def test_other_users_are_not_matched(username: str, either: Manifest) -> None:
    old = raw_node()
    new = written(old, _both(_label("pool", "x"), _set(("spec", "unschedulable"), True)))
    assert admit(either, old, new, username=username) == Verdict(matched=False)
    assert not admit(either, old, new).allowed


@pytest.mark.parametrize("overlay", [*OVERLAYS, CONSOLIDATION])
def test_the_match_condition_names_the_rendered_service_account(
    overlay: str, rendered: dict[str, list[Manifest]]
) -> None:
    (account,) = of_kind(rendered[overlay], "ServiceAccount")
    username = (
        f"system:serviceaccount:{account['metadata']['namespace']}:{account['metadata']['name']}"
    )
    old = raw_node()
    new = written(old, _label("pool", "x"))
    admission_policy = _admission_policy(rendered[overlay])
    assert admit(admission_policy, old, new, username=username).matched


def test_node_status_is_not_matched(base: Manifest) -> None:
    old = raw_node()
    new = written(old, _set(("status", "conditions"), []))
    assert admit(base, old, new, subresource="status") == Verdict(matched=False)


@pytest.mark.parametrize("overlay", [*OVERLAYS, CONSOLIDATION])
def test_the_binding_denies_with_the_policy(
    overlay: str, rendered: dict[str, list[Manifest]]
) -> None:
    docs = rendered[overlay]
    admission_policy = _admission_policy(docs)
    (binding,) = of_kind(docs, "ValidatingAdmissionPolicyBinding")
    assert admission_policy["metadata"]["name"] == POLICY_NAME
    assert binding["spec"]["policyName"] == POLICY_NAME
    assert binding["spec"]["validationActions"] == ["Deny"]
    assert "paramRef" not in binding["spec"]
    spec = admission_policy["spec"]
    assert spec["failurePolicy"] == "Fail"
    assert spec["matchConstraints"]["resourceRules"] == [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["nodes"]}
    ]
    for validation in spec["validations"]:
        assert validation["message"]
        assert validation["messageExpression"]
        assert validation["reason"] == "Forbidden"


def test_every_overlay_ships_the_same_policy(rendered: dict[str, list[Manifest]]) -> None:
    policies = [_admission_policy(rendered[name]) for name in OVERLAYS]
    assert all(p == policies[0] for p in policies)
