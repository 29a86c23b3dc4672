"""The DaemonSet controller: a pod per eligible node, pinned to it by node affinity."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from loadaware import cluster
from loadaware.sim import _resources
from loadaware.sim.controllers import _objects, _state, _workload


def sync(state: _state.ControlState, ds: dict[str, Any]) -> None:
    """A pod for each eligible node the DaemonSet does not cover yet; write the status."""
    if ds["metadata"].get("deletionTimestamp"):
        return
    template_spec = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    pods = [p for p in state.pods_of(ds["metadata"]["uid"]) if _objects.is_active(p)]
    covered = {_pinned_node(p) for p in pods}
    eligible = daemon_set_nodes(template_spec, state.store.objects(_resources.NODES))
    for name in eligible:
        if name in covered:
            continue
        pod = _workload.new_pod(ds, extra_labels={"pod-template-generation": "1"})
        pod["spec"]["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [name]}
                            ]
                        }
                    ]
                }
            }
        }
        _workload.create_pod(state.store, ds, pod, "daemonset-controller")
    ready = sum(1 for p in pods if _objects.is_pod_ready(p))
    status = {
        "observedGeneration": int(ds["metadata"].get("generation") or 1),
        "currentNumberScheduled": len(pods),
        "desiredNumberScheduled": len(eligible),
        "numberMisscheduled": 0,
        "numberReady": ready,
        "numberAvailable": ready,
        "updatedNumberScheduled": len(pods),
    }
    if len(eligible) > ready:
        status["numberUnavailable"] = len(eligible) - ready
    _workload.set_status(state.store, _resources.DAEMONSETS, ds, status)


def _toleration(raw: Mapping[str, Any]) -> cluster.Toleration:
    return cluster.Toleration(
        key=str(raw.get("key") or ""),
        operator=str(raw.get("operator") or "Equal"),
        value=str(raw.get("value") or ""),
        effect=str(raw.get("effect") or ""),
    )


def _taint(raw: Mapping[str, Any]) -> cluster.Taint:
    return cluster.Taint(
        key=str(raw.get("key") or ""),
        value=str(raw.get("value") or ""),
        effect=str(raw.get("effect")),
    )


def daemon_set_nodes(
    template_spec: Mapping[str, Any], nodes: Iterable[Mapping[str, Any]]
) -> list[str]:
    """The nodes a DaemonSet with this pod template runs a pod on: its nodeSelector
    matches and it tolerates every NoSchedule and NoExecute taint (the unreachable
    taint of a NotReady node aside: its pod stays). Node affinity is not modelled."""
    tolerations = [_toleration(t) for t in template_spec.get("tolerations") or []]
    selector = template_spec.get("nodeSelector") or {}
    eligible = []
    for node in nodes:
        labels = node["metadata"].get("labels") or {}
        if any(labels.get(k) != v for k, v in selector.items()):
            continue
        taints = [_taint(t) for t in (node.get("spec") or {}).get("taints") or []]
        if any(
            t.effect in ("NoSchedule", "NoExecute")
            and t.key != _objects.UNREACHABLE_TAINT
            and not any(tol.tolerates(t) for tol in tolerations)
            for t in taints
        ):
            continue
        eligible.append(str(node["metadata"]["name"]))
    return eligible


def _pinned_node(pod: Mapping[str, Any]) -> str | None:
    """The node a DaemonSet pod is bound or pinned to."""
    if pod["spec"].get("nodeName"):
        return str(pod["spec"]["nodeName"])
    affinity = ((pod["spec"].get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in affinity.get("nodeSelectorTerms") or []:
        for field in term.get("matchFields") or []:
            if field.get("key") == "metadata.name" and field.get("values"):
                return str(field["values"][0])
    return None
