"""A simulated cluster from a partial dump (`kubectl get nodes,pods,pdb -A -o yaml`):
no ReplicaSets, Deployments, StatefulSets, DaemonSets or Jobs, only the pods'
ownerReferences to them.

Covered: each missing owner inferred under the uid its pods name (so they stay
its pods), with replicas, selector and template from them and a message per
decision; a Deployment above a ReplicaSet named `<deployment>-<pod-template-hash>`,
linked when the file has it, not inferred for two ReplicaSets or without the
hash; a reference without a uid; owners of kinds without a controller; a
DaemonSet whose pods miss nodes; an owner in the file left alone; an evicted
pod replaced and bound (ReplicaSet), its ordinal back with its claim
(StatefulSet), back on its node (DaemonSet), a Job's pod replaced and counted
failed; running pods without containerStatuses Ready as their condition says;
and with the real kubectl, against the in-process server and `loadaware sim
serve --cluster`: the inference announced, an eviction (create --raw) followed
by a bound, Ready replacement, Ready pods printed as 1/1; and `loadaware run
--once` on a partial dump seeing every replacement Ready.
"""

from __future__ import annotations

import collections
import copy
import datetime
import json
import os
import pathlib
import queue
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import yaml

from loadaware import cli, sim
from loadaware.sim import _infer, _selectors
from tests.lib.sim import KUBECTL, NOW, is_ready, kubectl, sim_server
from tests.lib.wait import poll

_PARTIAL_KINDS = ("Node", "Pod", "PodDisruptionBudget")
_JOB_TRACKING = "batch.kubernetes.io/job-tracking"

needs_kubectl = pytest.mark.skipif(not pathlib.Path(KUBECTL).exists(), reason="no kubectl")


# --- builders ---


