"""What a partial dump lacks, filled in from what it holds.

`kubectl get nodes,pods,pdb -A -o yaml` holds pods whose ownerReferences name
ReplicaSets, StatefulSets, DaemonSets and Jobs that are not in the file. The
simulated controllers find a workload's pods by the owner's uid, so without the
owner nothing would replace an evicted pod. `infer_controllers` builds each
missing owner from its pods:

- its uid is the one the pods' controller ownerReference carries, so the loaded
  pods stay owned by it (a reference without a uid is given the inferred one);
- its replicas are the active pods seen (a StatefulSet's: the highest ordinal
  seen plus one; a Job's parallelism: its running pods);
- its selector and template labels are the labels all its pods share, less the
  per-pod ones its controller adds itself (a StatefulSet pod's name and index,
  revision hashes, a DaemonSet's template generation); a ReplicaSet's keep
  pod-template-hash, a Job's selector is its controller-uid as the API sets it;
- its pod template is the newest pod's, less what was set for that one pod
  (nodeName, a StatefulSet pod's hostname and claim names, a DaemonSet pod's
  pinning to its node).

A ReplicaSet named `<deployment>-<pod-template-hash of its pods>` is what the
Deployment controller creates: it is given that Deployment, or linked to it
when the file has it, unless pods of several ReplicaSets name the same one
(the simulator models one ReplicaSet per Deployment). A name alone proves
nothing, so without that hash no Deployment is inferred. A DaemonSet is
inferred only when its pods cover every node it would select: its node
affinity is not in its pods (each is pinned to its node), and a guess could
start pods where the real one runs none. CronJobs above Jobs and owners of
other kinds (a mirror pod's Node, custom controllers) are not inferred.

Every decision comes back as an `Inference`, for `sim serve` to announce.

`with_container_statuses` gives a running pod without status.containerStatuses
(trimmed or hand-written dumps) one status per container, ready as the pod's
Ready condition says: READY in `kubectl get pods` counts ready containers, as
kube-apiserver's printer does, and would print 0/1 for a Ready pod without them.
"""

from __future__ import annotations

import collections
import copy
import hashlib
import math
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from loadaware.sim import _clock, controllers

# The annotation an inferred object carries, so that `kubectl get -o yaml` tells it apart.
INFERRED_ANNOTATION = "sim.loadaware.io/inferred"

