"""loadaware.kube's writes give their connection back: an eviction, taint patches, a
cordon, a dry run and an event, one after another, go over the connection the first
request opened, as reads do, against the simulated API with the official client."""

from __future__ import annotations

import pathlib

from loadaware import evict, kube
from loadaware.kube import ClientSettings
from tests.lib.sim import sim_server


def test_writes_reuse_one_connection(tmp_path: pathlib.Path) -> None:
    with sim_server("small") as server:
        config = server.write_kubeconfig(tmp_path / "kubeconfig")
        client = evict.Kube(kube.api_client(ClientSettings(kubeconfig=str(config))))
        pod = next(
            p
            for node in client.list_nodes()
            for p in client.list_node_pods(node["metadata"]["name"])
            if p["metadata"].get("ownerReferences")
        )
        node, namespace = pod["spec"]["nodeName"], pod["metadata"]["namespace"]
        before = server.sim.watches.connections_accepted
        for _ in range(3):
            evict.add_hotspot_taint(client, node)
            evict.remove_hotspot_taint(client, node)
        client.evict_pod(
            namespace,
            pod["metadata"]["name"],
            uid=pod["metadata"]["uid"],
            grace_period_seconds=None,
            dry_run=True,
        )
        client.cordon_node(node)
        client.check_config_map_write(
            namespace, {"metadata": {"name": "probe", "namespace": namespace}}, create=True
        )
        client.create_event(
            namespace,
            {
                "metadata": {"generateName": "probe-", "namespace": namespace},
                "involvedObject": {"kind": "Node", "name": node},
                "reason": "Probe",
                "message": "probe",
                "type": "Normal",
            },
        )
        client.read_node(node)
        assert server.sim.watches.connections_accepted == before
