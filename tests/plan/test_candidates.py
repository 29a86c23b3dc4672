"""Which pods may be evicted (loadaware/plan/_candidates.py).

Covered:
- the never-evictable pods (mirror, static, terminating, opted out, not running,
  bare), which no annotation or setting makes evictable;
- each default protection (DaemonSetPods, SystemCriticalPods and the priority
  threshold, PodsWithLocalStorage, FailedBarePods) and each extra one
  (PodsWithPVC, PodsWithoutPDB, PodsWithResourceClaims), in both directions,
  and the descheduler evict annotation overriding them;
- namespaces, labelSelector, minReplicas, minPodAge;
- PodDisruptionBudgets: blocking, several covering one pod, which ones cover;
- the order reasons are reported in, and policy errors from from_policy;
- properties: mirror pods and DaemonSet pods (without the evict annotation,
  while DaemonSetPods protects them) are never evictable, whatever the settings.
"""

from __future__ import annotations

import datetime
import typing
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadaware.cluster import LabelSelector, OwnerRef, Pod, PodDisruptionBudget, Requirement
from loadaware.errors import PolicyError
from loadaware.plan import _candidates as candidates
from loadaware.policy import EvictorSettings
from tests.lib.builders import NOW, daemonset, make_cluster, make_node, make_pdb, make_pod

EVICT = {candidates.EVICT_ANNOTATION: ""}


def node_owner() -> OwnerRef:
    """The owner the API gives a static pod's mirror."""
    return OwnerRef(kind="Node", name="n1", uid="uid-node-n1")


def judge(
    pod: Pod,
    evictor: Mapping[str, Any] | None = None,
    *,
    others: Iterable[Pod] = (),
    pdbs: Iterable[PodDisruptionBudget] = (),
    priority_classes: Mapping[str, int] | None = None,
    now: datetime.datetime = NOW,
) -> candidates.PodEligibility:
    """Judge one pod under an `evictor:` section written as in a policy file."""
    cluster = make_cluster(
        [make_node("n1")],
        [pod, *others],
        pdbs=pdbs,
        priority_classes=priority_classes,
    )
    settings = EvictorSettings.model_validate(dict(evictor or {}))
    rules = candidates.EvictionRules.from_policy(settings, cluster)
    return candidates.pod_eligibility(pod, rules, now)


def disabled(*names: str) -> dict[str, Any]:
    return {"podProtections": {"defaultDisabled": list(names)}}


def enabled(*names: str) -> dict[str, Any]:
    return {"podProtections": {"extraEnabled": list(names)}}


def ago(**delta: float) -> datetime.datetime:
    return NOW - datetime.timedelta(**delta)


