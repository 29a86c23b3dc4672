"""Which pods may be evicted: descheduler's DefaultEvictor filter, plus PodDisruptionBudgets.

Pure: no I/O and no clock; `now` is passed in. `EvictionRules.from_policy` does
everything that depends only on the policy and the cluster once per round, so
that `pod_eligibility`, which runs for every pod on a hot node, stays a handful of
dictionary look-ups.

`pod_eligibility` returns the first failing check, in this order (`CHECK_ORDER`):

 1. never evictable, whatever any annotation says:
    mirror-pod, static-pod, terminating, opted-out (`loadaware.io/evict: never`),
    failed-bare-pod (a Failed pod without owner, while FailedBarePods protects it),
    not-running (unbound, or phase other than Running: evicting it frees nothing),
    no-owner (a running pod nothing would recreate)
 2. namespace-excluded (namespaces.include / exclude)
 3. overridden by `descheduler.alpha.kubernetes.io/evict` (any value), as in
    descheduler's `DefaultEvictor.Filter`:
    daemonset-pod, system-critical, priority-threshold, local-storage, with-pvc,
    without-pdb, resource-claims, label-selector, min-replicas (only for a pod
    with exactly one ownerReference, as in descheduler), min-pod-age
 4. what the Eviction API itself would refuse: multiple-pdbs, pdb-blocks

Differences from descheduler, on purpose: the evict annotation does not make
mirror, static, terminating, bare or non-running pods evictable (descheduler's
Filter returns early for it); and a terminal pod is never a candidate, since
it uses no node resources, so disabling FailedBarePods only changes the reason.
"""

from __future__ import annotations

import datetime
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Literal

from loadaware.cluster import ClusterState, LabelSelector, Pod, PodDisruptionBudget, Requirement
from loadaware.errors import PolicyError
from loadaware.policy import SYSTEM_CRITICAL_PRIORITY, EvictorSettings, LabelSelectorSpec

EVICT_ANNOTATION: Final = "descheduler.alpha.kubernetes.io/evict"
PREFER_NO_EVICTION_ANNOTATION: Final = "descheduler.alpha.kubernetes.io/prefer-no-eviction"
OPT_OUT_ANNOTATION: Final = "loadaware.io/evict"
MIRROR_ANNOTATION: Final = "kubernetes.io/config.mirror"
CONFIG_SOURCE_ANNOTATION: Final = "kubernetes.io/config.source"

Reason = Literal[
    "mirror-pod",
    "static-pod",
    "terminating",
    "opted-out",
    "failed-bare-pod",
    "not-running",
    "no-owner",
    "namespace-excluded",
    "daemonset-pod",
    "system-critical",
    "priority-threshold",
    "local-storage",
    "with-pvc",
    "without-pdb",
    "resource-claims",
    "label-selector",
    "min-replicas",
    "min-pod-age",
    "multiple-pdbs",
    "pdb-blocks",
]

# The order pod_eligibility checks in; the first failing check is the reason reported.
CHECK_ORDER: Final[tuple[Reason, ...]] = (
    "mirror-pod",
    "static-pod",
    "terminating",
    "opted-out",
    "failed-bare-pod",
    "not-running",
    "no-owner",
    "namespace-excluded",
    "daemonset-pod",
    "system-critical",
    "priority-threshold",
    "local-storage",
    "with-pvc",
    "without-pdb",
    "resource-claims",
    "label-selector",
    "min-replicas",
    "min-pod-age",
    "multiple-pdbs",
    "pdb-blocks",
)

# Pods sharing an owner reference. descheduler indexes by owner UID alone; the
# namespace, kind and name keep pods apart when a dump carries no UIDs.
OwnerKey = tuple[str, str, str, str]  # namespace, kind, name, uid

_NO_PDBS: tuple[PodDisruptionBudget, ...] = ()
_Ranked = tuple[tuple[int, PodDisruptionBudget], ...]  # (position in the cluster, PDB)


