"""Images in the simulated cluster: nodes' status.images, pods' images, and what the
simulated kube-scheduler does with them.

Covered: a generated node reports the images of the pods placed on it and the
pause image (the largest 50 of them), under digest and tag, the largest first,
an image with one size everywhere; what the kubelet lists is capped at 50, the
largest kept; the converter reads what the generator writes; the simulated
scheduler binds a pod to the node holding its image where the nodes otherwise
tie, and elsewhere when no node holds it.

The simulated kubelet does not add the images of the pods it starts to its
node's list: a real one reports them only at a later node status update, and the
planner reads a node's images as the round found them.
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from loadaware import cluster, sim
from loadaware.sim import _images, scenarios
from tests.lib.objects import raw_pod
from tests.lib.sim import NOW, call, is_ready, sim_server

MiB = 1024**2


def _tags(node: dict[str, Any]) -> list[str]:
    return [entry["names"][-1] for entry in node["status"]["images"]]


@pytest.mark.parametrize("name", ["small", "peak-hour", "warm-idle", "gpu"])
def test_generated_nodes_report_the_images_of_their_pods(name: str) -> None:
    scenario = scenarios.builtin_scenario(name, now=NOW)
    nodes = {o["metadata"]["name"]: o for o in scenario.objects if o["kind"] == "Node"}
    expected: dict[str, set[str]] = collections.defaultdict(lambda: {_images.PAUSE_IMAGE})
    for pod in (o for o in scenario.objects if o["kind"] == "Pod"):
        expected[pod["spec"]["nodeName"]].update(c["image"] for c in pod["spec"]["containers"])
    sizes: dict[str, set[int]] = collections.defaultdict(set)
    for node_name, node in nodes.items():
        # The largest 50 only: nodes of peak-hour run more images than the kubelet lists.
        largest = sorted(expected[node_name], key=_images.size_bytes, reverse=True)
        assert set(_tags(node)) == set(largest[: _images.NODE_STATUS_MAX_IMAGES])
        entries = node["status"]["images"]
        assert [e["sizeBytes"] for e in entries] == sorted(
            (e["sizeBytes"] for e in entries), reverse=True
        )
        for entry in entries:
            digest_name, tag = entry["names"]
            assert digest_name == f"{tag.rsplit(':', 1)[0]}@sha256:{_images.digest(tag)}"
            sizes[tag].add(entry["sizeBytes"])
    assert all(len(found) == 1 for found in sizes.values())
    # Application images are large enough for ImageLocality to tell nodes apart.
    assert max(size for (size,) in sizes.values()) > 200 * MiB


def test_the_kubelet_lists_the_largest_50_images() -> None:
    pulled = [f"registry.example.com/team/app-{i}:1" for i in range(60)]
    listed = _images.status_images(pulled)
    assert len(listed) == _images.NODE_STATUS_MAX_IMAGES
    smallest_kept = listed[-1]["sizeBytes"]
    left_out = set(pulled) - {e["names"][-1] for e in listed}
    assert all(_images.size_bytes(image) <= smallest_kept for image in left_out)


def test_the_converter_reads_the_generated_images() -> None:
    scenario = scenarios.builtin_scenario("small", now=NOW)
    state = cluster.cluster_state_from_objects(scenario.objects)
    raw = {o["metadata"]["name"]: o for o in scenario.objects if o["kind"] == "Node"}
    for node in state.nodes:
        assert [image.names[-1] for image in node.images] == _tags(raw[node.name])
    web = next(p for p in state.pods if p.owner is not None and p.owner.kind == "ReplicaSet")
    assert web.container_images
    assert all(":" in image for image in web.container_images)


def _node(name: str, images: list[str]) -> dict[str, Any]:
    node = scenarios.node_object(
        name=name,
        uid=f"uid-{name}",
        resource_version="1",
        created="2026-11-01T00:00:00Z",
        instance_type="general-8x32",
        zone="region-1a",
        pool="default",
        spec={},
        capacity={"cpu": "8", "memory": "32Gi", "pods": "110"},
        allocatable={"cpu": "8", "memory": "32Gi", "pods": "110"},
        conditions=scenarios.node_conditions(
            "2026-11-29T07:59:50Z", "2026-11-01T00:00:00Z", ready=True
        ),
        ip=f"172.16.0.{ord(name[-1])}",
    )
    node["status"]["images"] = _images.status_images([_images.PAUSE_IMAGE, *images])
    return node


WEB_IMAGE = "registry.example.com/shop/web:2.1.0"


def _filler(node: str, cpu: str) -> dict[str, Any]:
    """A running bare pod requesting `cpu`."""
    return raw_pod(
        f"filler-{node}",
        namespace="shop",
        uid=f"uid-filler-{node}",
        created="2026-11-28T00:00:00Z",
        node=node,
        image="registry.example.com/shop/filler:1",
        cpu=cpu,
        phase="Running",
        status={"conditions": [{"type": "Ready", "status": "True"}]},
    )


@contextlib.contextmanager
def _serving(*objects: dict[str, Any]) -> Iterator[sim.SimServer]:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}
    with sim_server(None, objects=[*objects, namespace]) as running:
        yield running


def _create(server: sim.SimServer, name: str, image: str) -> dict[str, Any]:
    pod = raw_pod(name, namespace="shop", image=image, cpu="500m")
    code, body = call(server, "POST", "/api/v1/namespaces/shop/pods", pod)
    assert code == 201, body
    return server.wait_for(
        lambda: (p := server.sim.get("pods", "shop", name)) and is_ready(p) and p
    )


@pytest.mark.parametrize("pulled", [True, False], ids=["node-c-has-the-image", "nobody-has-it"])
def test_the_scheduler_prefers_the_node_holding_the_image(pulled: bool) -> None:
    # node-c runs a pod of 200m that costs it 3 points of the resource scores; the
    # image (200 MiB on 1 node of 3: 66 MiB, 4 points) makes up for them.
    assert 199 * MiB < _images.size_bytes(WEB_IMAGE) < 200 * MiB
    node_c = _node("node-c", [WEB_IMAGE] if pulled else [])
    with _serving(
        _node("node-a", []), _node("node-b", []), node_c, _filler("node-c", "200m")
    ) as server:
        landed = _create(server, "web-1", WEB_IMAGE)["spec"]["nodeName"]
    assert landed == "node-c" if pulled else landed in ("node-a", "node-b")
