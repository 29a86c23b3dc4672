"""The resources the simulated API serves, as its discovery documents describe them.

One `Resource` per kind: where it lives (group, version, plural), whether it is
namespaced, which verbs and subresources it has, which field selectors the real
API server accepts for it, and whether its spec changes bump
`metadata.generation`. Everything else (storage, handlers, tables) is keyed by
these values, so serving another kind is one entry here.
"""

from __future__ import annotations

from dataclasses import dataclass

KUBE_VERSION = "v1.31.2"

_READ = ("get", "list", "watch")
_ALL = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")

# Every resource accepts these two, as the generic registry does.
_META_FIELDS = frozenset({"metadata.name", "metadata.namespace"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Resource:
    group: str  # "" is the core group
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool
    verbs: tuple[str, ...] = _ALL
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()  # "status", "eviction", "binding"
    field_selectors: frozenset[str] = _META_FIELDS
    # metadata.generation follows spec changes (controllers' objects, PDBs).
    has_generation: bool = False
    # Writes to the main resource keep the stored status: it has a status subresource.
    has_status: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def key(self) -> tuple[str, str]:
        """(group, plural): how the store files objects."""
        return (self.group, self.plural)


def _fields(*names: str) -> frozenset[str]:
    return _META_FIELDS | frozenset(names)


_EVENT_FIELDS = _fields(
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)

NODES = Resource(
    group="",
    version="v1",
    plural="nodes",
    singular="node",
    kind="Node",
    namespaced=False,
    short_names=("no",),
    subresources=("status",),
    field_selectors=_fields("spec.unschedulable"),
    has_status=True,
)
PODS = Resource(
    group="",
    version="v1",
    plural="pods",
    singular="pod",
    kind="Pod",
    namespaced=True,
    short_names=("po",),
    categories=("all",),
    subresources=("status", "eviction", "binding"),
    field_selectors=_fields(
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.podIPs",
        "status.nominatedNodeName",
    ),
    has_status=True,
)
NAMESPACES = Resource(
    group="",
    version="v1",
    plural="namespaces",
    singular="namespace",
    kind="Namespace",
    namespaced=False,
    verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
    short_names=("ns",),
    subresources=("status",),
    field_selectors=_fields("status.phase"),
    has_status=True,
)
SECRETS = Resource(
    group="",
    version="v1",
    plural="secrets",
    singular="secret",
    kind="Secret",
    namespaced=True,
    field_selectors=_fields("type"),
)
CONFIGMAPS = Resource(
    group="",
    version="v1",
    plural="configmaps",
    singular="configmap",
    kind="ConfigMap",
    namespaced=True,
    short_names=("cm",),
)
EVENTS = Resource(
    group="",
    version="v1",
    plural="events",
    singular="event",
    kind="Event",
    namespaced=True,
    short_names=("ev",),
    field_selectors=_EVENT_FIELDS,
)
# events.k8s.io/v1 is another view of the same stored events (see _events).
EVENTS_V1 = Resource(
    group="events.k8s.io",
    version="v1",
    plural="events",
    singular="event",
    kind="Event",
    namespaced=True,
    short_names=("ev",),
    field_selectors=_fields(
        "regarding.kind",
        "regarding.namespace",
        "regarding.name",
        "regarding.uid",
        "regarding.apiVersion",
        "regarding.resourceVersion",
        "regarding.fieldPath",
        "reason",
        "reportingController",
        "type",
    ),
)
DEPLOYMENTS = Resource(
    group="apps",
    version="v1",
    plural="deployments",
    singular="deployment",
    kind="Deployment",
    namespaced=True,
    short_names=("deploy",),
    categories=("all",),
    subresources=("status",),
    has_generation=True,
    has_status=True,
)
REPLICASETS = Resource(
    group="apps",
    version="v1",
    plural="replicasets",
    singular="replicaset",
    kind="ReplicaSet",
    namespaced=True,
    short_names=("rs",),
    categories=("all",),
    subresources=("status",),
    has_generation=True,
    has_status=True,
)
STATEFULSETS = Resource(
    group="apps",
    version="v1",
    plural="statefulsets",
    singular="statefulset",
    kind="StatefulSet",
    namespaced=True,
    short_names=("sts",),
    categories=("all",),
    subresources=("status",),
    has_generation=True,
    has_status=True,
)
DAEMONSETS = Resource(
    group="apps",
    version="v1",
    plural="daemonsets",
    singular="daemonset",
    kind="DaemonSet",
    namespaced=True,
    short_names=("ds",),
    categories=("all",),
    subresources=("status",),
    has_generation=True,
    has_status=True,
)
JOBS = Resource(
    group="batch",
    version="v1",
    plural="jobs",
    singular="job",
    kind="Job",
    namespaced=True,
    categories=("all",),
    subresources=("status",),
    has_generation=True,
    has_status=True,
)
PDBS = Resource(
    group="policy",
    version="v1",
    plural="poddisruptionbudgets",
    singular="poddisruptionbudget",
    kind="PodDisruptionBudget",
    namespaced=True,
    short_names=("pdb",),
    subresources=("status",),
    has_generation=True,
    has_status=True,
)
LEASES = Resource(
    group="coordination.k8s.io",
    version="v1",
    plural="leases",
    singular="lease",
    kind="Lease",
    namespaced=True,
)
PRIORITY_CLASSES = Resource(
    group="scheduling.k8s.io",
    version="v1",
    plural="priorityclasses",
    singular="priorityclass",
    kind="PriorityClass",
    namespaced=False,
    short_names=("pc",),
)

STORED: tuple[Resource, ...] = (
    NODES,
    PODS,
    NAMESPACES,
    SECRETS,
    CONFIGMAPS,
    EVENTS,
    DEPLOYMENTS,
    REPLICASETS,
    STATEFULSETS,
    DAEMONSETS,
    JOBS,
    PDBS,
    LEASES,
    PRIORITY_CLASSES,
)
SERVED: tuple[Resource, ...] = (*STORED, EVENTS_V1)

METRICS_GROUP = "metrics.k8s.io"
METRICS_VERSION = "v1beta1"

_BY_PATH = {(r.group, r.version, r.plural): r for r in SERVED}
_BY_KIND = {(r.group, r.kind): r for r in STORED}


def find(group: str, version: str, plural: str) -> Resource | None:
    return _BY_PATH.get((group, version, plural))


def for_object(api_version: str, kind: str) -> Resource | None:
    """The stored resource of a raw object; older versions (policy/v1beta1) map to it too."""
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    return _BY_KIND.get((group, kind))


def groups() -> dict[str, list[str]]:
    """API group -> served versions, in discovery order (the core group excluded)."""
    result: dict[str, list[str]] = {}
    for r in SERVED:
        if r.group and r.version not in result.setdefault(r.group, []):
            result[r.group].append(r.version)
    result[METRICS_GROUP] = [METRICS_VERSION]
    return result