# Each case: the pod, the evictor section, and the reason expected (None: evictable).
NEVER_EVICTABLE = [
    pytest.param(make_pod("p", is_mirror=True), {}, "mirror-pod", id="mirror pod never evictable"),
    pytest.param(
        make_pod("p", is_mirror=True, annotations=EVICT),
        {},
        "mirror-pod",
        id="mirror pod not evictable even with the evict annotation",
    ),
    pytest.param(
        make_pod("p", annotations={"kubernetes.io/config.mirror": "abc"}),
        {},
        "mirror-pod",
        id="config.mirror annotation marks a mirror pod",
    ),
    pytest.param(
        make_pod("p", owner=node_owner()), {}, "static-pod", id="pod owned by its Node is static"
    ),
    pytest.param(
        make_pod("p", owner=node_owner(), annotations=EVICT),
        {},
        "static-pod",
        id="static pod not evictable even with the evict annotation",
    ),
    pytest.param(
        make_pod("p", annotations={"kubernetes.io/config.source": "file"}),
        {},
        "static-pod",
        id="config.source other than api marks a static pod",
    ),
    pytest.param(
        make_pod("p", annotations={"kubernetes.io/config.source": "api"}),
        {},
        None,
        id="config.source api is an ordinary pod",
    ),
    pytest.param(
        make_pod("p", deletion_timestamp=NOW), {}, "terminating", id="terminating pod not evictable"
    ),
    pytest.param(
        make_pod("p", deletion_timestamp=NOW, annotations=EVICT),
        {},
        "terminating",
        id="terminating pod not evictable even with the evict annotation",
    ),
    pytest.param(
        make_pod("p", annotations={"loadaware.io/evict": "never"}),
        {},
        "opted-out",
        id="loadaware.io/evict never opts a pod out",
    ),
    pytest.param(
        make_pod("p", annotations={"loadaware.io/evict": "Never", **EVICT}),
        {},
        "opted-out",
        id="opt-out wins over the evict annotation, whatever its case",
    ),
    pytest.param(
        make_pod("p", annotations={"loadaware.io/evict": "sure"}),
        {},
        None,
        id="loadaware.io/evict other than never opts nothing out",
    ),
    pytest.param(make_pod("p", phase="Pending"), {}, "not-running", id="pending pod not evictable"),
    pytest.param(make_pod("p", node=None), {}, "not-running", id="unbound pod not evictable"),
    pytest.param(
        make_pod("p", phase="Succeeded", annotations=EVICT),
        {},
        "not-running",
        id="finished pod not evictable even with the evict annotation",
    ),
    pytest.param(
        make_pod("p", phase="Failed"), {}, "not-running", id="failed pod with owner not evictable"
    ),
    pytest.param(
        make_pod("p", owner=None), {}, "no-owner", id="running pod without owner not evictable"
    ),
    pytest.param(
        make_pod("p", owner=None, annotations=EVICT),
        {},
        "no-owner",
        id="running bare pod not evictable even with the evict annotation",
    ),
    pytest.param(
        make_pod("p", owner=None, phase="Failed"),
        {},
        "failed-bare-pod",
        id="failed bare pod protected by default",
    ),
    pytest.param(
        make_pod("p", owner=None, phase="Failed"),
        disabled("FailedBarePods"),
        "not-running",
        id="failed bare pod still not a candidate when FailedBarePods disabled",
    ),
]

DEFAULT_PROTECTIONS = [
    pytest.param(make_pod("p"), {}, None, id="ordinary ReplicaSet pod evictable"),
    pytest.param(
        make_pod("p", owner=daemonset()),
        {},
        "daemonset-pod",
        id="daemonset pod protected by default",
    ),
    pytest.param(
        make_pod("p", owner=daemonset()),
        disabled("DaemonSetPods"),
        None,
        id="daemonset pod evictable when DaemonSetPods disabled",
    ),
    pytest.param(
        make_pod("p", owner=daemonset(), annotations=EVICT),
        {},
        None,
        id="daemonset pod evictable with the evict annotation",
    ),
    pytest.param(
        make_pod("p", priority=2_000_000_000),
        {},
        "system-critical",
        id="system-critical pod protected by default",
    ),
    pytest.param(
        make_pod("p", priority=2_000_001_000),
        {},
        "system-critical",
        id="node-critical pod protected by default",
    ),
    pytest.param(
        make_pod("p", priority=1_999_999_999),
        {},
        None,
        id="priority below system-critical evictable",
    ),
    pytest.param(
        make_pod("p", priority=2_000_000_000),
        disabled("SystemCriticalPods"),
        None,
        id="system-critical pod evictable when SystemCriticalPods disabled",
    ),
    pytest.param(
        make_pod("p", priority=2_000_000_000, annotations=EVICT),
        {},
        None,
        id="system-critical pod evictable with the evict annotation",
    ),
    pytest.param(
        make_pod("p", priority=1000),
        {"priorityThreshold": {"value": 1000}},
        "priority-threshold",
        id="pod at priorityThreshold value protected",
    ),
    pytest.param(
        make_pod("p", priority=999),
        {"priorityThreshold": {"value": 1000}},
        None,
        id="pod below priorityThreshold value evictable",
    ),
    pytest.param(
        make_pod("p", priority=2_000_000_000),
        {"priorityThreshold": {"value": 1000}},
        "system-critical",
        id="system-critical reported before the threshold",
    ),
    pytest.param(
        make_pod("p", priority=5000),
        {"priorityThreshold": {"value": 1000}, **disabled("SystemCriticalPods")},
        None,
        id="priorityThreshold ignored when SystemCriticalPods disabled, as in descheduler",
    ),
    pytest.param(
        make_pod("p", priority=5000, annotations=EVICT),
        {"priorityThreshold": {"value": 1000}},
        None,
        id="pod above priorityThreshold evictable with the evict annotation",
    ),
    pytest.param(
        make_pod("p", has_local_storage=True),
        {},
        "local-storage",
        id="pod with local storage protected by default",
    ),
    pytest.param(
        make_pod("p", has_local_storage=True),
        disabled("PodsWithLocalStorage"),
        None,
        id="pod with local storage evictable when PodsWithLocalStorage disabled",
    ),
    pytest.param(
        make_pod("p", has_local_storage=True, annotations=EVICT),
        {},
        None,
        id="pod with local storage evictable with the evict annotation",
    ),
]