@dataclass(frozen=True, slots=True, kw_only=True)
class NamespacePDBs:
    """The PDBs of one namespace, indexed so that a pod is matched only against likely ones.

    A PDB whose selector has matchLabels can only cover pods carrying its first
    (key, value) pair, so it sits under that pair; the rest are tried for every
    pod. With ~150,000 pods, trying every PDB of the namespace costs most of the
    time pod_eligibility takes.
    """

    by_label: Mapping[tuple[str, str], _Ranked]
    unindexed: _Ranked

    @classmethod
    def build(cls, ranked: list[tuple[int, PodDisruptionBudget]]) -> NamespacePDBs:
        by_label: defaultdict[tuple[str, str], list[tuple[int, PodDisruptionBudget]]]
        by_label = defaultdict(list)
        unindexed: list[tuple[int, PodDisruptionBudget]] = []
        for position, pdb in ranked:
            labels = pdb.selector.match_labels if pdb.selector is not None else {}
            if labels:
                key = min(labels)
                by_label[(key, labels[key])].append((position, pdb))
            else:
                unindexed.append((position, pdb))
        return cls(
            by_label=MappingProxyType({pair: tuple(p) for pair, p in by_label.items()}),
            unindexed=tuple(unindexed),
        )


def _owner_key(pod: Pod) -> OwnerKey | None:
    if pod.owner is None:
        return None
    return (pod.namespace, pod.owner.kind, pod.owner.name, pod.owner.uid)


def _owner_keys(pod: Pod) -> list[OwnerKey]:
    """Every owner the pod names: descheduler's index lists a pod under each of them."""
    key = _owner_key(pod)
    if key is None:
        return []
    return [key, *((pod.namespace, o.kind, o.name, o.uid) for o in pod.other_owners)]


def _convert_selector(spec: LabelSelectorSpec) -> LabelSelector | None:
    """The policy's selector as a cluster LabelSelector; None when it selects everything."""
    if not spec.match_labels and not spec.match_expressions:
        return None
    return LabelSelector(
        match_labels=MappingProxyType(dict(spec.match_labels)),
        match_expressions=tuple(
            Requirement(key=r.key, operator=r.operator, values=tuple(r.values))
            for r in spec.match_expressions
        ),
    )


def _resolve_priority_threshold(settings: EvictorSettings, cluster: ClusterState) -> int | None:
    threshold = settings.priority_threshold
    if threshold is None:
        return None
    if threshold.value is not None:
        value = threshold.value
        field_name = "evictor.priorityThreshold.value"
    else:
        # The model requires exactly one of value and name.
        name = threshold.name or ""
        if name not in cluster.priority_classes:
            known = ", ".join(sorted(cluster.priority_classes)) or "none"
            raise PolicyError(
                f"evictor.priorityThreshold.name: PriorityClass {name!r} "
                f"does not exist in the cluster (known: {known})",
                hint="name an existing PriorityClass, or set priorityThreshold.value",
            )
        value = cluster.priority_classes[name]
        field_name = "evictor.priorityThreshold.name"
    # descheduler refuses a threshold above system-critical priority
    # (utils.GetPriorityValueFromPriorityThreshold); it would mean nothing anyway,
    # since system-critical pods are protected on their own.
    if value > SYSTEM_CRITICAL_PRIORITY:
        raise PolicyError(
            f"{field_name}: the threshold ({value}) must not exceed "
            f"system-critical priority ({SYSTEM_CRITICAL_PRIORITY})"
        )
    return value


