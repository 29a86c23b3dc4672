"""The simulated Kubernetes API over HTTP: codes and bodies as kube-apiserver sends them.

Covered: discovery (/api, /apis, group versions, pods/eviction in /api/v1,
/version); get and 404 Status; list with limit + continue (remainingItemCount,
resourceVersion), label and field selectors (spec.nodeName, metadata.namespace),
400 on an unsupported field; resourceVersion too large (504) and an expired
continue token (410); create (201, generateName), 409 AlreadyExists, 422 on a
bad name with causes, 404 for a missing namespace; update with a stale
resourceVersion (409 Conflict) and the status subresource; merge, strategic
merge (labels, taints) and JSON patch, 415 for apply patches; delete of a
ConfigMap (Status with details), graceful pod deletion removed after the grace
period on the simulated clock, deletecollection; 405 for a wrong method;
Secrets' stringData; events.k8s.io/v1 as a view of core events; Tables;
watch; bearer token auth.
"""

from __future__ import annotations

import base64
import http.client
import json
from collections.abc import Iterator

import pytest

from loadaware import sim
from tests.lib.sim import call, sim_server


@pytest.fixture(scope="module")
def server() -> Iterator[sim.SimServer]:
    with sim_server() as running:
        yield running


@pytest.fixture
def fresh() -> Iterator[sim.SimServer]:
    with sim_server() as running:
        yield running


def _configmap(name: str, **data: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


# --- discovery ---


def test_discovery_lists_groups_and_resources(server: sim.SimServer) -> None:
    code, versions = call(server, "GET", "/api")
    assert code == 200
    assert versions["kind"] == "APIVersions"
    assert versions["versions"] == ["v1"]
    code, groups = call(server, "GET", "/apis")
    names = {g["name"] for g in groups["groups"]}
    assert {"apps", "policy", "coordination.k8s.io", "events.k8s.io", "metrics.k8s.io"} <= names
    code, core = call(server, "GET", "/api/v1")
    by_name = {r["name"]: r for r in core["resources"]}
    assert by_name["pods"]["namespaced"]
    assert "list" in by_name["pods"]["verbs"]
    assert by_name["pods/eviction"] == {
        "name": "pods/eviction",
        "singularName": "",
        "namespaced": True,
        "group": "policy",
        "version": "v1",
        "kind": "Eviction",
        "verbs": ["create"],
    }
    assert not by_name["nodes"]["namespaced"]
    code, policy_v1 = call(server, "GET", "/apis/policy/v1")
    assert policy_v1["groupVersion"] == "policy/v1"
    assert [r["name"] for r in policy_v1["resources"]][:1] == ["poddisruptionbudgets"]
    code, version = call(server, "GET", "/version")
    assert code == 200
    assert version["gitVersion"].startswith("v1.")


def test_unknown_paths_are_404_with_a_status(server: sim.SimServer) -> None:
    code, body = call(server, "GET", "/apis/apps/v1/widgets")
    assert code == 404
    assert body["kind"] == "Status"
    assert body["reason"] == "NotFound"
    assert body["code"] == 404


# --- get and list ---


def test_get_missing_object_is_not_found(server: sim.SimServer) -> None:
    code, body = call(server, "GET", "/api/v1/namespaces/shop/pods/nope")
    assert code == 404
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "nope" not found',
        "reason": "NotFound",
        "details": {"name": "nope", "kind": "pods"},
        "code": 404,
    }
    code, body = call(server, "GET", "/apis/apps/v1/namespaces/shop/deployments/nope")
    assert body["message"] == 'deployments.apps "nope" not found'
    assert body["details"] == {"name": "nope", "group": "apps", "kind": "deployments"}


def test_get_returns_the_object_with_kind(server: sim.SimServer) -> None:
    code, nodes = call(server, "GET", "/api/v1/nodes")
    name = nodes["items"][0]["metadata"]["name"]
    assert "kind" not in nodes["items"][0]  # list items come without kind, as in the real API
    code, node = call(server, "GET", f"/api/v1/nodes/{name}")
    assert code == 200
    assert node["kind"] == "Node"
    assert node["apiVersion"] == "v1"
    assert list(node)[:3] == ["kind", "apiVersion", "metadata"]


