"""kube-scheduler: Pending pods, highest priority first, go where the planner's
kube-scheduler model puts them (`scheduling.best_nodes`), through the same filters
(`Occupancy.fit_failure` names the reasons of a FailedScheduling). From 100 nodes, as
kube-scheduler does by default, only a sample of the feasible nodes is scored: those
its walk over the nodeTree finds first from a start index that moves on with every
pod (NodeSampler; `percentage_of_nodes_to_score` 0 is the adaptive default, 100
scores every feasible node). As in kube-scheduler, a terminating pod's requests count
on its node until the pod is gone (it is not counted for spreading), and the choice
among equally best-scored nodes is random (seeded: `scheduler_seed`). Each pod is
scored by the profile its spec.schedulerName names (`scheduler_profiles`, from
`sim serve --scheduler-config`); a pod naming no profile is left Pending. Preemption
is not modelled.

As kube-scheduler's cache does, the model of the cluster (`scheduling.Occupancy`)
is built once and then kept current by deltas: a store listener notes the pods
and nodes that changed, and each pass first files those (a pod bound, moved,
terminating or gone; a node's taints, labels or allocatable changed), so a pass
costs in the nodes it scores and the objects that changed, not in every pod. A
node added or deleted, or a namespace's labels changed, has the model rebuilt
from the store on the next pass (`rebuilt_occupancy`), as it is when a change
cannot be converted.
"""

from __future__ import annotations

import collections
import logging
import random
from collections.abc import Mapping
from typing import Any

from loadaware import cluster, errors, scheduling
from loadaware.sim import (
    _clock,
    _events,
    _resources,
    _settings,
    _status,
)
from loadaware.sim.controllers import _objects, _state

log = logging.getLogger(__name__)

# kube-scheduler's wording of each nodeFit reason, for FailedScheduling messages.
_FIT_MESSAGES = {
    "node-not-ready": "node(s) had untolerated taint {node.kubernetes.io/not-ready: }",
    "node-unschedulable": "node(s) were unschedulable",
    "untolerated-taint": "node(s) had untolerated taint(s)",
    "node-selector": "node(s) didn't match Pod's node affinity/selector",
    "node-affinity": "node(s) didn't match Pod's node affinity/selector",
    "insufficient-cpu": "Insufficient cpu",
    "insufficient-memory": "Insufficient memory",
    "insufficient-extended-resource": "Insufficient extended resource",
    "too-many-pods": "Too many pods",
    "host-port": "node(s) didn't have free ports for the requested pod ports",
    "pod-affinity": "node(s) didn't match pod affinity rules",
    "pod-anti-affinity": "node(s) didn't match pod anti-affinity rules",
}
# PodTopologySpread's Filter (ErrReasonConstraintsNotMatch, ErrReasonNodeLabelNotMatch).
_SPREAD_MESSAGE = "node(s) didn't match pod topology spread constraints"
_SPREAD_LABEL_MESSAGE = _SPREAD_MESSAGE + " (missing required label)"
_AFTER_SPREAD = frozenset({"pod-affinity", "pod-anti-affinity"})


