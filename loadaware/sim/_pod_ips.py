"""Pod addresses: each node's spec.podCIDR, as kube-controller-manager's node IPAM
controller gives it, and each pod's address in it, as the kubelet's CNI plugin
(host-local IPAM) gives one.

A node without a podCIDR (a hand-written dump, a node created through the API)
gets the next /24 of 10.244.0.0/16 and on, in the order the nodes come, that no
other node has. A pod gets the next free address of each of its node's ranges
(dual-stack nodes list two) after the last one given there, skipping the
network address and the bridge's gateway (.1): host-local walks on rather than
hand a just-freed address straight back. No two live pods (bound, not finished,
not deleted) share an address. A hostNetwork pod has its node's InternalIPs, as
in Kubernetes, and holds no address of the range.

Limits: an exhausted range leaves the pod without an address (the kubelet would
fail the sandbox and retry); a pod's address is released when it finishes or is
deleted, not when its containers stop.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from typing import Any

from loadaware.sim import _resources

# 10.244.0.0/16, flannel's and kubeadm's customary cluster CIDR, then on through 10/8.
_FIRST_BLOCK = 244 * 256
_BLOCKS = 65536  # the /24s of 10.0.0.0/8
_TEN = 10 << 24
_FIRST_HOST = 2  # .0 is the network, .1 the bridge's gateway

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def pod_cidrs(node: Mapping[str, Any]) -> list[str]:
    """The node's pod ranges: spec.podCIDRs, else spec.podCIDR."""
    spec = node.get("spec") or {}
    cidrs = [str(c) for c in spec.get("podCIDRs") or [] if c]
    if not cidrs and spec.get("podCIDR"):
        cidrs = [str(spec["podCIDR"])]
    return cidrs


def host_ips(node: Mapping[str, Any]) -> list[str]:
    """The node's InternalIP addresses, as the kubelet reports status.hostIPs."""
    return [
        str(a["address"])
        for a in (node.get("status") or {}).get("addresses") or []
        if a.get("type") == "InternalIP" and a.get("address")
    ]


def _is_live(pod: Mapping[str, Any]) -> bool:
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}
    return bool(
        spec.get("nodeName")
        and not spec.get("hostNetwork")
        and status.get("phase") not in ("Succeeded", "Failed")
    )


def _key(pod: Mapping[str, Any]) -> str:
    meta = pod["metadata"]
    return f"{meta.get('namespace') or 'default'}/{meta['name']}"


def _written_ips(pod: Mapping[str, Any]) -> list[str]:
    status = pod.get("status") or {}
    ips = [str(p["ip"]) for p in status.get("podIPs") or [] if p.get("ip")]
    if not ips and status.get("podIP"):
        ips = [str(status["podIP"])]
    return ips


class CidrAllocator:
    """spec.podCIDR for nodes that lack one: the next /24 no node has, from 10.244.0.0."""

    def __init__(self, nodes: Iterable[Mapping[str, Any]] = ()) -> None:
        self._taken: set[str] = set()
        self._next = 0
        for node in nodes:
            self._taken.update(pod_cidrs(node))

    def allocate(self) -> str:
        for _ in range(_BLOCKS):
            block = (_FIRST_BLOCK + self._next) % _BLOCKS
            self._next += 1
            cidr = f"{ipaddress.IPv4Address(_TEN + block * 256)}/24"
            if cidr not in self._taken:
                self._taken.add(cidr)
                return cidr
        raise RuntimeError("no /24 of 10.0.0.0/8 is left for a node's pods")


