"""Evictions and the simulated controllers, through the HTTP API.

Covered: a ReplicaSet pod's eviction (201 Status) leaves it terminating with a
DisruptionTarget condition, and a replacement with a new uid is created
Pending, bound by the kube-scheduler model, and becomes Ready after the
configured delay; the old pod is removed after its grace period; 429 with a
DisruptionBudget cause when the PDB allows no disruption; 500 when two PDBs
match; dryRun=All changes nothing; the PDB status controller counts the
disruption; a Pending pod is evicted without consulting its PDB; a StatefulSet
pod comes back under its own name; a replacement nothing fits stays Pending
with a FailedScheduling event; a NotReady node gets the unreachable taints,
loses its metrics and receives no replacement; 404 for a missing pod.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from loadaware import sim
from tests.lib.sim import NOW, call, eviction, is_ready, pods_of, sim_server


@pytest.fixture
def server() -> Iterator[sim.SimServer]:
    with sim_server(ready_delay=5.0) as running:
        yield running


def _evict(server: sim.SimServer, namespace: str, name: str, **kw: bool) -> tuple[int, dict]:
    return call(
        server,
        "POST",
        f"/api/v1/namespaces/{namespace}/pods/{name}/eviction",
        eviction(namespace, name, **kw),
    )


def test_evicted_replicaset_pod_is_replaced_and_scheduled(server: sim.SimServer) -> None:
    before = pods_of(server, "ads", "rank-indexer")
    victim = before[0]
    name = victim["metadata"]["name"]
    code, body = _evict(server, "ads", name)
    assert code == 201
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    }
    old = server.sim.get("pods", "ads", name)
    assert old["metadata"]["deletionTimestamp"]
    target = [c for c in old["status"]["conditions"] if c["type"] == "DisruptionTarget"]
    assert target
    assert target[0]["reason"] == "EvictionByEvictionAPI"

    known = {p["metadata"]["uid"] for p in before}

    def replacement() -> dict | None:
        fresh = [
            p
            for p in pods_of(server, "ads", "rank-indexer")
            if p["metadata"]["uid"] not in known and p["spec"].get("nodeName")
        ]
        return fresh[0] if fresh else None

    new = server.wait_for(replacement)
    assert new["status"]["phase"] == "Pending"
    assert not is_ready(new)
    assert (
        new["metadata"]["ownerReferences"][0]["name"]
        == victim["metadata"]["ownerReferences"][0]["name"]
    )
    scheduled = [c for c in new["status"]["conditions"] if c["type"] == "PodScheduled"]
    assert scheduled[0]["status"] == "True"

    server.advance(6)  # past the ready delay, not past the grace period
    new = server.wait_for(
        lambda: (p := server.sim.get("pods", "ads", new["metadata"]["name"])) and is_ready(p) and p
    )
    assert new["status"]["phase"] == "Running"
    assert new["status"]["podIP"]
    assert server.sim.get("pods", "ads", name)  # still terminating
    server.advance(30)
    server.wait_for(lambda: server.sim.find("pods", "ads", name) is None)
    events = call(server, "GET", "/api/v1/namespaces/ads/events")[1]["items"]
    reasons = {(e["reason"], e["involvedObject"]["name"]) for e in events}
    assert ("Scheduled", new["metadata"]["name"]) in reasons
    assert ("Killing", name) in reasons
    assert ("SuccessfulCreate", victim["metadata"]["ownerReferences"][0]["name"]) in reasons


def test_pdb_with_no_disruptions_allowed_refuses_with_429(server: sim.SimServer) -> None:
    pdb = server.sim.get("poddisruptionbudgets", "payments", "ledger", "policy")
    assert pdb["status"]["disruptionsAllowed"] == 0
    name = pods_of(server, "payments", "ledger")[0]["metadata"]["name"]
    code, body = _evict(server, "payments", name)
    assert code == 429
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.",
        "reason": "TooManyRequests",
        "details": {
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": (
                        "The disruption budget ledger needs 3 healthy pods and has 3 currently"
                    ),
                }
            ]
        },
        "code": 429,
    }
    assert not server.sim.get("pods", "payments", name)["metadata"].get("deletionTimestamp")


def test_eviction_takes_a_disruption_from_the_budget(server: sim.SimServer) -> None:
    pods = pods_of(server, "payments", "payments-api")
    first, second = pods[0]["metadata"]["name"], pods[1]["metadata"]["name"]
    assert _evict(server, "payments", first)[0] == 201
    pdb = server.sim.get("poddisruptionbudgets", "payments", "payments-api", "policy")
    assert pdb["status"]["disruptionsAllowed"] == 0
    assert second != first
    code, body = _evict(server, "payments", second)
    assert code == 429
    assert body["details"]["causes"][0]["reason"] == "DisruptionBudget"
    # Once the replacement is Ready and the old pod gone, the budget is back.
    server.advance(40)
    server.wait_for(
        lambda: (
            server.sim.get("poddisruptionbudgets", "payments", "payments-api", "policy")["status"][
                "disruptionsAllowed"
            ]
            == 1
        )
    )


def test_advance_runs_what_changed_before_the_clock_moved_at_that_time() -> None:
    # No controller thread: the eviction's replacement is created only by advance itself.
    cluster = sim.build_cluster(
        scenario="small", clock=sim.SimClock(NOW, speed=0.0), ready_delay=5.0
    )

    def api_pods() -> list[dict]:
        return [
            p
            for p in cluster.list("pods", "payments")
            if p["metadata"]["name"].startswith("payments-api")
        ]

    before = [p["metadata"]["name"] for p in api_pods()]
    cluster.evict("payments", before[0])
    cluster.advance(40)
    fresh = [p for p in api_pods() if p["metadata"]["name"] not in before]
    assert len(fresh) == 1
    assert is_ready(fresh[0])  # bound before the clock moved, so ready 5 s later
    assert cluster.find("pods", "payments", before[0]) is None  # past its grace period


def test_two_matching_pdbs_are_a_500(server: sim.SimServer) -> None:
    code, _ = call(
        server,
        "POST",
        "/apis/policy/v1/namespaces/ads/poddisruptionbudgets",
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "one"},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"team": "ads"}}},
        },
    )
    assert code == 201
    call(
        server,
        "POST",
        "/apis/policy/v1/namespaces/ads/poddisruptionbudgets",
        {
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "two"},
            "spec": {"maxUnavailable": 1, "selector": {}},
        },
    )
    name = pods_of(server, "ads", "rank-indexer")[0]["metadata"]["name"]
    code, body = _evict(server, "ads", name)
    assert code == 500
    assert body["reason"] == "InternalError"
    assert "more than one PodDisruptionBudget" in body["message"]


def test_dry_run_changes_nothing(server: sim.SimServer) -> None:
    name = pods_of(server, "payments", "payments-api")[0]["metadata"]["name"]
    version = server.sim.store.resource_version
    code, body = _evict(server, "payments", name, dry_run=True)
    assert code == 201
    assert body["status"] == "Success"
    code, _ = call(
        server,
        "POST",
        f"/api/v1/namespaces/payments/pods/{name}/eviction?dryRun=All",
        eviction("payments", name),
    )
    assert code == 201
    assert server.sim.store.resource_version == version
    ledger = pods_of(server, "payments", "ledger")[0]["metadata"]["name"]
    assert _evict(server, "payments", ledger, dry_run=True)[0] == 429


def test_missing_pod_and_bad_bodies(server: sim.SimServer) -> None:
    code, body = _evict(server, "ads", "nope")
    assert code == 404
    assert body["message"] == 'pods "nope" not found'
    name = pods_of(server, "ads", "rank-indexer")[0]["metadata"]["name"]
    code, body = call(
        server, "POST", f"/api/v1/namespaces/ads/pods/{name}/eviction", eviction("ads", "other")
    )
    assert code == 400
    code, body = call(server, "GET", f"/api/v1/namespaces/ads/pods/{name}/eviction")
    assert code == 405


def test_pending_pod_is_evicted_without_its_budget(server: sim.SimServer) -> None:
    code, pod = call(
        server,
        "POST",
        "/api/v1/namespaces/payments/pods",
        {
            "kind": "Pod",
            "metadata": {"name": "ledger-extra", "labels": {"app.kubernetes.io/name": "ledger"}},
            "spec": {
                "containers": [
                    {"name": "c", "image": "busybox:1", "resources": {"requests": {"cpu": "500"}}}
                ]
            },
        },
    )
    assert code == 201
    assert pod["status"]["phase"] == "Pending"
    server.wait_for(
        lambda: any(
            c["type"] == "PodScheduled" and c["status"] == "False"
            for c in server.sim.get("pods", "payments", "ledger-extra")["status"].get(
                "conditions", []
            )
        )
    )
    assert _evict(server, "payments", "ledger-extra")[0] == 201
    server.wait_for(lambda: server.sim.find("pods", "payments", "ledger-extra") is None)


def _failed_scheduling(server: sim.SimServer, namespace: str, name: str) -> list[dict]:
    """The pod's FailedScheduling events, once there is one."""
    path = f"/api/v1/namespaces/{namespace}/events?fieldSelector=involvedObject.name%3D{name}"
    return server.wait_for(
        lambda: [
            e for e in call(server, "GET", path)[1]["items"] if e["reason"] == "FailedScheduling"
        ]
    )