def partial_dump(
    name: str = "small", now: datetime.datetime = NOW
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """A scenario as `kubectl get nodes,pods,pdb -A` would dump it, and its metrics."""
    scenario = sim.builtin_scenario(name, now=now)
    objects = [copy.deepcopy(o) for o in scenario.objects if o["kind"] in _PARTIAL_KINDS]
    return objects, scenario.metrics


def cluster_of(objects: list[dict[str, Any]], metrics: Mapping[str, Any]) -> sim.SimCluster:
    cluster = sim.build_cluster(
        objects=objects, metrics=metrics, clock=sim.SimClock(NOW, speed=0.0), ready_delay=0.0
    )
    cluster.reconcile()
    return cluster


def owner_of(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    return next(r for r in pod["metadata"]["ownerReferences"] if r.get("controller"))


def pods_by_owner(objects: list[dict[str, Any]], kind: str) -> dict[tuple[str, str, str], list]:
    """(namespace, name, uid) of each owner of that kind -> its pods."""
    found: dict[tuple[str, str, str], list[dict[str, Any]]] = collections.defaultdict(list)
    for obj in objects:
        if obj["kind"] == "Pod" and obj["metadata"].get("ownerReferences"):
            ref = owner_of(obj)
            if ref["kind"] == kind:
                found[(obj["metadata"]["namespace"], ref["name"], ref["uid"])].append(obj)
    return found


def geo_renderer(objects: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """An unprotected ReplicaSet of the scenario (no PDB): its name and pods."""
    (_, name, _), pods = next(
        (key, pods)
        for key, pods in pods_by_owner(objects, "ReplicaSet").items()
        if key[0] == "shop" and key[1].startswith("geo-renderer-")
    )
    return name, pods


def job_pod(name: str, job: str, job_uid: str, node: str) -> dict[str, Any]:
    """A running Job pod as a dump holds it (tracking finalizer, no containerStatuses)."""
    labels = {
        "batch.kubernetes.io/controller-uid": job_uid,
        "batch.kubernetes.io/job-name": job,
        "controller-uid": job_uid,
        "job-name": job,
    }
    started = "2026-11-29T07:50:00Z"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "shop",
            "uid": str(uuid.uuid4()),
            "creationTimestamp": started,
            "generateName": f"{job}-",
            "labels": labels,
            "finalizers": [_JOB_TRACKING],
            "ownerReferences": [
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": job,
                    "uid": job_uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "containers": [
                {
                    "name": "report",
                    "image": "registry.example.com/shop/report:1.0.0",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
                }
            ],
            "restartPolicy": "Never",
            "nodeName": node,
        },
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": started}],
            "startTime": started,
        },
    }


def without_container_statuses(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for obj in objects:
        if obj["kind"] == "Pod":
            obj["status"].pop("containerStatuses", None)
    return objects


def messages(cluster: sim.SimCluster) -> list[str]:
    return [n.message for n in cluster.inferred]


# --- what is inferred ---


@pytest.mark.parametrize("kind", ["ReplicaSet", "StatefulSet", "DaemonSet"])
def test_each_missing_owner_is_inferred_under_the_uid_its_pods_name(kind: str) -> None:
    objects, metrics = partial_dump()
    owners = pods_by_owner(objects, kind)
    assert owners
    cluster = cluster_of(objects, metrics)
    plural = {"ReplicaSet": "replicasets", "StatefulSet": "statefulsets"}.get(kind, "daemonsets")
    for (namespace, name, uid), pods in owners.items():
        owner = cluster.get(plural, namespace, name, group="apps")
        assert owner["metadata"]["uid"] == uid
        assert owner["metadata"]["annotations"][_infer.INFERRED_ANNOTATION]
        if kind != "DaemonSet":
            assert owner["spec"]["replicas"] == len(pods)
        template = owner["spec"]["template"]
        assert "nodeName" not in template["spec"]
        for pod in pods:
            labels = pod["metadata"]["labels"]
            assert _selectors.label_selector_matches(owner["spec"]["selector"], labels)
            assert _selectors.label_selector_matches(
                {"matchLabels": template["metadata"]["labels"]}, labels
            )
        if kind == "DaemonSet":
            scale = f"{len(pods)} pod{'s' if len(pods) != 1 else ''}, one per node"
        else:
            scale = f"{len(pods)} replica{'s' if len(pods) != 1 else ''}"
        ending = "1 pod's" if len(pods) == 1 else f"{len(pods)} pods'"
        assert (
            f"inferred {kind} {namespace}/{name} ({scale}) from {ending} ownerReferences"
            in messages(cluster)
        )
    if kind == "ReplicaSet":
        rs_name, pods = geo_renderer(objects)
        rs = cluster.get("replicasets", "shop", rs_name, group="apps")
        template_hash = pods[0]["metadata"]["labels"]["pod-template-hash"]
        assert rs["spec"]["selector"]["matchLabels"]["pod-template-hash"] == template_hash
    if kind == "StatefulSet":
        postgres = cluster.get("statefulsets", "data", "postgres", group="apps")
        assert postgres["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
        assert "volumes" not in postgres["spec"]["template"]["spec"]
        assert "hostname" not in postgres["spec"]["template"]["spec"]
    if kind == "DaemonSet":
        for (namespace, name, _), _pods in owners.items():
            spec = cluster.get("daemonsets", namespace, name, group="apps")["spec"]
            assert "affinity" not in spec["template"]["spec"]


def test_deployment_inferred_from_the_replicaset_name_and_pod_template_hash() -> None:
    objects, metrics = partial_dump()
    rs_name, pods = geo_renderer(objects)
    cluster = cluster_of(objects, metrics)
    deployment = cluster.get("deployments", "shop", "geo-renderer", group="apps")
    rs = cluster.get("replicasets", "shop", rs_name, group="apps")
    assert owner_of(rs) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "geo-renderer",
        "uid": deployment["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert deployment["spec"]["replicas"] == len(pods)
    assert "pod-template-hash" not in deployment["spec"]["selector"]["matchLabels"]
    assert "pod-template-hash" not in deployment["spec"]["template"]["metadata"]["labels"]
    assert (
        f"inferred Deployment shop/geo-renderer ({len(pods)} replicas) from ReplicaSet "
        f"{rs_name}'s name and its pods' pod-template-hash" in messages(cluster)
    )


def test_a_deployment_in_the_file_is_linked_not_inferred() -> None:
    scenario = sim.builtin_scenario("small", now=NOW)
    objects, metrics = partial_dump()
    deployment = next(
        o
        for o in scenario.objects
        if o["kind"] == "Deployment" and o["metadata"]["name"] == "geo-renderer"
    )
    rs_name, _ = geo_renderer(objects)
    cluster = cluster_of([*objects, deployment], metrics)
    rs = cluster.get("replicasets", "shop", rs_name, group="apps")
    assert owner_of(rs)["uid"] == deployment["metadata"]["uid"]
    assert (
        f"linked ReplicaSet shop/{rs_name} to Deployment shop/geo-renderer from the file, by "
        f"ReplicaSet {rs_name}'s name and its pods' pod-template-hash" in messages(cluster)
    )


def test_no_deployment_for_two_replicasets_of_one() -> None:
    objects, metrics = partial_dump()
    rs_name, pods = geo_renderer(objects)
    other_uid = str(uuid.uuid4())
    # An older ReplicaSet of the same Deployment, still running a pod mid-rollout.
    old = copy.deepcopy(pods[0])
    old["metadata"].update(name="geo-renderer-bbbbbbbbbb-x1x2x", uid=str(uuid.uuid4()))
    old["metadata"]["labels"]["pod-template-hash"] = "bbbbbbbbbb"
    old["metadata"]["ownerReferences"][0].update(name="geo-renderer-bbbbbbbbbb", uid=other_uid)
    cluster = cluster_of([*objects, old], metrics)
    assert cluster.find("deployments", "shop", "geo-renderer", group="apps") is None
    for name in (rs_name, "geo-renderer-bbbbbbbbbb"):
        assert (
            "ownerReferences"
            not in cluster.get("replicasets", "shop", name, group="apps")["metadata"]
        )
    assert (
        "Deployment shop/geo-renderer not inferred: pods of 2 ReplicaSets "
        f"({', '.join(sorted([rs_name, 'geo-renderer-bbbbbbbbbb']))}) would belong to it, and "
        "the simulator models "
        "one ReplicaSet per Deployment" in messages(cluster)
    )


def test_no_deployment_without_a_pod_template_hash() -> None:
    objects, metrics = partial_dump()
    rs_name, pods = geo_renderer(objects)
    for pod in pods:
        del pod["metadata"]["labels"]["pod-template-hash"]
    cluster = cluster_of(objects, metrics)
    assert cluster.find("deployments", "shop", "geo-renderer", group="apps") is None
    assert cluster.get("replicasets", "shop", rs_name, group="apps")["spec"]["replicas"] == len(
        pods
    )
    assert (
        f"no Deployment inferred for ReplicaSet shop/{rs_name}: its name does not end with "
        "its pods' pod-template-hash" in messages(cluster)
    )


def test_a_reference_without_uid_is_given_the_inferred_one() -> None:
    objects, metrics = partial_dump()
    rs_name, pods = geo_renderer(objects)
    for pod in pods:
        del pod["metadata"]["ownerReferences"][0]["uid"]
    cluster = cluster_of(objects, metrics)
    uid = cluster.get("replicasets", "shop", rs_name, group="apps")["metadata"]["uid"]
    for pod in pods:
        stored = cluster.get("pods", "shop", pod["metadata"]["name"])
        assert owner_of(stored)["uid"] == uid
    # Owned, so nothing is created to make up the replicas.
    assert len([p for p in cluster.list("pods", "shop") if owner_of(p)["uid"] == uid]) == len(pods)


def test_an_owner_kind_without_a_controller_is_reported() -> None:
    objects, metrics = partial_dump()
    _, pods = geo_renderer(objects)
    for pod in pods:
        pod["metadata"]["ownerReferences"][0].update(
            apiVersion="argoproj.io/v1alpha1", kind="Rollout", name="geo-renderer"
        )
    cluster = cluster_of(objects, metrics)
    assert (
        f"Rollout shop/geo-renderer not inferred: the simulator has no controller for it, so "
        f"its {len(pods)} pods will not be replaced" in messages(cluster)
    )


def test_a_daemonset_whose_pods_miss_nodes_is_not_inferred() -> None:
    objects, metrics = partial_dump()
    (namespace, name, _), pods = next(iter(pods_by_owner(objects, "DaemonSet").items()))
    missing = pods[0]
    objects.remove(missing)
    cluster = cluster_of(objects, metrics)
    assert cluster.find("daemonsets", namespace, name, group="apps") is None
    assert not any(
        p["spec"].get("nodeName") == missing["spec"]["nodeName"] and owner_of(p)["name"] == name
        for p in cluster.list("pods", namespace)
    )
    assert any(
        m.startswith(f"DaemonSet {namespace}/{name} not inferred: its pods run on ")
        and missing["spec"]["nodeName"] in m
        for m in messages(cluster)
    )


def test_owners_in_the_file_are_not_inferred() -> None:
    scenario = sim.builtin_scenario("small", now=NOW)
    cluster = sim.build_cluster(objects=scenario.objects, metrics=scenario.metrics, now=NOW)
    assert cluster.inferred == []


# --- the controllers on inferred owners ---


def test_an_evicted_replicaset_pod_is_replaced_and_bound() -> None:
    objects, metrics = partial_dump()
    rs_name, pods = geo_renderer(objects)
    uid = owner_of(pods[0])["uid"]
    cluster = cluster_of(objects, metrics)
    victim = pods[0]["metadata"]["name"]
    cluster.evict("shop", victim)
    cluster.reconcile()
    owned = [p for p in cluster.list("pods", "shop") if owner_of(p)["uid"] == uid]
    fresh = [p for p in owned if p["metadata"]["name"] not in {q["metadata"]["name"] for q in pods}]
    assert len(fresh) == 1
    assert fresh[0]["metadata"]["name"].startswith(f"{rs_name}-")
    assert fresh[0]["spec"]["nodeName"]
    assert is_ready(fresh[0])
    cluster.advance(31)
    assert cluster.find("pods", "shop", victim) is None
    rs = cluster.get("replicasets", "shop", rs_name, group="apps")
    assert rs["status"]["readyReplicas"] == len(pods)
    deployment = cluster.get("deployments", "shop", "geo-renderer", group="apps")
    assert deployment["spec"]["replicas"] == len(pods)
    # The Deployment controller took the inferred ReplicaSet for its own: no second one.
    shop = [key for key in pods_by_owner(objects, "ReplicaSet") if key[0] == "shop"]
    assert len(cluster.list("replicasets", "shop", group="apps")) == len(shop)


def test_an_evicted_statefulset_pod_comes_back_with_its_claim() -> None:
    objects, metrics = partial_dump()
    cluster = cluster_of(objects, metrics)
    before = cluster.get("pods", "data", "postgres-1")
    cluster.evict("data", "postgres-1")
    cluster.advance(31)
    after = cluster.get("pods", "data", "postgres-1")
    assert after["metadata"]["uid"] != before["metadata"]["uid"]
    assert owner_of(after)["uid"] == owner_of(before)["uid"]
    assert after["spec"]["hostname"] == "postgres-1"
    claims = [v["persistentVolumeClaim"]["claimName"] for v in after["spec"]["volumes"]]
    assert claims == ["data-postgres-1"]
    assert after["spec"]["nodeName"]
    assert is_ready(after)


def test_an_evicted_daemonset_pod_comes_back_on_its_node() -> None:
    objects, metrics = partial_dump()
    (namespace, _, uid), pods = next(iter(pods_by_owner(objects, "DaemonSet").items()))
    victim = pods[0]
    cluster = cluster_of(objects, metrics)
    cluster.evict(namespace, victim["metadata"]["name"])
    cluster.advance(31)
    on_node = [
        p
        for p in cluster.list("pods", namespace)
        if owner_of(p)["uid"] == uid and p["spec"].get("nodeName") == victim["spec"]["nodeName"]
    ]
    assert len(on_node) == 1
    assert on_node[0]["metadata"]["name"] != victim["metadata"]["name"]
    assert len([p for p in cluster.list("pods", namespace) if owner_of(p)["uid"] == uid]) == len(
        pods
    )


def test_an_evicted_job_pod_is_replaced_and_counted_failed() -> None:
    objects, metrics = partial_dump()
    node = next(o for o in objects if o["kind"] == "Node")["metadata"]["name"]
    job_uid = str(uuid.uuid4())
    objects.append(job_pod("report-29001-abcde", "report-29001", job_uid, node))
    cluster = cluster_of(objects, metrics)
    job = cluster.get("jobs", "shop", "report-29001", group="batch")
    assert job["metadata"]["uid"] == job_uid
    assert (job["spec"]["parallelism"], job["spec"]["completions"]) == (1, 1)
    assert job["spec"]["template"]["metadata"]["labels"]["job-name"] == "report-29001"
    assert (
        "inferred Job shop/report-29001 (parallelism 1, completions 1) from 1 pod's "
        "ownerReferences" in messages(cluster)
    )
    cluster.evict("shop", "report-29001-abcde")
    cluster.reconcile()
    # Counted as it ends: the finalizer goes, so the kubelet can finish it.
    assert not cluster.get("pods", "shop", "report-29001-abcde")["metadata"].get("finalizers")
    cluster.advance(31)
    assert cluster.find("pods", "shop", "report-29001-abcde") is None
    owned = [p for p in cluster.list("pods", "shop") if owner_of(p)["uid"] == job_uid]
    assert len(owned) == 1
    assert owned[0]["metadata"]["finalizers"] == [_JOB_TRACKING]
    assert owned[0]["spec"]["nodeName"]
    assert is_ready(owned[0])
    status = cluster.get("jobs", "shop", "report-29001", group="batch")["status"]
    assert (status["active"], status["failed"]) == (1, 1)


def test_running_pods_without_container_statuses_are_ready_as_their_condition() -> None:
    objects, metrics = partial_dump()
    without_container_statuses(objects)
    _, pods = geo_renderer(objects)
    pods[0]["status"]["conditions"] = [
        {**c, "status": "False"} if c["type"] in ("Ready", "ContainersReady") else c
        for c in pods[0]["status"]["conditions"]
    ]
    cluster = sim.build_cluster(
        objects=objects, metrics=metrics, clock=sim.SimClock(NOW, speed=0.0), ready_delay=0.0
    )
    statuses = {
        p["metadata"]["name"]: p["status"]["containerStatuses"]
        for p in cluster.list("pods", "shop")
    }
    assert all(s["ready"] for s in statuses[pods[1]["metadata"]["name"]])
    assert not any(s["ready"] for s in statuses[pods[0]["metadata"]["name"]])
    # The kubelet model makes the not-Ready one Ready, containers too.
    cluster.reconcile()
    pod = cluster.get("pods", "shop", pods[0]["metadata"]["name"])
    assert is_ready(pod)
    assert all(s["ready"] for s in pod["status"]["containerStatuses"])
    assert len(pod["status"]["containerStatuses"]) == len(pod["spec"]["containers"])


# --- with kubectl ---


@pytest.fixture
def served_partial(tmp_path: pathlib.Path) -> Iterator[tuple[sim.SimServer, pathlib.Path]]:
    objects, metrics = partial_dump()
    without_container_statuses(objects)
    with sim_server(None, objects=objects, metrics=metrics) as server:
        yield server, server.write_kubeconfig(tmp_path / "kubeconfig")


def ready_columns(output: str) -> list[tuple[str, str]]:
    """(READY, STATUS) of each row of `kubectl get pods`."""
    lines = output.splitlines()
    header = lines[0].split()
    ready, status = header.index("READY"), header.index("STATUS")
    return [(line.split()[ready], line.split()[status]) for line in lines[1:] if line.strip()]


def all_ready(rows: list[tuple[str, str]]) -> bool:
    """Every pod Running with all its containers ready (1/1, 2/2)."""
    return all(
        status == "Running" and ready.split("/")[0] == ready.split("/")[1] != "0"
        for ready, status in rows
    )


def evict_with_kubectl(config: pathlib.Path, tmp_path: pathlib.Path, pod: str) -> None:
    body = tmp_path / "eviction.json"
    body.write_text(
        json.dumps(
            {
                "apiVersion": "policy/v1",
                "kind": "Eviction",
                "metadata": {"name": pod, "namespace": "shop"},
            }
        )
    )
    result = kubectl(
        config, "create", "--raw", f"/api/v1/namespaces/shop/pods/{pod}/eviction", "-f", str(body)
    )
    assert json.loads(result.stdout)["status"] == "Success"


def replacement(
    config: pathlib.Path, owner_uid: str, known: set[str], *, timeout: float = 20.0
) -> dict[str, Any]:
    """Poll kubectl until a new pod of the owner is bound and Ready."""

    def ready_replacement() -> dict[str, Any] | None:
        items = json.loads(kubectl(config, "get", "pods", "-n", "shop", "-o", "json").stdout)
        return next(
            (
                pod
                for pod in items["items"]
                if pod["metadata"]["name"] not in known
                and owner_of(pod)["uid"] == owner_uid
                and pod["spec"].get("nodeName")
                and is_ready(pod)
            ),
            None,
        )

    return poll(ready_replacement, "a Ready replacement", timeout, interval=0.2)


@needs_kubectl
def test_kubectl_eviction_on_a_partial_dump_is_replaced(
    served_partial: tuple[sim.SimServer, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    server, config = served_partial
    objects, _ = partial_dump()
    rs_name, pods = geo_renderer(objects)
    rows = ready_columns(kubectl(config, "get", "pods", "-A").stdout)
    assert len(rows) == len([o for o in objects if o["kind"] == "Pod"])
    assert all_ready(rows)
    out = kubectl(config, "get", "rs,deploy", "-n", "shop").stdout
    assert f"replicaset.apps/{rs_name}" in out
    assert "deployment.apps/geo-renderer" in out
    victim = pods[0]["metadata"]["name"]
    evict_with_kubectl(config, tmp_path, victim)
    new = replacement(config, owner_of(pods[0])["uid"], {p["metadata"]["name"] for p in pods})
    row = kubectl(config, "get", "pod", "-n", "shop", new["metadata"]["name"]).stdout
    assert ready_columns(row) == [("1/1", "Running")]
    described = kubectl(config, "describe", "pod", "-n", "shop", new["metadata"]["name"]).stdout
    assert f"Controlled By:  ReplicaSet/{rs_name}" in described
    assert server.sim.get("pods", "shop", victim)["metadata"]["deletionTimestamp"]


def _clean_environment() -> dict[str, str]:
    return {
        k: v for k, v in os.environ.items() if k != "KUBECONFIG" and not k.startswith("LOADAWARE_")
    }


@needs_kubectl
def test_sim_serve_on_a_partial_dump_announces_and_replaces(tmp_path: pathlib.Path) -> None:
    objects, metrics = partial_dump()
    without_container_statuses(objects)
    dump = tmp_path / "cluster.yaml"
    dump.write_text(
        yaml.safe_dump(
            {"apiVersion": "v1", "kind": "List", "items": objects, "metadata": {}},
            sort_keys=False,
        )
    )
    metrics_file = tmp_path / "metrics.json"
    metrics_file.write_text(json.dumps(metrics))
    config = tmp_path / "kubeconfig"
    _, expected = _infer.infer_controllers(objects)
    rs_name, pods = geo_renderer(objects)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "loadaware",
            "sim",
            "serve",
            "--cluster",
            str(dump),
            "--metrics",
            str(metrics_file),
            "--port",
            "0",
            "--kubeconfig-out",
            str(config),
            "--ready-delay",
            "0.2",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=_clean_environment(),
    )
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    stdout = process.stdout

    def read() -> None:
        for line in stdout:
            lines.put(line)

    # Read from a thread, so that a missing line fails the test instead of hanging it.
    threading.Thread(target=read, daemon=True).start()
    try:
        announced = [lines.get(timeout=30).rstrip("\n") for _ in range(2 + len(expected))]
        assert announced[0].startswith("kubeconfig written to")
        assert announced[1].startswith("simulated Kubernetes API at http://127.0.0.1:")
        assert announced[2:] == [n.message for n in expected]
        assert (
            f"inferred ReplicaSet shop/{rs_name} ({len(pods)} replicas) from {len(pods)} pods' "
            "ownerReferences" in announced
        )
        rows = ready_columns(kubectl(config, "get", "pods", "-A").stdout)
        assert len(rows) == len([o for o in objects if o["kind"] == "Pod"])
        assert all_ready(rows)
        evict_with_kubectl(config, tmp_path, pods[0]["metadata"]["name"])
        new = replacement(config, owner_of(pods[0])["uid"], {p["metadata"]["name"] for p in pods})
        assert new["metadata"]["name"].startswith(f"{rs_name}-")
    finally:
        process.terminate()
        process.wait(timeout=10)
        stdout.close()


_POLICY = """\
metrics:
  metricsServer: {}
  maxSampleAge: 2m
limits:
  maxNoOfPodsToEvictTotal: 3
verify:
  timeout: 30s
state:
  namespace: default
"""


def test_run_once_on_a_partial_dump_sees_its_replacements_ready(tmp_path: pathlib.Path) -> None:
    # Real time: `run --once` judges sample ages by the wall clock.
    objects, metrics = partial_dump("peak-hour", now=datetime.datetime.now(datetime.UTC))
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(_POLICY)
    audit = tmp_path / "audit.json"
    with sim_server(
        None, objects=objects, metrics=metrics, wall_clock=True, ready_delay=0.5
    ) as server:
        code = cli.main(
            [
                "run", "--once", "--policy", str(policy_file),
                "--kubeconfig", str(server.write_kubeconfig(tmp_path / "kubeconfig")),
                "--audit-file", str(audit),
            ]
        )  # fmt: skip
    record = json.loads(audit.read_text())
    assert code == 0, record["reason"]
    evicted = [e for e in record["evictions"] if e["result"] == "evicted"]
    assert evicted
    verification = record["verification"]
    assert len(verification["replacements"]) == len(evicted)
    assert all(r["ready"] for r in verification["replacements"])
    assert verification["breaker"] is None
