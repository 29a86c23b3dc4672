"""Steering taints written from the cluster cache's view of the node, against the
simulated API with the official client.

Covers: while the cache is current, a taint set or removed costs one PATCH and no
read of the node; a view that is behind (the last write not yet seen, the node
changed by someone else) costs a read from the API server and still leaves the
node's taints exactly as asked, every other taint kept with all its fields.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import kubernetes.client
import pytest

from loadaware import cluster, evict, kube, sim
from loadaware.kube import ClientSettings
from tests.lib.cache import caught_up
from tests.lib.sim import sim_server

HOTSPOT = {"key": evict.HOTSPOT_TAINT_KEY, "value": "true", "effect": "PreferNoSchedule"}
# Another controller's taint, with the field loadaware's own view of a node leaves out.
OTHER_TAINT = {
    "key": "node.kubernetes.io/unreachable",
    "effect": "NoExecute",
    "timeAdded": "2026-11-29T07:00:00Z",
}


@pytest.fixture
def server() -> Iterator[sim.SimServer]:
    with sim_server("small", watch_bookmark_seconds=0.2) as running:
        yield running


@pytest.fixture
def client(server: sim.SimServer, tmp_path: pathlib.Path) -> kubernetes.client.ApiClient:
    config = server.write_kubeconfig(tmp_path / "kubeconfig")
    return kube.api_client(ClientSettings(kubeconfig=str(config)))


def _node(server: sim.SimServer) -> str:
    return str(server.list("nodes")[0]["metadata"]["name"])


def _taints(server: sim.SimServer, node: str) -> list[dict[str, str]]:
    found = next(n for n in server.list("nodes") if n["metadata"]["name"] == node)
    return list(found["spec"].get("taints") or [])


def _node_requests(server: sim.SimServer) -> tuple[int, int]:
    counts = server.sim.requests.counts()
    return counts.get(("get", "nodes"), 0), counts.get(("patch", "nodes"), 0)


def test_a_current_cache_writes_each_taint_without_reading_the_node(
    server: sim.SimServer, client: kubernetes.client.ApiClient
) -> None:
    node = _node(server)
    kubernetes.client.CoreV1Api(client).patch_node(node, {"spec": {"taints": [OTHER_TAINT]}})
    with cluster.ClusterCache(client, watch_seconds=(30.0, 30.0)) as cache:
        assert cache.wait_synced(20)
        caught_up(cache, server)
        writer = evict.Kube(client, reads=cache)
        server.sim.requests.clear()
        for _ in range(3):
            evict.add_hotspot_taint(writer, node)
            caught_up(cache, server)
            assert _taints(server, node) == [OTHER_TAINT, HOTSPOT]
            evict.remove_hotspot_taint(writer, node)
            caught_up(cache, server)
            assert _taints(server, node) == [OTHER_TAINT]
        assert _node_requests(server) == (0, 6)


def test_a_cache_behind_the_node_costs_a_read_and_leaves_its_taints_right(
    server: sim.SimServer, client: kubernetes.client.ApiClient
) -> None:
    node = _node(server)
    core = kubernetes.client.CoreV1Api(client)
    core.patch_node(node, {"spec": {"taints": [OTHER_TAINT]}})
    with cluster.ClusterCache(client, watch_seconds=(30.0, 30.0)) as cache:
        assert cache.wait_synced(20)
        caught_up(cache, server)
    # Stopped: the cache sees none of the writes below.
    writer = evict.Kube(client, reads=cache)
    server.sim.requests.clear()

    evict.add_hotspot_taint(writer, node)  # the view is current: written as it is
    assert _taints(server, node) == [OTHER_TAINT, HOTSPOT]
    assert _node_requests(server) == (0, 1)

    # The view has not seen the taint: it finds nothing to remove, which is not trusted.
    evict.remove_hotspot_taint(writer, node)
    assert _taints(server, node) == [OTHER_TAINT]
    assert _node_requests(server) == (1, 2)

    # Its resourceVersion is behind: the write conflicts, is read again and written.
    evict.add_hotspot_taint(writer, node)
    assert _taints(server, node) == [OTHER_TAINT, HOTSPOT]
    assert _node_requests(server) == (2, 4)

    # Someone else's change meanwhile is kept.
    core.patch_node(node, {"metadata": {"labels": {"changed": "elsewhere"}}})
    evict.remove_hotspot_taint(writer, node)
    assert _taints(server, node) == [OTHER_TAINT]
    labels = next(n for n in server.list("nodes") if n["metadata"]["name"] == node)["metadata"][
        "labels"
    ]
    assert labels["changed"] == "elsewhere"

    # A node the cache never held is read from the API server, as without a cache.
    server.sim.requests.clear()
    assert cache.read_node("no-such-node") is None
    evict.remove_hotspot_taint(writer, "no-such-node")
    assert _node_requests(server) == (1, 0)