EXTRA_PROTECTIONS = [
    pytest.param(make_pod("p", has_pvc=True), {}, None, id="pod with PVC evictable by default"),
    pytest.param(
        make_pod("p", has_pvc=True),
        enabled("PodsWithPVC"),
        "with-pvc",
        id="pod with PVC protected when PodsWithPVC enabled",
    ),
    pytest.param(
        make_pod("p", has_pvc=True, annotations=EVICT),
        enabled("PodsWithPVC"),
        None,
        id="pod with PVC evictable with the evict annotation",
    ),
    pytest.param(make_pod("p"), {}, None, id="pod without PDB evictable by default"),
    pytest.param(
        make_pod("p"),
        enabled("PodsWithoutPDB"),
        "without-pdb",
        id="pod without PDB protected when PodsWithoutPDB enabled",
    ),
    pytest.param(
        make_pod("p", annotations=EVICT),
        enabled("PodsWithoutPDB"),
        None,
        id="pod without PDB evictable with the evict annotation",
    ),
    pytest.param(
        make_pod("p", has_resource_claims=True),
        {},
        None,
        id="pod with resource claims evictable by default",
    ),
    pytest.param(
        make_pod("p", has_resource_claims=True),
        enabled("PodsWithResourceClaims"),
        "resource-claims",
        id="pod with resource claims protected when PodsWithResourceClaims enabled",
    ),
    pytest.param(
        make_pod("p", has_resource_claims=True, annotations=EVICT),
        enabled("PodsWithResourceClaims"),
        None,
        id="pod with resource claims evictable with the evict annotation",
    ),
]

