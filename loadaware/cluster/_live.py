"""Reading a live cluster through the official `kubernetes` client into a ClusterState.

Read, in this order: namespaces, PriorityClasses, nodes, pods, PodDisruptionBudgets,
ReplicaSets, Deployments, StatefulSets, DaemonSets and Jobs — every list
paginated (`limit`, 500 by default, and `continue`), so a 150,000-pod cluster
costs the API server many small requests rather than one huge one.

Speed: lists are requested as raw JSON (the client's own deserialisation is
skipped) and parsed with msgspec while a thread already fetches the
next page, then converted by the same `cluster_state_from_objects`
the file loader uses. Deserialising into the client's model classes and
back (`sanitize_for_serialization`) is an order of magnitude slower at this
size; see bench/cluster_read.py.

Politeness: requests are paced by a token bucket (`qps`, `burst`, as
client-go's rate limiter), every request has a connect and a read timeout, and
a failed page is retried at most `retries` times (429 with its Retry-After,
5xx, dropped connections); an expired continue token (410) restarts that list
once. Everything the client raises is translated here, once, into
ClusterError (or ConflictError / TooManyRequestsError); configuration
problems (no kubeconfig, unknown context) are InputError.

Configuration: an explicit kubeconfig path, else in-cluster config when
running in a pod (KUBERNETES_SERVICE_HOST), else the client's default
kubeconfig ($KUBECONFIG, ~/.kube/config); `context` picks a kubeconfig context.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
import urllib3

from loadaware import collector
from loadaware.cluster import _convert, _types
from loadaware.errors import ClusterError, ConflictError, InputError, TooManyRequestsError

# The client is imported where a call needs it: commands that read files never load it.
if TYPE_CHECKING:
    import kubernetes.client

# (path, optional): optional lists may be missing from an API server without harm.
_LISTS: tuple[tuple[str, bool], ...] = (
    ("/api/v1/namespaces", False),
    ("/apis/scheduling.k8s.io/v1/priorityclasses", True),
    ("/api/v1/nodes", False),
    ("/api/v1/pods", False),
    ("/apis/policy/v1/poddisruptionbudgets", False),
    ("/apis/apps/v1/replicasets", False),
    ("/apis/apps/v1/deployments", False),
    ("/apis/apps/v1/statefulsets", False),
    ("/apis/apps/v1/daemonsets", False),
    ("/apis/batch/v1/jobs", True),
)
_PREFETCH_PAGES = 4
_RETRYABLE = frozenset({429, 500, 502, 503, 504})
_MAX_RETRY_AFTER = 10.0
_ERROR_BODY_LIMIT = 300  # error bodies are quoted, truncated: never a whole object


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientSettings:
    kubeconfig: str | None = None
    context: str | None = None
    in_cluster: bool | None = None  # None: when KUBERNETES_SERVICE_HOST is set and no kubeconfig
    qps: float = 50.0
    burst: int = 100
    connect_timeout_seconds: float = 5.0
    read_timeout_seconds: float = 60.0
    page_size: int = 500
    retries: int = 3


class _TokenBucket:
    """client-go's flowcontrol token bucket: `burst` at once, then `qps` per second."""

    def __init__(self, qps: float, burst: int, clock: Callable[[], float] = time.monotonic):
        self._qps = qps
        self._burst = max(1, burst)
        self._tokens = float(self._burst)
        self._clock = clock
        self._last = clock()
        self._lock = threading.Lock()

    def wait(self) -> None:
        if self._qps <= 0:
            return
        with self._lock:
            now = self._clock()
            self._tokens = min(self._burst, self._tokens + (now - self._last) * self._qps)
            self._last = now
            self._tokens -= 1
            delay = -self._tokens / self._qps if self._tokens < 0 else 0.0
        if delay > 0:
            time.sleep(delay)


def api_client(settings: ClientSettings | None = None) -> kubernetes.client.ApiClient:
    """An ApiClient configured from the settings; InputError when no configuration is usable."""
    import kubernetes

    settings = settings or ClientSettings()
    configuration = kubernetes.client.Configuration()
    in_cluster = settings.in_cluster
    if in_cluster is None:
        in_cluster = settings.kubeconfig is None and "KUBERNETES_SERVICE_HOST" in os.environ
    try:
        if in_cluster:
            kubernetes.config.load_incluster_config(client_configuration=configuration)
        else:
            kubernetes.config.load_kube_config(
                config_file=settings.kubeconfig,
                context=settings.context,
                client_configuration=configuration,
                persist_config=False,
            )
    except (kubernetes.config.ConfigException, OSError, TypeError, ValueError) as exc:
        where = settings.kubeconfig or ("in-cluster config" if in_cluster else "default kubeconfig")
        raise InputError(
            f"cannot load Kubernetes configuration ({where}): {exc}",
            hint="pass --kubeconfig PATH (and --context NAME), or run inside a pod",
        ) from exc
    # Retries are ours (bounded, paced); urllib3's own would hide failures.
    configuration.retries = False
    # The cluster cache holds one connection per watched kind; the round's own calls
    # need theirs beside them, or each would open and drop a new one.
    configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize or 0, 32)
    return kubernetes.client.ApiClient(configuration)