class Scheduler:
    def __init__(self, state: _state.ControlState, settings: _settings.SimSettings) -> None:
        self._state = state
        self._store = state.store
        self._clock = state.clock
        self._tie_breaker = random.Random(settings.scheduler_seed)
        self._profiles = settings.scheduler_profiles
        self._percentage = settings.percentage_of_nodes_to_score
        # kube-scheduler's informer adds the nodes of its first list in the API's
        # order, which is the store's; later ones as they come (see _on_change).
        self.node_sampler = scheduling.NodeSampler(
            scheduling.NodeTree(
                (n["metadata"]["name"], n["metadata"].get("labels") or {})
                for n in state.store.objects(_resources.NODES)
            ),
            percentage_of_nodes_to_score=settings.percentage_of_nodes_to_score,
        )
        self._converted: dict[str, tuple[str, Any]] = {}  # uid -> (resourceVersion, Pod | Node)
        self._unschedulable_at: dict[str, int] = {}  # pod key -> store version last tried
        # The cache: None until the first pass, and whenever it must be rebuilt.
        self._occupancy: scheduling.Occupancy | None = None
        self._namespace_labels: dict[str, Mapping[str, str]] = {}
        self._terminating: dict[str, Any] = {}  # key -> placed Pod marked for deletion
        # What changed since the last pass, by key (namespace/name; a node's name).
        self._changed_pods: set[str] = set()
        self._changed_nodes: set[str] = set()
        state.store.on_change.append(self._on_change)

    def _on_change(self, kind: str, resource: _resources.Resource, old: Any, new: Any) -> None:
        uid = new["metadata"].get("uid")
        if kind == "DELETED" and uid:
            self._converted.pop(uid, None)
        if resource is _resources.PODS:
            if self._occupancy is not None:
                self._changed_pods.add(_objects.key(new))
        elif resource is _resources.NODES:
            self._track_node(kind, old, new)
            if kind == "MODIFIED":
                self._changed_nodes.add(new["metadata"]["name"])
            else:
                self.drop_cache()
            # A node's change may make room for the pods that did not fit.
            self._state.pods.update(self._unschedulable_at)
        elif resource is _resources.NAMESPACES and self._occupancy is not None:
            name = new["metadata"]["name"]
            labels = new["metadata"].get("labels") or {}
            if kind == "ADDED" and name not in self._namespace_labels:
                # An empty namespace: nothing counted depends on its labels yet.
                self._namespace_labels[name] = labels
            elif kind == "DELETED" or self._namespace_labels.get(name) != labels:
                self.drop_cache()

    def drop_cache(self) -> None:
        """Have the next pass rebuild the cache from the store: the node order changes
        with a node added or deleted, and the affinity counts with namespace labels."""
        self._occupancy = None

    def _track_node(self, kind: str, old: Any, new: Any) -> None:
        tree = self.node_sampler.tree
        name = new["metadata"]["name"]
        labels = new["metadata"].get("labels") or {}
        if kind == "ADDED":
            tree.add(name, labels)
        elif kind == "DELETED":
            tree.remove(name, labels)
        else:
            tree.update(name, old["metadata"].get("labels") or {}, labels)

    def run(self) -> None:
        """Place the Pending pods, highest priority first, or say why not."""
        version = self._store.resource_version
        pending = []
        for key in sorted(self._state.pods):
            namespace, _, name = key.partition("/")
            pod = self._store.find(_resources.PODS, namespace, name)
            if (
                pod is None
                or pod["spec"].get("nodeName")
                or pod["metadata"].get("deletionTimestamp")
            ):
                continue
            if pod["spec"].get("schedulerName", "default-scheduler") not in self._profiles.by_name:
                continue
            if self._unschedulable_at.get(key) == version:
                continue  # nothing changed since it last failed
            pending.append(pod)
        if not pending:
            return
        pending.sort(
            key=lambda p: (
                -int(p["spec"].get("priority") or 0),
                p["metadata"].get("creationTimestamp", ""),
                _objects.key(p),
            )
        )
        try:
            occupancy = self._current_occupancy()
            incoming = self._convert(pending)
        except errors.InputError as exc:
            log.warning("cannot model the cluster for scheduling", extra={"reason": str(exc)})
            self.drop_cache()
            return
        names = list(occupancy.node_names)
        terminating = [self._terminating[k] for k in sorted(self._terminating)]
        now = _clock.rfc3339(self._clock.time())
        for raw, pod in zip(pending, incoming, strict=True):
            profile = self._profiles.by_name[pod.scheduler_name]
            # One start index for every profile, as kube-scheduler keeps one; the
            # sample's size is the profile's.
            self.node_sampler.percentage_of_nodes_to_score = profile.sample_percentage(
                self._percentage
            )
            sample = self.node_sampler.sample(pod, occupancy, terminating=terminating)
            best = (
                scheduling.best_nodes(
                    pod, occupancy, sample, terminating=terminating, profile=profile
                )
                if sample
                else ()
            )
            if not best:
                self._unschedulable(raw, pod, occupancy, names, now, terminating)
                continue
            target = best[0] if len(best) == 1 else self._tie_breaker.choice(best)
            self._unschedulable_at.pop(_objects.key(raw), None)
            occupancy.add(pod, target)
            self._bind(raw, target, now)

    # --- the cache ---

    def _current_occupancy(self) -> scheduling.Occupancy:
        """The cache with every change since the last pass filed; InputError when a
        changed object cannot be converted."""
        occupancy = self._occupancy
        if occupancy is None:
            self._changed_pods.clear()
            self._changed_nodes.clear()
            occupancy, pods, self._namespace_labels = self._from_store()
            self._terminating = {
                p.key: p
                for p in pods
                if p.deletion_timestamp is not None and occupancy.has_node(p.node_name or "")
            }
            self._occupancy = occupancy
            return occupancy
        if self._changed_nodes:
            names, self._changed_nodes = sorted(self._changed_nodes), set()
            raw_nodes = [
                n for name in names if (n := self._store.find(_resources.NODES, None, name))
            ]
            for node in self._convert(raw_nodes):
                occupancy.replace_node(node)
        if self._changed_pods:
            keys, self._changed_pods = sorted(self._changed_pods), set()
            self._file_pods(occupancy, keys)
        return occupancy

    def _from_store(
        self,
    ) -> tuple[scheduling.Occupancy, list[Any], dict[str, Mapping[str, str]]]:
        """The cache built from scratch from the store: every node, and every bound pod
        that has not finished, on the node it is bound to; with those pods and the
        namespaces' labels it reads."""
        nodes = self._convert(self._store.objects(_resources.NODES))
        pods = self._convert([p for p in self._store.objects(_resources.PODS) if _occupies(p)])
        namespace_labels: dict[str, Mapping[str, str]] = {
            ns["metadata"]["name"]: ns["metadata"].get("labels") or {}
            for ns in self._store.objects(_resources.NAMESPACES)
        }
        occupancy = scheduling.Occupancy(nodes, pods, namespace_labels=namespace_labels)
        return occupancy, pods, namespace_labels

    def rebuilt_occupancy(self) -> scheduling.Occupancy:
        """What the cache would be if built from scratch now (the cache is left alone)."""
        with self._store.lock:
            return self._from_store()[0]

    @property
    def occupancy(self) -> scheduling.Occupancy:
        """The cache as the next pass starts from, every change so far filed."""
        with self._store.lock:
            return self._current_occupancy()

    def _file_pods(self, occupancy: scheduling.Occupancy, keys: list[str]) -> None:
        """Bring the changed pods' places in the cache up to date."""
        raws = []
        for key in keys:
            namespace, _, name = key.partition("/")
            raw = self._store.find(_resources.PODS, namespace, name)
            if raw is not None and _occupies(raw) and occupancy.has_node(raw["spec"]["nodeName"]):
                raws.append(raw)
                continue
            self._terminating.pop(key, None)
            placed = occupancy.placed_pod(key)
            if placed is not None:
                occupancy.remove(placed)
        for pod in self._convert(raws):
            self._terminating.pop(pod.key, None)
            if pod.deletion_timestamp is not None:
                self._terminating[pod.key] = pod
            occupancy.add(pod, pod.node_name or "")

    def _convert(self, objects: list[dict[str, Any]]) -> list[Any]:
        """Raw objects as the planner's types, converted once per resourceVersion."""
        missing = [
            o
            for o in objects
            if self._converted.get(o["metadata"]["uid"], ("", None))[0]
            != o["metadata"].get("resourceVersion")
        ]
        if missing:
            state = cluster.cluster_state_from_objects(missing)
            for obj, converted in zip(missing, [*state.nodes, *state.pods], strict=True):
                self._converted[obj["metadata"]["uid"]] = (
                    obj["metadata"].get("resourceVersion", ""),
                    converted,
                )
        return [self._converted[o["metadata"]["uid"]][1] for o in objects]

    def _unschedulable(
        self,
        raw: dict[str, Any],
        pod: Any,
        occupancy: scheduling.Occupancy,
        names: list[str],
        now: str,
        terminating: list[Any],
    ) -> None:
        # kube-scheduler stops at a node's first failing Filter plugin; PodTopologySpread
        # runs after the resource and port checks, before InterPodAffinity.
        reasons = {name: occupancy.fit_failure(pod, name) for name in names}
        spread_checked = [n for n, r in reasons.items() if r is None or r in _AFTER_SPREAD]
        spread_failed: set[str] = set()
        if spread_checked:
            mask = scheduling.spread_filter_mask(
                pod, occupancy, occupancy.node_indexes(spread_checked), terminating
            )
            spread_failed = {
                n for n, fits in zip(spread_checked, mask.tolist(), strict=True) if not fits
            }
        keys = [
            c.topology_key
            for c in pod.topology_spread_constraints
            if c.when_unsatisfiable == "DoNotSchedule"
        ]
        labels_of = {n.name: n.labels for n in occupancy.nodes}
        counts: collections.Counter[str] = collections.Counter()
        for name, reason in reasons.items():
            if name in spread_failed:
                missing = any(key not in labels_of[name] for key in keys)
                counts[_SPREAD_LABEL_MESSAGE if missing else _SPREAD_MESSAGE] += 1
            elif reason is not None:
                counts[_FIT_MESSAGES.get(reason, reason)] += 1
        parts = ", ".join(f"{n} {m}" for m, n in sorted(counts.items()))
        message = (
            f"0/{len(names)} nodes are available: {parts}. preemption: 0/{len(names)} nodes "
            f"are available: {len(names)} Preemption is not helpful for scheduling."
        )
        self._unschedulable_at[_objects.key(raw)] = self._store.resource_version
        scheduled = _objects.condition(raw, "PodScheduled")
        if scheduled is not None and scheduled.get("message") == message:
            return
        status = dict(raw.get("status") or {})
        status["conditions"] = _objects.with_condition(
            status.get("conditions") or [],
            "PodScheduled",
            "False",
            now,
            reason="Unschedulable",
            message=message,
            lastProbeTime=None,
        )
        self._store.replace(
            _resources.PODS, raw, {**raw, "metadata": dict(raw["metadata"]), "status": status}
        )
        _events.record(
            self._store,
            raw,
            type_="Warning",
            reason="FailedScheduling",
            message=message,
            component="default-scheduler",
        )
        self._unschedulable_at[_objects.key(raw)] = self._store.resource_version

    def _bind(self, raw: dict[str, Any], node: str, now: str) -> None:
        spec = {**raw["spec"], "nodeName": node}
        status = dict(raw.get("status") or {})
        conditions = _objects.with_condition(
            status.get("conditions") or [], "PodScheduled", "True", now
        )
        for condition in conditions:
            if condition["type"] == "PodScheduled":
                condition.pop("reason", None)
                condition.pop("message", None)
                condition["lastTransitionTime"] = now
        status["conditions"] = conditions
        bound = self._store.replace(
            _resources.PODS,
            raw,
            {**raw, "metadata": dict(raw["metadata"]), "spec": spec, "status": status},
        )
        _events.record(
            self._store,
            bound,
            type_="Normal",
            reason="Scheduled",
            message=f"Successfully assigned {_objects.key(raw)} to {node}",
            component="default-scheduler",
        )

    def bind(self, namespace: str, name: str, node: str) -> None:
        """The pods/binding subresource: 409 if already bound; lock held by the caller."""
        pod = self._store.get(_resources.PODS, namespace, name)
        if pod["spec"].get("nodeName"):
            raise _status.conflict(
                "pods",
                name,
                problem=f'pod {name} is already assigned to node "{pod["spec"]["nodeName"]}"',
            )
        if self._store.find(_resources.NODES, None, node) is None:
            raise _status.not_found("nodes", node)
        self._bind(pod, node, _clock.rfc3339(self._clock.time()))


def _occupies(pod: Mapping[str, Any]) -> bool:
    """Whether the pod counts on its node: bound and not finished (terminating included)."""
    return bool(pod["spec"].get("nodeName")) and (pod.get("status") or {}).get("phase") not in (
        "Succeeded",
        "Failed",
    )
