"""MetricsServerProvider reads metrics.k8s.io lists typed (_metrics_server_lists) as
the generic path reads them, or leaves them to it.

Covers: real NodeMetrics and PodMetrics lists from `loadaware sim serve`, read
typed (as the API server's `application/json` answer) and generically (the
same bytes as `application/json; charset=utf-8`, which the client reads itself),
give equal Usage, for all and for some of the nodes and pods; each refusal of a
malformed answer (metadata.name, usage, quantity, timestamp, window, containers,
duplicates, not a list of objects, fields of another JSON type, non-ASCII) is
the same both ways, and so is a 2xx answer other than 200; one connection serves
every read (each answer's connection goes back to the pool); random NodeMetrics
and PodMetrics items (Hypothesis): whenever the typed reader reads them, it
converts them as the generic path does.
"""

from __future__ import annotations

import http.client
import http.server
import json
import threading
from collections.abc import Callable, Collection, Iterator
from typing import Any

import kubernetes.client
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadaware.errors import RefusedError
from loadaware.metrics import MetricsServerProvider, Usage
from loadaware.metrics import _metrics_server as metrics_server
from loadaware.metrics import _metrics_server_lists as lists
from loadaware.policy import MetricsSettings
from tests.lib.sim import sim_server
from tests.metrics.test_metrics_server import NODES_PATH, NOW, PODS_PATH, node_metrics, pod_metrics

SETTINGS = MetricsSettings.model_validate({"metricsServer": {}})
TYPED = "application/json"  # as the API server answers
GENERIC = "application/json; charset=utf-8"  # read by the client's own deserializer