def read_cluster(
    settings: ClientSettings | None = None,
    *,
    client: kubernetes.client.ApiClient | None = None,
) -> _types.ClusterState:
    """The cluster's nodes, pods, PDBs and workloads as a ClusterState."""
    settings = settings or ClientSettings()
    own = client is None
    client = client or api_client(settings)
    try:
        with collector.paused():
            objects = read_objects(settings, client=client)
            try:
                return _convert.cluster_state_from_objects(objects)
            except InputError as exc:
                raise ClusterError(
                    f"the cluster returned an object loadaware cannot read: {exc.message}",
                    reference="invalid-cluster-object",
                ) from exc
    finally:
        if own:
            client.close()


def read_objects(
    settings: ClientSettings | None = None,
    *,
    client: kubernetes.client.ApiClient,
) -> list[dict[str, Any]]:
    """Every object read_cluster reads, raw (with kind and apiVersion set on each)."""
    settings = settings or ClientSettings()
    limiter = _TokenBucket(settings.qps, settings.burst)
    objects: list[dict[str, Any]] = []
    for path, _ in _LISTS:
        objects.extend(_list_all(client, path, settings, limiter))
    return objects


def list_kind(
    client: kubernetes.client.ApiClient,
    path: str,
    settings: ClientSettings,
    limiter: _TokenBucket | None = None,
) -> tuple[list[dict[str, Any]], str | None]:
    """Every object of one list path, raw, and the list's resourceVersion, from which a
    watch continues; None for an optional kind the API server does not serve."""
    meta: dict[str, Any] = {}
    limiter = limiter or _TokenBucket(settings.qps, settings.burst)
    items = list(_list_all(client, path, settings, limiter, meta))
    if not meta.get("served", True):
        return [], None
    return items, str(meta.get("resourceVersion") or "")


def _list_all(
    client: kubernetes.client.ApiClient,
    path: str,
    settings: ClientSettings,
    limiter: _TokenBucket,
    meta: dict[str, Any] | None = None,
) -> Iterator[dict[str, Any]]:
    restarted = False
    while True:
        items: list[dict[str, Any]] = []
        try:
            for data in _prefetched_pages(client, path, settings, limiter, meta):
                page = _parse(path, data)
                if meta is not None and "resourceVersion" not in meta:
                    # Every page of a list carries the first page's resourceVersion.
                    version = (page.get("metadata") or {}).get("resourceVersion")
                    meta["resourceVersion"] = version
                kind = str(page.get("kind", ""))
                item_kind = kind[:-4] if kind.endswith("List") else kind
                api_version = page.get("apiVersion", "v1")
                for item in page.get("items") or []:
                    # List items come without kind and apiVersion; the converter needs them.
                    item["kind"] = item_kind
                    item["apiVersion"] = api_version
                    items.append(item)
            yield from items
            return
        except _ExpiredError:
            if meta is not None:
                meta.pop("resourceVersion", None)
            if restarted:
                raise ClusterError(
                    f"listing {path}: the continue token expired twice; the cluster changes "
                    "faster than it can be read",
                    reference="cluster-list-expired",
                ) from None
            restarted = True


def _parse(path: str, data: bytes) -> dict[str, Any]:
    try:
        page = _JSON.decode(data)
    except msgspec.DecodeError as exc:
        raise ClusterError(
            f"listing {path}: the response is not JSON: {exc}", reference="cluster-bad-response"
        ) from exc
    if not isinstance(page, dict):
        raise ClusterError(
            f"listing {path}: the response is not a list object", reference="cluster-bad-response"
        )
    return page


# Twice as fast as the json module on the API server's JSON (which has no NaN).
_JSON = msgspec.json.Decoder()
_CONTINUE = re.compile(rb'"continue":"([^"]*)"')
_HEAD_BYTES = 8192


def _continue_token(path: str, data: bytes) -> str:
    """The page's continue token, found without parsing the page: a list's metadata comes
    before its items, as the API server encodes it. Falls back to a full parse."""
    end = data.find(b'"items":', 0, _HEAD_BYTES)
    if end >= 0:
        found = _CONTINUE.search(data, 0, end)
        return found.group(1).decode() if found else ""
    return str((_parse(path, data).get("metadata") or {}).get("continue") or "")