def test_unschedulable_replacement_stays_pending(server: sim.SimServer) -> None:
    code, _ = call(
        server,
        "POST",
        "/api/v1/namespaces/shop/pods",
        {
            "kind": "Pod",
            "metadata": {"name": "huge"},
            "spec": {
                "containers": [
                    {
                        "name": "c",
                        "image": "busybox:1",
                        "resources": {"requests": {"memory": "1Ti"}},
                    }
                ]
            },
        },
    )
    assert code == 201
    events = _failed_scheduling(server, "shop", "huge")
    assert events[0]["message"].startswith("0/6 nodes are available: 6 Insufficient memory.")
    pod = server.sim.get("pods", "shop", "huge")
    assert pod["status"]["phase"] == "Pending"
    assert not pod["spec"].get("nodeName")


@pytest.mark.parametrize("anti_affinity", [False, True], ids=["spread only", "and anti-affinity"])
def test_pod_no_node_spreads_stays_pending_with_the_reason(
    server: sim.SimServer, anti_affinity: bool
) -> None:
    spec: dict = {
        "containers": [{"name": "c", "image": "busybox:1"}],
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "example.com/rack",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "racked"}},
            }
        ],
    }
    if anti_affinity:
        # Every node runs a log-agent, so every node also fails InterPodAffinity; that
        # Filter runs after PodTopologySpread, which is the reason kube-scheduler gives.
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "log-agent"}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        }
    pod = {"kind": "Pod", "metadata": {"name": "racked", "labels": {"app": "racked"}}}
    code, _ = call(server, "POST", "/api/v1/namespaces/logging/pods", {**pod, "spec": spec})
    assert code == 201
    events = _failed_scheduling(server, "logging", "racked")
    assert events[0]["message"].startswith(
        "0/6 nodes are available: 6 node(s) didn't match pod topology spread constraints"
        " (missing required label)."
    )
    assert not server.sim.get("pods", "logging", "racked")["spec"].get("nodeName")


