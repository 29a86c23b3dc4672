"""OpenAPI documents of the simulated API (loadaware/sim/_openapi.py), and the real
kubectl's create and apply, which read them, with validation on (kubectl's default).

Covered: `kubectl create -f` of a Deployment, and of a Namespace, Secret,
PodDisruptionBudget, Lease and StatefulSet in one file; `kubectl apply -f`
creating a Deployment, then applying a changed one (replicas, image, a label:
a strategic merge patch), then the same file again (unchanged). Over HTTP:
the /openapi/v3 index names a document for every group-version the simulator
serves; each stored kind has a schema tagged with its group-version-kind and a
PATCH operation that takes fieldValidation (what makes kubectl validate on the
server); /openapi/v2 is JSON, and 406 to a client that accepts only protobuf;
unknown paths 404.
"""

from __future__ import annotations

import json
import pathlib
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest

from loadaware import sim
from loadaware.sim import _openapi, _resources
from tests.lib.sim import KUBECTL, call, kubectl, sim_server

pytestmark = pytest.mark.skipif(not pathlib.Path(KUBECTL).exists(), reason="kubectl not installed")


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[sim.SimServer, pathlib.Path]]:
    with sim_server() as server:
        path = server.write_kubeconfig(tmp_path_factory.mktemp("kube") / "config")
        yield server, path


def _deployment(name: str, *, replicas: int = 2, image: str = "nginx:1.27", tier: str = "") -> str:
    labels = f"{{app: {name}, tier: {tier}}}" if tier else f"{{app: {name}}}"
    return textwrap.dedent(
        f"""\
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: {name}
          namespace: default
          labels: {labels}
        spec:
          replicas: {replicas}
          selector:
            matchLabels: {{app: {name}}}
          template:
            metadata:
              labels: {{app: {name}}}
            spec:
              containers:
              - name: web
                image: {image}
                resources:
                  requests: {{cpu: 50m, memory: 32Mi}}
        """
    )