class BytesStub:
    """Serves path -> bytes with one Content-Type over keep-alive HTTP/1.1; records the
    client port of each request (one per connection)."""

    def __init__(self, content_type: str) -> None:
        self.routes: dict[str, bytes] = {}
        self.status = 200
        self.ports: list[int] = []
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                stub.ports.append(self.client_address[1])
                data = stub.routes[self.path.split("?")[0]]
                self.send_response(stub.status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def provider(self) -> MetricsServerProvider:
        configuration = kubernetes.client.Configuration()
        configuration.host = self.url
        return MetricsServerProvider(SETTINGS, kubernetes.client.ApiClient(configuration))


@pytest.fixture
def stubs() -> Iterator[dict[str, BytesStub]]:
    served = {kind: BytesStub(kind) for kind in (TYPED, GENERIC)}
    threads = [
        threading.Thread(target=s.server.serve_forever, daemon=True) for s in served.values()
    ]
    for thread in threads:
        thread.start()
    yield served
    for stub in served.values():
        stub.server.shutdown()
        stub.server.server_close()
    for thread in threads:
        thread.join(timeout=10)


Outcome = Usage | tuple[str, str]


def outcome(read: Callable[[], Usage]) -> Outcome:
    try:
        return read()
    except RefusedError as exc:
        return (exc.reference, str(exc))


def both_ways(
    stubs: dict[str, BytesStub],
    nodes: bytes,
    pods: bytes,
    node_names: list[str],
    pod_keys: Collection[str] = (),
) -> Outcome:
    """The outcome of one fetch_usage typed and generically, asserted equal."""
    found = []
    for stub in stubs.values():
        stub.routes = {NODES_PATH: nodes, PODS_PATH: pods}
        fetch = stub.provider().fetch_usage
        found.append(outcome(lambda fetch=fetch: fetch(node_names, pod_keys, now=NOW)))
    assert found[0] == found[1]
    return found[0]


def raw_list(kind: str, items: list[Any]) -> bytes:
    body = {"kind": kind, "apiVersion": "metrics.k8s.io/v1beta1", "items": items}
    return json.dumps(body, ensure_ascii=False).encode()


def sim_answer(server: Any, path: str) -> bytes:
    connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        connection.request("GET", path, headers={"Accept": "application/json"})
        response = connection.getresponse()
        assert response.status == 200
        return response.read()
    finally:
        connection.close()


def test_real_answers_read_typed_equal_the_generic_reading(
    stubs: dict[str, BytesStub],
) -> None:
    with sim_server("small") as server:
        nodes, pods = sim_answer(server, NODES_PATH), sim_answer(server, PODS_PATH)
    typed_nodes, typed_pods = lists.read_nodes(nodes), lists.read_pods(pods)
    assert typed_nodes is not None  # the typed path is taken
    assert typed_pods is not None
    node_names = [i["metadata"]["name"] for i in json.loads(nodes)["items"]]
    pod_keys = [
        f"{i['metadata']['namespace']}/{i['metadata']['name']}" for i in json.loads(pods)["items"]
    ]
    assert len(node_names) > 2
    assert len(pod_keys) > 20
    everything = both_ways(stubs, nodes, pods, node_names, pod_keys)
    assert isinstance(everything, Usage)
    assert set(everything.nodes) == set(node_names)
    assert set(everything.pods) == set(pod_keys)
    assert all(s.cpu_cores > 0 and s.memory_bytes > 0 for s in everything.pods.values())
    some = both_ways(stubs, nodes, pods, [*node_names[::2], "absent"], pod_keys[::3])
    assert isinstance(some, Usage)
    assert set(some.nodes) == set(node_names[::2])
    assert set(some.notes) == {"absent"}
    assert set(some.pods) == set(pod_keys[::3])


NODE = node_metrics("node-a", "1523456789n", "6291456Ki")
POD = pod_metrics("shop", "web-1", {"app": ("400m", "512Mi"), "proxy": ("50000u", "64Mi")})


def changed(item: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {**item, **fields}


def without(item: dict[str, Any], field: str) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != field}


MALFORMED_NODES = {
    "no metadata.name": ([NODE, changed(NODE, metadata={})], "metadata.name is missing"),
    "metadata.name of another type": ([changed(NODE, metadata={"name": 7})], "name is missing"),
    "no usage": ([without(NODE, "usage")], "nodes node-a: usage is missing"),
    "usage of another type": ([changed(NODE, usage=[1])], "nodes node-a: usage is missing"),
    "no cpu": ([changed(NODE, usage={"memory": "1Gi"})], "not a quantity: None"),
    "a bad quantity": ([changed(NODE, usage={"cpu": "lots", "memory": "1Gi"})], "'lots'"),
    "a quantity of another type": (
        [changed(NODE, usage={"cpu": 1, "memory": "1Gi"})],
        "not a quantity: 1",
    ),
    "a bad timestamp": ([changed(NODE, timestamp="yesterday")], "timestamp 'yesterday' is not"),
    "no timestamp": ([without(NODE, "timestamp")], "timestamp None is not an RFC 3339 time"),
    "a zero window": ([changed(NODE, window="0s")], "window '0s' is not positive"),
    "a bad window": ([changed(NODE, window="soon")], "not a duration: 'soon'"),
    "a window of another type": ([changed(NODE, window=15)], "not a duration: 15"),
    "a non-ASCII name": ([changed(NODE, metadata={"name": "nœud"}), NODE, NODE], "more than once"),
}


@pytest.mark.parametrize(("items", "problem"), MALFORMED_NODES.values(), ids=MALFORMED_NODES)
def test_malformed_node_metrics_refuse_the_same_both_ways(
    stubs: dict[str, BytesStub], items: list[Any], problem: str
) -> None:
    reference, message = both_ways(stubs, raw_list("NodeMetricsList", items), b"{}", ["node-a"])
    assert reference in ("metrics-query-failed", "duplicate-series")
    assert problem in message


MALFORMED_PODS = {
    "no metadata.name": ([POD, changed(POD, metadata={"namespace": "shop"})], "name is missing"),
    "no containers": ([without(POD, "containers")], "containers is not a list"),
    "containers of another type": ([changed(POD, containers={})], "containers is not a list"),
    "a container without usage": ([changed(POD, containers=[{"name": "app"}])], "usage is missing"),
    "a container not an object": ([changed(POD, containers=["app"])], "usage is missing"),
    "a bad quantity": (
        [changed(POD, containers=[{"usage": {"cpu": "1", "memory": "much"}}])],
        "pods shop/web-1: not a quantity: 'much'",
    ),
    "a bad timestamp": ([changed(POD, timestamp=None)], "timestamp None is not"),
    "a negative window": ([changed(POD, window="-5s")], "not a duration: '-5s'"),
    "a duplicate": ([POD, POD], "lists pod shop/web-1 more than once"),
}


@pytest.mark.parametrize(("items", "problem"), MALFORMED_PODS.values(), ids=MALFORMED_PODS)
def test_malformed_pod_metrics_refuse_the_same_both_ways(
    stubs: dict[str, BytesStub], items: list[Any], problem: str
) -> None:
    nodes = raw_list("NodeMetricsList", [NODE])
    reference, message = both_ways(
        stubs, nodes, raw_list("PodMetricsList", items), ["node-a"], ["shop/web-1"]
    )
    assert reference in ("metrics-query-failed", "duplicate-series")
    assert problem in message


@pytest.mark.parametrize(
    "body",
    [b'{"items": [1]}', b'{"kind": "NodeMetricsList"}', b'{"items": null}', b"[]", b"", b'"x"'],
    ids=["an item not an object", "no items", "null items", "a list", "empty", "a string"],
)
def test_answers_not_a_list_of_objects_refuse_the_same_both_ways(
    stubs: dict[str, BytesStub], body: bytes
) -> None:
    assert both_ways(stubs, body, b"{}", ["node-a"]) == (
        "metrics-query-failed",
        "metrics.k8s.io/v1beta1 nodes: the answer is not a list of objects",
    )


def test_a_2xx_answer_other_than_200_reads_as_nothing_both_ways(
    stubs: dict[str, BytesStub],
) -> None:
    """The generated method has a response type for 200 only: another 2xx, however
    well formed, was read as no list, and still is."""
    for stub in stubs.values():
        stub.status = 203
    assert both_ways(stubs, raw_list("NodeMetricsList", [NODE]), b"{}", ["node-a"]) == (
        "metrics-query-failed",
        "metrics.k8s.io/v1beta1 nodes: the answer is not a list of objects",
    )


def test_each_answer_gives_its_connection_back(stubs: dict[str, BytesStub]) -> None:
    stub = stubs[TYPED]
    stub.routes = {NODES_PATH: raw_list("NodeMetricsList", [NODE]), PODS_PATH: raw_list("", [POD])}
    provider = stub.provider()
    for _ in range(3):
        usage = provider.fetch_usage(["node-a"], ["shop/web-1"], now=NOW)
        assert set(usage.pods) == {"shop/web-1"}
    assert len(stub.ports) == 6
    assert len(set(stub.ports)) == 1


# Well-formed items, then up to two fields removed or replaced by a value of any
# JSON type: most items are well formed or malformed in one place.
TEXT = st.one_of(st.sampled_from(["", "lots", "1", "15s", "yesterday"]), st.text(max_size=4))
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), TEXT)
ANY = st.one_of(SCALAR, st.lists(SCALAR, max_size=2), st.dictionaries(TEXT, SCALAR, max_size=2))
QUANTITY = st.sampled_from(["1", "250m", "1523456789n", "6291456Ki", "9Gi", "0", "1e3"])
STAMP = st.sampled_from(["2026-11-29T07:59:45Z", "2026-11-29T07:59:45.5+01:00"])
WINDOW = st.sampled_from(["15s", "20.047s", "1m0.5s", "0s", "0.0s"])
USAGE = st.fixed_dictionaries({"cpu": QUANTITY, "memory": QUANTITY})
NAMES = st.sampled_from(["a", "b"])
NODE_ITEM = st.fixed_dictionaries(
    {"metadata": st.fixed_dictionaries({"name": NAMES}), "timestamp": STAMP, "window": WINDOW},
    optional={"usage": USAGE},
)
POD_ITEM = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries({"name": NAMES}, optional={"namespace": st.just("x")}),
        "timestamp": STAMP,
        "window": WINDOW,
        "containers": st.lists(st.fixed_dictionaries({"name": TEXT, "usage": USAGE}), max_size=3),
    }
)
PLACES = [
    ("metadata",),
    ("metadata", "name"),
    ("metadata", "namespace"),
    ("timestamp",),
    ("window",),
    ("usage",),
    ("usage", "cpu"),
    ("usage", "memory"),
    ("containers",),
    ("containers", 0),
    ("containers", 1, "usage"),
    ("containers", 0, "usage", "cpu"),
    ("containers", 1, "usage", "memory"),
]


