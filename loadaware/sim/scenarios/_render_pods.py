"""Rendering pods: each workload's pod spec (containers, tolerations, volumes, affinity)
and the pod objects with their status, with their controllers and budgets.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loadaware.sim import _images
from loadaware.sim.scenarios import _base, _catalogue, _fields


class PodRendering(_base.GeneratorBase):
    """The pods' specs and the Pod objects, with their controllers."""

    def _tolerations(self, kind: str) -> list[dict[str, Any]]:
        # What admission adds to every pod, so that a node blip does not evict at once.
        defaults: list[dict[str, Any]] = [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ]
        match kind:
            case "batch":
                return [
                    {
                        "key": "dedicated",
                        "operator": "Equal",
                        "value": "batch",
                        "effect": "NoSchedule",
                    },
                    *defaults,
                ]
            case "critical":
                return [
                    {"key": "CriticalAddonsOnly", "operator": "Exists"},
                    {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
                    *defaults,
                ]
            case "all":
                # The DaemonSet controller's own tolerations, plus "everything" so agents run
                # on the tainted pool too.
                return [{"operator": "Exists"}] + [
                    {"key": f"node.kubernetes.io/{key}", "operator": "Exists", "effect": effect}
                    for key, effect in (
                        ("not-ready", "NoExecute"),
                        ("unreachable", "NoExecute"),
                        ("disk-pressure", "NoSchedule"),
                        ("memory-pressure", "NoSchedule"),
                        ("pid-pressure", "NoSchedule"),
                        ("unschedulable", "NoSchedule"),
                    )
                ]
        return defaults

    def _images(self, x: _catalogue.Workload) -> tuple[str, ...]:
        """The images of the workload's containers, the sidecar's after the main one's."""
        main = (
            x.image
            or f"registry.example.com/{x.team}/{x.name}:1.{len(x.name) % 9}.{len(x.namespace)}"
        )
        return (main, _catalogue.PROXY_IMAGE) if x.sidecar else (main,)

    def _containers(self, x: _catalogue.Workload) -> list[dict[str, Any]]:
        image = self._images(x)[0]
        resources: dict[str, Any] = {
            "requests": {
                "cpu": _fields.cpu_quantity(x.main_cpu_m),
                "memory": _fields.memory_quantity(x.main_memory_b),
            }
        }
        if x.limits == "guaranteed":
            resources["limits"] = dict(resources["requests"])
        elif x.limits == "burst":
            resources["limits"] = {
                "cpu": _fields.cpu_quantity(2 * x.main_cpu_m),
                "memory": _fields.memory_quantity(x.main_memory_b * 3 // 2),
            }
        mounts: list[dict[str, Any]] = []
        if x.empty_dir:
            mounts.append({"name": "scratch", "mountPath": "/tmp/scratch"})
        if x.pvc_size:
            mounts.append({"name": "data", "mountPath": "/var/lib/data"})
        mounts += [{"name": v, "mountPath": f"/host{p}", "readOnly": True} for v, p in x.host_paths]
        main: dict[str, Any] = {
            "name": x.name,
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "resources": resources,
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }
        if mounts:
            main["volumeMounts"] = mounts
        if x.kind != "DaemonSet":
            main["ports"] = [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
        containers = [main]
        if x.sidecar:
            side_resources: dict[str, Any] = {"requests": {"cpu": "50m", "memory": "64Mi"}}
            if x.limits == "guaranteed":
                side_resources["limits"] = {"cpu": "50m", "memory": "64Mi"}
            elif x.limits == "burst":
                side_resources["limits"] = {"cpu": "100m", "memory": "128Mi"}
            containers.append(
                {
                    "name": "proxy",
                    "image": _catalogue.PROXY_IMAGE,
                    "imagePullPolicy": "IfNotPresent",
                    "resources": side_resources,
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }
            )
        return containers

    def _pod_spec_parts(self, x: _catalogue.Workload) -> dict[str, Any]:
        """The parts of a pod spec its siblings share (see the module docstring)."""
        parts: dict[str, Any] = {
            "containers": self._containers(x),
            "tolerations": self._tolerations(x.tolerations),
        }
        volumes: list[dict[str, Any]] = []
        if x.empty_dir:
            volumes.append({"name": "scratch", "emptyDir": {}})
        for v, p in x.host_paths:
            volumes.append({"name": v, "hostPath": {"path": p, "type": ""}})
        if volumes:
            parts["volumes"] = volumes
        if x.pool == "batch":
            parts["nodeSelector"] = {"pool": "batch"}
        if x.anti_affinity:
            key = (
                "kubernetes.io/hostname"
                if x.anti_affinity == "hostname"
                else "topology.kubernetes.io/zone"
            )
            parts["affinity"] = {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": x.selector}, "topologyKey": key}
                    ]
                }
            }
        return parts

    def workload_and_pod_objects(self) -> list[dict[str, Any]]:
        rng = self.rng
        count = len(self.pod_workload)
        pod_uids = _fields.uids(rng, count)
        suffixes = _fields.safe_strings(rng, count, 5)
        created = _fields.timestamps(self.now, self.pod_age)
        ready_at = _fields.timestamps(self.now, self.ready_age)
        restarts = self.restarts.tolist()
        pod_node = self.pod_node.tolist()
        n_containers = sum(
            2 if self.workloads[w].sidecar else 1 for w in self.pod_workload.tolist()
        )
        container_ids = iter(_fields.hex_ids(rng, n_containers))
        ip_next = [2] * self.n
        node_ready = self.ready.tolist()
        pod_age = self.pod_age

        controllers: list[dict[str, Any]] = []
        pods: list[dict[str, Any]] = []
        pdbs: list[dict[str, Any]] = []
        self.pod_keys: list[str] = [""] * count
        for x in self.workloads:
            idx = x.pod_indices
            uid = self.uid()
            oldest_pod = float(pod_age[idx].max()) if idx else float(rng.uniform(86400, 864000))
            own_age = oldest_pod + float(rng.uniform(5, 60))
            parent_age = own_age + float(rng.uniform(0, 30 * 86400)) * (x.old_revisions > 0)
            own_created, parent_created = _fields.timestamps(
                self.now, np.array([own_age, parent_age])
            )
            parts = self._pod_spec_parts(x)
            template_hash = self.name_hash()
            labels = {**x.selector, "team": x.team}
            template_spec = self._template_spec(x)
            ns, name = x.namespace, x.name
            owner_ref: dict[str, Any] | None = None
            generate_name = ""
            extra_labels: dict[str, str] = {}
            if x.kind == "Deployment":
                rs_name = f"{name}-{template_hash}"
                rs_uid = self.uid()
                revision = str(1 + x.old_revisions)
                controllers.append(
                    self._deployment(x, uid, parent_created, labels, template_spec, revision)
                )
                for old in range(x.old_revisions):
                    old_hash = self.name_hash()
                    controllers.append(
                        self._replica_set(
                            x,
                            f"{name}-{old_hash}",
                            self.uid(),
                            uid,
                            parent_created,
                            labels,
                            old_hash,
                            template_spec,
                            0,
                            str(old + 1),
                        )
                    )
                controllers.append(
                    self._replica_set(
                        x,
                        rs_name,
                        rs_uid,
                        uid,
                        own_created,
                        labels,
                        template_hash,
                        template_spec,
                        x.replicas,
                        revision,
                    )
                )
                owner_ref = _fields.owner_reference("ReplicaSet", rs_name, rs_uid)
                generate_name = f"{rs_name}-"
                extra_labels = {"pod-template-hash": template_hash}
            elif x.kind == "StatefulSet":
                revision_hash = f"{name}-{template_hash}"
                controllers.append(
                    self._stateful_set(x, uid, own_created, labels, template_spec, revision_hash)
                )
                owner_ref = _fields.owner_reference("StatefulSet", name, uid)
                generate_name = f"{name}-"
                extra_labels = {"controller-revision-hash": revision_hash}
            elif x.kind == "DaemonSet":
                revision_hash = template_hash[:9]
                controllers.append(self._daemon_set(x, uid, own_created, labels, template_spec))
                owner_ref = _fields.owner_reference("DaemonSet", name, uid)
                generate_name = f"{name}-"
                extra_labels = {
                    "controller-revision-hash": revision_hash,
                    "pod-template-generation": "1",
                }
            if x.pdb is not None:
                pdbs.append(self._pdb(x, own_created))
            pod_labels = {**labels, **extra_labels}
            qos_class = _fields.qos_class(x.limits)
            images = [
                (c["name"], c["image"], f"{c['image']}@sha256:{_images.digest(c['image'])}")
                for c in parts["containers"]
            ]

            used_names: set[str] = set()
            for ordinal, p in enumerate(idx):
                node = pod_node[p]
                node_name = self.node_names[node]
                if x.kind in ("Deployment", "DaemonSet"):
                    pod_name = _fields.unique_name(generate_name, suffixes[p], p, used_names)
                elif x.kind == "StatefulSet":
                    pod_name = f"{name}-{ordinal}"
                else:
                    pod_name = name
                meta: dict[str, Any] = {
                    "name": pod_name,
                    "namespace": ns,
                    "uid": pod_uids[p],
                    "resourceVersion": self.next_rv(),
                    "creationTimestamp": created[p],
                    "labels": dict(pod_labels),
                }
                if owner_ref is not None:
                    meta["generateName"] = generate_name
                    meta["ownerReferences"] = [dict(owner_ref)]
                spec: dict[str, Any] = {
                    "containers": parts["containers"],
                    "dnsPolicy": "ClusterFirst",
                    "enableServiceLinks": True,
                    "nodeName": node_name,
                    "preemptionPolicy": "PreemptLowerPriority",
                    "priority": x.priority,
                    "restartPolicy": "Always",
                    "schedulerName": "default-scheduler",
                    "securityContext": {},
                    "serviceAccountName": x.service_account,
                    "terminationGracePeriodSeconds": 30,
                    "tolerations": parts["tolerations"],
                }
                if x.priority_class:
                    spec["priorityClassName"] = x.priority_class
                if "volumes" in parts:
                    spec["volumes"] = parts["volumes"]
                if "nodeSelector" in parts:
                    spec["nodeSelector"] = parts["nodeSelector"]
                if "affinity" in parts:
                    spec["affinity"] = parts["affinity"]
                if x.kind == "StatefulSet":
                    meta["labels"]["statefulset.kubernetes.io/pod-name"] = pod_name
                    meta["labels"]["apps.kubernetes.io/pod-index"] = str(ordinal)
                    spec["hostname"] = pod_name
                    spec["subdomain"] = name
                    spec["volumes"] = [
                        {"name": "data", "persistentVolumeClaim": {"claimName": f"data-{pod_name}"}}
                    ]
                elif x.kind == "DaemonSet":
                    spec["affinity"] = _fields.pinned_to(node_name)
                ready = node_ready[node]
                ready_status = "True" if ready else "False"
                statuses = []
                for c_i, (c_name, image, image_id) in enumerate(images):
                    statuses.append(
                        {
                            "name": c_name,
                            "image": image,
                            "imageID": image_id,
                            "containerID": f"containerd://{next(container_ids)}",
                            "ready": ready,
                            "started": True,
                            "restartCount": restarts[p] if c_i == 0 else 0,
                            "state": {"running": {"startedAt": ready_at[p]}},
                        }
                    )
                ip = f"10.{node >> 8}.{node & 255}.{ip_next[node]}"
                ip_next[node] += 1
                pods.append(
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": meta,
                        "spec": spec,
                        "status": {
                            "phase": "Running",
                            "conditions": [
                                {
                                    "type": "Initialized",
                                    "status": "True",
                                    "lastTransitionTime": created[p],
                                },
                                {
                                    "type": "Ready",
                                    "status": ready_status,
                                    "lastTransitionTime": ready_at[p],
                                },
                                {
                                    "type": "ContainersReady",
                                    "status": ready_status,
                                    "lastTransitionTime": ready_at[p],
                                },
                                {
                                    "type": "PodScheduled",
                                    "status": "True",
                                    "lastTransitionTime": created[p],
                                },
                            ],
                            "hostIP": self.node_ip[node],
                            "podIP": ip,
                            "podIPs": [{"ip": ip}],
                            "startTime": created[p],
                            "qosClass": qos_class,
                            "containerStatuses": statuses,
                        },
                    }
                )
                self.pod_keys[p] = f"{ns}/{pod_name}"
        return controllers + pdbs + pods
