"""The writes a round makes at every eviction (a node's taints, the state ConfigMap),
sent by loadaware.kube through the client's REST layer, against the simulated API
with a bearer token.

Covered: the client's token goes with each write and a wrong one is
UnauthorizedError naming the server, never the token; a taint write with a stale
resourceVersion is ConflictError and changes nothing; a dry run changes nothing;
a missing node is NotFoundError; a ConfigMap is replaced whole, and a replacement
naming an old resourceVersion is ConflictError.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import kubernetes.client
import pytest
import yaml

from loadaware import errors, kube, sim
from loadaware.kube import ClientSettings, Kube, RawObject
from tests.lib.sim import sim_server

TOKEN = "s3cret-t0ken"
HOTSPOT = {"key": "loadaware.io/hotspot", "value": "true", "effect": "PreferNoSchedule"}


@pytest.fixture
def server() -> Iterator[sim.SimServer]:
    with sim_server("small", token=TOKEN) as running:
        yield running


def _client(
    server: sim.SimServer, path: pathlib.Path, token: str = TOKEN
) -> kubernetes.client.ApiClient:
    config = server.kubeconfig()
    config["users"][0]["user"]["token"] = token
    path.write_text(yaml.safe_dump(config))
    return kube.api_client(ClientSettings(kubeconfig=str(path)))


def _first_node(client: Kube) -> RawObject:
    return min(client.list_nodes(), key=lambda n: n["metadata"]["name"])


def test_a_taint_write_carries_the_token_and_sets_exactly_the_taints(
    server: sim.SimServer, tmp_path: pathlib.Path
) -> None:
    client = Kube(_client(server, tmp_path / "kubeconfig"))
    node = _first_node(client)
    name = node["metadata"]["name"]
    kept = list((node.get("spec") or {}).get("taints") or [])
    client.set_node_taints(name, [*kept, HOTSPOT], node["metadata"]["resourceVersion"])
    assert client.read_node(name)["spec"]["taints"] == [*kept, HOTSPOT]
    client.set_node_taints(name, kept, client.read_node(name)["metadata"]["resourceVersion"])
    assert (client.read_node(name)["spec"].get("taints") or []) == kept


def test_a_stale_version_conflicts_and_a_dry_run_changes_nothing(
    server: sim.SimServer, tmp_path: pathlib.Path
) -> None:
    client = Kube(_client(server, tmp_path / "kubeconfig"))
    node = _first_node(client)
    name, version = node["metadata"]["name"], node["metadata"]["resourceVersion"]
    client.set_node_taints(name, [HOTSPOT], version, dry_run=True)
    assert HOTSPOT not in (client.read_node(name)["spec"].get("taints") or [])
    client.set_node_taints(name, [HOTSPOT], version)
    with pytest.raises(errors.ConflictError):
        client.set_node_taints(name, [], version)
    assert HOTSPOT in client.read_node(name)["spec"]["taints"]
    with pytest.raises(errors.NotFoundError):
        client.set_node_taints("no-such-node", [], "1")


def test_a_wrong_token_is_unauthorized_and_never_quoted(
    server: sim.SimServer, tmp_path: pathlib.Path
) -> None:
    client = Kube(_client(server, tmp_path / "kubeconfig"))
    node = _first_node(client)
    name, version = node["metadata"]["name"], node["metadata"]["resourceVersion"]
    wrong = Kube(_client(server, tmp_path / "wrong", token="wr0ng-t0ken"))
    with pytest.raises(errors.UnauthorizedError) as caught:
        wrong.set_node_taints(name, [HOTSPOT], version)
    assert "wr0ng-t0ken" not in str(caught.value)
    assert TOKEN not in str(caught.value)
    assert f"{server.host}:{server.port}" in str(caught.value)
    assert client.read_node(name)["metadata"]["resourceVersion"] == version


def test_a_config_map_is_replaced_whole_and_a_stale_one_conflicts(
    server: sim.SimServer, tmp_path: pathlib.Path
) -> None:
    api = _client(server, tmp_path / "kubeconfig")
    created = kubernetes.client.CoreV1Api(api).create_namespaced_config_map(
        "default", {"metadata": {"name": "state"}, "data": {"a": "1", "b": "2"}}
    )
    stale = {"name": "state", "resourceVersion": created.metadata.resource_version}
    client = Kube(api)
    written = client.replace_config_map("default", {"metadata": stale, "data": {"a": "3"}})
    assert written["data"] == {"a": "3"}
    read = kubernetes.client.CoreV1Api(api).read_namespaced_config_map("state", "default")
    assert read.data == {"a": "3"}
    with pytest.raises(errors.ConflictError):
        client.replace_config_map("default", {"metadata": stale, "data": {"a": "4"}})
