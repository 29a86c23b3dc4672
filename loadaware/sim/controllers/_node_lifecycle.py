"""The node lifecycle controller: `set_node_ready(name, False)` turns the node's
conditions Unknown, taints it unreachable (NoSchedule and NoExecute) and marks its pods
not Ready; taint-based eviction after tolerationSeconds is not modelled.
"""

from __future__ import annotations

from loadaware.sim import _clock, _events, _resources, _store
from loadaware.sim.controllers import _kubelet, _objects


def set_node_ready(store: _store.Store, name: str, ready: bool) -> None:
    """A node's kubelet stops (or resumes) posting status, as the node lifecycle
    controller sees it."""
    with store.lock:
        node = store.get(_resources.NODES, None, name)
        now = store.clock.time()
        stamp = _clock.rfc3339(now)
        status = dict(node.get("status") or {})
        conditions = []
        for condition in status.get("conditions") or []:
            condition = dict(condition)
            if ready:
                healthy = "True" if condition.get("type") == "Ready" else "False"
                if condition.get("status") != healthy:
                    condition["lastTransitionTime"] = stamp
                condition["status"] = healthy
                condition["reason"] = (
                    "KubeletReady" if condition["type"] == "Ready" else condition.get("reason")
                )
                if condition["type"] == "Ready":
                    condition["message"] = "kubelet is posting ready status"
                condition["lastHeartbeatTime"] = stamp
            else:
                if condition.get("status") != "Unknown":
                    condition["lastTransitionTime"] = stamp
                condition["status"] = "Unknown"
                condition["reason"] = "NodeStatusUnknown"
                condition["message"] = "Kubelet stopped posting node status."
            conditions.append(condition)
        status["conditions"] = conditions
        spec = dict(node.get("spec") or {})
        taints = [t for t in spec.get("taints") or [] if t.get("key") != _objects.UNREACHABLE_TAINT]
        if not ready:
            taints.append(
                {"key": _objects.UNREACHABLE_TAINT, "effect": "NoSchedule", "timeAdded": stamp}
            )
            taints.append(
                {"key": _objects.UNREACHABLE_TAINT, "effect": "NoExecute", "timeAdded": stamp}
            )
        if taints:
            spec["taints"] = taints
        else:
            spec.pop("taints", None)
        store.replace(
            _resources.NODES,
            node,
            {**node, "metadata": dict(node["metadata"]), "spec": spec, "status": status},
        )
        _events.record(
            store,
            {**node, "metadata": {**node["metadata"], "namespace": "default"}},
            type_="Normal",
            reason="NodeReady" if ready else "NodeNotReady",
            message=f"Node {name} status is now: {'NodeReady' if ready else 'NodeNotReady'}",
            component="node-controller",
        )
        for pod in store.objects(_resources.PODS):
            if pod["spec"].get("nodeName") != name:
                continue
            if (pod.get("status") or {}).get("phase") != "Running":
                continue
            if _objects.is_pod_ready(pod) != ready:
                _kubelet.set_pod_ready(store, pod, ready, stamp)
