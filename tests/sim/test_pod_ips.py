"""Pod addresses in the simulated cluster (loadaware/sim/_pod_ips.py).

Covered, through `loadaware sim`'s server and the official client: nodes of a
hand-written dump without spec.podCIDR get distinct /24s, stable from one start
to the next; its started pods without an address get one; pods the scheduler
binds later get distinct addresses (status.podIP and status.podIPs), each inside
its node's podCIDR, and so do the replacements of evicted pods in a built-in
scenario. The allocator: no live pod's address is given again, a finished or
deleted pod's is given again once the range has been walked round, dual-stack
ranges give one address each, a hostNetwork pod has its node's address, an
exhausted range gives none.
"""

from __future__ import annotations

import ipaddress
import pathlib
from collections.abc import Iterator, Mapping
from typing import Any

import kubernetes.client
import kubernetes.config
import pytest

from loadaware import sim
from loadaware.sim import _pod_ips
from tests.lib.objects import raw_pod
from tests.lib.sim import NOW, sim_server

NODES = ("worker-a", "worker-b", "worker-c")


def _node(name: str, address: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "spec": spec,
        "status": {
            "addresses": [{"type": "InternalIP", "address": address}],
            "allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "capacity": {"cpu": "4", "memory": "16Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def _pod(name: str, node: str | None = None, **status: Any) -> dict[str, Any]:
    return raw_pod(
        name,
        labels={"app": "web"},
        container="web",
        image="nginx:1.27",
        cpu="100m",
        memory="64Mi",
        node=node,
        status=status or None,
    )


def _dump() -> list[dict[str, Any]]:
    nodes = [_node(name, f"192.168.0.{10 + i}") for i, name in enumerate(NODES)]
    pods = [
        _pod(
            f"running-{i}", NODES[i % len(NODES)], phase="Running", startTime="2026-11-28T08:00:00Z"
        )
        for i in range(6)
    ]
    return [*nodes, *pods]


@pytest.fixture
def server() -> Iterator[sim.SimServer]:
    with sim_server(None, objects=_dump()) as running:
        yield running


@pytest.fixture
def core(server: sim.SimServer, tmp_path: pathlib.Path) -> kubernetes.client.CoreV1Api:
    config = server.write_kubeconfig(tmp_path / "kubeconfig")
    return kubernetes.client.CoreV1Api(kubernetes.config.new_client_from_config(str(config)))


def _cidrs(core: kubernetes.client.CoreV1Api) -> dict[str, ipaddress.IPv4Network]:
    return {
        n.metadata.name: ipaddress.ip_network(n.spec.pod_cidr)
        for n in core.list_node().items
        if n.spec.pod_cidr
    }


def _assert_distinct_inside_cidrs(core: kubernetes.client.CoreV1Api) -> list[Any]:
    cidrs = _cidrs(core)
    pods = [p for p in core.list_pod_for_all_namespaces().items if p.spec.node_name in cidrs]
    ips = [p.status.pod_ip for p in pods]
    assert all(ips), [p.metadata.name for p in pods if not p.status.pod_ip]
    assert len(set(ips)) == len(ips), sorted(ips)
    for pod in pods:
        assert [i.ip for i in pod.status.pod_ips] == [pod.status.pod_ip]
        assert ipaddress.ip_address(pod.status.pod_ip) in cidrs[pod.spec.node_name], pod
    return pods


def test_nodes_without_a_pod_cidr_get_distinct_ones(core: kubernetes.client.CoreV1Api) -> None:
    nodes = core.list_node().items
    assert [n.spec.pod_cidrs for n in nodes] == [[n.spec.pod_cidr] for n in nodes]
    cidrs = _cidrs(core)
    assert sorted(cidrs) == sorted(NODES)
    assert len(set(cidrs.values())) == len(NODES)
    assert all(
        c.prefixlen == 24 and c.subnet_of(ipaddress.ip_network("10.0.0.0/8"))
        for c in cidrs.values()
    )
    # Stable: the same dump gives the same ranges.
    again = sim.build_cluster(objects=_dump(), clock=sim.SimClock(NOW, speed=0.0))
    assert {n["metadata"]["name"]: n["spec"]["podCIDR"] for n in again.list("nodes")} == {
        name: str(cidr) for name, cidr in cidrs.items()
    }


def test_started_pods_of_a_dump_get_distinct_addresses(core: kubernetes.client.CoreV1Api) -> None:
    pods = _assert_distinct_inside_cidrs(core)
    assert len(pods) == 6


def test_pods_bound_later_get_distinct_addresses_in_their_node_cidr(
    server: sim.SimServer, core: kubernetes.client.CoreV1Api
) -> None:
    for i in range(12):
        core.create_namespaced_pod("default", _pod(f"new-{i}"))
    server.wait_for(
        lambda: (
            all(
                p.status.pod_ip
                for p in core.list_namespaced_pod("default").items
                if p.spec.node_name
            )
            and all(p.spec.node_name for p in core.list_namespaced_pod("default").items)
        )
    )
    pods = _assert_distinct_inside_cidrs(core)
    assert len(pods) == 18
    assert len({p.spec.node_name for p in pods}) == len(NODES)


def test_replacements_of_evicted_pods_get_distinct_addresses(tmp_path: pathlib.Path) -> None:
    with sim_server("small") as server:
        config = server.write_kubeconfig(tmp_path / "kubeconfig")
        core = kubernetes.client.CoreV1Api(kubernetes.config.new_client_from_config(str(config)))
        _assert_distinct_inside_cidrs(core)
        victims = [
            p
            for p in server.sim.list("pods")
            if (p["metadata"].get("ownerReferences") or [{}])[0].get("kind") == "ReplicaSet"
        ][:8]
        for victim in victims:
            meta = victim["metadata"]
            server.sim.evict(meta["namespace"], meta["name"])
        server.advance(120)  # past every grace period
        gone = {(v["metadata"]["namespace"], v["metadata"]["name"]) for v in victims}
        server.wait_for(lambda: all(server.sim.find("pods", ns, name) is None for ns, name in gone))
        pods = _assert_distinct_inside_cidrs(core)
        assert not gone & {(p.metadata.namespace, p.metadata.name) for p in pods}


# --- the allocator ---


def _bound(name: str, node: Mapping[str, Any], **spec: Any) -> dict[str, Any]:
    pod = _pod(name, node["metadata"]["name"])
    pod["spec"].update(spec)
    return pod


def _given(pod: dict[str, Any], ips: list[str], phase: str = "Running") -> dict[str, Any]:
    return {**pod, "status": {"phase": phase, "podIP": ips[0], "podIPs": _pod_ips.ips_field(ips)}}


def test_no_live_address_is_given_twice_and_a_released_one_comes_back_last() -> None:
    node = _node("n", "192.168.0.10", podCIDR="10.1.2.0/29")  # .2 to .6
    allocator = _pod_ips.PodIPAllocator()
    given = [allocator.allocate(_bound(f"p{i}", node), node) for i in range(5)]
    assert given == [[f"10.1.2.{i}"] for i in range(2, 7)]
    assert allocator.allocate(_bound("p5", node), node) == []  # exhausted
    allocator.hold(_given(_bound("p1", node), given[1], phase="Succeeded"))  # finished: released
    assert allocator.allocate(_bound("p6", node), node) == ["10.1.2.3"]
    allocator.release("default/p3")  # deleted
    assert allocator.allocate(_bound("p7", node), node) == ["10.1.2.5"]
    assert allocator.allocate(_bound("p8", node), node) == []


def test_dual_stack_host_network_and_no_range() -> None:
    dual = _node("d", "192.168.0.11", podCIDRs=["10.1.3.0/24", "fd00:10:1:3::/64"])
    allocator = _pod_ips.PodIPAllocator()
    assert allocator.allocate(_bound("a", dual), dual) == ["10.1.3.2", "fd00:10:1:3::2"]
    assert allocator.allocate(_bound("b", dual), dual) == ["10.1.3.3", "fd00:10:1:3::3"]
    assert allocator.allocate(_bound("h", dual, hostNetwork=True), dual) == ["192.168.0.11"]
    bare = _node("b", "192.168.0.12")
    assert allocator.allocate(_bound("c", bare), bare) == []


def test_a_dump_keeps_the_addresses_it_has() -> None:
    node = _node("n", "192.168.0.10", podCIDR="10.1.2.0/24")
    kept = _given(_bound("kept", node), ["10.1.2.2"])
    kept["status"]["startTime"] = "2026-11-28T08:00:00Z"
    started = _bound("started", node)
    started["status"] = {"phase": "Running"}
    pending = _pod("pending")
    objects = _pod_ips.with_addresses([node, kept, started, pending])
    assert objects[1] == kept
    assert objects[2]["status"]["podIP"] == "10.1.2.3"
    assert objects[3] == pending