@st.composite
def items(draw: st.DrawFn, item: st.SearchStrategy[dict[str, Any]]) -> list[Any]:
    drawn = draw(st.lists(item, max_size=3))
    for place in draw(st.lists(st.sampled_from(PLACES), max_size=2)):
        target: Any = drawn[draw(st.integers(0, len(drawn) - 1))] if drawn else None
        for step in place[:-1]:
            inside = isinstance(target, list) and isinstance(step, int) and step < len(target)
            target = (
                target[step] if inside else target.get(step) if isinstance(target, dict) else None
            )
        last = place[-1]
        if isinstance(target, list) and not (isinstance(last, int) and last < len(target)):
            continue
        if isinstance(target, dict) and draw(st.booleans()):
            target.pop(last, None)
        elif isinstance(target, dict | list):
            target[last] = draw(ANY)
    return drawn


WANTED = st.frozensets(st.sampled_from(["a", "b", "None/a", "x/b"]))


def compared(
    read: Callable[[bytes], Any],
    typed: Callable[[Any, frozenset[str]], Any],
    generic: Callable[[Any, frozenset[str]], Any],
    items: list[Any],
    wanted: frozenset[str],
) -> None:
    data = json.dumps({"items": items}).encode()
    read_typed = read(data)
    if read_typed is None:
        return  # left to the generic path, which reads it as it always did

    def converted(convert: Callable[[Any, frozenset[str]], Any], items: Any) -> Any:
        try:
            return convert(items, wanted)
        except RefusedError as exc:
            return (exc.reference, str(exc))

    assert converted(typed, read_typed.items) == converted(generic, json.loads(data)["items"])


@settings(max_examples=400, deadline=None)
@given(items(NODE_ITEM), WANTED)
def test_random_node_metrics_read_typed_as_generically(
    items: list[Any], wanted: frozenset[str]
) -> None:
    compared(
        lists.read_nodes,
        metrics_server._typed_node_samples,
        metrics_server._node_samples,
        items,
        wanted,
    )


@settings(max_examples=400, deadline=None)
@given(items(POD_ITEM), WANTED)
def test_random_pod_metrics_read_typed_as_generically(
    items: list[Any], wanted: frozenset[str]
) -> None:
    compared(
        lists.read_pods,
        metrics_server._typed_pod_samples,
        metrics_server._pod_samples,
        items,
        wanted,
    )