def _prefetched_pages(
    client: kubernetes.client.ApiClient,
    path: str,
    settings: ClientSettings,
    limiter: _TokenBucket,
    meta: dict[str, Any] | None = None,
) -> Iterator[bytes]:
    """The raw pages of one list, fetched by a thread one page ahead of the caller, so
    that waiting for the API server overlaps with parsing (the GIL is released while
    waiting on the socket)."""
    pages: queue.Queue[bytes | BaseException | None] = queue.Queue(maxsize=_PREFETCH_PAGES)
    stop = threading.Event()

    def fetch() -> None:
        token = ""
        try:
            while not stop.is_set():
                data = _get_page(client, path, settings, limiter, token)
                if data is None:  # not served: an optional kind
                    if meta is not None:
                        meta["served"] = False
                    break
                token = _continue_token(path, data)
                pages.put(data)
                if not token:
                    break
        except BaseException as exc:  # handed to the caller, raised there
            pages.put(exc)
            return
        pages.put(None)

    fetcher = threading.Thread(target=fetch, name="cluster-list", daemon=True)
    fetcher.start()
    try:
        while True:
            item = pages.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        # Unblock a fetcher waiting on a full queue, then let it finish its page.
        while fetcher.is_alive():
            with contextlib.suppress(queue.Empty):
                pages.get(timeout=0.05)


class _ExpiredError(Exception):
    pass


def _get_page(
    client: kubernetes.client.ApiClient,
    path: str,
    settings: ClientSettings,
    limiter: _TokenBucket,
    token: str,
) -> bytes | None:
    import kubernetes.client

    query: list[tuple[str, Any]] = [("limit", settings.page_size)]
    if token:
        query.append(("continue", token))
    attempt = 0
    while True:
        limiter.wait()
        try:
            method, url, headers, body, post = client.param_serialize(
                "GET",
                path,
                query_params=query,
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
            )
            response = client.call_api(
                method,
                url,
                header_params=headers,
                body=body,
                post_params=post,
                _request_timeout=(settings.connect_timeout_seconds, settings.read_timeout_seconds),
            )
            data = response.read()
            if response.status >= 400:
                error = kubernetes.client.ApiException(
                    status=response.status,
                    reason=response.reason,
                    body=data.decode("utf-8", "replace"),
                )
                error.headers = response.headers
                raise error
            return bytes(data)
        except kubernetes.client.ApiException as exc:
            status = int(exc.status or 0)
            if status == 404 and path in _OPTIONAL_PATHS:
                return None
            if status == 410 and token:
                raise _ExpiredError() from exc
            if status in _RETRYABLE and attempt < settings.retries:
                attempt += 1
                time.sleep(_retry_delay(exc, attempt))
                continue
            raise translate_api_exception(exc, f"listing {path}") from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            if attempt < settings.retries:
                attempt += 1
                time.sleep(0.2 * 2**attempt)
                continue
            raise ClusterError(
                f"listing {path}: the Kubernetes API is unreachable: {type(exc).__name__}: {exc}",
                reference="cluster-unreachable",
            ) from exc


_OPTIONAL_PATHS = frozenset(path for path, optional in _LISTS if optional)


def _retry_delay(exc: kubernetes.client.ApiException, attempt: int) -> float:
    headers = exc.headers or {}
    after = headers.get("Retry-After") if hasattr(headers, "get") else None
    try:
        if after is not None:
            return min(float(after), _MAX_RETRY_AFTER)
    except ValueError:
        pass
    return 0.2 * 2**attempt


def translate_api_exception(exc: kubernetes.client.ApiException, doing: str) -> ClusterError:
    """One ApiException as loadaware's error, with the Status message (truncated)."""
    status = int(exc.status or 0)
    message = _status_message(exc)
    text = f"{doing}: {status} {exc.reason or ''}: {message}".rstrip(": ")
    if status == 409:
        return ConflictError(text)
    if status == 429:
        return TooManyRequestsError(text)
    if status in (401, 403):
        return ClusterError(
            text,
            reference="cluster-forbidden",
            hint="check the credentials and RBAC of the kubeconfig or service account",
        )
    return ClusterError(text)


def _status_message(exc: kubernetes.client.ApiException) -> str:
    body = exc.body
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not body:
        return ""
    try:
        parsed = json.loads(body)
    except ValueError:
        return str(body)[:_ERROR_BODY_LIMIT]
    if isinstance(parsed, dict) and isinstance(parsed.get("message"), str):
        return parsed["message"][:_ERROR_BODY_LIMIT]
    return str(body)[:_ERROR_BODY_LIMIT]
