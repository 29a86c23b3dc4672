"""The policy/v1 Eviction subresource, with kube-apiserver's rules
(pkg/registry/core/pod/storage/eviction.go):

- a pod that is Pending, Succeeded, Failed or already terminating is deleted
  without consulting any PodDisruptionBudget;
- no matching PDB: the pod is deleted; several: 500, the subresource does not
  support that;
- one PDB not yet observed by its controller (observedGeneration behind): 429;
- a pod that is not Ready goes if the PDB's unhealthyPodEvictionPolicy is
  AlwaysAllow, or (IfHealthyBudget, the default) while the budget is met;
- otherwise `disruptionsAllowed` 0 is a 429 with a DisruptionBudget cause, and
  a granted eviction takes one disruption and records the pod in
  `status.disruptedPods` until the PDB controller sees it gone.

The pod gets a DisruptionTarget condition and is deleted with the eviction's
DeleteOptions (graceful, so it lingers with a deletionTimestamp). `dryRun: All`
checks everything and changes nothing. Success is 201 with a Status body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadaware.sim import _clock, _resources, _selectors, _status, _store

_EVICTION_VERSIONS = ("policy/v1", "policy/v1beta1")


def evict(
    store: _store.Store, namespace: str, name: str, body: Any, query: Mapping[str, str]
) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise _status.bad_request("the body of an eviction must be a policy/v1 Eviction")
    if body.get("kind") not in (None, "Eviction") or body.get("apiVersion") not in (
        None,
        *_EVICTION_VERSIONS,
    ):
        raise _status.bad_request(
            f"the object provided is unrecognized (must be of type Eviction): "
            f"{body.get('apiVersion')}, Kind={body.get('kind')}"
        )
    meta = body.get("metadata") or {}
    if meta.get("name") and meta["name"] != name:
        raise _status.bad_request("name in URL does not match name in Eviction object")
    raw_options = body.get("deleteOptions")
    options = _store.delete_options(query, raw_options)
    with store.lock:
        pod = store.get(_resources.PODS, namespace, name)
        if _can_ignore_budget(pod):
            return _delete(store, pod, options)
        pdbs = [
            pdb
            for pdb in store.objects(_resources.PDBS, namespace)
            if _selectors.label_selector_matches(
                (pdb.get("spec") or {}).get("selector"), pod["metadata"].get("labels") or {}
            )
        ]
        if not pdbs:
            return _delete(store, pod, options)
        if len(pdbs) > 1:
            raise _status.internal(
                "This pod has more than one PodDisruptionBudget, which the eviction "
                "subresource does not support."
            )
        pdb = pdbs[0]
        status = pdb.get("status") or {}
        if int(status.get("observedGeneration") or 0) < int(pdb["metadata"].get("generation") or 0):
            raise _too_many(
                f"The disruption budget {pdb['metadata']['name']} is still being processed by "
                "the server."
            )
        if not _is_ready(pod):
            policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"
            current = int(status.get("currentHealthy") or 0)
            desired = int(status.get("desiredHealthy") or 0)
            if policy == "AlwaysAllow" or (current >= desired and desired > 0):
                return _delete(store, pod, options)
        allowed = int(status.get("disruptionsAllowed") or 0)
        if allowed < 0:
            raise _status.forbidden("pods", name, "pdb disruptions allowed is negative")
        if allowed == 0:
            raise _too_many(
                f"The disruption budget {pdb['metadata']['name']} needs "
                f"{int(status.get('desiredHealthy') or 0)} healthy pods and has "
                f"{int(status.get('currentHealthy') or 0)} currently"
            )
        if not options.dry_run:
            new_status = dict(status)
            new_status["disruptionsAllowed"] = allowed - 1
            disrupted = dict(status.get("disruptedPods") or {})
            disrupted[name] = _clock.rfc3339(store.clock.time())
            new_status["disruptedPods"] = disrupted
            if allowed - 1 == 0:
                new_status["conditions"] = allowed_condition(
                    status.get("conditions") or [], False, store.clock.time()
                )
            store.replace(
                _resources.PDBS,
                pdb,
                {**pdb, "metadata": dict(pdb["metadata"]), "status": new_status},
            )
        return _delete(store, pod, options)


def _too_many(cause: str) -> _status.ApiError:
    return _status.too_many_requests(
        "Cannot evict pod as it would violate the pod's disruption budget.",
        [{"reason": "DisruptionBudget", "message": cause}],
    )


def _can_ignore_budget(pod: Mapping[str, Any]) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Pending", "Succeeded", "Failed") or bool(
        pod["metadata"].get("deletionTimestamp")
    )


def _is_ready(pod: Mapping[str, Any]) -> bool:
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False


def _delete(
    store: _store.Store, pod: dict[str, Any], options: _store.DeleteOptions
) -> dict[str, Any]:
    if not options.dry_run and not pod["metadata"].get("deletionTimestamp"):
        status = dict(pod.get("status") or {})
        conditions = [
            c for c in status.get("conditions") or [] if c.get("type") != "DisruptionTarget"
        ]
        conditions.append(
            {
                "type": "DisruptionTarget",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": _clock.rfc3339(store.clock.time()),
                "reason": "EvictionByEvictionAPI",
                "message": "Eviction API: evicting",
            }
        )
        status["conditions"] = conditions
        pod = store.replace(
            _resources.PODS, pod, {**pod, "metadata": dict(pod["metadata"]), "status": status}
        )
    meta = pod["metadata"]
    store.delete(_resources.PODS, meta["namespace"], meta["name"], options)
    return _status.success(201)


def allowed_condition(
    conditions: list[dict[str, Any]], allowed: bool, now: float
) -> list[dict[str, Any]]:
    wanted = "True" if allowed else "False"
    result = [c for c in conditions if c.get("type") != "DisruptionAllowed"]
    previous = next((c for c in conditions if c.get("type") == "DisruptionAllowed"), None)
    if previous is not None and previous.get("status") == wanted:
        result.append(previous)
    else:
        result.append(
            {
                "type": "DisruptionAllowed",
                "status": wanted,
                "reason": "SufficientPods" if allowed else "InsufficientPods",
                "message": "",
                "lastTransitionTime": _clock.rfc3339(now),
            }
        )
    return result
