"""Rendering nodes: v1 Node objects with their conditions, capacity, labels and pulled
images, and the `--metrics` document of nodes and pods.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import numpy as np

from loadaware.sim import _images
from loadaware.sim.scenarios import _base, _catalogue, _fields


class NodeRendering(_base.GeneratorBase):
    """The Node objects and the metrics document."""

    def node_objects(self) -> list[dict[str, Any]]:
        n = self.n
        images = self.node_images()
        uids = _fields.uids(self.rng, n)
        self.node_uid = uids
        created = _fields.timestamps(self.now, self.node_age)
        heartbeat = _fields.timestamps(self.now, self.rng.uniform(2, 30, size=n))
        self.metrics_age = self.rng.uniform(10, 40, size=n)
        self.node_ip = [
            f"172.{16 + (i >> 16)}.{(i >> 8) & 255}.{(i & 255) + 0}" for i in range(10, n + 10)
        ]
        objects = []
        for i in range(n):
            name = self.node_names[i]
            t = self.node_type[i]
            zone = self.zone_names[self.node_zone[i]]
            pool = self.node_pool[i]
            ready = bool(self.ready[i])
            taints: list[dict[str, Any]] = []
            if pool == "batch":
                taints.append({"key": "dedicated", "value": "batch", "effect": "NoSchedule"})
            if not self.schedulable[i]:
                taints.append(
                    {
                        "key": "node.kubernetes.io/unschedulable",
                        "effect": "NoSchedule",
                        "timeAdded": heartbeat[i],
                    }
                )
            if not ready:
                taints.append({"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"})
                taints.append(
                    {
                        "key": "node.kubernetes.io/not-ready",
                        "effect": "NoExecute",
                        "timeAdded": created[i],
                    }
                )
            spec: dict[str, Any] = {
                "podCIDR": f"10.{i >> 8}.{i & 255}.0/24",
                "podCIDRs": [f"10.{i >> 8}.{i & 255}.0/24"],
                "providerID": f"sim://{zone}/{name}",
            }
            if taints:
                spec["taints"] = taints
            if not self.schedulable[i]:
                spec["unschedulable"] = True
            capacity = {
                "cpu": str(t.cores),
                "ephemeral-storage": "101430960Ki",
                "memory": f"{int(self.capacity_memory_ki[i])}Ki",
                "pods": "110",
            }
            allocatable = {
                "cpu": _fields.cpu_quantity(int(self.alloc_cpu_m[i])),
                "ephemeral-storage": "93478772582",
                "memory": f"{int(self.alloc_memory_ki[i])}Ki",
                "pods": "110",
            }
            conditions = node_conditions(heartbeat[i], created[i], ready=ready)
            objects.append(
                node_object(
                    name=name,
                    uid=uids[i],
                    resource_version=self.next_rv(),
                    created=created[i],
                    instance_type=t.name,
                    zone=zone,
                    pool=pool,
                    spec=spec,
                    capacity=capacity,
                    allocatable=allocatable,
                    conditions=conditions,
                    ip=self.node_ip[i],
                )
            )
            objects[-1]["status"]["images"] = images[i]
        return objects

    def node_images(self) -> list[list[Mapping[str, Any]]]:
        """Each node's status.images: the images of the pods placed on it and the pause
        image (see _images.listed), one entry per image shared by the nodes."""
        pulled: list[set[str]] = [{_images.PAUSE_IMAGE} for _ in range(self.n)]
        pod_node = self.pod_node
        for x in self.workloads:
            names = self._images(x)
            for node in set(pod_node[x.pod_indices].tolist()):
                pulled[node].update(names)
        entries = {image: _images.entry(image) for image in set().union(*pulled)}
        return [_images.listed(entries[image] for image in images) for images in pulled]

    def metrics_document(self) -> dict[str, Any]:
        stamps = _fields.timestamps(self.now, self.metrics_age)
        node_cpu = self.node_usage_cpu.tolist()
        node_memory = self.node_usage_memory.astype(np.int64).tolist()
        nodes = {
            name: {"cpu": node_cpu[i], "memory": node_memory[i], "timestamp": stamps[i]}
            for i, name in enumerate(self.node_names)
        }
        pod_cpu = self.pod_usage_cpu.tolist()
        pod_memory = self.pod_usage_memory.astype(np.int64).tolist()
        pod_node = self.pod_node.tolist()
        # A pod's sample comes from the same kubelet scrape as its node's.
        pods = {
            key: {"cpu": pod_cpu[p], "memory": pod_memory[p], "timestamp": stamps[pod_node[p]]}
            for p, key in enumerate(self.pod_keys)
        }
        return {
            "collectedAt": self.now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "nodes": nodes,
            "pods": pods,
        }


def node_conditions(heartbeat: str, created: str, *, ready: bool) -> list[dict[str, Any]]:
    """A kubelet's node conditions: no pressure, and Ready, or NotReady as when its
    network plugin is down (the kubelet still runs, so metrics still arrive)."""
    conditions = [
        {
            "type": kind,
            "status": "False",
            "lastHeartbeatTime": heartbeat,
            "lastTransitionTime": created,
            "reason": reason,
            "message": message,
        }
        for kind, reason, message in (
            (
                "MemoryPressure",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        )
    ]
    if ready:
        conditions.append(
            {
                "type": "Ready",
                "status": "True",
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": created,
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
            }
        )
    else:
        conditions.append(
            {
                "type": "Ready",
                "status": "False",
                "lastHeartbeatTime": heartbeat,
                "lastTransitionTime": heartbeat,
                "reason": "KubeletNotReady",
                "message": "container runtime network not ready: NetworkReady=false "
                "reason:NetworkPluginNotReady message:Network plugin returns error: "
                "cni plugin not initialized",
            }
        )
    return conditions


def node_object(
    *,
    name: str,
    uid: str,
    resource_version: str,
    created: str,
    instance_type: str,
    zone: str,
    pool: str,
    spec: dict[str, Any],
    capacity: dict[str, str],
    allocatable: dict[str, str],
    conditions: list[dict[str, Any]],
    ip: str,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A Node as kube-apiserver returns it: the well-known labels (plus `labels`),
    the kubelet's annotations, addresses and node info."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": uid,
            "resourceVersion": resource_version,
            "creationTimestamp": created,
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/os": "linux",
                "kubernetes.io/hostname": name,
                "node.kubernetes.io/instance-type": instance_type,
                "topology.kubernetes.io/region": _catalogue.REGION,
                "topology.kubernetes.io/zone": zone,
                "pool": pool,
                **(labels or {}),
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": conditions,
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                # The kubelet always reports these; clients that check required
                # fields (the official Python client does) refuse a node without.
                "bootID": str(uuid.uuid5(uuid.NAMESPACE_OID, f"boot/{uid}")),
                "containerRuntimeVersion": "containerd://1.7.22",
                "kernelVersion": "6.1.0-26-amd64",
                "kubeProxyVersion": _catalogue.KUBE_VERSION,
                "kubeletVersion": _catalogue.KUBE_VERSION,
                "machineID": uuid.uuid5(uuid.NAMESPACE_OID, f"machine/{uid}").hex,
                "operatingSystem": "linux",
                "osImage": "Debian GNU/Linux 12 (bookworm)",
                "systemUUID": str(uuid.uuid5(uuid.NAMESPACE_OID, f"system/{uid}")),
            },
        },
    }
