"""The Kubernetes calls the evictor makes, through the official client.

Library errors are translated here, once, into loadaware.errors: 404 ->
NotFoundError, 409 -> ConflictError, 429 -> TooManyRequestsError, anything
else (5xx, timeouts, refused connections) -> ClusterError. Error bodies are
truncated and never carry request headers, so a token cannot leak through them.
Objects are returned as raw JSON dicts (RawObject), as `kubectl -o json` prints them.

With `reads` (the cluster cache), reads of pods, namespaces and the node list are
answered from it, with the fields the evictor reads; every write, and the read of a node
before its taints are changed (which needs the current resourceVersion), still
goes to the API server.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

import urllib3

from loadaware.errors import (
    ClusterError,
    ConflictError,
    ForbiddenError,
    NotFoundError,
    TooManyRequestsError,
)

if TYPE_CHECKING:
    import kubernetes.client
    from kubernetes.client.exceptions import ApiException

RawObject = dict[str, Any]
ERROR_BODY_MAX_CHARS = 300


class Reads(Protocol):
    """What can answer the evictor's reads instead of the API server (ClusterCache)."""

    def read_pod(self, namespace: str, name: str) -> RawObject | None: ...
    def list_pods(self, namespace: str, label_selector: str = "") -> list[RawObject]: ...
    def list_node_pods(self, node: str) -> list[RawObject]: ...
    def list_nodes(self) -> list[RawObject]: ...
    def find_namespace(self, name: str) -> RawObject | None: ...


FIELD_MANAGER = "loadaware"


@contextmanager
def _translated(action: str) -> Iterator[None]:
    from kubernetes.client.exceptions import ApiException

    try:
        yield
    except ApiException as exc:
        detail = _status_message(exc)
        message = f"{action}: {exc.status} {exc.reason or ''} {detail}".strip()
        error: type[ClusterError] = {
            403: ForbiddenError,
            404: NotFoundError,
            409: ConflictError,
            429: TooManyRequestsError,
        }.get(exc.status or 0, ClusterError)
        raise error(message) from exc
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        raise ClusterError(
            f"{action}: API server unreachable ({type(exc).__name__})", reference="unreachable"
        ) from exc


def _status_message(exc: ApiException) -> str:
    """The message of a Status body, truncated; never the raw body of something else."""
    try:
        body = json.loads(exc.body or "")
    except (TypeError, ValueError):
        return ""
    message = body.get("message", "") if isinstance(body, dict) else ""
    return str(message)[:ERROR_BODY_MAX_CHARS]