def test_pagination_walks_every_pod_once(server: sim.SimServer) -> None:
    code, everything = call(server, "GET", "/api/v1/pods")
    total = len(everything["items"])
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        path = "/api/v1/pods?limit=10" + (f"&continue={token}" if token else "")
        code, page = call(server, "GET", path)
        assert code == 200
        assert page["kind"] == "PodList"
        pages += 1
        seen += [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in page["items"]]
        token = page["metadata"].get("continue", "")
        if not token:
            assert "remainingItemCount" not in page["metadata"]
            break
        assert page["metadata"]["remainingItemCount"] == total - len(seen)
    assert pages == -(-total // 10)
    assert len(seen) == len(set(seen)) == total
    assert seen == sorted(seen)  # key order, as etcd returns it


def test_label_and_field_selectors(server: sim.SimServer) -> None:
    code, nodes = call(server, "GET", "/api/v1/nodes")
    node = nodes["items"][0]["metadata"]["name"]
    code, on_node = call(server, "GET", f"/api/v1/pods?fieldSelector=spec.nodeName%3D{node}")
    assert on_node["items"]
    assert all(p["spec"]["nodeName"] == node for p in on_node["items"])
    code, shop = call(server, "GET", "/api/v1/pods?fieldSelector=metadata.namespace%3Dshop")
    assert shop["items"]
    assert {p["metadata"]["namespace"] for p in shop["items"]} == {"shop"}
    code, frontend = call(
        server,
        "GET",
        "/api/v1/namespaces/shop/pods?labelSelector=app.kubernetes.io/name%3Dfrontend",
    )
    assert frontend["items"]
    assert all(
        p["metadata"]["labels"]["app.kubernetes.io/name"] == "frontend" for p in frontend["items"]
    )
    code, not_frontend = call(
        server,
        "GET",
        "/api/v1/namespaces/shop/pods?labelSelector=app.kubernetes.io/name%20notin%20(frontend)",
    )
    assert len(not_frontend["items"]) + len(frontend["items"]) == len(
        call(server, "GET", "/api/v1/namespaces/shop/pods")[1]["items"]
    )
    code, body = call(server, "GET", "/api/v1/pods?fieldSelector=spec.bogus%3Dx")
    assert code == 400
    assert body["reason"] == "BadRequest"
    assert body["message"] == "field label not supported: spec.bogus"


def test_resource_version_rules(server: sim.SimServer) -> None:
    code, pods = call(server, "GET", "/api/v1/pods?limit=1")
    current = int(pods["metadata"]["resourceVersion"])
    code, body = call(server, "GET", f"/api/v1/pods?resourceVersion={current + 1000}")
    assert code == 504
    assert body["reason"] == "Timeout"
    assert body["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge"
    code, _ = call(server, "GET", f"/api/v1/pods?resourceVersion={current}")
    assert code == 200


def test_continue_token_expires(fresh: sim.SimServer) -> None:
    code, page = call(fresh, "GET", "/api/v1/pods?limit=5")
    token = page["metadata"]["continue"]
    fresh.advance(600)
    code, body = call(fresh, "GET", f"/api/v1/pods?limit=5&continue={token}")
    assert code == 410
    assert body["reason"] == "Expired"
    code, body = call(fresh, "GET", "/api/v1/pods?limit=5&continue=not-a-token!")
    assert code == 400


# --- create, update, patch, delete ---


def test_create_conflict_and_invalid(fresh: sim.SimServer) -> None:
    path = "/api/v1/namespaces/shop/configmaps"
    code, created = call(fresh, "POST", path, _configmap("settings", color="blue"))
    assert code == 201
    assert created["metadata"]["uid"]
    assert created["metadata"]["resourceVersion"]
    code, body = call(fresh, "POST", path, _configmap("settings"))
    assert code == 409
    assert body["reason"] == "AlreadyExists"
    assert body["message"] == 'configmaps "settings" already exists'
    code, body = call(fresh, "POST", path, _configmap("Bad_Name"))
    assert code == 422
    assert body["reason"] == "Invalid"
    assert body["details"]["causes"][0]["field"] == "metadata.name"
    assert body["details"]["causes"][0]["reason"] == "FieldValueInvalid"
    code, body = call(
        fresh, "POST", path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}
    )
    assert code == 422
    assert body["details"]["causes"][0]["reason"] == "FieldValueRequired"
    code, generated = call(
        fresh, "POST", path, {"kind": "ConfigMap", "metadata": {"generateName": "cfg-"}}
    )
    assert code == 201
    assert generated["metadata"]["name"].startswith("cfg-")
    code, body = call(fresh, "POST", "/api/v1/namespaces/nowhere/configmaps", _configmap("x"))
    assert code == 404
    assert body["message"] == 'namespaces "nowhere" not found'
    code, body = call(fresh, "POST", "/api/v1/namespaces/shop/configmaps/settings", _configmap("y"))
    assert code == 405
    assert body["reason"] == "MethodNotAllowed"


def test_pod_without_containers_is_invalid(fresh: sim.SimServer) -> None:
    code, body = call(
        fresh,
        "POST",
        "/api/v1/namespaces/shop/pods",
        {"kind": "Pod", "metadata": {"name": "empty"}, "spec": {"containers": []}},
    )
    assert code == 422
    assert body["details"]["causes"][0]["field"] == "spec.containers"


def test_update_with_a_stale_resource_version_conflicts(fresh: sim.SimServer) -> None:
    path = "/api/v1/namespaces/shop/configmaps"
    code, created = call(fresh, "POST", path, _configmap("cm", a="1"))
    first = dict(created, data={"a": "2"})
    code, updated = call(fresh, "PUT", f"{path}/cm", first)
    assert code == 200
    assert updated["data"] == {"a": "2"}
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    stale = dict(created, data={"a": "3"})
    code, body = call(fresh, "PUT", f"{path}/cm", stale)
    assert code == 409
    assert body["reason"] == "Conflict"
    assert body["message"].startswith('Operation cannot be fulfilled on configmaps "cm"')
    code, body = call(fresh, "PUT", f"{path}/other", dict(created, data={}))
    assert code == 400
    assert "does not match the name on the URL" in body["message"]


def test_status_subresource_and_main_resource_keep_apart(fresh: sim.SimServer) -> None:
    code, node = call(fresh, "GET", "/api/v1/nodes/default-a-001")
    changed = json.loads(json.dumps(node))
    changed["status"]["capacity"]["pods"] = "7"
    changed["metadata"]["labels"]["extra"] = "yes"
    code, updated = call(fresh, "PUT", "/api/v1/nodes/default-a-001", changed)
    assert updated["metadata"]["labels"]["extra"] == "yes"
    assert updated["status"]["capacity"]["pods"] == node["status"]["capacity"]["pods"]
    changed["metadata"]["resourceVersion"] = updated["metadata"]["resourceVersion"]
    code, updated = call(fresh, "PUT", "/api/v1/nodes/default-a-001/status", changed)
    assert code == 200
    assert updated["status"]["capacity"]["pods"] == "7"


def test_patches(fresh: sim.SimServer) -> None:
    path = "/api/v1/nodes/default-a-001"
    code, node = call(
        fresh,
        "PATCH",
        path,
        {"metadata": {"labels": {"hot": "yes"}}},
        content_type="application/merge-patch+json",
    )
    assert code == 200
    assert node["metadata"]["labels"]["hot"] == "yes"
    taint = {"key": "loadaware.io/hotspot", "value": "true", "effect": "PreferNoSchedule"}
    code, node = call(
        fresh,
        "PATCH",
        path,
        {"metadata": {"labels": {"hot": None}}, "spec": {"taints": [taint]}},
        content_type="application/strategic-merge-patch+json",
    )
    assert "hot" not in node["metadata"]["labels"]
    assert node["spec"]["taints"] == [taint]
    code, node = call(
        fresh,
        "PATCH",
        path,
        [{"op": "add", "path": "/spec/unschedulable", "value": True}],
        content_type="application/json-patch+json",
    )
    assert code == 200
    assert node["spec"]["unschedulable"] is True
    code, body = call(
        fresh,
        "PATCH",
        path,
        [{"op": "test", "path": "/spec/unschedulable", "value": False}],
        content_type="application/json-patch+json",
    )
    assert code == 422
    code, body = call(fresh, "PATCH", path, {}, content_type="application/apply-patch+yaml")
    assert code == 415
    assert body["reason"] == "UnsupportedMediaType"
    code, body = call(
        fresh,
        "PATCH",
        path,
        {"metadata": {"resourceVersion": "1"}},
        content_type="application/merge-patch+json",
    )
    assert code == 409


def test_delete_configmap_returns_a_status(fresh: sim.SimServer) -> None:
    path = "/api/v1/namespaces/shop/configmaps"
    code, created = call(fresh, "POST", path, _configmap("gone"))
    code, body = call(fresh, "DELETE", f"{path}/gone")
    assert code == 200
    assert body["kind"] == "Status"
    assert body["status"] == "Success"
    assert body["details"] == {
        "name": "gone",
        "kind": "configmaps",
        "uid": created["metadata"]["uid"],
    }
    code, body = call(fresh, "DELETE", f"{path}/gone")
    assert code == 404


def test_pod_deletion_is_graceful_on_the_simulated_clock(fresh: sim.SimServer) -> None:
    pod = fresh.sim.list("pods", "shop")[0]
    name = pod["metadata"]["name"]
    path = f"/api/v1/namespaces/shop/pods/{name}"
    code, body = call(fresh, "DELETE", path)
    assert code == 200
    assert body["kind"] == "Pod"
    assert body["metadata"]["deletionTimestamp"] == "2026-11-29T08:00:30Z"
    assert body["metadata"]["deletionGracePeriodSeconds"] == 30
    fresh.advance(10)
    assert call(fresh, "GET", path)[0] == 200
    fresh.advance(25)
    assert call(fresh, "GET", path)[0] == 404


def test_delete_with_a_uid_precondition(fresh: sim.SimServer) -> None:
    path = "/api/v1/namespaces/shop/configmaps"
    call(fresh, "POST", path, _configmap("guarded"))
    code, body = call(fresh, "DELETE", f"{path}/guarded", {"preconditions": {"uid": "not-the-uid"}})
    assert code == 409
    assert "Precondition failed" in body["message"]


def test_delete_collection(fresh: sim.SimServer) -> None:
    path = "/api/v1/namespaces/shop/configmaps"
    for name in ("a", "b"):
        call(
            fresh,
            "POST",
            path,
            {**_configmap(name), "metadata": {"name": name, "labels": {"x": "1"}}},
        )
    code, body = call(fresh, "DELETE", f"{path}?labelSelector=x%3D1")
    assert code == 200
    assert len(body["items"]) == 2
    assert call(fresh, "GET", path)[1]["items"] == []


def test_secret_string_data_becomes_data(fresh: sim.SimServer) -> None:
    code, secret = call(
        fresh,
        "POST",
        "/api/v1/namespaces/shop/secrets",
        {"kind": "Secret", "metadata": {"name": "token"}, "stringData": {"token": "abc"}},
    )
    assert code == 201
    assert secret["type"] == "Opaque"
    assert base64.b64decode(secret["data"]["token"]) == b"abc"
    assert "stringData" not in secret


def test_leases_for_leader_election(fresh: sim.SimServer) -> None:
    path = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "loadaware"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15},
    }
    code, created = call(fresh, "POST", path, lease)
    assert code == 201
    mine = dict(created, spec={"holderIdentity": "b", "leaseDurationSeconds": 15})
    theirs = dict(created, spec={"holderIdentity": "c", "leaseDurationSeconds": 15})
    assert call(fresh, "PUT", f"{path}/loadaware", mine)[0] == 200
    assert call(fresh, "PUT", f"{path}/loadaware", theirs)[0] == 409