FILTERS = [
    pytest.param(
        make_pod("p", namespace="shop"),
        {"namespaces": {"include": ["shop"]}},
        None,
        id="pod in an included namespace evictable",
    ),
    pytest.param(
        make_pod("p", namespace="kube-system"),
        {"namespaces": {"include": ["shop"]}},
        "namespace-excluded",
        id="pod outside the included namespaces protected",
    ),
    pytest.param(
        make_pod("p", namespace="kube-system"),
        {"namespaces": {"exclude": ["kube-system"]}},
        "namespace-excluded",
        id="pod in an excluded namespace protected",
    ),
    pytest.param(
        make_pod("p", namespace="shop"),
        {"namespaces": {"exclude": ["kube-system"]}},
        None,
        id="pod outside the excluded namespaces evictable",
    ),
    pytest.param(
        make_pod("p", namespace="kube-system", annotations=EVICT),
        {"namespaces": {"exclude": ["kube-system"]}},
        "namespace-excluded",
        id="evict annotation does not reach into an excluded namespace",
    ),
    pytest.param(
        make_pod("p", labels={"tier": "batch"}),
        {"labelSelector": {"matchLabels": {"tier": "batch"}}},
        None,
        id="pod matching labelSelector evictable",
    ),
    pytest.param(
        make_pod("p", labels={"tier": "web"}),
        {"labelSelector": {"matchLabels": {"tier": "batch"}}},
        "label-selector",
        id="pod not matching labelSelector protected",
    ),
    pytest.param(
        make_pod("p", labels={"tier": "db"}),
        {
            "labelSelector": {
                "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]
            }
        },
        "label-selector",
        id="labelSelector matchExpressions applied",
    ),
    pytest.param(
        make_pod("p", labels={"tier": "web"}, annotations=EVICT),
        {"labelSelector": {"matchLabels": {"tier": "batch"}}},
        None,
        id="pod not matching labelSelector evictable with the evict annotation",
    ),
    pytest.param(
        make_pod("p", created=ago(minutes=10)),
        {"minPodAge": "1h"},
        "min-pod-age",
        id="pod younger than minPodAge protected",
    ),
    pytest.param(
        make_pod("p", created=ago(hours=1)),
        {"minPodAge": "1h"},
        None,
        id="pod exactly minPodAge old evictable",
    ),
    pytest.param(
        make_pod("p", created=ago(minutes=10), annotations=EVICT),
        {"minPodAge": "1h"},
        None,
        id="pod younger than minPodAge evictable with the evict annotation",
    ),
    pytest.param(
        make_pod("p", created=ago(minutes=5), start_time=ago(minutes=60)),
        {"minPodAge": "50m"},
        None,
        id="minPodAge judged by status.startTime, not creationTimestamp",
    ),
    pytest.param(
        make_pod("p", created=ago(hours=2), start_time=ago(minutes=10)),
        {"minPodAge": "1h"},
        "min-pod-age",
        id="pod created long ago but started recently protected",
    ),
    pytest.param(
        make_pod("p", start_time=None),
        {"minPodAge": "1h"},
        "min-pod-age",
        id="pod without startTime protected by minPodAge",
    ),
    pytest.param(
        make_pod("p", created=ago(seconds=1)),
        {},
        None,
        id="minPodAge 0s protects no pod",
    ),
]

ORDER = [
    pytest.param(
        make_pod("p", is_mirror=True, deletion_timestamp=NOW, phase="Pending"),
        {},
        "mirror-pod",
        id="mirror reported before terminating and not-running",
    ),
    pytest.param(
        make_pod("p", owner=daemonset(), has_local_storage=True, priority=2_000_000_000),
        {},
        "daemonset-pod",
        id="daemonset reported before system-critical and local storage",
    ),
    pytest.param(
        make_pod("p", namespace="kube-system", owner=daemonset()),
        {"namespaces": {"exclude": ["kube-system"]}},
        "namespace-excluded",
        id="namespace reported before the protections",
    ),
    pytest.param(
        make_pod("p", has_local_storage=True, labels={"tier": "web"}, created=ago(seconds=1)),
        {"labelSelector": {"matchLabels": {"tier": "batch"}}, "minPodAge": "1h"},
        "local-storage",
        id="protections reported before labelSelector and minPodAge",
    ),
]


@pytest.mark.parametrize(
    ("pod", "evictor", "reason"),
    [*NEVER_EVICTABLE, *DEFAULT_PROTECTIONS, *EXTRA_PROTECTIONS, *FILTERS, *ORDER],
)
def test_pod_eligibility(pod: Pod, evictor: dict[str, Any], reason: str | None) -> None:
    verdict = judge(pod, evictor)
    assert (verdict.evictable, verdict.reason) == (reason is None, reason)


def test_priority_threshold_by_name_uses_the_priority_class_value() -> None:
    classes = {"business-critical": 100_000}
    at = judge(
        make_pod("p", priority=100_000),
        {"priorityThreshold": {"name": "business-critical"}},
        priority_classes=classes,
    )
    below = judge(
        make_pod("p", priority=99_999),
        {"priorityThreshold": {"name": "business-critical"}},
        priority_classes=classes,
    )
    assert at.reason == "priority-threshold"
    assert below.evictable