class Kube:
    """Typed entry points for every call loadaware makes that changes or watches a cluster."""

    def __init__(
        self,
        api_client: kubernetes.client.ApiClient,
        *,
        timeout_seconds: float = 15.0,
        reads: Reads | None = None,
    ):
        import kubernetes.client

        self._core = kubernetes.client.CoreV1Api(api_client)
        self._timeout = timeout_seconds
        self._reads = reads

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
            with _translated(f"read pod {namespace}/{name}"):
                return self._raw(self._core.read_namespaced_pod, name, namespace)
        except NotFoundError:
            return None

    def list_pods(self, namespace: str, label_selector: str = "") -> list[RawObject]:
        if self._reads is not None:
            return self._reads.list_pods(namespace, label_selector)
        with _translated(f"list pods in {namespace}"):
            body = self._raw(
                self._core.list_namespaced_pod, namespace, label_selector=label_selector
            )
        return list(body.get("items") or [])

    def list_node_pods(self, node: str) -> list[RawObject]:
        """Every pod bound to `node`, in all namespaces (a field selector, one request)."""
        if self._reads is not None:
            return self._reads.list_node_pods(node)
        with _translated(f"list pods on node {node}"):
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
        with _translated(f"evict pod {namespace}/{name}"):
            self._core.create_namespaced_pod_eviction(
                name,
                namespace,
                body,
                dry_run="All" if dry_run else None,
                _preload_content=False,
                _request_timeout=self._timeout,
            )

    # Nodes ----------------------------------------------------------------

    def list_nodes(self) -> list[RawObject]:
        if self._reads is not None:
            return self._reads.list_nodes()
        with _translated("list nodes"):
            return list(self._raw(self._core.list_node).get("items") or [])

    def read_node(self, name: str) -> RawObject:
        with _translated(f"read node {name}"):
            return self._raw(self._core.read_node, name)

    def set_node_taints(
        self, name: str, taints: list[RawObject], resource_version: str, *, dry_run: bool = False
    ) -> None:
        """Replace spec.taints, failing with ConflictError if the node changed since read
        (a JSON merge patch carrying metadata.resourceVersion is checked by the API).
        A dry run goes through authorization and admission and changes nothing."""
        patch = {"metadata": {"resourceVersion": resource_version}, "spec": {"taints": taints}}
        with _translated(f"update taints of node {name}"):
            self._core.patch_node(
                name,
                patch,
                field_manager=FIELD_MANAGER,
                dry_run="All" if dry_run else None,
                _content_type="application/merge-patch+json",
                _preload_content=False,
                _request_timeout=self._timeout,
            )

    def cordon_node(self, name: str) -> None:
        """spec.unschedulable: true, as `kubectl cordon` sets it."""
        with _translated(f"cordon node {name}"):
            self._core.patch_node(
                name,
                {"spec": {"unschedulable": True}},
                field_manager=FIELD_MANAGER,
                _content_type="application/merge-patch+json",
                _preload_content=False,
                _request_timeout=self._timeout,
            )

    # Namespaces -------------------------------------------------------------

    def find_namespace(self, name: str) -> RawObject | None:
        """The namespace, or None when it does not exist.

        A list with a field selector rather than a get: loadaware's ClusterRole
        grants list on namespaces (it reads their labels), not get."""
        if self._reads is not None:
            return self._reads.find_namespace(name)
        with _translated(f"list namespaces (metadata.name={name})"):
            body = self._raw(self._core.list_namespace, field_selector=f"metadata.name={name}")
        items = list(body.get("items") or [])
        return items[0] if items else None

    # ConfigMaps (loadaware's state) -----------------------------------------

    def read_config_map(self, namespace: str, name: str) -> RawObject | None:
        try:
            with _translated(f"read configmap {namespace}/{name}"):
                return self._raw(self._core.read_namespaced_config_map, name, namespace)
        except NotFoundError:
            return None

    def create_config_map(self, namespace: str, body: RawObject) -> RawObject:
        with _translated(f"create configmap {namespace}/{body['metadata']['name']}"):
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
        with _translated(f"{verb} configmap {namespace}/{name} (dry run)"):
            if create:
                self._core.create_namespaced_config_map(
                    namespace,
                    body,
                    dry_run="All",
                    field_manager=FIELD_MANAGER,
                    _preload_content=False,
                    _request_timeout=self._timeout,
                )
            else:
                self._core.replace_namespaced_config_map(
                    name,
                    namespace,
                    body,
                    dry_run="All",
                    field_manager=FIELD_MANAGER,
                    _preload_content=False,
                    _request_timeout=self._timeout,
                )

    def replace_config_map(self, namespace: str, body: RawObject) -> RawObject:
        """PUT with metadata.resourceVersion set: ConflictError if someone wrote in between."""
        name = body["metadata"]["name"]
        with _translated(f"update configmap {namespace}/{name}"):
            return self._raw(
                self._core.replace_namespaced_config_map,
                name,
                namespace,
                body,
                field_manager=FIELD_MANAGER,
            )

    # Events ---------------------------------------------------------------

    def create_event(self, namespace: str, body: RawObject) -> None:
        with _translated(f"create event in {namespace}"):
            self._core.create_namespaced_event(
                namespace, body, _preload_content=False, _request_timeout=self._timeout
            )
