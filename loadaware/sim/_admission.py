"""What kube-apiserver does to an object between the request and storage: defaults,
admission plugins (Priority, DefaultTolerationSeconds, NamespaceLifecycle's
labels) and validation, for the kinds the simulator serves.

Validation covers what clients trip over in practice — names, label values,
pods without containers or with unreadable requests (checked by loadaware's own
loader, so the simulator never stores a pod the planner could not read), PDBs
with both minAvailable and maxUnavailable, changes to an immutable pod spec —
not the whole of the API's validation.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from typing import Any

from loadaware import cluster, errors
from loadaware.sim import _resources, _status

_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_SUBDOMAIN_HELP = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
    "[a-z0-9])?)*')"
)
_LABEL_HELP = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
_LABEL_VALUE_HELP = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)

SYSTEM_PRIORITY_CLASSES = {
    "system-cluster-critical": 2_000_000_000,
    "system-node-critical": 2_000_001_000,
}

# The tolerations DefaultTolerationSeconds adds to every pod that has none for these taints.
_DEFAULT_TOLERATIONS = (
    {
        "key": "node.kubernetes.io/not-ready",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
    {
        "key": "node.kubernetes.io/unreachable",
        "operator": "Exists",
        "effect": "NoExecute",
        "tolerationSeconds": 300,
    },
)

Cause = tuple[str, str, str]  # field, reason, message
PriorityLookup = Callable[[str], tuple[int, str] | None]  # class -> (value, preemptionPolicy)


def check_name(resource: _resources.Resource, obj: Mapping[str, Any]) -> None:
    meta = obj.get("metadata") or {}
    name = meta.get("name") or ""
    causes: list[Cause] = []
    if not name:
        causes.append(
            (
                "metadata.name",
                "FieldValueRequired",
                "Required value: name or generateName is required",
            )
        )
    elif resource is _resources.NAMESPACES:
        if len(name) > 63 or not _LABEL.fullmatch(name):
            causes.append(
                ("metadata.name", "FieldValueInvalid", f'Invalid value: "{name}": {_LABEL_HELP}')
            )
    elif resource not in (_resources.EVENTS, _resources.EVENTS_V1) and (
        len(name) > 253 or not _SUBDOMAIN.fullmatch(name)
    ):
        causes.append(
            ("metadata.name", "FieldValueInvalid", f'Invalid value: "{name}": {_SUBDOMAIN_HELP}')
        )
    for key, value in (meta.get("labels") or {}).items():
        if not isinstance(value, str) or len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
            causes.append(
                (
                    "metadata.labels",
                    "FieldValueInvalid",
                    f'Invalid value: "{value}": {_LABEL_VALUE_HELP}',
                )
            )
        if not isinstance(key, str) or not key:
            causes.append(("metadata.labels", "FieldValueInvalid", f'Invalid value: "{key}"'))
    if causes:
        raise _status.invalid(resource.kind, name, causes, resource.group)


def prepare_create(
    resource: _resources.Resource,
    obj: dict[str, Any],
    *,
    priority_of: PriorityLookup,
) -> dict[str, Any]:
    """Defaults and admission for a new object (a fresh copy may be returned)."""
    if resource is _resources.PODS:
        return _prepare_pod(obj, priority_of)
    if resource is _resources.PDBS:
        _validate_pdb(obj)
        obj["status"] = {
            "disruptionsAllowed": 0,
            "currentHealthy": 0,
            "desiredHealthy": 0,
            "expectedPods": 0,
        }
    elif resource is _resources.NAMESPACES:
        name = obj["metadata"]["name"]
        obj["metadata"]["labels"] = {
            **(obj["metadata"].get("labels") or {}),
            "kubernetes.io/metadata.name": name,
        }
        obj["spec"] = {"finalizers": ["kubernetes"]}
        obj["status"] = {"phase": "Active"}
    elif resource is _resources.SECRETS:
        _prepare_secret(obj)
    elif resource.has_status and resource.has_generation:
        obj["status"] = {}
    return obj


def validate_update(
    resource: _resources.Resource, old: Mapping[str, Any], new: dict[str, Any]
) -> None:
    if resource is _resources.PODS:
        _validate_pod_update(old, new)
    elif resource is _resources.PDBS:
        _validate_pdb(new)
    elif resource is _resources.SECRETS:
        _prepare_secret(new)
    elif resource is _resources.NAMESPACES:
        labels = dict(new["metadata"].get("labels") or {})
        labels["kubernetes.io/metadata.name"] = new["metadata"]["name"]
        new["metadata"]["labels"] = labels


def _prepare_secret(obj: dict[str, Any]) -> None:
    data = dict(obj.get("data") or {})
    for key, value in data.items():
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, TypeError, ValueError):
            raise _status.bad_request(
                f'Secret in version "v1" cannot be handled as a Secret: illegal base64 data '
                f"in data[{key!r}]"
            ) from None
    for key, value in (obj.pop("stringData", None) or {}).items():
        data[key] = base64.b64encode(str(value).encode()).decode()
    if data or "data" in obj:
        obj["data"] = data
    obj.setdefault("type", "Opaque")


def _validate_pdb(obj: Mapping[str, Any]) -> None:
    spec = obj.get("spec") or {}
    if spec.get("minAvailable") is not None and spec.get("maxUnavailable") is not None:
        raise _status.invalid(
            "PodDisruptionBudget",
            obj["metadata"].get("name", ""),
            [
                (
                    "spec",
                    "FieldValueInvalid",
                    "Invalid value: policy.PodDisruptionBudgetSpec{...}: minAvailable and "
                    "maxUnavailable cannot be both set",
                )
            ],
            "policy",
        )


def qos_class(spec: Mapping[str, Any]) -> str:
    """Guaranteed, Burstable or BestEffort, from the containers' requests and limits."""
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    any_set = False
    guaranteed = True
    for container in containers:
        resources = container.get("resources") or {}
        limits = resources.get("limits") or {}
        requests = {**limits, **(resources.get("requests") or {})}
        if requests or limits:
            any_set = True
        for name in ("cpu", "memory"):
            if name not in limits or str(requests.get(name)) != str(limits[name]):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _prepare_pod(obj: dict[str, Any], priority_of: PriorityLookup) -> dict[str, Any]:
    meta = obj["metadata"]
    spec = dict(obj.get("spec") or {})
    name = meta.get("name", "")
    containers = spec.get("containers")
    causes: list[Cause] = []
    if not containers:
        causes.append(("spec.containers", "FieldValueRequired", "Required value"))
    for i, container in enumerate(containers or []):
        if not isinstance(container, dict) or not container.get("name"):
            causes.append((f"spec.containers[{i}].name", "FieldValueRequired", "Required value"))
        elif not container.get("image"):
            causes.append((f"spec.containers[{i}].image", "FieldValueRequired", "Required value"))
    if causes:
        raise _status.invalid("Pod", name, causes)

    defaulted = []
    for container in containers:
        container = dict(container)
        image = str(container["image"])
        container.setdefault(
            "imagePullPolicy",
            "Always"
            if image.endswith(":latest") or ":" not in image.split("/")[-1]
            else "IfNotPresent",
        )
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
        container.setdefault("resources", {})
        defaulted.append(container)
    spec["containers"] = defaulted
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("enableServiceLinks", True)

    # Priority admission: the class decides, and a pod may not state its own value.
    class_name = spec.get("priorityClassName") or ""
    found = priority_of(class_name)
    if class_name and found is None:
        raise _status.forbidden(
            "pods",
            name,
            f"no PriorityClass with name {class_name} was found",
        )
    value, preemption = found if found is not None else (0, "PreemptLowerPriority")
    spec["priority"] = value
    spec.setdefault("preemptionPolicy", preemption)

    tolerations = list(spec.get("tolerations") or [])
    for default in _DEFAULT_TOLERATIONS:
        if not any(
            t.get("key") == default["key"] and t.get("effect") in (None, "", "NoExecute")
            for t in tolerations
        ):
            tolerations.append(dict(default))
    spec["tolerations"] = tolerations
    obj["spec"] = spec
    obj["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}
    _check_readable(obj)
    return obj


def _check_readable(obj: dict[str, Any]) -> None:
    """Refuse a pod loadaware's own loader would refuse: the planner must read every pod."""
    try:
        cluster.cluster_state_from_objects([obj])
    except errors.InputError as exc:
        raise _status.invalid(
            "Pod",
            obj["metadata"].get("name", ""),
            [("spec", "FieldValueInvalid", f"Invalid value: {exc.message}")],
        ) from None


# A pod's spec is immutable apart from these (and additions to tolerations).
_MUTABLE_POD_SPEC = frozenset({"activeDeadlineSeconds", "tolerations", "schedulingGates"})


def _validate_pod_update(old: Mapping[str, Any], new: dict[str, Any]) -> None:
    before, after = old.get("spec") or {}, new.get("spec") or {}
    if before == after:
        return
    changed = {k for k in {*before, *after} if before.get(k) != after.get(k)}
    images_only = changed == {"containers"} and _same_but_images(
        before.get("containers") or [], after.get("containers") or []
    )
    if (images_only or changed <= _MUTABLE_POD_SPEC) and (
        "tolerations" not in changed
        or all(t in (after.get("tolerations") or []) for t in before.get("tolerations") or [])
    ):
        return
    raise _status.invalid(
        "Pod",
        new["metadata"].get("name", ""),
        [
            (
                "spec",
                "FieldValueForbidden",
                "Forbidden: pod updates may not change fields other than `spec.containers[*]."
                "image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec."
                "tolerations` (only additions to existing tolerations),`spec."
                "terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously "
                "negative)",
            )
        ],
    )


def _same_but_images(before: list[Any], after: list[Any]) -> bool:
    if len(before) != len(after):
        return False
    return all(
        {**a, "image": None} == {**b, "image": None}
        for a, b in zip(before, after, strict=True)
        if isinstance(a, dict) and isinstance(b, dict)
    )
