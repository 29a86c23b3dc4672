"""Least privilege: the RBAC of each overlay against the API calls the code makes.

Covered, for every overlay: each permission the code needs (tests/deploy/rbac_scan.py
reads the official client's method names out of loadaware/**/*.py) is granted
to loadaware's ServiceAccount, and nothing is granted that no code calls. Some
calls depend on how loadaware runs: patch on nodes with steering.softTaint (on
in the base policy, so the base grants it) or consolidation's cordon, Lease
calls only for `serve` with leader election. The one write to nodes is a patch,
never an update. Its own state (ConfigMap), the Prometheus token (Secret) and
the Lease are granted in its namespace only, by name where Kubernetes allows; no
rule uses a wildcard. The scan itself is pinned on calls known to exist.
(What a node patch may change is tests/deploy/test_admission_policy.py's.)
"""

from __future__ import annotations

import pytest
import yaml

from loadaware import policy
from tests.deploy import rbac_scan
from tests.deploy.conftest import CONSOLIDATION, OVERLAYS, ROOT, Manifest, of_kind
from tests.deploy.rbac_scan import Permission

SERVICE_ACCOUNT = ("loadaware", "loadaware")  # namespace, name
PROMETHEUS_TOKEN_SECRET = "prometheus-token"
# Kept to loadaware's namespace: a ClusterRole would open every namespace's.
NAMESPACE_ONLY = {("", "configmaps"), ("", "secrets"), ("coordination.k8s.io", "leases")}
# Verbs for which RBAC cannot check resourceNames (the name is not in the request URL).
NO_RESOURCE_NAMES = {"create", "list", "watch", "deletecollection"}


def _policy(docs: list[Manifest]) -> policy.LoadAwarePolicy:
    (config_map,) = [
        doc for doc in of_kind(docs, "ConfigMap") if "policy.yaml" in doc.get("data", {})
    ]
    return policy.parse_policy(yaml.safe_load(config_map["data"]["policy.yaml"]))


def _runs_serve(docs: list[Manifest]) -> bool:
    for deployment in of_kind(docs, "Deployment"):
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            if container.get("args", [None])[0] == "serve":
                return True
    return False


def _is_needed(permission: Permission, docs: list[Manifest]) -> bool:
    """Whether this overlay's way of running makes the call at all."""
    settings = _policy(docs)
    if permission == Permission("", "nodes", "patch"):
        # Soft taints, and the cordon before a consolidation empties a node.
        return settings.steering.soft_taint or settings.consolidation.enabled
    if permission.group == "coordination.k8s.io" and permission.resource == "leases":
        return _runs_serve(docs) and settings.serve.leader_election.enabled
    return True


def _bound_rules(docs: list[Manifest]) -> list[tuple[str, str | None, dict]]:
    """(role kind, namespace or None, rule) for every rule bound to the ServiceAccount."""
    roles = {(doc["kind"], doc["metadata"].get("namespace"), doc["metadata"]["name"]): doc
             for doc in docs if doc["kind"] in ("Role", "ClusterRole")}  # fmt: skip
    bound = []
    for binding in docs:
        if binding["kind"] not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        subjects = {
            (s.get("namespace"), s["name"])
            for s in binding.get("subjects", [])
            if s["kind"] == "ServiceAccount"
        }
        if SERVICE_ACCOUNT not in subjects:
            continue
        ref = binding["roleRef"]
        namespace = binding["metadata"].get("namespace")
        key = (ref["kind"], namespace if ref["kind"] == "Role" else None, ref["name"])
        role = roles.get(key)
        assert role is not None, f"{binding['metadata']['name']} binds a missing {key}"
        # A RoleBinding of a ClusterRole grants it in the binding's namespace only.
        scope = namespace if binding["kind"] == "RoleBinding" else None
        bound.extend((ref["kind"], scope, rule) for rule in role.get("rules", []))
    return bound


def _granted(docs: list[Manifest]) -> set[Permission]:
    return {
        Permission(group, resource, verb)
        for _, _, rule in _bound_rules(docs)
        for group in rule.get("apiGroups", [])
        for resource in rule.get("resources", [])
        for verb in rule.get("verbs", [])
    }


@pytest.fixture(scope="module")
def calls() -> list[rbac_scan.ApiCall]:
    return rbac_scan.scan_package()


def test_the_scan_finds_calls_known_to_be_in_the_code(calls: list[rbac_scan.ApiCall]) -> None:
    found = {call.permission for call in calls}
    assert Permission("", "pods/eviction", "create") in found
    assert Permission("", "configmaps", "update") in found
    assert Permission("metrics.k8s.io", "nodes", "list") in found
    assert Permission("metrics.k8s.io", "pods", "list") in found
    assert Permission("", "nodes", "patch") in found
    # The cluster cache watches what it lists.
    assert Permission("", "pods", "watch") in found
    assert Permission("apps", "replicasets", "watch") in found


def test_lists_and_watches_are_found_where_they_are_made(calls: list[rbac_scan.ApiCall]) -> None:
    # They go through loadaware.kube's raw_request: the scan maps each call of it in
    # the module that makes it, from the paths given there.
    assert "raw_request" in rbac_scan.raw_helpers()
    made = {(call.path, call.permission) for call in calls if call.method == "raw_request"}
    assert ("loadaware/cluster/_live.py", Permission("", "pods", "list")) in made
    assert ("loadaware/cluster/_cache_watch.py", Permission("", "pods", "watch")) in made
    assert ("loadaware/cluster/_cache_watch.py", Permission("batch", "jobs", "watch")) in made
    assert not any(call.path.startswith("loadaware/kube/_rest") for call in calls)