@pytest.mark.parametrize(
    ("evictor", "field"),
    [
        pytest.param(
            {"priorityThreshold": {"name": "missing"}},
            "evictor.priorityThreshold.name",
            id="unknown PriorityClass name is a policy error",
        ),
        pytest.param(
            {"priorityThreshold": {"name": "too-high"}},
            "evictor.priorityThreshold.name",
            id="PriorityClass above system-critical is a policy error",
        ),
        pytest.param(
            {"priorityThreshold": {"value": 2_000_000_001}},
            "evictor.priorityThreshold.value",
            id="threshold value above system-critical is a policy error",
        ),
    ],
)
def test_bad_priority_threshold_is_a_policy_error(evictor: dict[str, Any], field: str) -> None:
    with pytest.raises(PolicyError, match=field.replace(".", r"\.")) as caught:
        judge(make_pod("p"), evictor, priority_classes={"high": 1000, "too-high": 2_100_000_000})
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("siblings", "min_replicas", "reason"),
    [
        pytest.param(1, 3, "min-replicas", id="owner with fewer pods than minReplicas protected"),
        pytest.param(2, 3, None, id="owner with minReplicas pods evictable"),
        pytest.param(0, 1, None, id="minReplicas 1 is ignored, as in descheduler"),
        pytest.param(0, 2, "min-replicas", id="single pod protected by minReplicas 2"),
    ],
)
def test_min_replicas(siblings: int, min_replicas: int, reason: str | None) -> None:
    pod = make_pod("web-0", labels={"app": "web"})
    others = [make_pod(f"web-{i}", labels={"app": "web"}) for i in range(1, siblings + 1)]
    verdict = judge(pod, {"minReplicas": min_replicas}, others=others)
    assert verdict.reason == reason


def test_min_replicas_counts_only_the_same_owner() -> None:
    pod = make_pod("web-0", labels={"app": "web"})
    # Same owner name in another namespace, and another owner in the same one.
    others = [
        make_pod("web-1", labels={"app": "web"}, namespace="other"),
        make_pod("api-1", labels={"app": "api"}),
    ]
    assert judge(pod, {"minReplicas": 2}, others=others).reason == "min-replicas"


def test_min_replicas_passes_a_pod_with_several_owners() -> None:
    # descheduler checks minReplicas only for a pod with exactly one ownerReference.
    rs = OwnerRef(kind="ReplicaSet", name="web-rs", uid="uid-rs")
    extra = OwnerRef(kind="ConfigMap", name="web-cfg", uid="uid-cfg")
    pod = make_pod("web-0", labels={"app": "web"}, owner=rs, other_owners=(extra,))
    verdict = judge(pod, {"minReplicas": 3})
    assert verdict.evictable
    # The controlling owner still decides what recreates it.
    assert pod.owner == rs


def test_min_replicas_counts_a_pod_under_each_owner_it_names() -> None:
    # A sibling naming the ReplicaSet among several owners counts for it, as in
    # descheduler's index of pods by every ownerReference uid.
    rs = OwnerRef(kind="ReplicaSet", name="web-rs", uid="uid-rs")
    extra = OwnerRef(kind="ConfigMap", name="web-cfg", uid="uid-cfg")
    pod = make_pod("web-0", labels={"app": "web"}, owner=rs)
    sibling = make_pod("web-1", labels={"app": "web"}, owner=extra, other_owners=(rs,))
    assert judge(pod, {"minReplicas": 2}, others=[sibling]).evictable
    assert judge(pod, {"minReplicas": 3}, others=[sibling]).reason == "min-replicas"


def test_min_replicas_overridden_by_the_evict_annotation() -> None:
    pod = make_pod("web-0", labels={"app": "web"}, annotations=EVICT)
    assert judge(pod, {"minReplicas": 3}).evictable