def test_statefulset_pod_returns_under_its_name(server: sim.SimServer) -> None:
    pod = server.sim.get("pods", "data", "zookeeper-2")
    assert _evict(server, "data", "zookeeper-2")[0] == 201
    server.advance(31)
    new = server.wait_for(
        lambda: (
            (p := server.sim.find("pods", "data", "zookeeper-2"))
            and p["metadata"]["uid"] != pod["metadata"]["uid"]
            and p
        )
    )
    assert new["spec"]["hostname"] == "zookeeper-2"
    volumes = {v["name"]: v for v in new["spec"].get("volumes", [])}
    assert volumes["data"]["persistentVolumeClaim"]["claimName"] == "data-zookeeper-2"


def test_node_not_ready(server: sim.SimServer) -> None:
    node = "default-b-001"
    code, _ = call(server, "POST", f"/_sim/nodes/{node}/ready", {"ready": False})
    assert code == 200
    obj = server.sim.get("nodes", None, node)
    ready = next(c for c in obj["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "Unknown"
    assert {(t["key"], t["effect"]) for t in obj["spec"]["taints"]} == {
        ("node.kubernetes.io/unreachable", "NoSchedule"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
    }
    on_node = [p for p in server.sim.list("pods") if p["spec"].get("nodeName") == node]
    assert on_node
    assert not any(is_ready(p) for p in on_node)
    metrics = call(server, "GET", "/apis/metrics.k8s.io/v1beta1/nodes")[1]["items"]
    assert node not in {m["metadata"]["name"] for m in metrics}
    assert call(server, "GET", f"/apis/metrics.k8s.io/v1beta1/nodes/{node}")[0] == 404
    # A replacement created now does not land there.
    victim = pods_of(server, "ads", "rank-indexer")[0]["metadata"]["name"]
    known = {p["metadata"]["uid"] for p in server.sim.list("pods", "ads")}
    assert _evict(server, "ads", victim)[0] == 201
    new = server.wait_for(
        lambda: [
            p
            for p in server.sim.list("pods", "ads")
            if p["metadata"]["uid"] not in known and p["spec"].get("nodeName")
        ]
    )
    assert new[0]["spec"]["nodeName"] != node
    server.set_node_ready(node, True)
    assert "taints" not in server.sim.get("nodes", None, node)["spec"]