@dataclass(frozen=True, slots=True, kw_only=True)
class EvictionRules:
    """Everything pod_eligibility needs, resolved once per round."""

    protect_daemonset_pods: bool = True
    protect_system_critical_pods: bool = True
    protect_local_storage_pods: bool = True
    protect_failed_bare_pods: bool = True
    protect_pods_with_pvc: bool = False
    protect_pods_without_pdb: bool = False
    protect_pods_with_resource_claims: bool = False
    # Applied only while system-critical pods are protected: descheduler drops
    # priority filtering entirely when SystemCriticalPods is disabled.
    priority_threshold: int | None = None
    namespaces_include: frozenset[str] = frozenset()
    namespaces_exclude: frozenset[str] = frozenset()
    label_selector: LabelSelector | None = None  # None: every pod
    min_replicas: int = 0
    min_pod_age: datetime.timedelta = datetime.timedelta(0)
    owner_pod_counts: Mapping[OwnerKey, int] = field(default_factory=lambda: MappingProxyType({}))
    pdbs_by_namespace: Mapping[str, NamespacePDBs] = field(
        default_factory=lambda: MappingProxyType({})
    )

    @classmethod
    def from_policy(cls, settings: EvictorSettings, cluster: ClusterState) -> EvictionRules:
        """Resolve the policy against the cluster; PolicyError names a bad field."""
        disabled = frozenset(settings.pod_protections.default_disabled)
        enabled = frozenset(settings.pod_protections.extra_enabled)
        threshold = _resolve_priority_threshold(settings, cluster)

        owner_counts: Counter[OwnerKey] = Counter()
        # descheduler skips the count below minReplicas 2, so do not pay for it either.
        if settings.min_replicas > 1:
            # Every pod the owner has, in any phase: descheduler counts its pod
            # informer's index, which holds terminating and finished pods too.
            for pod in cluster.pods:
                if pod.other_owners:
                    owner_counts.update(_owner_keys(pod))
                else:
                    key = _owner_key(pod)
                    if key is not None:
                        owner_counts[key] += 1

        by_namespace: defaultdict[str, list[tuple[int, PodDisruptionBudget]]]
        by_namespace = defaultdict(list)
        for position, pdb in enumerate(cluster.pdbs):
            # A nil selector matches no pod in policy/v1: such a PDB never covers one.
            if pdb.selector is not None:
                by_namespace[pdb.namespace].append((position, pdb))

        return cls(
            protect_daemonset_pods="DaemonSetPods" not in disabled,
            protect_system_critical_pods="SystemCriticalPods" not in disabled,
            protect_local_storage_pods="PodsWithLocalStorage" not in disabled,
            protect_failed_bare_pods="FailedBarePods" not in disabled,
            protect_pods_with_pvc="PodsWithPVC" in enabled,
            protect_pods_without_pdb="PodsWithoutPDB" in enabled,
            protect_pods_with_resource_claims="PodsWithResourceClaims" in enabled,
            priority_threshold=threshold,
            namespaces_include=frozenset(settings.namespaces.include),
            namespaces_exclude=frozenset(settings.namespaces.exclude),
            label_selector=_convert_selector(settings.label_selector),
            min_replicas=settings.min_replicas,
            min_pod_age=settings.min_pod_age,
            owner_pod_counts=MappingProxyType(dict(owner_counts)),
            pdbs_by_namespace=MappingProxyType(
                {ns: NamespacePDBs.build(ranked) for ns, ranked in by_namespace.items()}
            ),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class PodEligibility:
    evictable: bool
    reason: Reason | None  # the first failing check of CHECK_ORDER; None when evictable
    # descheduler.alpha.kubernetes.io/prefer-no-eviction (any value): evict only
    # as a last resort. descheduler's default noEvictionPolicy, Preferred, also
    # leaves such pods evictable.
    prefer_no_eviction: bool = False
    # The PodDisruptionBudgets covering the pod (at most one when evictable),
    # which the planner charges. Not looked up, so empty, for never-evictable
    # and namespace-excluded pods: most pods on a node are judged for nothing.
    pdbs: tuple[PodDisruptionBudget, ...] = ()


def pdbs_covering(pod: Pod, rules: EvictionRules) -> tuple[PodDisruptionBudget, ...]:
    """The PodDisruptionBudgets whose selector matches the pod, in cluster order."""
    index = rules.pdbs_by_namespace.get(pod.namespace)
    if index is None:
        return _NO_PDBS
    found = [(pos, pdb) for pos, pdb in index.unindexed if pdb.covers(pod)]
    if index.by_label:
        for pair in pod.labels.items():
            found.extend((pos, pdb) for pos, pdb in index.by_label.get(pair, ()) if pdb.covers(pod))
    if not found:
        return _NO_PDBS
    if len(found) > 1:
        found.sort(key=lambda ranked: ranked[0])
    return tuple(pdb for _, pdb in found)


def _is_static(pod: Pod) -> bool:
    # The kubelet marks pods it did not get from the API server with their
    # config source; their mirror in the API is owned by the Node.
    if pod.owner is not None and pod.owner.kind == "Node":
        return True
    source = pod.annotations.get(CONFIG_SOURCE_ANNOTATION)
    return source is not None and source != "api"


def _never_evictable(pod: Pod, rules: EvictionRules, allow_failed: bool = False) -> Reason | None:
    if pod.is_mirror or MIRROR_ANNOTATION in pod.annotations:
        return "mirror-pod"
    if _is_static(pod):
        return "static-pod"
    if pod.deletion_timestamp is not None:
        return "terminating"
    if pod.annotations.get(OPT_OUT_ANNOTATION, "").strip().lower() == "never":
        return "opted-out"
    if rules.protect_failed_bare_pods and pod.owner is None and pod.phase == "Failed":
        return "failed-bare-pod"
    if allow_failed and pod.phase == "Failed":
        # RemoveFailedPods: a failed pod holds nothing, so no owner needs to
        # recreate it for its removal to be safe.
        return None
    if pod.node_name is None or pod.phase != "Running":
        return "not-running"
    if pod.owner is None:
        return "no-owner"
    return None


def _protection(
    pod: Pod,
    rules: EvictionRules,
    now: datetime.datetime,
    pdbs: tuple[PodDisruptionBudget, ...],
) -> Reason | None:
    """The checks the evict annotation overrides, as in descheduler's Filter."""
    if rules.protect_daemonset_pods and pod.is_daemonset_pod:
        return "daemonset-pod"
    if rules.protect_system_critical_pods:
        if pod.priority >= SYSTEM_CRITICAL_PRIORITY:
            return "system-critical"
        if rules.priority_threshold is not None and pod.priority >= rules.priority_threshold:
            return "priority-threshold"
    if rules.protect_local_storage_pods and pod.has_local_storage:
        return "local-storage"
    if rules.protect_pods_with_pvc and pod.has_pvc:
        return "with-pvc"
    if rules.protect_pods_without_pdb and not pdbs:
        return "without-pdb"
    if rules.protect_pods_with_resource_claims and pod.has_resource_claims:
        return "resource-claims"
    if rules.label_selector is not None and not rules.label_selector.matches(pod.labels):
        return "label-selector"
    # As descheduler: the check applies to a pod with exactly one ownerReference; it
    # passes one with several, whichever of them controls it.
    if rules.min_replicas > 1 and not pod.other_owners:
        key = _owner_key(pod)
        # A pod always counts itself, even if the snapshot somehow lacks it.
        if key is not None and max(rules.owner_pod_counts.get(key, 0), 1) < rules.min_replicas:
            return "min-replicas"
    if rules.min_pod_age > datetime.timedelta(0):
        # The descheduler's DefaultEvictor judges age by status.startTime, and a pod
        # without one is not evictable.
        started = pod.start_time
        if started is None or now - started < rules.min_pod_age:
            return "min-pod-age"
    return None


def _is_namespace_selected(namespace: str, rules: EvictionRules) -> bool:
    if rules.namespaces_include:
        return namespace in rules.namespaces_include
    return namespace not in rules.namespaces_exclude


def pod_eligibility(
    pod: Pod, rules: EvictionRules, now: datetime.datetime, *, allow_failed: bool = False
) -> PodEligibility:
    """Whether the pod may be evicted, and if not, the first reason in CHECK_ORDER.

    `allow_failed` (RemoveFailedPods) lets Failed pods through the not-running and
    no-owner checks; the Eviction API ignores PodDisruptionBudgets for them.
    """
    prefer_no_eviction = PREFER_NO_EVICTION_ANNOTATION in pod.annotations
    reason = _never_evictable(pod, rules, allow_failed)
    # namespaces select which pods descheduler lists at all, outside its
    # Filter, so the evict annotation does not reach past them.
    if reason is None and not _is_namespace_selected(pod.namespace, rules):
        reason = "namespace-excluded"
    if reason is not None:
        return PodEligibility(evictable=False, reason=reason, prefer_no_eviction=prefer_no_eviction)

    pdbs = _NO_PDBS if allow_failed and pod.phase == "Failed" else pdbs_covering(pod, rules)
    if EVICT_ANNOTATION not in pod.annotations:
        reason = _protection(pod, rules, now, pdbs)

    # The Eviction API answers 500 for a pod under more than one PDB and 429 for
    # one whose PDB allows no disruption; no annotation changes that.
    if reason is None and len(pdbs) > 1:
        reason = "multiple-pdbs"
    elif reason is None and pdbs and pdbs[0].disruptions_allowed <= 0:
        reason = "pdb-blocks"
    return PodEligibility(
        evictable=reason is None,
        reason=reason,
        prefer_no_eviction=prefer_no_eviction,
        pdbs=pdbs,
    )
