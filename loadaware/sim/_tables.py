"""Server-side printing: meta.k8s.io/v1 Tables, which `kubectl get` asks for.

kubectl prints whatever columns the server sends (priority 1 only with
`-o wide`) and adds the NAMESPACE column itself from each row's object, so
these follow the columns of kube-apiserver's printers for each kind. Ages
are measured on the simulated clock.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from loadaware.sim import _clock, _resources

Row = list[Any]
Column = tuple[str, str, int]  # name, type, priority (1: only with -o wide)


def human_duration(seconds: float) -> str:
    """apimachinery's duration.HumanDuration, as the AGE columns print it."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


class _Printer:
    def __init__(self, now: float) -> None:
        self.now = now

    def age(self, stamp: str | None) -> str:
        moment = _clock.parse_time(stamp)
        return "<unknown>" if moment is None else human_duration(self.now - moment)


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _containers_and_images(spec: Mapping[str, Any]) -> tuple[str, str]:
    template = (spec.get("template") or {}).get("spec") or {}
    containers = template.get("containers") or []
    return (
        ",".join(c.get("name", "") for c in containers),
        ",".join(c.get("image", "") for c in containers),
    )


def _selector_text(selector: Mapping[str, Any] | None) -> str:
    if not selector:
        return "<none>"
    parts = [f"{k}={v}" for k, v in (selector.get("matchLabels") or {}).items()]
    for expr in selector.get("matchExpressions") or []:
        op, key = expr.get("operator"), expr.get("key")
        values = ",".join(expr.get("values") or [])
        if op == "In":
            parts.append(f"{key} in ({values})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({values})")
        elif op == "Exists":
            parts.append(key)
        else:
            parts.append(f"!{key}")
    return ",".join(parts) or "<none>"