def test_events_in_both_groups(fresh: sim.SimServer) -> None:
    code, created = call(
        fresh,
        "POST",
        "/apis/events.k8s.io/v1/namespaces/shop/events",
        {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "ev1"},
            "regarding": {"kind": "Pod", "namespace": "shop", "name": "p"},
            "reason": "LoadawareEvicted",
            "note": "moved off a hot node",
            "type": "Normal",
            "reportingController": "loadaware",
            "reportingInstance": "loadaware-1",
            "action": "Evict",
            "eventTime": "2026-11-29T08:00:00.000000Z",
        },
    )
    assert code == 201
    assert created["note"] == "moved off a hot node"
    code, core = call(fresh, "GET", "/api/v1/namespaces/shop/events/ev1")
    assert core["message"] == "moved off a hot node"
    assert core["involvedObject"]["name"] == "p"
    code, listed = call(
        fresh,
        "GET",
        "/apis/events.k8s.io/v1/namespaces/shop/events?fieldSelector=regarding.name%3Dp",
    )
    assert [e["metadata"]["name"] for e in listed["items"]] == ["ev1"]


def test_tables_for_kubectl(server: sim.SimServer) -> None:
    _, table = call(
        server,
        "GET",
        "/api/v1/namespaces/shop/pods",
        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"},
    )
    assert table["kind"] == "Table"
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names[:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert "Node" in names
    row = table["rows"][0]
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["cells"][2] == "Running"


def test_watch_streams_changes(fresh: sim.SimServer) -> None:
    _, listed = call(fresh, "GET", "/api/v1/namespaces/shop/configmaps")
    rv = listed["metadata"]["resourceVersion"]
    call(fresh, "POST", "/api/v1/namespaces/shop/configmaps", _configmap("watched"))
    connection = http.client.HTTPConnection(fresh.host, fresh.port, timeout=10)
    connection.request(
        "GET",
        f"/api/v1/namespaces/shop/configmaps?watch=true&resourceVersion={rv}&timeoutSeconds=1",
    )
    response = connection.getresponse()
    lines = [json.loads(line) for line in response.read().splitlines() if line.strip()]
    connection.close()
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines] == [("ADDED", "watched")]


def test_bearer_token_is_required_when_set() -> None:
    with sim_server(token="t0ken") as secured:
        code, body = call(secured, "GET", "/api/v1/nodes")
        assert code == 401
        assert body["reason"] == "Unauthorized"
        code, _ = call(secured, "GET", "/api/v1/nodes", headers={"Authorization": "Bearer t0ken"})
        assert code == 200
        assert call(secured, "GET", "/version")[0] == 200
