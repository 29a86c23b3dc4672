"""The StatefulSet controller (OrderedReady): an ordinal comes back under the same name
once its predecessor is gone and the lower ones are Ready, with its volume claims.
"""

from __future__ import annotations

from typing import Any

from loadaware.sim import _resources
from loadaware.sim.controllers import _objects, _state, _workload


def sync(state: _state.ControlState, sts: dict[str, Any]) -> None:
    if sts["metadata"].get("deletionTimestamp"):
        return
    spec = sts.get("spec") or {}
    name = sts["metadata"]["name"]
    namespace = sts["metadata"]["namespace"]
    wanted = int(spec.get("replicas", 1))
    ordered = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
    revision = (sts.get("status") or {}).get(
        "updateRevision"
    ) or f"{name}-{_objects.template_hash(spec.get('template') or {})}"
    lower_ready = True
    for ordinal in range(wanted):
        pod_name = f"{name}-{ordinal}"
        pod = state.store.find(_resources.PODS, namespace, pod_name)
        if pod is None:
            if ordered and not lower_ready:
                break
            new = _workload.new_pod(
                sts,
                name=pod_name,
                extra_labels={
                    "controller-revision-hash": revision,
                    "statefulset.kubernetes.io/pod-name": pod_name,
                    "apps.kubernetes.io/pod-index": str(ordinal),
                },
            )
            new["spec"]["hostname"] = pod_name
            new["spec"]["subdomain"] = spec.get("serviceName", name)
            volumes = list(new["spec"].get("volumes") or [])
            for claim in spec.get("volumeClaimTemplates") or []:
                claim_name = claim["metadata"]["name"]
                volumes = [v for v in volumes if v.get("name") != claim_name]
                volumes.append(
                    {
                        "name": claim_name,
                        "persistentVolumeClaim": {"claimName": f"{claim_name}-{pod_name}"},
                    }
                )
            if volumes:
                new["spec"]["volumes"] = volumes
            _workload.create_pod(state.store, sts, new, "statefulset-controller")
            lower_ready = False
        else:
            lower_ready = lower_ready and _objects.is_pod_ready(pod) and _objects.is_active(pod)
    pods = [p for p in state.pods_of(sts["metadata"]["uid"]) if _objects.is_active(p)]
    ready = sum(1 for p in pods if _objects.is_pod_ready(p))
    status = {
        "observedGeneration": int(sts["metadata"].get("generation") or 1),
        "replicas": len(pods),
        "readyReplicas": ready,
        "currentReplicas": len(pods),
        "updatedReplicas": len(pods),
        "availableReplicas": ready,
    }
    _workload.set_status(state.store, _resources.STATEFULSETS, sts, status)