def pod_status_text(pod: Mapping[str, Any], node_ready: bool = True) -> str:
    """The STATUS column of `kubectl get pods`."""
    status = pod.get("status") or {}
    reason = status.get("reason") or status.get("phase") or "Unknown"
    for container in status.get("containerStatuses") or []:
        state = container.get("state") or {}
        if state.get("waiting", {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif state.get("terminated", {}).get("reason"):
            reason = state["terminated"]["reason"]
    if _meta(pod).get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    return str(reason)


def _pod_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    statuses = status.get("containerStatuses") or []
    total = len(spec.get("containers") or [])
    ready = sum(1 for c in statuses if c.get("ready"))
    restarts = sum(int(c.get("restartCount") or 0) for c in statuses)
    gates = spec.get("readinessGates") or []
    return [
        _meta(obj).get("name"),
        f"{ready}/{total}",
        pod_status_text(obj),
        str(restarts),
        p.age(_meta(obj).get("creationTimestamp")),
        status.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        "<none>" if not gates else f"0/{len(gates)}",
    ]


def node_ready_text(node: Mapping[str, Any]) -> str:
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = next((c for c in conditions if c.get("type") == "Ready"), None)
    text = "Unknown"
    if ready is not None:
        text = "Ready" if ready.get("status") == "True" else "NotReady"
    if (node.get("spec") or {}).get("unschedulable"):
        text += ",SchedulingDisabled"
    return text


def _node_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    status = obj.get("status") or {}
    labels = _meta(obj).get("labels") or {}
    roles = sorted(
        key.split("/", 1)[1]
        for key in labels
        if key.startswith("node-role.kubernetes.io/") and "/" in key
    )
    if labels.get("kubernetes.io/role"):
        roles.append(labels["kubernetes.io/role"])
    addresses = status.get("addresses") or []
    internal = next((a["address"] for a in addresses if a.get("type") == "InternalIP"), "<none>")
    external = next((a["address"] for a in addresses if a.get("type") == "ExternalIP"), "<none>")
    info = status.get("nodeInfo") or {}
    return [
        _meta(obj).get("name"),
        node_ready_text(obj),
        ",".join(roles) or "<none>",
        p.age(_meta(obj).get("creationTimestamp")),
        info.get("kubeletVersion", ""),
        internal,
        external,
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


def _pdb_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    return [
        _meta(obj).get("name"),
        str(spec["minAvailable"]) if spec.get("minAvailable") is not None else "N/A",
        str(spec["maxUnavailable"]) if spec.get("maxUnavailable") is not None else "N/A",
        int(status.get("disruptionsAllowed") or 0),
        p.age(_meta(obj).get("creationTimestamp")),
    ]


def _deployment_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    containers, images = _containers_and_images(spec)
    return [
        _meta(obj).get("name"),
        f"{int(status.get('readyReplicas') or 0)}/{int(spec.get('replicas', 1))}",
        int(status.get("updatedReplicas") or 0),
        int(status.get("availableReplicas") or 0),
        p.age(_meta(obj).get("creationTimestamp")),
        containers,
        images,
        _selector_text(spec.get("selector")),
    ]


def _replica_set_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    containers, images = _containers_and_images(spec)
    return [
        _meta(obj).get("name"),
        int(spec.get("replicas", 1)),
        int(status.get("replicas") or 0),
        int(status.get("readyReplicas") or 0),
        p.age(_meta(obj).get("creationTimestamp")),
        containers,
        images,
        _selector_text(spec.get("selector")),
    ]


def _stateful_set_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    containers, images = _containers_and_images(spec)
    return [
        _meta(obj).get("name"),
        f"{int(status.get('readyReplicas') or 0)}/{int(spec.get('replicas', 1))}",
        p.age(_meta(obj).get("creationTimestamp")),
        containers,
        images,
    ]


def _daemon_set_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    containers, images = _containers_and_images(spec)
    selector = ((spec.get("template") or {}).get("spec") or {}).get("nodeSelector") or {}
    return [
        _meta(obj).get("name"),
        int(status.get("desiredNumberScheduled") or 0),
        int(status.get("currentNumberScheduled") or 0),
        int(status.get("numberReady") or 0),
        int(status.get("updatedNumberScheduled") or 0),
        int(status.get("numberAvailable") or 0),
        ",".join(f"{k}={v}" for k, v in selector.items()) or "<none>",
        p.age(_meta(obj).get("creationTimestamp")),
        containers,
        images,
        _selector_text(spec.get("selector")),
    ]


def _event_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    involved = obj.get("involvedObject") or {}
    last = obj.get("lastTimestamp") or obj.get("eventTime") or _meta(obj).get("creationTimestamp")
    first = obj.get("firstTimestamp") or obj.get("eventTime")
    source = obj.get("source") or {}
    kind = str(involved.get("kind") or "").lower()
    return [
        p.age(last),
        obj.get("type", ""),
        obj.get("reason", ""),
        f"{kind}/{involved.get('name', '')}",
        obj.get("message", ""),
        involved.get("fieldPath", ""),
        ", ".join(v for v in (source.get("component"), source.get("host")) if v)
        or obj.get("reportingComponent", ""),
        p.age(first),
        int(obj.get("count") or 1),
        _meta(obj).get("name"),
    ]


def _namespace_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    return [
        _meta(obj).get("name"),
        (obj.get("status") or {}).get("phase", ""),
        p.age(_meta(obj).get("creationTimestamp")),
    ]


def _secret_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    return [
        _meta(obj).get("name"),
        obj.get("type", "Opaque"),
        len(obj.get("data") or {}),
        p.age(_meta(obj).get("creationTimestamp")),
    ]


def _configmap_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    return [
        _meta(obj).get("name"),
        len(obj.get("data") or {}) + len(obj.get("binaryData") or {}),
        p.age(_meta(obj).get("creationTimestamp")),
    ]


def _lease_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    return [
        _meta(obj).get("name"),
        (obj.get("spec") or {}).get("holderIdentity", ""),
        p.age(_meta(obj).get("creationTimestamp")),
    ]


def _priority_class_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    return [
        _meta(obj).get("name"),
        int(obj.get("value") or 0),
        bool(obj.get("globalDefault")),
        p.age(_meta(obj).get("creationTimestamp")),
        obj.get("preemptionPolicy", "PreemptLowerPriority"),
    ]


def _job_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    succeeded = int(status.get("succeeded") or 0)
    completions = spec.get("completions")
    return [
        _meta(obj).get("name"),
        "Complete" if status.get("completionTime") else "Running",
        f"{succeeded}/{completions if completions is not None else 1}",
        p.age(status.get("startTime")) if status.get("startTime") else "",
        p.age(_meta(obj).get("creationTimestamp")),
    ]


def _default_row(p: _Printer, obj: Mapping[str, Any]) -> Row:
    return [_meta(obj).get("name"), p.age(_meta(obj).get("creationTimestamp"))]


_NAME: Column = ("Name", "string", 0)
_AGE: Column = ("Age", "string", 0)

_PRINTERS: dict[str, tuple[tuple[Column, ...], Callable[[_Printer, Mapping[str, Any]], Row]]] = {
    "Pod": (
        (
            _NAME,
            ("Ready", "string", 0),
            ("Status", "string", 0),
            ("Restarts", "string", 0),
            _AGE,
            ("IP", "string", 1),
            ("Node", "string", 1),
            ("Nominated Node", "string", 1),
            ("Readiness Gates", "string", 1),
        ),
        _pod_row,
    ),
    "Node": (
        (
            _NAME,
            ("Status", "string", 0),
            ("Roles", "string", 0),
            _AGE,
            ("Version", "string", 0),
            ("Internal-IP", "string", 1),
            ("External-IP", "string", 1),
            ("OS-Image", "string", 1),
            ("Kernel-Version", "string", 1),
            ("Container-Runtime", "string", 1),
        ),
        _node_row,
    ),
    "PodDisruptionBudget": (
        (
            _NAME,
            ("Min Available", "string", 0),
            ("Max Unavailable", "string", 0),
            ("Allowed Disruptions", "integer", 0),
            _AGE,
        ),
        _pdb_row,
    ),
    "Deployment": (
        (
            _NAME,
            ("Ready", "string", 0),
            ("Up-to-date", "integer", 0),
            ("Available", "integer", 0),
            _AGE,
            ("Containers", "string", 1),
            ("Images", "string", 1),
            ("Selector", "string", 1),
        ),
        _deployment_row,
    ),
    "ReplicaSet": (
        (
            _NAME,
            ("Desired", "integer", 0),
            ("Current", "integer", 0),
            ("Ready", "integer", 0),
            _AGE,
            ("Containers", "string", 1),
            ("Images", "string", 1),
            ("Selector", "string", 1),
        ),
        _replica_set_row,
    ),
    "StatefulSet": (
        (
            _NAME,
            ("Ready", "string", 0),
            _AGE,
            ("Containers", "string", 1),
            ("Images", "string", 1),
        ),
        _stateful_set_row,
    ),
    "DaemonSet": (
        (
            _NAME,
            ("Desired", "integer", 0),
            ("Current", "integer", 0),
            ("Ready", "integer", 0),
            ("Up-to-date", "integer", 0),
            ("Available", "integer", 0),
            ("Node Selector", "string", 0),
            _AGE,
            ("Containers", "string", 1),
            ("Images", "string", 1),
            ("Selector", "string", 1),
        ),
        _daemon_set_row,
    ),
    "Event": (
        (
            ("Last Seen", "string", 0),
            ("Type", "string", 0),
            ("Reason", "string", 0),
            ("Object", "string", 0),
            ("Message", "string", 0),
            ("Subobject", "string", 1),
            ("Source", "string", 1),
            ("First Seen", "string", 1),
            ("Count", "string", 1),
            ("Name", "string", 1),
        ),
        _event_row,
    ),
    "Namespace": ((_NAME, ("Status", "string", 0), _AGE), _namespace_row),
    "Secret": (
        (_NAME, ("Type", "string", 0), ("Data", "string", 0), _AGE),
        _secret_row,
    ),
    "ConfigMap": ((_NAME, ("Data", "string", 0), _AGE), _configmap_row),
    "Lease": ((_NAME, ("Holder", "string", 0), _AGE), _lease_row),
    "PriorityClass": (
        (
            _NAME,
            ("Value", "integer", 0),
            ("Global-Default", "boolean", 0),
            _AGE,
            ("PreemptionPolicy", "string", 0),
        ),
        _priority_class_row,
    ),
    "Job": (
        (
            _NAME,
            ("Status", "string", 0),
            ("Completions", "string", 0),
            ("Duration", "string", 0),
            _AGE,
        ),
        _job_row,
    ),
}


def table(
    resource: _resources.Resource,
    objects: list[Mapping[str, Any]],
    *,
    now: float,
    include_object: str,
    list_meta: dict[str, Any],
) -> dict[str, Any]:
    """A meta.k8s.io/v1 Table of the objects; rows carry PartialObjectMetadata unless
    includeObject says Object or None."""
    columns, row_of = _PRINTERS.get(resource.kind, ((_NAME, _AGE), _default_row))
    printer = _Printer(now)
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": row_of(printer, obj)}
        if include_object == "Object":
            row["object"] = obj
        elif include_object != "None":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj.get("metadata") or {},
            }
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": [
            {
                "name": name,
                "type": kind,
                "format": "name" if name == "Name" and i == 0 else "",
                "description": "",
                "priority": priority,
            }
            for i, (name, kind, priority) in enumerate(columns)
        ],
        "rows": rows,
    }