_API_VERSIONS = {
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "DaemonSet": "apps/v1",
    "Job": "batch/v1",
    "Deployment": "apps/v1",
}
_WORKLOAD_KINDS = frozenset({*_API_VERSIONS, "ReplicationController", "CronJob"})
# Labels a controller sets on each pod itself (not in its template).
_PER_POD_LABELS = {
    "ReplicaSet": frozenset(),
    "StatefulSet": frozenset(
        {
            "statefulset.kubernetes.io/pod-name",
            "apps.kubernetes.io/pod-index",
            "controller-revision-hash",
        }
    ),
    "DaemonSet": frozenset({"controller-revision-hash", "pod-template-generation"}),
    "Job": frozenset({"batch.kubernetes.io/job-completion-index"}),
}
_PER_POD_ANNOTATIONS = frozenset({"batch.kubernetes.io/job-completion-index"})
_TEMPLATE_HASH = "pod-template-hash"
_DEFAULT_TOLERATIONS = [
    {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Inference:
    """One decision about an owner missing from the input: inferred, linked or not."""

    kind: str
    namespace: str
    name: str
    inferred: bool  # an object was added
    message: str


@dataclass(frozen=True, slots=True, kw_only=True)
class _Owner:
    kind: str
    namespace: str
    name: str
    uid: str
    pods: list[Mapping[str, Any]]  # the pods its controller reference names, with its uid
    strays: int  # pods naming it with another uid (a predecessor of the same name)

    @property
    def active(self) -> list[Mapping[str, Any]]:
        return [p for p in self.pods if _is_active(p)]

    def evidence(self) -> str:
        text = "1 pod's" if len(self.pods) == 1 else f"{len(self.pods)} pods'"
        text += " ownerReferences"
        if self.strays:
            text += f" ({self.strays} more name it with another uid and stay without an owner)"
        return text


def infer_controllers(
    objects: Sequence[Mapping[str, Any]],
) -> tuple[list[Mapping[str, Any]], list[Inference]]:
    """The objects, with the owners their pods name but the input lacks added, and what
    was decided about each. The input is not changed; objects are shared, not copied."""
    present: set[tuple[str, str, str]] = set()
    deployments: dict[tuple[str, str], Mapping[str, Any]] = {}
    named: dict[tuple[str, str, str], list[int]] = collections.defaultdict(list)
    nodes: list[Mapping[str, Any]] = []
    for i, obj in enumerate(objects):
        kind = str(obj.get("kind") or "")
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default")
        if kind == "Pod":
            ref = _controller_ref(obj)
            if ref is not None and ref.get("kind") and ref.get("name"):
                named[(str(ref["kind"]), namespace, str(ref["name"]))].append(i)
        elif kind == "Node":
            nodes.append(obj)
        elif kind in _WORKLOAD_KINDS:
            present.add((kind, namespace, str(meta.get("name"))))
            if kind == "Deployment":
                deployments[(namespace, str(meta.get("name")))] = obj
    missing = sorted(
        (key for key in named if key not in present and key[0] != "Node"),
        key=lambda k: (k[1], k[2], k[0]),
    )
    if not missing:
        return list(objects), []
    result = list(objects)
    added: list[dict[str, Any]] = []
    notes: list[Inference] = []
    replica_sets: list[tuple[_Owner, dict[str, Any]]] = []
    for kind, namespace, name in missing:
        if kind not in _PER_POD_LABELS:
            n = len(named[(kind, namespace, name)])
            notes.append(
                Inference(
                    kind=kind,
                    namespace=namespace,
                    name=name,
                    inferred=False,
                    message=(
                        f"{kind} {namespace}/{name} not inferred: the simulator has no "
                        f"controller for it, so its {n} pod{'s' if n != 1 else ''} "
                        "will not be replaced"
                    ),
                )
            )
            continue
        owner = _owner(kind, namespace, name, named[(kind, namespace, name)], result)
        if kind == "ReplicaSet":
            rs = _replica_set(owner)
            replica_sets.append((owner, rs))
            added.append(rs)
            notes.append(_note(owner, _count(rs["spec"]["replicas"], "replica")))
        elif kind == "StatefulSet":
            sts = _stateful_set(owner)
            added.append(sts)
            notes.append(_note(owner, _count(sts["spec"]["replicas"], "replica")))
        elif kind == "DaemonSet":
            ds, uncovered = _daemon_set(owner, nodes)
            if uncovered:
                notes.append(
                    Inference(
                        kind=kind,
                        namespace=namespace,
                        name=name,
                        inferred=False,
                        message=(
                            f"DaemonSet {namespace}/{name} not inferred: its pods run on "
                            f"{len(owner.active)} nodes, but one inferred from them would "
                            f"also start pods on {', '.join(uncovered[:3])}"
                            + (f" and {len(uncovered) - 3} more" if len(uncovered) > 3 else "")
                            + " (its node affinity is not in its pods); its pods will not "
                            "be replaced"
                        ),
                    )
                )
                continue
            added.append(ds)
            notes.append(_note(owner, f"{_count(len(owner.active), 'pod')}, one per node"))
        else:
            job = _job(owner)
            added.append(job)
            spec = job["spec"]
            notes.append(
                _note(
                    owner, f"parallelism {spec['parallelism']}, completions {spec['completions']}"
                )
            )
    notes.extend(_deployments(replica_sets, deployments, added))
    # By namespace and name: a Deployment just before its ReplicaSet.
    notes.sort(key=lambda n: (n.namespace, n.name))
    return [*result, *added], notes


def _note(owner: _Owner, scale: str) -> Inference:
    return Inference(
        kind=owner.kind,
        namespace=owner.namespace,
        name=owner.name,
        inferred=True,
        message=f"inferred {owner.kind} {owner.namespace}/{owner.name} ({scale}) "
        f"from {owner.evidence()}",
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


def _owner(
    kind: str, namespace: str, name: str, indexes: list[int], objects: list[Mapping[str, Any]]
) -> _Owner:
    """The owner's uid (the one most of its pods name) and its pods; references
    without a uid are given it, in `objects`."""
    uids = collections.Counter(
        str((_controller_ref(objects[i]) or {}).get("uid") or "") for i in indexes
    )
    uids.pop("", None)
    uid = (
        uids.most_common(1)[0][0]
        if uids
        else str(uuid.uuid5(uuid.NAMESPACE_URL, f"loadaware-sim:{kind}/{namespace}/{name}"))
    )
    pods = []
    strays = 0
    for i in indexes:
        pod = objects[i]
        ref = _controller_ref(pod) or {}
        if not ref.get("uid"):
            meta = dict(pod["metadata"])
            meta["ownerReferences"] = [
                {**r, "uid": uid} if r is ref else r for r in meta.get("ownerReferences") or []
            ]
            pod = {**pod, "metadata": meta}
            objects[i] = pod
        elif ref["uid"] != uid:
            strays += 1
            continue
        pods.append(pod)
    return _Owner(kind=kind, namespace=namespace, name=name, uid=uid, pods=pods, strays=strays)


def _controller_ref(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, Mapping) and ref.get("controller"):
            return ref
    return None


def _is_active(pod: Mapping[str, Any]) -> bool:
    return not (pod.get("metadata") or {}).get("deletionTimestamp") and (
        pod.get("status") or {}
    ).get("phase") not in ("Succeeded", "Failed")


def _is_ready(pod: Mapping[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def _shared(pods: Iterable[Mapping[str, Any]], field: str, drop: frozenset[str]) -> dict[str, str]:
    """The labels (or annotations) every pod has, with the same value."""
    shared: dict[str, str] | None = None
    for pod in pods:
        values = (pod.get("metadata") or {}).get(field) or {}
        if shared is None:
            shared = {k: v for k, v in values.items() if k not in drop}
        else:
            shared = {k: v for k, v in shared.items() if values.get(k) == v}
    return shared or {}


def _newest(owner: _Owner) -> Mapping[str, Any]:
    """The pod a template is taken from: the newest active one (the newest of all when
    none is active)."""
    return max(
        owner.pods,
        key=lambda p: (
            _is_active(p),
            str(p["metadata"].get("creationTimestamp") or ""),
            str(p["metadata"].get("name")),
        ),
    )


def _created(owner: _Owner) -> str | None:
    """The owner is at least as old as its oldest pod."""
    moments = [
        t
        for t in (_clock.parse_time(p["metadata"].get("creationTimestamp")) for p in owner.pods)
        if t is not None
    ]
    return _clock.rfc3339(min(moments)) if moments else None


def _metadata(owner: _Owner, labels: Mapping[str, str], **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": owner.name,
        "namespace": owner.namespace,
        "uid": owner.uid,
        "generation": 1,
    }
    created = _created(owner)
    if created:
        meta["creationTimestamp"] = created
    if labels:
        meta["labels"] = dict(labels)
    meta["annotations"] = {INFERRED_ANNOTATION: owner.evidence()}
    meta.update(extra)
    return meta


def _template(owner: _Owner, labels: Mapping[str, str]) -> dict[str, Any]:
    pod = _newest(owner)
    spec = copy.deepcopy(dict(pod.get("spec") or {}))
    # Set on each pod by the API server and its admission, which set them again: the
    # priority and preemption policy its class gives, DefaultTolerationSeconds' tolerations.
    for key in ("nodeName", "ephemeralContainers", "priority", "preemptionPolicy"):
        spec.pop(key, None)
    tolerations = [t for t in spec.get("tolerations") or [] if t not in _DEFAULT_TOLERATIONS]
    if tolerations:
        spec["tolerations"] = tolerations
    else:
        spec.pop("tolerations", None)
    if owner.kind == "StatefulSet":
        spec.pop("hostname", None)
        spec.pop("subdomain", None)
        claims = _claim_volumes(pod)
        volumes = [v for v in spec.get("volumes") or [] if v.get("name") not in claims]
        if volumes:
            spec["volumes"] = volumes
        else:
            spec.pop("volumes", None)
    if owner.kind == "DaemonSet":
        _unpin(spec)
    meta: dict[str, Any] = {"labels": dict(labels)} if labels else {}
    annotations = _shared(owner.pods, "annotations", _PER_POD_ANNOTATIONS)
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": spec}


def _claim_volumes(pod: Mapping[str, Any]) -> list[str]:
    """A StatefulSet pod's volumes from volumeClaimTemplates: claim `<volume>-<pod name>`."""
    name = pod["metadata"]["name"]
    return [
        str(v["name"])
        for v in (pod.get("spec") or {}).get("volumes") or []
        if v.get("name")
        and (v.get("persistentVolumeClaim") or {}).get("claimName") == f"{v['name']}-{name}"
    ]


def _unpin(spec: dict[str, Any]) -> None:
    """Drop the metadata.name term the DaemonSet controller pins each pod to its node with."""
    affinity = dict(spec.get("affinity") or {})
    node_affinity = dict(affinity.get("nodeAffinity") or {})
    required = dict(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = []
    for term in required.get("nodeSelectorTerms") or []:
        fields = [f for f in term.get("matchFields") or [] if f.get("key") != "metadata.name"]
        kept = {k: v for k, v in term.items() if k != "matchFields"}
        if fields:
            kept["matchFields"] = fields
        if kept.get("matchFields") or kept.get("matchExpressions"):
            terms.append(kept)
    if terms:
        required["nodeSelectorTerms"] = terms
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = required
    else:
        node_affinity.pop("requiredDuringSchedulingIgnoredDuringExecution", None)
    if node_affinity:
        affinity["nodeAffinity"] = node_affinity
    else:
        affinity.pop("nodeAffinity", None)
    if affinity:
        spec["affinity"] = affinity
    else:
        spec.pop("affinity", None)


def _replica_set(owner: _Owner) -> dict[str, Any]:
    labels = _shared(owner.pods, "labels", _PER_POD_LABELS["ReplicaSet"])
    active = owner.active
    ready = sum(1 for p in active if _is_ready(p))
    status: dict[str, Any] = {"replicas": len(active), "observedGeneration": 1}
    if active:
        status["fullyLabeledReplicas"] = len(active)
    if ready:
        status["readyReplicas"] = ready
        status["availableReplicas"] = ready
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": _metadata(owner, labels),
        "spec": {
            "replicas": len(active),
            "selector": {"matchLabels": dict(labels)},
            "template": _template(owner, labels),
        },
        "status": status,
    }


def _ordinal(name: str, owner: str) -> int | None:
    suffix = name[len(owner) + 1 :] if name.startswith(owner + "-") else ""
    return int(suffix) if suffix.isdigit() else None


def _stateful_set(owner: _Owner) -> dict[str, Any]:
    labels = _shared(owner.pods, "labels", _PER_POD_LABELS["StatefulSet"])
    newest = _newest(owner)
    ordinals = [_ordinal(str(p["metadata"]["name"]), owner.name) for p in owner.pods]
    # The pods are <name>-0 .. <name>-(replicas-1): a gap is a pod being replaced.
    replicas = (
        max(o for o in ordinals if o is not None) + 1
        if all(o is not None for o in ordinals)
        else len(owner.active)
    )
    active = owner.active
    ready = sum(1 for p in active if _is_ready(p))
    spec: dict[str, Any] = {
        "replicas": replicas,
        "serviceName": (newest.get("spec") or {}).get("subdomain") or owner.name,
        "podManagementPolicy": "OrderedReady",
        "selector": {"matchLabels": dict(labels)},
        "template": _template(owner, labels),
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "revisionHistoryLimit": 10,
    }
    claims = _claim_volumes(newest)
    if claims:
        # A claim's size and class are not in the pods; the simulator has no volumes.
        spec["volumeClaimTemplates"] = [
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": c}}
            for c in claims
        ]
    status: dict[str, Any] = {
        "observedGeneration": 1,
        "replicas": len(active),
        "readyReplicas": ready,
        "currentReplicas": len(active),
        "updatedReplicas": len(active),
        "availableReplicas": ready,
    }
    revision = (newest["metadata"].get("labels") or {}).get("controller-revision-hash")
    if revision:
        # New pods get the revision the running ones carry.
        status["currentRevision"] = status["updateRevision"] = revision
    status["collisionCount"] = 0
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": _metadata(owner, labels),
        "spec": spec,
        "status": status,
    }


def _daemon_set(owner: _Owner, nodes: list[Mapping[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """The DaemonSet, and the nodes it would start a pod on that none of its pods runs on."""
    labels = _shared(owner.pods, "labels", _PER_POD_LABELS["DaemonSet"])
    template = _template(owner, labels)
    active = owner.active
    covered = {str((p.get("spec") or {}).get("nodeName") or "") for p in active}
    eligible = controllers.daemon_set_nodes(template["spec"], nodes)
    uncovered = sorted(set(eligible) - covered)
    ready = sum(1 for p in active if _is_ready(p))
    status: dict[str, Any] = {
        "observedGeneration": 1,
        "currentNumberScheduled": len(active),
        "desiredNumberScheduled": len(eligible),
        "numberMisscheduled": 0,
        "numberReady": ready,
        "numberAvailable": ready,
        "updatedNumberScheduled": len(active),
    }
    if len(eligible) > ready:
        status["numberUnavailable"] = len(eligible) - ready
    ds = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": _metadata(owner, labels),
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "template": template,
            "updateStrategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
            },
            "revisionHistoryLimit": 10,
        },
        "status": status,
    }
    return ds, uncovered


def _job(owner: _Owner) -> dict[str, Any]:
    labels = _shared(owner.pods, "labels", _PER_POD_LABELS["Job"])
    active = owner.active
    phases = collections.Counter((p.get("status") or {}).get("phase") for p in owner.pods)
    succeeded, failed = phases["Succeeded"], phases["Failed"]
    # What is seen is all that is known: the pods running now are its parallelism, and
    # it completes once they and those already done have succeeded.
    spec = {
        "parallelism": max(1, len(active)),
        "completions": max(1, succeeded + len(active)),
        "backoffLimit": 6,
        "completionMode": "NonIndexed",
        "suspend": False,
        "podReplacementPolicy": "TerminatingOrFailed",
        "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": owner.uid}},
        "template": _template(owner, labels),
    }
    status: dict[str, Any] = {}
    starts = [
        t
        for t in (_clock.parse_time((p.get("status") or {}).get("startTime")) for p in owner.pods)
        if t is not None
    ]
    started = _clock.rfc3339(min(starts)) if starts else _created(owner)
    if started:
        status["startTime"] = started
    status.update(
        {
            "active": len(active),
            "ready": sum(1 for p in active if _is_ready(p)),
            "succeeded": succeeded,
            "failed": failed,
        }
    )
    if not active and succeeded >= spec["completions"]:
        status["conditions"] = [
            {"type": "Complete", "status": "True", "lastTransitionTime": started}
        ]
    status = {k: v for k, v in status.items() if v or k == "ready"}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": _metadata(owner, labels),
        "spec": spec,
        "status": status,
    }


def _deployments(
    replica_sets: list[tuple[_Owner, dict[str, Any]]],
    present: Mapping[tuple[str, str], Mapping[str, Any]],
    added: list[dict[str, Any]],
) -> list[Inference]:
    """Deployments for the inferred ReplicaSets named `<deployment>-<pod-template-hash>`:
    inferred (into `added`), or the file's linked; each ReplicaSet's metadata is updated
    in place (it is one of `added`)."""
    notes: list[Inference] = []
    by_deployment: dict[tuple[str, str], list[tuple[_Owner, dict[str, Any]]]] = (
        collections.defaultdict(list)
    )
    for owner, rs in replica_sets:
        template_hash = (rs["metadata"].get("labels") or {}).get(_TEMPLATE_HASH)
        suffix = f"-{template_hash}"
        if template_hash and owner.name.endswith(suffix) and len(owner.name) > len(suffix):
            by_deployment[(owner.namespace, owner.name[: -len(suffix)])].append((owner, rs))
        else:
            notes.append(
                Inference(
                    kind="ReplicaSet",
                    namespace=owner.namespace,
                    name=owner.name,
                    inferred=False,
                    message=(
                        f"no Deployment inferred for ReplicaSet {owner.namespace}/{owner.name}: "
                        f"its name does not end with its pods' {_TEMPLATE_HASH}"
                    ),
                )
            )
    for (namespace, name), members in sorted(by_deployment.items()):
        existing = present.get((namespace, name))
        if len(members) > 1:
            names = ", ".join(sorted(owner.name for owner, _ in members))
            notes.append(
                Inference(
                    kind="Deployment",
                    namespace=namespace,
                    name=name,
                    inferred=False,
                    message=(
                        f"Deployment {namespace}/{name} not "
                        f"{'linked' if existing else 'inferred'}: pods of {len(members)} "
                        f"ReplicaSets ({names}) would belong to it, and the simulator models "
                        "one ReplicaSet per Deployment"
                    ),
                )
            )
            continue
        owner, rs = members[0]
        template_hash = rs["metadata"]["labels"][_TEMPLATE_HASH]
        evidence = f"ReplicaSet {owner.name}'s name and its pods' {_TEMPLATE_HASH}"
        if existing is not None:
            deployment = existing
            notes.append(
                Inference(
                    kind="Deployment",
                    namespace=namespace,
                    name=name,
                    inferred=False,
                    message=(
                        f"linked ReplicaSet {namespace}/{owner.name} to Deployment "
                        f"{namespace}/{name} from the file, by {evidence}"
                    ),
                )
            )
        else:
            deployment = _deployment(owner, rs, name, template_hash, evidence)
            added.append(deployment)
            notes.append(
                Inference(
                    kind="Deployment",
                    namespace=namespace,
                    name=name,
                    inferred=True,
                    message=(
                        f"inferred Deployment {namespace}/{name} "
                        f"({_count(rs['spec']['replicas'], 'replica')}) from {evidence}"
                    ),
                )
            )
        replicas = int(rs["spec"]["replicas"])
        rs["metadata"]["annotations"].update(
            {
                "deployment.kubernetes.io/desired-replicas": str(replicas),
                # replicas plus maxSurge (25%, rounded up), as the Deployment controller notes
                "deployment.kubernetes.io/max-replicas": str(replicas + math.ceil(replicas / 4)),
                "deployment.kubernetes.io/revision": "1",
            }
        )
        rs["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": name,
                "uid": deployment["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    return notes


def _deployment(
    owner: _Owner, rs: Mapping[str, Any], name: str, template_hash: str, evidence: str
) -> dict[str, Any]:
    def unhashed(labels: Mapping[str, str]) -> dict[str, str]:
        return {k: v for k, v in labels.items() if k != _TEMPLATE_HASH}

    template = copy.deepcopy(rs["spec"]["template"])
    labels = unhashed(template["metadata"].get("labels") or {})
    template["metadata"]["labels"] = labels
    replicas = int(rs["spec"]["replicas"])
    status = rs.get("status") or {}
    ready = int(status.get("readyReplicas") or 0)
    meta: dict[str, Any] = {
        "name": name,
        "namespace": owner.namespace,
        # No pod names it: a uid of its own, the same for the same input.
        "uid": str(
            uuid.uuid5(uuid.NAMESPACE_URL, f"loadaware-sim:Deployment/{owner.namespace}/{name}")
        ),
        "generation": 1,
    }
    if rs["metadata"].get("creationTimestamp"):
        meta["creationTimestamp"] = rs["metadata"]["creationTimestamp"]
    if labels:
        meta["labels"] = labels
    meta["annotations"] = {
        "deployment.kubernetes.io/revision": "1",
        INFERRED_ANNOTATION: evidence,
    }
    deployment_status: dict[str, Any] = {
        "observedGeneration": 1,
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": ready,
        "availableReplicas": ready,
    }
    if replicas > ready:
        deployment_status["unavailableReplicas"] = replicas - ready
    deployment_status = {
        k: v for k, v in deployment_status.items() if v or k in ("replicas", "observedGeneration")
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta,
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": unhashed(rs["spec"]["selector"]["matchLabels"])},
            "template": template,
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
        },
        "status": deployment_status,
    }


# --- container statuses ---


def with_container_statuses(objects: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The objects, each running pod without status.containerStatuses given one per
    container, ready as its Ready condition says (other objects are shared, not copied)."""
    return [_with_container_statuses(o) if o.get("kind") == "Pod" else o for o in objects]


def _with_container_statuses(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    status = pod.get("status") or {}
    if status.get("phase") != "Running" or status.get("containerStatuses"):
        return pod
    ready = _is_ready(pod)
    started = status.get("startTime")
    uid = str((pod.get("metadata") or {}).get("uid") or (pod.get("metadata") or {}).get("name"))
    statuses = []
    for container in (pod.get("spec") or {}).get("containers") or []:
        name = str(container.get("name"))
        statuses.append(
            {
                "name": name,
                "image": container.get("image"),
                "imageID": "",
                "containerID": "containerd://" + hashlib.sha256((uid + name).encode()).hexdigest(),
                "ready": ready,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": started} if started else {}},
            }
        )
    return {**pod, "status": {**status, "containerStatuses": statuses}}
