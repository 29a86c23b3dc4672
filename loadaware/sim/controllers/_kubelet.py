"""The kubelet: a bound pod starts (ContainerCreating, then Running and Ready
`ready_delay` simulated seconds after binding); a terminating pod is removed once its
grace period has passed. Nothing happens on a NotReady node: its pods neither start
nor finish terminating.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadaware.sim import _clock, _events, _pod_ips, _resources, _settings, _store, _usage
from loadaware.sim.controllers import _objects, _state


class Kubelet:
    """The kubelets of every node, with the pod IPs they hand out."""

    def __init__(self, state: _state.ControlState, settings: _settings.SimSettings) -> None:
        self._state = state
        self._store = state.store
        self._clock = state.clock
        self._ready_delay = settings.ready_delay
        self._pod_ips = _pod_ips.PodIPAllocator()
        for pod in state.store.objects(_resources.PODS):
            self._pod_ips.hold(pod)
        state.store.on_change.append(self._pod_ips.on_change)
        self._pod_cidrs: _pod_ips.CidrAllocator | None = None  # made when a node lacks one
        self._stopping: set[str] = set()  # uids of pods whose containers are being stopped

    def run(self) -> None:
        """Start the pods bound to Ready nodes; remove the terminating ones whose grace
        period has passed."""
        now = self._clock.time()
        stamp = _clock.rfc3339(now)
        # Only the nodes of the pods that changed are looked at, once per round.
        ready_nodes = _ReadyNodes(self._store)
        for key in sorted(self._state.pods):
            namespace, _, name = key.partition("/")
            pod = self._store.find(_resources.PODS, namespace, name)
            if pod is None:
                self._state.pods.discard(key)
                continue
            node_name = pod["spec"].get("nodeName")
            deletion = _clock.parse_time(pod["metadata"].get("deletionTimestamp"))
            if deletion is not None:
                uid = pod["metadata"].get("uid", "")
                if node_name in ready_nodes and uid not in self._stopping:
                    self._stopping.add(uid)
                    for container in pod["spec"].get("containers") or []:
                        _events.record(
                            self._store,
                            pod,
                            type_="Normal",
                            reason="Killing",
                            message=f"Stopping container {container.get('name')}",
                            component="kubelet",
                            host=str(node_name),
                        )
                # The kubelet confirms the end; on a NotReady node nobody does.
                if (
                    (not node_name or node_name in ready_nodes)
                    and deletion <= now
                    and not pod["metadata"].get("finalizers")
                ):
                    self._store.remove(_resources.PODS, pod)
                    self._state.pods.discard(key)
                    self._stopping.discard(uid)
                continue
            if not node_name:
                continue
            node = ready_nodes.get(node_name)
            if node is None:
                continue
            phase = (pod.get("status") or {}).get("phase")
            if phase == "Pending":
                scheduled = _objects.condition(pod, "PodScheduled")
                since = _clock.parse_time((scheduled or {}).get("lastTransitionTime")) or now
                if not (pod.get("status") or {}).get("startTime"):
                    self._accept(pod, node, stamp)
                elif now >= since + self._ready_delay:
                    self._start(pod, stamp)
                    self._state.pods.discard(key)
            elif phase == "Running" and not _objects.is_pod_ready(pod):
                set_pod_ready(self._store, pod, True, stamp)
                self._state.pods.discard(key)
            else:
                self._state.pods.discard(key)

    def _accept(self, pod: dict[str, Any], node: Mapping[str, Any], stamp: str) -> None:
        """The kubelet has seen the pod: IPs, startTime, containers being created."""
        status = dict(pod.get("status") or {})
        host_ips = _pod_ips.host_ips(node)
        status["hostIP"] = host_ips[0] if host_ips else ""
        if host_ips:
            status["hostIPs"] = _pod_ips.ips_field(host_ips)
        pod_ips = self._pod_ips.allocate(pod, self._with_pod_cidr(node))
        if pod_ips:
            status["podIP"] = pod_ips[0]
            status["podIPs"] = _pod_ips.ips_field(pod_ips)
        status["startTime"] = stamp
        conditions = status.get("conditions") or []
        for kind, value, extra in (
            ("Initialized", "True", {}),
            ("Ready", "False", {"reason": "ContainersNotReady"}),
            ("ContainersReady", "False", {"reason": "ContainersNotReady"}),
        ):
            conditions = _objects.with_condition(conditions, kind, value, stamp, **extra)
        status["conditions"] = conditions
        status["containerStatuses"] = [
            {
                "name": c.get("name"),
                "image": c.get("image"),
                "imageID": "",
                "ready": False,
                "started": False,
                "restartCount": 0,
                "state": {"waiting": {"reason": "ContainerCreating"}},
            }
            for c in pod["spec"].get("containers") or []
        ]
        self._store.replace(
            _resources.PODS, pod, {**pod, "metadata": dict(pod["metadata"]), "status": status}
        )

    def _with_pod_cidr(self, node: Mapping[str, Any]) -> Mapping[str, Any]:
        """The node, given a podCIDR first if it has none, as the node IPAM controller
        gives one to a node created after the cluster was loaded."""
        if _pod_ips.pod_cidrs(node):
            return node
        # The node this round's snapshot holds may have been given one since.
        current = self._store.get(_resources.NODES, None, node["metadata"]["name"])
        if _pod_ips.pod_cidrs(current):
            return current
        if self._pod_cidrs is None:
            self._pod_cidrs = _pod_ips.CidrAllocator(self._store.objects(_resources.NODES))
        updated = _pod_ips.with_pod_cidr(current, self._pod_cidrs.allocate())
        updated["metadata"] = dict(current["metadata"])
        return self._store.replace(_resources.NODES, current, updated)

    def _start(self, pod: dict[str, Any], stamp: str) -> None:
        status = dict(pod.get("status") or {})
        status["phase"] = "Running"
        conditions = status.get("conditions") or []
        for kind in ("Ready", "ContainersReady"):
            conditions = _objects.with_condition(conditions, kind, "True", stamp)
            for condition in conditions:
                if condition["type"] == kind:
                    condition.pop("reason", None)
        status["conditions"] = conditions
        status["containerStatuses"] = [
            {
                "name": c.get("name"),
                "image": c.get("image"),
                "imageID": f"{c.get('image')}@sha256:{_objects.digest(str(c.get('image')))}",
                "containerID": "containerd://"
                + _objects.digest(pod["metadata"]["uid"] + str(c.get("name"))),
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": stamp}},
            }
            for c in pod["spec"].get("containers") or []
        ]
        self._store.replace(
            _resources.PODS, pod, {**pod, "metadata": dict(pod["metadata"]), "status": status}
        )


def set_pod_ready(store: _store.Store, pod: dict[str, Any], ready: bool, stamp: str) -> None:
    status = dict(pod.get("status") or {})
    value = "True" if ready else "False"
    conditions = status.get("conditions") or []
    for kind in ("Ready", "ContainersReady"):
        conditions = _objects.with_condition(conditions, kind, value, stamp)
    status["conditions"] = conditions
    status["containerStatuses"] = [
        {**c, "ready": ready} for c in status.get("containerStatuses") or []
    ]
    store.replace(
        _resources.PODS, pod, {**pod, "metadata": dict(pod["metadata"]), "status": status}
    )


class _ReadyNodes:
    """The Ready nodes by name, looked up in the store as asked for."""

    __slots__ = ("_found", "_store")

    def __init__(self, store: _store.Store) -> None:
        self._store = store
        self._found: dict[str, Mapping[str, Any] | None] = {}

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def get(self, name: str) -> Mapping[str, Any] | None:
        if name not in self._found:
            node = self._store.find(_resources.NODES, None, name)
            self._found[name] = node if node is not None and _usage.is_node_ready(node) else None
        return self._found[name]
