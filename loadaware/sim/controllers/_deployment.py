"""The Deployment controller: one ReplicaSet per Deployment, scaled to its replicas;
template rollouts are not modelled.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from loadaware.sim import _events, _resources
from loadaware.sim.controllers import _objects, _replicaset, _state, _workload


def sync(state: _state.ControlState, deployment: dict[str, Any]) -> None:
    """Create the Deployment's ReplicaSet, or scale its newest one to `spec.replicas`."""
    if deployment["metadata"].get("deletionTimestamp"):
        return
    namespace = deployment["metadata"]["namespace"]
    owned = replica_sets_of(state, deployment)
    wanted = int((deployment.get("spec") or {}).get("replicas", 1))
    if not owned:
        template = copy.deepcopy((deployment.get("spec") or {}).get("template") or {})
        template_hash = _objects.template_hash(template)
        labels = {**((template.get("metadata") or {}).get("labels") or {})}
        labels["pod-template-hash"] = template_hash
        template.setdefault("metadata", {})["labels"] = labels
        selector = copy.deepcopy((deployment.get("spec") or {}).get("selector") or {})
        selector.setdefault("matchLabels", {})["pod-template-hash"] = template_hash
        revision = (deployment["metadata"].get("annotations") or {}).get(
            "deployment.kubernetes.io/revision", "1"
        )
        rs = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{deployment['metadata']['name']}-{template_hash}",
                "namespace": namespace,
                "labels": labels,
                "annotations": {
                    "deployment.kubernetes.io/desired-replicas": str(wanted),
                    "deployment.kubernetes.io/revision": revision,
                },
                "ownerReferences": [_objects.owner_ref(deployment)],
            },
            "spec": {"replicas": wanted, "selector": selector, "template": template},
        }
        created = state.store.add(_resources.REPLICASETS, rs)
        state.owners.add(created["metadata"]["uid"])
        _events.record(
            state.store,
            deployment,
            type_="Normal",
            reason="ScalingReplicaSet",
            message=f"Scaled up replica set {created['metadata']['name']} from 0 to {wanted}",
            component="deployment-controller",
        )
        return
    newest = max(
        owned,
        key=lambda rs: (
            int(
                (rs["metadata"].get("annotations") or {}).get(
                    "deployment.kubernetes.io/revision", "0"
                )
            ),
            rs["metadata"].get("creationTimestamp", ""),
        ),
    )
    have = int((newest.get("spec") or {}).get("replicas", 1))
    if have != wanted:
        spec = {**newest["spec"], "replicas": wanted}
        meta = dict(newest["metadata"])
        meta["generation"] = int(meta.get("generation") or 1) + 1
        state.store.replace(
            _resources.REPLICASETS, newest, {**newest, "metadata": meta, "spec": spec}
        )
        _replicaset.sync(
            state,
            state.store.find(_resources.REPLICASETS, namespace, newest["metadata"]["name"])
            or newest,
        )
        verb = "up" if wanted > have else "down"
        _events.record(
            state.store,
            deployment,
            type_="Normal",
            reason="ScalingReplicaSet",
            message=(
                f"Scaled {verb} replica set {newest['metadata']['name']} from {have} to {wanted}"
            ),
            component="deployment-controller",
        )


def sync_status(state: _state.ControlState, deployment: dict[str, Any]) -> None:
    """The Deployment's status, summed over its ReplicaSets."""
    replicas = ready = 0
    for rs in replica_sets_of(state, deployment):
        status = rs.get("status") or {}
        replicas += int(status.get("replicas") or 0)
        ready += int(status.get("readyReplicas") or 0)
    wanted = int((deployment.get("spec") or {}).get("replicas", 1))
    status = {
        "observedGeneration": int(deployment["metadata"].get("generation") or 1),
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": ready,
        "availableReplicas": ready,
    }
    if wanted > ready:
        status["unavailableReplicas"] = wanted - ready
    status = {k: v for k, v in status.items() if v or k in ("replicas", "observedGeneration")}
    _workload.set_status(state.store, _resources.DEPLOYMENTS, deployment, status)


def replica_sets_of(state: _state.ControlState, deployment: Mapping[str, Any]) -> list[Any]:
    """The ReplicaSets the Deployment controls, in key order (from the owners' index,
    not a scan of the namespace)."""
    uid = deployment["metadata"]["uid"]
    found = []
    for resource_key, key in sorted(state.dependents.get(uid, ())):
        if resource_key != _resources.REPLICASETS.key:
            continue
        namespace, _, name = key.partition("/")
        rs = state.store.find(_resources.REPLICASETS, namespace, name)
        if rs is not None and (_objects.controller_ref(rs) or {}).get("uid") == uid:
            found.append(rs)
    return found