def test_nodes_are_written_only_by_patch_which_the_base_grants(
    calls: list[rbac_scan.ApiCall],
) -> None:
    writes = {
        call.permission
        for call in calls
        if call.permission.group == "" and call.permission.resource.startswith("nodes")
    } - {
        Permission("", "nodes", "get"),
        Permission("", "nodes", "list"),
        Permission("", "nodes", "watch"),
    }
    assert writes == {Permission("", "nodes", "patch")}
    docs = list(yaml.safe_load_all((ROOT / "deploy" / "base" / "clusterrole.yaml").read_text()))
    (role,) = of_kind(docs, "ClusterRole")
    assert any(
        rule["apiGroups"] == [""] and "nodes" in rule["resources"] and "patch" in rule["verbs"]
        for rule in role["rules"]
    )


@pytest.mark.parametrize(
    ("api_class", "method", "expected"),
    [
        ("CoreV1Api", "create_namespaced_pod_eviction", Permission("", "pods/eviction", "create")),
        ("CoreV1Api", "list_pod_for_all_namespaces", Permission("", "pods", "list")),
        ("CoreV1Api", "list_namespace", Permission("", "namespaces", "list")),
        ("CoreV1Api", "patch_node_status", Permission("", "nodes/status", "patch")),
        ("CoreV1Api", "replace_namespaced_config_map", Permission("", "configmaps", "update")),
        ("CoreV1Api", "delete_collection_namespaced_pod",
         Permission("", "pods", "deletecollection")),
        ("AppsV1Api", "read_namespaced_stateful_set", Permission("apps", "statefulsets", "get")),
        ("PolicyV1Api", "list_namespaced_pod_disruption_budget",
         Permission("policy", "poddisruptionbudgets", "list")),
        ("SchedulingV1Api", "list_priority_class",
         Permission("scheduling.k8s.io", "priorityclasses", "list")),
        ("NetworkingV1Api", "list_namespaced_network_policy",
         Permission("networking.k8s.io", "networkpolicies", "list")),
    ],
)  # fmt: skip
def test_method_names_map_to_permissions(api_class: str, method: str, expected: Permission) -> None:
    assert rbac_scan.permission_of(api_class, method) == expected


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("GET", "/api/v1/nodes", Permission("", "nodes", "list")),
        ("GET", "/api/v1/namespaces", Permission("", "namespaces", "list")),
        ("GET", "/apis/apps/v1/replicasets", Permission("apps", "replicasets", "list")),
        ("GET", "/api/v1/namespaces/{namespace}/pods/{name}", Permission("", "pods", "get")),
        ("POST", "/api/v1/namespaces/shop/pods/web-1/eviction",
         Permission("", "pods/eviction", "create")),
        ("PUT", "/apis/coordination.k8s.io/v1/namespaces/loadaware/leases/loadaware",
         Permission("coordination.k8s.io", "leases", "update")),
        ("PATCH", "/api/v1/nodes/node-a", Permission("", "nodes", "patch")),
    ],
)  # fmt: skip
def test_rest_paths_map_to_permissions(method: str, path: str, expected: Permission) -> None:
    assert rbac_scan.permission_of_path(method, path) == expected


@pytest.mark.parametrize("overlay", [*OVERLAYS, CONSOLIDATION])
def test_role_grants_every_call_the_code_makes(
    overlay: str, rendered: dict[str, list[Manifest]], calls: list[rbac_scan.ApiCall]
) -> None:
    docs = rendered[overlay]
    granted = _granted(docs)
    missing = sorted(
        {
            f"{call.permission} (for {call.api_class}.{call.method} at {call.path}:{call.line})"
            for call in calls
            if _is_needed(call.permission, docs) and call.permission not in granted
        }
    )
    assert missing == [], f"deploy/overlays/{overlay} lacks permissions the code needs"


@pytest.mark.parametrize("overlay", [*OVERLAYS, CONSOLIDATION])
def test_role_grants_nothing_the_code_does_not_call(
    overlay: str, rendered: dict[str, list[Manifest]], calls: list[rbac_scan.ApiCall]
) -> None:
    docs = rendered[overlay]
    needed = {call.permission for call in calls if _is_needed(call.permission, docs)}
    unused = sorted(str(p) for p in _granted(docs) - needed)
    assert unused == [], f"deploy/overlays/{overlay} grants what no code calls"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_no_wildcards_and_no_direct_pod_deletion(
    overlay: str, rendered: dict[str, list[Manifest]]
) -> None:
    for _, _, rule in _bound_rules(rendered[overlay]):
        for key in ("apiGroups", "resources", "verbs"):
            assert "*" not in rule.get(key, []), rule
        assert not ("pods" in rule["resources"] and "delete" in rule["verbs"]), (
            "pods leave only through the Eviction API"
        )


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_own_objects_are_granted_in_own_namespace_by_name(
    overlay: str, rendered: dict[str, list[Manifest]]
) -> None:
    docs = rendered[overlay]
    settings = _policy(docs)
    names = {
        ("", "configmaps"): (settings.state.namespace, [settings.state.config_map]),
        ("", "secrets"): ("loadaware", [PROMETHEUS_TOKEN_SECRET]),
        ("coordination.k8s.io", "leases"): (
            settings.serve.leader_election.lease_namespace,
            [settings.serve.leader_election.lease_name],
        ),
    }
    for kind, scope, rule in _bound_rules(docs):
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                if (group, resource) not in NAMESPACE_ONLY:
                    continue
                namespace, allowed = names[(group, resource)]
                assert scope == namespace, f"{resource} granted by a {kind} outside {namespace}"
                for verb in rule["verbs"]:
                    if verb in NO_RESOURCE_NAMES:
                        assert "resourceNames" not in rule
                    else:
                        assert rule.get("resourceNames") == allowed, (resource, verb)
