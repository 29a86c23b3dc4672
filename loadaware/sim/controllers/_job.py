"""The Job controller: keeps `parallelism` pods running (its pods never finish here) and
counts a pod deleted or evicted before its end as failed, up to `backoffLimit`;
indexed completion, podFailurePolicy and CronJobs are not modelled.
"""

from __future__ import annotations

from typing import Any

from loadaware.sim import _clock, _resources, _store
from loadaware.sim.controllers import _objects, _state, _workload

# The Job controller's finalizer on its pods, removed once it has counted a pod's end.
_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"


def sync(state: _state.ControlState, job: dict[str, Any]) -> None:
    meta, spec = job["metadata"], job.get("spec") or {}
    if meta.get("deletionTimestamp"):
        return
    status = dict(job.get("status") or {})
    conditions = list(status.get("conditions") or [])
    uid = meta["uid"]
    now = _clock.rfc3339(state.clock.time())
    succeeded = int(status.get("succeeded") or 0)
    failed = int(status.get("failed") or 0)
    # The Job controller counts each pod once, as it drops its tracking finalizer
    # from a pod that finished or is being deleted: an evicted pod counts as failed.
    for pod in state.pods_of(uid):
        finalizers = pod["metadata"].get("finalizers") or []
        phase = (pod.get("status") or {}).get("phase")
        if _TRACKING_FINALIZER not in finalizers or _objects.is_active(pod):
            continue
        pod_meta = dict(pod["metadata"])
        pod_meta["finalizers"] = [f for f in finalizers if f != _TRACKING_FINALIZER]
        if not pod_meta["finalizers"]:
            del pod_meta["finalizers"]
        state.store.replace(_resources.PODS, pod, {**pod, "metadata": pod_meta})
        if phase == "Succeeded":
            succeeded += 1
        else:
            failed += 1
    active = [p for p in state.pods_of(uid) if _objects.is_active(p)]
    finished = any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in conditions
    )
    completions = spec.get("completions")
    if not finished and failed > int(spec.get("backoffLimit", 6)):
        finished = True
        conditions = _objects.with_condition(
            conditions,
            "Failed",
            "True",
            now,
            reason="BackoffLimitExceeded",
            message="Job has reached the specified backoff limit",
            lastProbeTime=now,
        )
        for pod in active:
            state.store.delete(
                _resources.PODS,
                pod["metadata"]["namespace"],
                pod["metadata"]["name"],
                _store.DeleteOptions(),
            )
        active = []
    if not finished:
        # Pods run until deleted here, so a Job completes only from the state loaded.
        if completions is None:
            wanted = 0 if succeeded else int(spec.get("parallelism", 1))
        else:
            wanted = min(int(spec.get("parallelism", 1)), int(completions) - succeeded)
        if spec.get("suspend"):
            wanted = 0
        for _ in range(wanted - len(active)):
            pod = _workload.new_pod(
                job,
                extra_labels={
                    "batch.kubernetes.io/controller-uid": uid,
                    "batch.kubernetes.io/job-name": meta["name"],
                    "controller-uid": uid,
                    "job-name": meta["name"],
                },
            )
            pod["metadata"]["finalizers"] = [_TRACKING_FINALIZER]
            _workload.create_pod(state.store, job, pod, "job-controller")
        active = [p for p in state.pods_of(uid) if _objects.is_active(p)]
    status.update(
        {
            "active": len(active),
            "ready": sum(1 for p in active if _objects.is_pod_ready(p)),
            "succeeded": succeeded,
            "failed": failed,
        }
    )
    status.setdefault("startTime", meta.get("creationTimestamp") or now)
    if conditions:
        status["conditions"] = conditions
    status = {k: v for k, v in status.items() if v or k in ("ready", "startTime")}
    _workload.set_status(state.store, _resources.JOBS, job, status)
