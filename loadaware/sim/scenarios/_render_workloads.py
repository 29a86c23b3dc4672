"""Rendering controllers: Deployments, ReplicaSets (with old revisions), StatefulSets,
DaemonSets and PodDisruptionBudgets, as `kubectl get -o json` prints them.
"""

from __future__ import annotations

import math
from typing import Any

from loadaware.sim.scenarios import _base, _catalogue, _fields


class WorkloadRendering(_base.GeneratorBase):
    """The controllers' and budgets' objects."""

    def _template_spec(self, x: _catalogue.Workload) -> dict[str, Any]:
        # Built afresh rather than deep-copied: deepcopy costs seconds at 5,000 nodes.
        spec = self._pod_spec_parts(x)
        spec.update(
            {
                "dnsPolicy": "ClusterFirst",
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "securityContext": {},
                "serviceAccountName": x.service_account,
                "terminationGracePeriodSeconds": 30,
            }
        )
        # Admission adds the not-ready/unreachable tolerations to pods, not to templates.
        spec["tolerations"] = [t for t in spec["tolerations"] if "tolerationSeconds" not in t]
        if not spec["tolerations"]:
            del spec["tolerations"]
        if x.priority_class:
            spec["priorityClassName"] = x.priority_class
        return spec

    def _meta(
        self, x: _catalogue.Workload, uid: str, created: str, labels: dict[str, str]
    ) -> dict[str, Any]:
        return {
            "name": x.name,
            "namespace": x.namespace,
            "uid": uid,
            "resourceVersion": self.next_rv(),
            "generation": 1,
            "creationTimestamp": created,
            "labels": dict(labels),
        }

    def _deployment(
        self,
        x: _catalogue.Workload,
        uid: str,
        created: str,
        labels: dict[str, str],
        template_spec: dict[str, Any],
        revision: str,
    ) -> dict[str, Any]:
        meta = self._meta(x, uid, created, labels)
        meta["generation"] = int(revision)
        meta["annotations"] = {"deployment.kubernetes.io/revision": revision}
        r = x.replicas
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta,
            "spec": {
                "replicas": r,
                "selector": {"matchLabels": dict(x.selector)},
                "template": {"metadata": {"labels": dict(labels)}, "spec": template_spec},
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                },
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
            },
            "status": {
                "observedGeneration": int(revision),
                "replicas": r,
                "updatedReplicas": r,
                "readyReplicas": r,
                "availableReplicas": r,
                "conditions": [
                    {
                        "type": "Available",
                        "status": "True",
                        "reason": "MinimumReplicasAvailable",
                        "message": "Deployment has minimum availability.",
                        "lastUpdateTime": created,
                        "lastTransitionTime": created,
                    },
                    {
                        "type": "Progressing",
                        "status": "True",
                        "reason": "NewReplicaSetAvailable",
                        "message": "ReplicaSet has successfully progressed.",
                        "lastUpdateTime": created,
                        "lastTransitionTime": created,
                    },
                ],
            },
        }

    def _replica_set(
        self,
        x: _catalogue.Workload,
        name: str,
        uid: str,
        deployment_uid: str,
        created: str,
        labels: dict[str, str],
        template_hash: str,
        template_spec: dict[str, Any],
        replicas: int,
        revision: str,
    ) -> dict[str, Any]:
        rs_labels = {**labels, "pod-template-hash": template_hash}
        meta = self._meta(x, uid, created, rs_labels)
        meta["name"] = name
        meta["annotations"] = {
            "deployment.kubernetes.io/desired-replicas": str(x.replicas),
            "deployment.kubernetes.io/max-replicas": str(x.replicas + math.ceil(x.replicas / 4)),
            "deployment.kubernetes.io/revision": revision,
        }
        ref = _fields.owner_reference("Deployment", x.name, deployment_uid)
        meta["ownerReferences"] = [ref]
        status: dict[str, Any] = {"replicas": replicas, "observedGeneration": 1}
        if replicas:
            status.update(
                fullyLabeledReplicas=replicas, readyReplicas=replicas, availableReplicas=replicas
            )
        return {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": meta,
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {**x.selector, "pod-template-hash": template_hash}},
                "template": {
                    "metadata": {"labels": dict(rs_labels)},
                    "spec": self._template_spec(x),
                },
            },
            "status": status,
        }

    def _stateful_set(
        self,
        x: _catalogue.Workload,
        uid: str,
        created: str,
        labels: dict[str, str],
        template_spec: dict[str, Any],
        revision_hash: str,
    ) -> dict[str, Any]:
        r = x.replicas
        return {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": self._meta(x, uid, created, labels),
            "spec": {
                "replicas": r,
                "serviceName": x.name,
                "podManagementPolicy": "OrderedReady",
                "selector": {"matchLabels": dict(x.selector)},
                "template": {"metadata": {"labels": dict(labels)}, "spec": template_spec},
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                "revisionHistoryLimit": 10,
                "volumeClaimTemplates": [
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": x.pvc_size}},
                            "storageClassName": "standard-rwo",
                            "volumeMode": "Filesystem",
                        },
                    }
                ],
            },
            "status": {
                "observedGeneration": 1,
                "replicas": r,
                "readyReplicas": r,
                "currentReplicas": r,
                "updatedReplicas": r,
                "availableReplicas": r,
                "currentRevision": revision_hash,
                "updateRevision": revision_hash,
                "collisionCount": 0,
            },
        }

    def _daemon_set(
        self,
        x: _catalogue.Workload,
        uid: str,
        created: str,
        labels: dict[str, str],
        template_spec: dict[str, Any],
    ) -> dict[str, Any]:
        desired = self.n
        ready = int(self.ready.sum())
        return {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": self._meta(x, uid, created, labels),
            "spec": {
                "selector": {"matchLabels": dict(x.selector)},
                "template": {"metadata": {"labels": dict(labels)}, "spec": template_spec},
                "updateStrategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
                },
                "revisionHistoryLimit": 10,
            },
            "status": {
                "observedGeneration": 1,
                "currentNumberScheduled": desired,
                "desiredNumberScheduled": desired,
                "numberMisscheduled": 0,
                "numberReady": ready,
                "numberAvailable": ready,
                **({"numberUnavailable": desired - ready} if desired > ready else {}),
                "updatedNumberScheduled": desired,
            },
        }

    def _pdb(self, x: _catalogue.Workload, created: str) -> dict[str, Any]:
        assert x.pdb is not None
        field_name, value = x.pdb
        expected = x.replicas
        # Every pod of a workload with a budget runs on a Ready node, so all are healthy.
        healthy = sum(1 for p in x.pod_indices if self.ready[self.pod_node[p]])
        if field_name == "minAvailable":
            desired = _fields.scaled(value, expected)
        else:
            desired = max(0, expected - _fields.scaled(value, expected))
        allowed = max(0, healthy - desired)
        return {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {
                "name": x.name,
                "namespace": x.namespace,
                "uid": self.uid(),
                "resourceVersion": self.next_rv(),
                "generation": 1,
                "creationTimestamp": created,
                "labels": {"team": x.team},
            },
            "spec": {field_name: value, "selector": {"matchLabels": dict(x.selector)}},
            "status": {
                "observedGeneration": 1,
                "currentHealthy": healthy,
                "desiredHealthy": desired,
                "expectedPods": expected,
                "disruptionsAllowed": allowed,
                "conditions": [
                    {
                        "type": "DisruptionAllowed",
                        "status": "True" if allowed else "False",
                        "reason": "SufficientPods" if allowed else "InsufficientPods",
                        "message": "",
                        "observedGeneration": 1,
                        "lastTransitionTime": created,
                    }
                ],
            },
        }