def test_min_replicas_counts_pods_of_the_owner_in_any_phase() -> None:
    # descheduler counts its pod informer's index, finished and terminating pods included.
    pod = make_pod("web-0", labels={"app": "web"})
    others = [
        make_pod("web-1", labels={"app": "web"}, phase="Failed"),
        make_pod("web-2", labels={"app": "web"}, deletion_timestamp=NOW),
    ]
    assert judge(pod, {"minReplicas": 3}, others=others).evictable


def test_min_pod_age_protects_a_pod_of_unknown_age() -> None:
    pod = Pod(
        namespace="default",
        name="p",
        node_name="n1",
        owner=make_pod("x").owner,
        creation_timestamp=None,
    )
    assert judge(pod, {"minPodAge": "1m"}).reason == "min-pod-age"


WEB = {"app": "web"}


@pytest.mark.parametrize(
    ("pdbs", "reason", "covering"),
    [
        pytest.param(
            [make_pdb("web", WEB)], None, ("web",), id="pod whose PDB allows a disruption evictable"
        ),
        pytest.param(
            [make_pdb("web", WEB, disruptions_allowed=0)],
            "pdb-blocks",
            ("web",),
            id="pod whose PDB allows no disruption protected",
        ),
        pytest.param(
            [make_pdb("web", WEB), make_pdb("all", {})],
            "multiple-pdbs",
            ("web", "all"),
            id="pod covered by two PDBs protected, the Eviction API refuses it",
        ),
        pytest.param(
            [make_pdb("web", WEB, namespace="other", disruptions_allowed=0)],
            None,
            (),
            id="PDB in another namespace does not cover the pod",
        ),
        pytest.param(
            [make_pdb("api", {"app": "api"}, disruptions_allowed=0)],
            None,
            (),
            id="PDB selecting other labels does not cover the pod",
        ),
        pytest.param(
            [
                PodDisruptionBudget(
                    namespace="default", name="nil", selector=None, disruptions_allowed=0
                )
            ],
            None,
            (),
            id="PDB with a nil selector covers no pod",
        ),
        pytest.param(
            [
                PodDisruptionBudget(
                    namespace="default",
                    name="empty",
                    selector=LabelSelector(),
                    disruptions_allowed=0,
                )
            ],
            "pdb-blocks",
            ("empty",),
            id="PDB with an empty selector covers every pod of its namespace",
        ),
    ],
)
def test_pod_disruption_budgets(
    pdbs: list[PodDisruptionBudget], reason: str | None, covering: tuple[str, ...]
) -> None:
    pod = make_pod("web-0", labels=WEB)
    verdict = judge(pod, {}, pdbs=pdbs)
    assert verdict.reason == reason
    assert tuple(p.name for p in verdict.pdbs) == covering


@pytest.mark.parametrize(
    ("pdbs", "reason"),
    [
        pytest.param(
            [make_pdb("web", WEB, disruptions_allowed=0)],
            "pdb-blocks",
            id="evict annotation does not override a blocking PDB",
        ),
        pytest.param(
            [make_pdb("web", WEB), make_pdb("all", {})],
            "multiple-pdbs",
            id="evict annotation does not override two covering PDBs",
        ),
    ],
)
def test_evict_annotation_does_not_override_pdbs(
    pdbs: list[PodDisruptionBudget], reason: str
) -> None:
    pod = make_pod("web-0", labels=WEB, annotations=EVICT)
    assert judge(pod, {}, pdbs=pdbs).reason == reason


def test_pod_with_a_pdb_passes_pods_without_pdb_protection() -> None:
    pod = make_pod("web-0", labels=WEB)
    verdict = judge(pod, enabled("PodsWithoutPDB"), pdbs=[make_pdb("web", WEB)])
    assert verdict.evictable


