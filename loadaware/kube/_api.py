"""The typed Kubernetes calls loadaware makes through the official client: pods,
evictions, nodes and their taints, namespaces, the state ConfigMap, Events (Kube)
and the leader election's Lease (Leases).

Errors are translated by loadaware.kube's one translation (`translated`): 401
UnauthorizedError, 403 ForbiddenError, 404 NotFoundError, 409 ConflictError,
429 TooManyRequestsError, no answer UnreachableError, anything else
ClusterError; each names the call, the server and the cause, never a body.
Objects are returned as raw JSON dicts (RawObject), as `kubectl -o json` prints them.

With `reads` (the cluster cache), reads of pods, namespaces and the node list are
answered from it, with the fields the evictor reads. So is a node's first read
before its taints are changed (`cached_node`): the write names the resourceVersion
read, so a view that is behind fails it with a conflict, and the caller reads the
node again from the API server (`read_node`). Every write goes to the API server.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote, urlencode

from loadaware.errors import NotFoundError
from loadaware.kube._errors import server_of, translated

if TYPE_CHECKING:
    import kubernetes.client

RawObject = dict[str, Any]


class Reads(Protocol):
    """What can answer the evictor's reads instead of the API server (ClusterCache).
    What it returns may be shared by every read of the same object: read, never change."""

    def read_pod(self, namespace: str, name: str) -> RawObject | None: ...
    def list_pods(self, namespace: str, label_selector: str = "") -> list[RawObject]: ...
    def list_node_pods(self, node: str) -> list[RawObject]: ...
    def list_nodes(self) -> list[RawObject]: ...
    def read_node(self, name: str) -> RawObject | None: ...
    def find_namespace(self, name: str) -> RawObject | None: ...


FIELD_MANAGER = "loadaware"


class Kube:
    """Typed entry points for the calls the evictor and its state make: pods,
    evictions, nodes, namespaces, ConfigMaps and Events."""

    def __init__(
        self,
        api_client: kubernetes.client.ApiClient,
        *,
        timeout_seconds: float = 15.0,
        reads: Reads | None = None,
    ):
        import kubernetes.client

        self._api = api_client
        self._core = kubernetes.client.CoreV1Api(api_client)
        self._server = server_of(api_client)
        self._timeout = timeout_seconds
        self._reads = reads

    def _translated(self, doing: str) -> AbstractContextManager[None]:
        return translated(doing, self._server)

    @property
    def timeout_seconds(self) -> float:
        """How long one call may take before the client gives up on it."""
        return self._timeout

    def _raw(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> RawObject:
        # Raw JSON, not the client's models: loadaware reads what it needs itself, and
        # a model's validation must not fail a call over a field loadaware ignores.
        response = call(*args, _preload_content=False, _request_timeout=self._timeout, **kwargs)
        return json.loads(response.data)

    # Pods -----------------------------------------------------------------

    def read_pod(self, namespace: str, name: str) -> RawObject | None:
        if self._reads is not None:
            return self._reads.read_pod(namespace, name)
        try:
            with self._translated(f"read pod {namespace}/{name}"):
                return self._raw(self._core.read_namespaced_pod, name, namespace)
        except NotFoundError:
            return None

    def list_pods(self, namespace: str, label_selector: str = "") -> list[RawObject]:
        if self._reads is not None:
            return self._reads.list_pods(namespace, label_selector)
        with self._translated(f"list pods in {namespace}"):
            body = self._raw(
                self._core.list_namespaced_pod, namespace, label_selector=label_selector
            )
        return list(body.get("items") or [])

    def list_node_pods(self, node: str) -> list[RawObject]:
        """Every pod bound to `node`, in all namespaces (a field selector, one request)."""
        if self._reads is not None:
            return self._reads.list_node_pods(node)
        with self._translated(f"list pods on node {node}"):
            body = self._raw(
                self._core.list_pod_for_all_namespaces, field_selector=f"spec.nodeName={node}"
            )
        return list(body.get("items") or [])

    def evict_pod(
        self,
        namespace: str,
        name: str,
        *,
        uid: str | None,
        grace_period_seconds: int | None,
        dry_run: bool,
    ) -> None:
        """POST pods/{name}/eviction. The uid precondition makes the API refuse (409)
        when the pod was replaced by another of the same name since it was planned."""
        import kubernetes.client

        delete_options: dict[str, Any] = {}
        if grace_period_seconds is not None:
            delete_options["grace_period_seconds"] = grace_period_seconds
        if uid:
            delete_options["preconditions"] = kubernetes.client.V1Preconditions(uid=uid)
        body = kubernetes.client.V1Eviction(
            api_version="policy/v1",
            kind="Eviction",
            metadata=kubernetes.client.V1ObjectMeta(name=name, namespace=namespace),
            delete_options=kubernetes.client.V1DeleteOptions(**delete_options)
            if delete_options
            else None,
        )
        with self._translated(f"evict pod {namespace}/{name}"):
            response = self._core.create_namespaced_pod_eviction(
                name,
                namespace,
                body,
                dry_run="All" if dry_run else None,
                _preload_content=False,
                _request_timeout=self._timeout,
            )
            _finished(response)

    # Nodes ----------------------------------------------------------------

    def list_nodes(self) -> list[RawObject]:
        if self._reads is not None:
            return self._reads.list_nodes()
        with self._translated("list nodes"):
            return list(self._raw(self._core.list_node).get("items") or [])

    def cached_node(self, name: str) -> RawObject | None:
        """The node's taints and resourceVersion as `reads` last saw them, possibly
        behind the server's (see the module); None without reads or when they do not
        hold the node."""
        if self._reads is None:
            return None
        return self._reads.read_node(name)

    def read_node(self, name: str) -> RawObject:
        with self._translated(f"read node {name}"):
            return self._raw(self._core.read_node, name)

    def set_node_taints(
        self, name: str, taints: list[RawObject], resource_version: str, *, dry_run: bool = False
    ) -> None:
        """Replace spec.taints, failing with ConflictError if the node changed since read
        (a JSON merge patch carrying metadata.resourceVersion is checked by the API).
        A dry run goes through authorization and admission and changes nothing."""
        patch = {"metadata": {"resourceVersion": resource_version}, "spec": {"taints": taints}}
        query = [("fieldManager", FIELD_MANAGER)] + ([("dryRun", "All")] if dry_run else [])
        with self._translated(f"update taints of node {name}"):
            # Steering writes tens of taints per eviction on a large cluster, and the
            # generated method's per-call validation cost a quarter of each write.
            answer = _sent(
                self._api,
                "PATCH",
                "/api/v1/nodes/{name}",
                path_params={"name": name},
                query=query,
                body=patch,
                content_type="application/merge-patch+json",
                timeout=self._timeout,
            )
            _finished(answer.response)

    def cordon_node(self, name: str) -> None:
        """spec.unschedulable: true, as `kubectl cordon` sets it."""
        with self._translated(f"cordon node {name}"):
            response = self._core.patch_node(
                name,
                {"spec": {"unschedulable": True}},
                field_manager=FIELD_MANAGER,
                _content_type="application/merge-patch+json",
                _preload_content=False,
                _request_timeout=self._timeout,
            )
            _finished(response)

    # Namespaces -------------------------------------------------------------

    def find_namespace(self, name: str) -> RawObject | None:
        """The namespace, or None when it does not exist.

        A list with a field selector rather than a get: loadaware's ClusterRole
        grants list on namespaces (it reads their labels), not get."""
        if self._reads is not None:
            return self._reads.find_namespace(name)
        with self._translated(f"list namespaces (metadata.name={name})"):
            body = self._raw(self._core.list_namespace, field_selector=f"metadata.name={name}")
        items = list(body.get("items") or [])
        return items[0] if items else None

    # ConfigMaps (loadaware's state) -----------------------------------------

    def read_config_map(self, namespace: str, name: str) -> RawObject | None:
        try:
            with self._translated(f"read configmap {namespace}/{name}"):
                return self._raw(self._core.read_namespaced_config_map, name, namespace)
        except NotFoundError:
            return None

    def create_config_map(self, namespace: str, body: RawObject) -> RawObject:
        with self._translated(f"create configmap {namespace}/{body['metadata']['name']}"):
            return self._raw(
                self._core.create_namespaced_config_map,
                namespace,
                body,
                field_manager=FIELD_MANAGER,
            )

    def check_config_map_write(self, namespace: str, body: RawObject, *, create: bool) -> None:
        """A server-side dry run of the create (or update) loadaware is about to need:
        it goes through authorization, admission and the namespace check, and
        changes nothing."""
        name = body["metadata"]["name"]
        verb = "create" if create else "update"
        with self._translated(f"{verb} configmap {namespace}/{name} (dry run)"):
            if create:
                response = self._core.create_namespaced_config_map(
                    namespace,
                    body,
                    dry_run="All",
                    field_manager=FIELD_MANAGER,
                    _preload_content=False,
                    _request_timeout=self._timeout,
                )
                _finished(response)
            else:
                response = self._core.replace_namespaced_config_map(
                    name,
                    namespace,
                    body,
                    dry_run="All",
                    field_manager=FIELD_MANAGER,
                    _preload_content=False,
                    _request_timeout=self._timeout,
                )
                _finished(response)

    def replace_config_map(self, namespace: str, body: RawObject) -> RawObject:
        """PUT with metadata.resourceVersion set: ConflictError if someone wrote in between."""
        name = body["metadata"]["name"]
        with self._translated(f"update configmap {namespace}/{name}"):
            # A round writes its state at every eviction.
            answer = _sent(
                self._api,
                "PUT",
                "/api/v1/namespaces/{namespace}/configmaps/{name}",
                path_params={"namespace": namespace, "name": name},
                query=[("fieldManager", FIELD_MANAGER)],
                body=body,
                content_type="application/json",
                timeout=self._timeout,
            )
            return json.loads(answer.read())

    # Events ---------------------------------------------------------------

    def create_event(self, namespace: str, body: RawObject) -> None:
        with self._translated(f"create event in {namespace}"):
            response = self._core.create_namespaced_event(
                namespace, body, _preload_content=False, _request_timeout=self._timeout
            )
            _finished(response)


def _sent(
    api: kubernetes.client.ApiClient,
    method: str,
    path: str,
    *,
    path_params: dict[str, str],
    query: list[tuple[str, str]],
    body: RawObject,
    content_type: str,
    timeout: float,
) -> Any:
    """The answer to a JSON request, sent through the client's own REST layer (its
    pool, TLS, proxy and timeouts) with the client's headers and credentials, for
    the writes a round makes at every eviction. Built here rather than by the
    generated method or `param_serialize`: their per-call validation and
    serialisation of plain JSON cost a third of each write, and steering writes tens
    of taints per eviction on a large cluster. An answer that is not 2xx raises the
    client's ApiException, read, as the generated method does, for the one
    translation of errors."""
    from kubernetes.client.exceptions import ApiException

    config = api.configuration
    headers = {"Accept": "application/json", "Content-Type": content_type, **api.default_headers}
    if api.cookie:
        headers["Cookie"] = api.cookie
    # The credentials as the client applies them: a bearer token refreshed by its
    # hook (exec plugins, projected tokens) or none where client certificates are used.
    api.update_params_for_auth(headers, query, ["BearerToken"], path, method, body)
    for key, value in path_params.items():
        path = path.replace("{" + key + "}", quote(value, safe=config.safe_chars_for_path_param))
    url = config.host + path
    if query:
        url += "?" + urlencode(query, quote_via=quote)
    answer = api.call_api(method, url, headers, body, _request_timeout=timeout)
    if not 200 <= answer.status <= 299:
        answer.read()
        raise ApiException.from_response(http_resp=answer, body=None, data=None)
    return answer


def _finished(response: Any) -> None:
    """Read what is left of a response whose body loadaware does not need, and give its
    connection back to the pool. Left unread, the connection stays taken and the next
    request opens another: a new connection (and a new thread in a threaded server) for
    every eviction, taint patch and event."""
    response.drain_conn()
    response.release_conn()


class Leases:
    """The three calls of leader election on one coordination.k8s.io/v1 Lease."""

    def __init__(
        self,
        api_client: kubernetes.client.ApiClient,
        namespace: str,
        name: str,
        timeout_seconds: float,
    ) -> None:
        import kubernetes.client

        self._api = kubernetes.client.CoordinationV1Api(api_client)
        self._server = server_of(api_client)
        self.namespace = namespace
        self.name = name
        self._timeout = timeout_seconds

    def _call(self, what: str, call: Callable[..., Any], *args: Any) -> RawObject:
        with translated(f"{what} lease {self.namespace}/{self.name}", self._server):
            response = call(*args, _preload_content=False, _request_timeout=self._timeout)
        return json.loads(response.data)

    def read(self) -> RawObject | None:
        try:
            return self._call("read", self._api.read_namespaced_lease, self.name, self.namespace)
        except NotFoundError:
            return None

    def create(self, spec: dict[str, Any]) -> RawObject:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": spec,
        }
        return self._call("create", self._api.create_namespaced_lease, self.namespace, body)

    def replace(self, lease: RawObject) -> RawObject:
        # metadata.resourceVersion is the one read: the API answers 409 if it moved on.
        return self._call(
            "update", self._api.replace_namespaced_lease, self.name, self.namespace, lease
        )