def with_addresses(objects: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The objects of a dump or scenario, with spec.podCIDR on every node that lacks
    one, and an address on every bound pod the kubelet has started (status.startTime
    or phase Running) that has none: a hand-written dump may leave both out."""
    objects = list(objects)
    cidrs = CidrAllocator(o for o in objects if o.get("kind") == "Node")
    objects = [
        with_pod_cidr(o, cidrs.allocate()) if o.get("kind") == "Node" and not pod_cidrs(o) else o
        for o in objects
    ]
    missing: list[int] = []  # positions of started pods without an address
    for i, obj in enumerate(objects):
        if obj.get("kind") != "Pod" or _written_ips(obj):
            continue
        status = obj.get("status") or {}
        if (status.get("startTime") or status.get("phase") == "Running") and status.get(
            "phase"
        ) not in ("Succeeded", "Failed"):
            missing.append(i)
    if not missing:
        return objects
    allocator = PodIPAllocator()
    for obj in objects:
        if obj.get("kind") == "Pod":
            allocator.hold(obj)
    nodes = {o["metadata"]["name"]: o for o in objects if o.get("kind") == "Node"}
    for i in missing:
        pod = objects[i]
        node = nodes.get((pod.get("spec") or {}).get("nodeName") or "")
        ips = allocator.allocate(pod, node) if node is not None else []
        if ips:
            status = {**(pod.get("status") or {}), "podIP": ips[0], "podIPs": ips_field(ips)}
            objects[i] = {**pod, "status": status}
    return objects


def with_pod_cidr(node: Mapping[str, Any], cidr: str) -> dict[str, Any]:
    return {**node, "spec": {**(node.get("spec") or {}), "podCIDR": cidr, "podCIDRs": [cidr]}}


def ips_field(ips: list[str]) -> list[dict[str, str]]:
    return [{"ip": ip} for ip in ips]


class PodIPAllocator:
    """The addresses live pods hold, and the next one to give on each node's ranges.

    Feed it every pod change (`on_change`, a store listener) so that it knows
    which addresses are held."""

    def __init__(self) -> None:
        self._holder: dict[str, str] = {}  # address -> namespace/name of its pod
        self._held: dict[str, list[str]] = {}  # namespace/name -> addresses
        self._next: dict[str, int] = {}  # range -> offset of the next address to try
        self._networks: dict[str, _Network] = {}

    def hold(self, pod: Mapping[str, Any]) -> None:
        """Record the addresses the pod holds as it is now (none once it is finished)."""
        key = _key(pod)
        self.release(key)
        if not _is_live(pod):
            return
        ips = _written_ips(pod)
        for ip in ips:
            self._holder.setdefault(ip, key)
        if ips:
            self._held[key] = ips

    def release(self, key: str) -> None:
        for ip in self._held.pop(key, ()):
            if self._holder.get(ip) == key:
                del self._holder[ip]

    def on_change(self, kind: str, resource: Any, old: Any, new: Any) -> None:
        if resource is not _resources.PODS:
            return
        if kind == "DELETED":
            self.release(_key(new))
        else:
            self.hold(new)

    def allocate(self, pod: Mapping[str, Any], node: Mapping[str, Any]) -> list[str]:
        """The pod's addresses on the node, held from now on: one per range of the node,
        or its InternalIPs for a hostNetwork pod; empty when a range is exhausted."""
        if (pod.get("spec") or {}).get("hostNetwork"):
            return host_ips(node)
        key = _key(pod)
        ips: list[str] = []
        for cidr in pod_cidrs(node):
            ip = self._next_free(cidr)
            if ip is None:
                for given in ips:
                    del self._holder[given]
                return []
            self._holder[ip] = key
            ips.append(ip)
        if ips:
            self._held[key] = ips
        return ips

    def _next_free(self, cidr: str) -> str | None:
        network = self._networks.get(cidr)
        if network is None:
            try:
                network = ipaddress.ip_network(cidr, strict=False)
            except ValueError:
                return None
            self._networks[cidr] = network
        # IPv4 leaves out the broadcast address; a range too small has no addresses.
        last = network.num_addresses - (2 if network.version == 4 else 1)
        if last < _FIRST_HOST:
            return None
        size = last - _FIRST_HOST + 1
        start = self._next.get(cidr, _FIRST_HOST)
        # Bounded by the live pods, not the range: an IPv6 /64 is never walked through.
        for step in range(min(size, len(self._holder) + 1)):
            offset = _FIRST_HOST + (start - _FIRST_HOST + step) % size
            ip = str(network.network_address + offset)
            if ip not in self._holder:
                self._next[cidr] = _FIRST_HOST + (offset - _FIRST_HOST + 1) % size
                return ip
        return None