def test_pdbs_covering_matches_the_verdict() -> None:
    pod = make_pod("web-0", labels=WEB)
    pdb = make_pdb("web", WEB)
    cluster = make_cluster([make_node("n1")], [pod], pdbs=[pdb, make_pdb("api", {"app": "api"})])
    rules = candidates.EvictionRules.from_policy(EvictorSettings(), cluster)
    assert candidates.pdbs_covering(pod, rules) == (pdb,)
    assert candidates.pod_eligibility(pod, rules, NOW).pdbs == (pdb,)


@pytest.mark.parametrize(
    ("annotations", "prefer"),
    [
        pytest.param(
            {candidates.PREFER_NO_EVICTION_ANNOTATION: ""},
            True,
            id="prefer-no-eviction flagged, still evictable",
        ),
        pytest.param({}, False, id="no prefer-no-eviction annotation, no flag"),
    ],
)
def test_prefer_no_eviction(annotations: dict[str, str], prefer: bool) -> None:
    verdict = judge(make_pod("p", annotations=annotations))
    assert verdict.evictable
    assert verdict.prefer_no_eviction is prefer


def test_check_order_lists_every_reason_once() -> None:
    assert typing.get_args(candidates.Reason) == candidates.CHECK_ORDER


# --- properties ----------------------------------------------------------------------

DEFAULT_NAMES = ["PodsWithLocalStorage", "DaemonSetPods", "SystemCriticalPods", "FailedBarePods"]
EXTRA_NAMES = ["PodsWithPVC", "PodsWithoutPDB", "PodsWithResourceClaims"]
NAMESPACES = ["default", "shop", "kube-system"]

evictor_sections = st.fixed_dictionaries(
    {},
    optional={
        "podProtections": st.fixed_dictionaries(
            {
                "defaultDisabled": st.lists(st.sampled_from(DEFAULT_NAMES), unique=True),
                "extraEnabled": st.lists(st.sampled_from(EXTRA_NAMES), unique=True),
            }
        ),
        "minReplicas": st.integers(0, 4),
        "minPodAge": st.sampled_from(["0s", "30s", "1h"]),
        "priorityThreshold": st.builds(lambda v: {"value": v}, st.integers(0, 2_000_000_000)),
        "namespaces": st.one_of(
            st.builds(
                lambda ns: {"include": ns}, st.lists(st.sampled_from(NAMESPACES), unique=True)
            ),
            st.builds(
                lambda ns: {"exclude": ns}, st.lists(st.sampled_from(NAMESPACES), unique=True)
            ),
        ),
        "labelSelector": st.sampled_from([{}, {"matchLabels": {"app": "p"}}]),
    },
)

pod_annotations = st.dictionaries(
    st.sampled_from(
        [
            candidates.EVICT_ANNOTATION,
            candidates.PREFER_NO_EVICTION_ANNOTATION,
            candidates.OPT_OUT_ANNOTATION,
        ]
    ),
    st.sampled_from(["", "true", "never"]),
)


OWNERS = st.sampled_from(["rs", None, daemonset(), node_owner()])


@st.composite
def pods(draw: st.DrawFn, *, owners: st.SearchStrategy[Any] = OWNERS, **fixed: Any) -> Pod:
    owner = draw(owners)
    fields: dict[str, Any] = {
        "namespace": draw(st.sampled_from(NAMESPACES)),
        "annotations": draw(pod_annotations),
        "phase": draw(st.sampled_from(["Running", "Running", "Pending", "Failed"])),
        "priority": draw(st.sampled_from([0, 1000, 2_000_000_000])),
        "has_local_storage": draw(st.booleans()),
        "has_pvc": draw(st.booleans()),
        "has_resource_claims": draw(st.booleans()),
        "created": ago(seconds=draw(st.sampled_from([1, 3600 * 24]))),
        "is_mirror": draw(st.booleans()),
    }
    fields.update(fixed)
    return make_pod("p-0", owner=owner, **fields)


