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
once. Requests and their errors go through loadaware.kube (`raw_request`, one
translation into the ClusterError family naming the server and the cause);
the client's configuration is kube.api_client's (kube.ClientSettings).
"""

from __future__ import annotations

import contextlib
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

from loadaware import gc_freeze, kube
from loadaware.cluster import _convert, _types
from loadaware.errors import ClusterError, InputError, UnreachableError
from loadaware.kube import ClientSettings

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


def read_cluster(
    settings: ClientSettings | None = None,
    *,
    client: kubernetes.client.ApiClient | None = None,
) -> _types.ClusterState:
    """The cluster's nodes, pods, PDBs and workloads as a ClusterState."""
    settings = settings or ClientSettings()
    own = client is None
    client = client or kube.api_client(settings)
    try:
        with gc_freeze.paused():
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


# Reads one page of a list (path, the page's bytes, the list's metadata or None) into
# the objects it holds, noting the list's resourceVersion in the metadata (note_version).
PageReader: TypeAlias = Callable[[str, bytes, dict[str, Any] | None], list[Any]]


def list_kind(
    client: kubernetes.client.ApiClient,
    path: str,
    settings: ClientSettings,
    limiter: _TokenBucket | None = None,
    read_page: PageReader | None = None,
) -> tuple[list[Any], str | None]:
    """Every object of one list path, raw (or as `read_page` reads each page; raw by
    default), and the list's resourceVersion, from which a watch continues; None for
    an optional kind the API server does not serve."""
    meta: dict[str, Any] = {}
    limiter = limiter or _TokenBucket(settings.qps, settings.burst)
    items = list(_list_all(client, path, settings, limiter, meta, read_page))
    if not meta.get("served", True):
        return [], None
    return items, str(meta.get("resourceVersion") or "")


def _list_all(
    client: kubernetes.client.ApiClient,
    path: str,
    settings: ClientSettings,
    limiter: _TokenBucket,
    meta: dict[str, Any] | None = None,
    read_page: PageReader | None = None,
) -> Iterator[Any]:
    read_page = read_page or read_raw_page
    restarted = False
    while True:
        items: list[Any] = []
        try:
            for data in _prefetched_pages(client, path, settings, limiter, meta):
                items.extend(read_page(path, data, meta))
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


def read_raw_page(path: str, data: bytes, meta: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A page's objects, raw, each given the kind and apiVersion of the list (a
    PageReader); ClusterError for a page that is not a JSON object."""
    page = _parse(path, data)
    note_version(meta, page.get("metadata"))
    item_kind = item_kind_of(str(page.get("kind", "")))
    api_version = page.get("apiVersion", "v1")
    return [stamped(item, item_kind, api_version) for item in page.get("items") or []]


def note_version(meta: dict[str, Any] | None, page_metadata: Any) -> None:
    """Note the list's resourceVersion from its first page's metadata."""
    if meta is not None and "resourceVersion" not in meta:
        # Every page of a list carries the first page's resourceVersion.
        meta["resourceVersion"] = (page_metadata or {}).get("resourceVersion")


def item_kind_of(kind: str) -> str:
    """The kind of a list's items: `PodList` holds Pods."""
    return kind[:-4] if kind.endswith("List") else kind


def stamped(item: Any, item_kind: str, api_version: Any) -> Any:
    """The list item, given its kind and apiVersion: list items come without them,
    and the converter needs them."""
    item["kind"] = item_kind
    item["apiVersion"] = api_version
    return item


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
    query: list[tuple[str, Any]] = [("limit", settings.page_size)]
    if token:
        query.append(("continue", token))
    attempt = 0
    while True:
        limiter.wait()
        try:
            response = kube.raw_request(
                client,
                "GET",
                path,
                query,
                timeout=(settings.connect_timeout_seconds, settings.read_timeout_seconds),
                doing=f"listing {path}",
            )
            if response.status < 400:
                with kube.translated(f"listing {path}", kube.server_of(client)):
                    return bytes(response.read())
        except UnreachableError:
            if attempt < settings.retries:
                attempt += 1
                time.sleep(0.2 * 2**attempt)
                continue
            raise
        answer = kube.read_error(response)
        if answer.status == 404 and path in _OPTIONAL_PATHS:
            return None
        if answer.status == 410 and token:
            raise _ExpiredError()
        if answer.status in _RETRYABLE and attempt < settings.retries:
            attempt += 1
            time.sleep(_retry_delay(answer.headers, attempt))
            continue
        raise kube.api_error(answer, f"listing {path}", kube.server_of(client))


_OPTIONAL_PATHS = frozenset(path for path, optional in _LISTS if optional)


def _retry_delay(headers: Mapping[str, str], attempt: int) -> float:
    after = headers.get("Retry-After")
    try:
        if after is not None:
            return min(float(after), _MAX_RETRY_AFTER)
    except ValueError:
        pass
    return 0.2 * 2**attempt