def _write(tmp_path: pathlib.Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_create_validates_with_the_server(
    served: tuple[sim.SimServer, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    server, config = served
    result = kubectl(config, "create", "-f", _write(tmp_path, "d.yaml", _deployment("created")))
    assert result.stdout.strip() == "deployment.apps/created created"
    assert "openapi" not in result.stderr
    stored = server.sim.get("deployments", "default", "created", group="apps")
    assert stored["spec"]["replicas"] == 2
    server.wait_for(
        lambda: (
            len(
                [
                    p
                    for p in server.sim.list("pods", "default")
                    if p["metadata"]["name"].startswith("created-")
                ]
            )
            == 2
        )
    )


def test_create_several_kinds(
    served: tuple[sim.SimServer, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    server, config = served
    text = textwrap.dedent(
        """\
        apiVersion: v1
        kind: Namespace
        metadata: {name: tools}
        ---
        apiVersion: v1
        kind: Secret
        metadata: {name: token, namespace: tools}
        stringData: {token: abc}
        ---
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: db, namespace: tools}
        spec:
          minAvailable: 1
          selector: {matchLabels: {app: db}}
        ---
        apiVersion: coordination.k8s.io/v1
        kind: Lease
        metadata: {name: lock, namespace: tools}
        spec: {holderIdentity: me}
        ---
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {name: db, namespace: tools}
        spec:
          replicas: 1
          serviceName: db
          selector: {matchLabels: {app: db}}
          template:
            metadata: {labels: {app: db}}
            spec:
              containers: [{name: db, image: "postgres:16"}]
        """
    )
    out = kubectl(config, "create", "-f", _write(tmp_path, "tools.yaml", text)).stdout
    assert out.splitlines() == [
        "namespace/tools created",
        "secret/token created",
        "poddisruptionbudget.policy/db created",
        "lease.coordination.k8s.io/lock created",
        "statefulset.apps/db created",
    ]
    assert server.sim.get("leases", "tools", "lock", group="coordination.k8s.io")
    assert server.sim.get("poddisruptionbudgets", "tools", "db", group="policy")


def test_apply_creates_then_patches(
    served: tuple[sim.SimServer, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    server, config = served
    first = _write(tmp_path, "v1.yaml", _deployment("applied"))
    assert kubectl(config, "apply", "-f", first).stdout.strip() == "deployment.apps/applied created"

    changed = _write(
        tmp_path, "v2.yaml", _deployment("applied", replicas=3, image="nginx:1.28", tier="web")
    )
    result = kubectl(config, "apply", "-f", changed)
    assert result.stdout.strip() == "deployment.apps/applied configured"
    assert "error" not in result.stderr.lower()
    stored = server.sim.get("deployments", "default", "applied", group="apps")
    assert stored["spec"]["replicas"] == 3
    assert stored["metadata"]["labels"] == {"app": "applied", "tier": "web"}
    containers = stored["spec"]["template"]["spec"]["containers"]
    assert [(c["name"], c["image"]) for c in containers] == [("web", "nginx:1.28")]
    applied = json.loads(
        stored["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
    )
    assert applied["spec"]["replicas"] == 3

    again = kubectl(config, "apply", "-f", changed).stdout.strip()
    assert again == "deployment.apps/applied unchanged"


# --- the documents over HTTP ---


def _get(server: sim.SimServer, path: str, accept: str = "application/json") -> tuple[int, Any]:
    return call(server, "GET", path, headers={"Accept": accept})


def test_v3_index_names_a_document_for_every_group_version(
    served: tuple[sim.SimServer, pathlib.Path],
) -> None:
    server, _ = served
    code, index = _get(server, "/openapi/v3")
    assert code == 200
    expected = {f"apis/{r.group}/{r.version}" if r.group else "api/v1" for r in _resources.SERVED}
    assert expected | {"apis/policy/v1"} == set(index["paths"])
    for gv_path, entry in index["paths"].items():
        url = entry["serverRelativeURL"]
        assert url.startswith(f"/openapi/v3/{gv_path}?hash=")
        code, document = _get(server, url)
        assert code == 200
        assert document["openapi"].startswith("3.")


def _kinds_with_patch(document: dict[str, Any]) -> dict[tuple[str, str, str], list[str]]:
    found: dict[tuple[str, str, str], list[str]] = {}
    for item in document["paths"].values():
        patch = item.get("patch")
        if patch is None:
            continue
        gvk = patch["x-kubernetes-group-version-kind"]
        key = (gvk["group"], gvk["version"], gvk["kind"])
        found.setdefault(
            key, [p["name"] for p in patch.get("parameters", []) if p["in"] == "query"]
        )
    return found


@pytest.mark.parametrize(
    "resource", _resources.STORED, ids=lambda r: f"{r.kind}.{r.group or 'core'}"
)
def test_each_stored_kind_has_a_tagged_schema_and_validates_on_the_server(
    served: tuple[sim.SimServer, pathlib.Path], resource: _resources.Resource
) -> None:
    server, _ = served
    gv_path = f"apis/{resource.group}/{resource.version}" if resource.group else "api/v1"
    code, document = _get(server, f"/openapi/v3/{gv_path}")
    assert code == 200
    gvk = {"group": resource.group, "version": resource.version, "kind": resource.kind}
    tagged = [
        s
        for s in document["components"]["schemas"].values()
        if gvk in s.get("x-kubernetes-group-version-kind", [])
    ]
    assert len(tagged) == 1
    assert tagged[0]["x-kubernetes-preserve-unknown-fields"] is True
    if "patch" in resource.verbs:
        key = (resource.group, resource.version, resource.kind)
        assert "fieldValidation" in _kinds_with_patch(document)[key]


def test_v2_is_json_and_refuses_protobuf_only(served: tuple[sim.SimServer, pathlib.Path]) -> None:
    server, _ = served
    code, document = _get(server, "/openapi/v2")
    assert code == 200
    assert document["swagger"] == "2.0"
    deployment = document["definitions"]["io.k8s.api.apps.v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "kind": "Deployment", "version": "v1"}
    ]
    code, status = _get(server, "/openapi/v2", accept=_openapi.PROTOBUF_V2)
    assert code == 406
    assert status["reason"] == "NotAcceptable"
    code, _ = _get(server, "/openapi/v2", accept=f"{_openapi.PROTOBUF_V2}, application/json")
    assert code == 200


def test_unknown_openapi_paths_are_404(served: tuple[sim.SimServer, pathlib.Path]) -> None:
    server, _ = served
    assert _get(server, "/openapi/v3/apis/nothing/v1")[0] == 404
    assert _get(server, "/openapi/v4")[0] == 404