@given(
    pod=pods(is_mirror=True),
    evictor=evictor_sections,
    pdb_allowed=st.sampled_from([None, 0, 1]),
)
def test_mirror_pods_are_never_evictable(
    pod: Pod, evictor: dict[str, Any], pdb_allowed: int | None
) -> None:
    pdbs = (
        []
        if pdb_allowed is None
        else [make_pdb("all", {}, namespace=pod.namespace, disruptions_allowed=pdb_allowed)]
    )
    verdict = judge(pod, evictor, pdbs=pdbs)
    assert not verdict.evictable
    assert verdict.reason == "mirror-pod"


@given(
    pod=pods(owners=st.just(daemonset())),
    evictor=evictor_sections,
    pdb_allowed=st.sampled_from([None, 0, 1]),
)
def test_daemonset_pods_without_the_evict_annotation_are_never_evictable(
    pod: Pod, evictor: dict[str, Any], pdb_allowed: int | None
) -> None:
    protections = evictor.get("podProtections", {})
    pdbs = (
        []
        if pdb_allowed is None
        else [make_pdb("all", {}, namespace=pod.namespace, disruptions_allowed=pdb_allowed)]
    )
    verdict = judge(pod, evictor, pdbs=pdbs)
    if candidates.EVICT_ANNOTATION in pod.annotations:
        return  # the annotation overrides DaemonSetPods, as in descheduler
    if "DaemonSetPods" in protections.get("defaultDisabled", []):
        return  # protection switched off on purpose
    assert not verdict.evictable


@given(pod=pods(), evictor=evictor_sections, pdb_allowed=st.sampled_from([None, 0, 1, 2]))
def test_evictable_pods_have_at_most_one_pdb_with_room(
    pod: Pod, evictor: dict[str, Any], pdb_allowed: int | None
) -> None:
    pdbs = (
        []
        if pdb_allowed is None
        else [make_pdb("all", {}, namespace=pod.namespace, disruptions_allowed=pdb_allowed)]
    )
    verdict = judge(pod, evictor, pdbs=pdbs)
    if verdict.evictable:
        assert verdict.reason is None
        assert len(verdict.pdbs) <= 1
        assert all(p.disruptions_allowed > 0 for p in verdict.pdbs)
        assert pod.phase == "Running"
        assert not pod.is_mirror
        assert pod.owner is not None
    else:
        assert verdict.reason in candidates.CHECK_ORDER
    assert judge(pod, evictor, pdbs=pdbs) == verdict  # deterministic


LABEL_KEYS = ["app", "tier", "team"]
LABEL_VALUES = ["a", "b"]
label_sets = st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES))
selectors = st.one_of(
    st.none(),
    st.builds(lambda labels: LabelSelector(match_labels=labels), label_sets),
    st.builds(
        lambda labels, key: LabelSelector(
            match_labels=labels, match_expressions=(Requirement(key=key, operator="Exists"),)
        ),
        label_sets,
        st.sampled_from(LABEL_KEYS),
    ),
)
pdb_lists = st.lists(
    st.builds(
        lambda i, ns, selector: PodDisruptionBudget(
            namespace=ns, name=f"pdb-{i}", selector=selector, disruptions_allowed=1
        ),
        st.integers(0, 10_000),
        st.sampled_from(["default", "shop"]),
        selectors,
    ),
    max_size=8,
    unique_by=lambda pdb: pdb.name,
)


@given(labels=label_sets, pdbs=pdb_lists)
def test_pdbs_covering_finds_exactly_the_covering_pdbs_in_cluster_order(
    labels: dict[str, str], pdbs: list[PodDisruptionBudget]
) -> None:
    pod = make_pod("p-0", labels=labels)
    cluster = make_cluster([make_node("n1")], [pod], pdbs=pdbs)
    rules = candidates.EvictionRules.from_policy(EvictorSettings(), cluster)
    assert candidates.pdbs_covering(pod, rules) == tuple(p for p in pdbs if p.covers(pod))
