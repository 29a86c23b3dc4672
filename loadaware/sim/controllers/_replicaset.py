"""The ReplicaSet controller: keeps `spec.replicas` pods of the template active."""

from __future__ import annotations

from typing import Any

from loadaware.sim import _events, _resources, _store
from loadaware.sim.controllers import _objects, _state, _workload


def sync(state: _state.ControlState, rs: dict[str, Any]) -> None:
    """Create or delete pods until `spec.replicas` are active; write the status."""
    uid = rs["metadata"]["uid"]
    if rs["metadata"].get("deletionTimestamp"):
        return
    pods = state.pods_of(uid)
    active = [p for p in pods if _objects.is_active(p)]
    wanted = int((rs.get("spec") or {}).get("replicas", 1))
    for _ in range(wanted - len(active)):
        _workload.create_pod(state.store, rs, _workload.new_pod(rs), "replicaset-controller")
    if len(active) > wanted:
        # Unscheduled first, then not ready, then the youngest, as the controller ranks them.
        ranked = sorted(
            active,
            key=lambda p: (
                bool(p["spec"].get("nodeName")),
                _objects.is_pod_ready(p),
                p["metadata"].get("creationTimestamp", ""),
            ),
        )
        for pod in ranked[: len(active) - wanted]:
            state.store.delete(
                _resources.PODS,
                pod["metadata"]["namespace"],
                pod["metadata"]["name"],
                _store.DeleteOptions(),
            )
            _events.record(
                state.store,
                rs,
                type_="Normal",
                reason="SuccessfulDelete",
                message=f"Deleted pod: {pod['metadata']['name']}",
                component="replicaset-controller",
            )
    active = [p for p in state.pods_of(uid) if _objects.is_active(p)]
    ready = sum(1 for p in active if _objects.is_pod_ready(p))
    status: dict[str, Any] = {
        "replicas": len(active),
        "fullyLabeledReplicas": len(active),
        "readyReplicas": ready,
        "availableReplicas": ready,
        "observedGeneration": int(rs["metadata"].get("generation") or 1),
    }
    status = {k: v for k, v in status.items() if v or k in ("replicas", "observedGeneration")}
    _workload.set_status(state.store, _resources.REPLICASETS, rs, status)
