"""The disruption controller: each PodDisruptionBudget's expectedPods, desiredHealthy,
currentHealthy, disruptionsAllowed, disruptedPods and DisruptionAllowed condition.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadaware.sim import _clock, _eviction, _resources
from loadaware.sim.controllers import _objects, _state

# The disruption controller forgets an eviction it has not seen complete after this long.
DISRUPTED_POD_TIMEOUT = 120.0


def sync(state: _state.ControlState) -> None:
    """The status of every PodDisruptionBudget a change may have moved."""
    now = state.clock.time()
    namespaces, keys = state.pdb_namespaces, state.pdb_keys
    state.pdb_namespaces, state.pdb_keys = set(), set()
    # A disrupted pod's entry expires: its budget is looked at again once one may have.
    dirty = keys | {
        key for key, since in state.disrupted_since.items() if now >= since + DISRUPTED_POD_TIMEOUT
    }
    for namespace in namespaces:
        dirty.update(state.pdb_keys_in(namespace))
    for key in sorted(dirty):
        namespace, _, name = key.partition("/")
        pdb = state.store.find(_resources.PDBS, namespace, name)
        if pdb is not None:
            _pdb_status(state, pdb, now)


def _pdb_status(state: _state.ControlState, pdb: dict[str, Any], now: float) -> None:
    namespace = pdb["metadata"]["namespace"]
    spec = pdb.get("spec") or {}
    selector = spec.get("selector")
    pods = state.pods_selected(namespace, selector)
    status = dict(pdb.get("status") or {})
    disrupted = {}
    for name, stamp in (status.get("disruptedPods") or {}).items():
        pod = state.store.find(_resources.PODS, namespace, name)
        moment = _clock.parse_time(stamp) or 0.0
        if (
            pod is not None
            and not pod["metadata"].get("deletionTimestamp")
            and now < moment + DISRUPTED_POD_TIMEOUT
        ):
            disrupted[name] = stamp
    healthy = sum(
        1
        for p in pods
        if _objects.is_active(p)
        and _objects.is_pod_ready(p)
        and p["metadata"]["name"] not in disrupted
    )
    expected, desired = _expected_and_desired(state, spec, pods)
    allowed = max(0, healthy - desired)
    new_status: dict[str, Any] = {
        "observedGeneration": int(pdb["metadata"].get("generation") or 1),
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
        "disruptionsAllowed": allowed,
    }
    if disrupted:
        new_status["disruptedPods"] = disrupted
    new_status["conditions"] = _eviction.allowed_condition(
        status.get("conditions") or [], allowed > 0, now
    )
    if new_status != pdb.get("status"):
        state.store.replace(
            _resources.PDBS,
            pdb,
            {**pdb, "metadata": dict(pdb["metadata"]), "status": new_status},
        )


def _expected_and_desired(
    state: _state.ControlState, spec: Mapping[str, Any], pods: list[dict[str, Any]]
) -> tuple[int, int]:
    min_available = spec.get("minAvailable")
    max_unavailable = spec.get("maxUnavailable")
    if isinstance(min_available, int) and max_unavailable is None:
        return len(pods), min_available
    expected = _expected_pods(state, pods)
    if max_unavailable is not None:
        return expected, max(0, expected - _objects.scaled(max_unavailable, expected))
    if min_available is None:
        return expected, expected
    return expected, _objects.scaled(min_available, expected)


def _expected_pods(state: _state.ControlState, pods: list[dict[str, Any]]) -> int:
    """The sum of the scales of the pods' controllers (a Deployment's for its ReplicaSets)."""
    scales: dict[str, int] = {}
    for pod in pods:
        ref = _objects.controller_ref(pod)
        if ref is None:
            continue
        namespace = pod["metadata"]["namespace"]
        owner: Mapping[str, Any] | None = None
        if ref.get("kind") == "ReplicaSet":
            rs = state.store.find(_resources.REPLICASETS, namespace, ref["name"])
            parent = _objects.controller_ref(rs) if rs is not None else None
            if parent is not None and parent.get("kind") == "Deployment":
                owner = state.store.find(_resources.DEPLOYMENTS, namespace, parent["name"])
            else:
                owner = rs
        elif ref.get("kind") == "StatefulSet":
            owner = state.store.find(_resources.STATEFULSETS, namespace, ref["name"])
        if owner is not None:
            scales[owner["metadata"]["uid"]] = int((owner.get("spec") or {}).get("replicas", 1))
        else:
            scales[pod["metadata"]["uid"]] = 1
    return sum(scales.values())
