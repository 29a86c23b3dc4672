"""The cluster cache's pod list read typed (_cache_pod_pages) holds what the generic
path builds.

Covered: against the simulated API serving a generated cluster with odd pods added
(init containers, extended resources, host ports, a quantity of another type, no
qosClass, one read_pod refuses, Unschedulable and otherwise unscheduled pods, a
terminating pod, labels and annotations not in ASCII), the synced cache holds the
entries (pod, class priority, unschedulable flag) and the refusals the generic
list and conversion give; the odd pods are left raw to the generic path and the
rest are read typed. Pages of generated pods (Hypothesis: as the API server writes
them and malformed anywhere, with PodScheduled conditions of every reason) read
typed convert as the generic page does, pod by pod, with the same resourceVersion
noted; pods not in ASCII are read the generic way; a page that is not JSON, not a
list object, has a malformed item, an item that is not an object, text that is not
UTF-8 or a number beyond a double in an item read the generic way gives the same
error, message for message.
"""

from __future__ import annotations

import copy
import json
import pathlib
from collections.abc import Iterator
from typing import Any

import kubernetes.client
import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadaware import cluster, kube, sim
from loadaware.cluster import (
    _cache_objects,
    _cache_pod_pages,
    _cache_store,
    _cache_watch,
    _convert,
    _live,
)
from loadaware.errors import InputError
from loadaware.kube import ClientSettings
from loadaware.sim import scenarios
from tests.cluster.test_plain_pod import api_server_pods, pods
from tests.lib.sim import NOW, sim_server

PODS = _cache_objects.PODS
KIND = _cache_store.Kind(PODS)

# What a pod list's conversion keeps of each pod, and of each it refuses.
Converted = tuple[dict[str, tuple[Any, bool, bool]], dict[str, str]]


def converted(items: list[Any]) -> Converted:
    """The items of a pod list as _cache_watch converts them: entries read typed as
    they are, raw items through the cache's pod converter, refusals by object."""
    converter = _convert.Converter()
    entries: dict[str, tuple[Any, bool, bool]] = {}
    refused: dict[str, str] = {}
    for position, item in enumerate(items, start=1):
        if isinstance(item, _cache_objects.PodEntry):
            key, entry = item.pod.key, item
        else:
            try:
                key, entry = _cache_objects.CONVERTERS[PODS](converter, item, position)
            except InputError as exc:
                refused[_cache_watch._describe(KIND, item)] = exc.message
                continue
        entries[key] = (entry.pod, entry.class_priority, entry.unschedulable)
    return entries, refused


def read_both(data: bytes) -> tuple[Any, Any]:
    """The page read typed and the generic way, each converted with the resourceVersion
    noted, or the error its reading or converting raised (type and message)."""
    outcomes = []
    for read_page in (_cache_pod_pages.PodPages(_convert.Converter()).read, _live.read_raw_page):
        meta: dict[str, Any] = {}
        try:
            outcomes.append((converted(read_page(PODS, data, meta)), meta))
        except Exception as exc:
            outcomes.append((type(exc), str(exc)))
    return outcomes[0], outcomes[1]


def page(items: list[Any], version: Any = "41", **extra: Any) -> bytes:
    # List items come without kind and apiVersion, as the API server writes them.
    listed = []
    for item in items:
        if isinstance(item, dict):
            item = {k: v for k, v in item.items() if k not in ("kind", "apiVersion")}
        listed.append(item)
    body = {
        "kind": "PodList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": version, "continue": ""},
        "items": listed,
        **extra,
    }
    return msgspec.json.encode(body)


# --- against the simulated API --------------------------------------------------------


def odd_pods(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Pods the typed reader leaves to the generic path, or reads with care, made from
    a generated pod, by the name each is given."""

    def made(name: str) -> dict[str, Any]:
        pod = copy.deepcopy(template)
        pod["metadata"].update(name=name, namespace="odd", uid=f"uid-{name}")
        # Owned by nothing: no controller of the simulator's takes them for its own.
        del pod["metadata"]["ownerReferences"]
        return pod

    odd: dict[str, dict[str, Any]] = {}
    pod = odd["with-init"] = made("with-init")
    pod["spec"]["initContainers"] = [
        {"name": "init", "image": "busybox:1", "resources": {"requests": {"cpu": "50m"}}}
    ]
    pod = odd["with-gpu"] = made("with-gpu")
    resources = pod["spec"]["containers"][0].setdefault("resources", {})
    resources.setdefault("requests", {})["nvidia.com/gpu"] = "1"
    resources.setdefault("limits", {})["nvidia.com/gpu"] = "1"
    pod = odd["with-host-port"] = made("with-host-port")
    pod["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    pod = odd["numeric-cpu"] = made("numeric-cpu")
    pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": 1}}
    pod = odd["no-qos-class"] = made("no-qos-class")
    del pod["status"]["qosClass"]
    pod = odd["refused"] = made("refused")
    pod["spec"]["priority"] = "high"  # read_pod refuses it, naming the field
    for name, reason in (("unschedulable", "Unschedulable"), ("gated", "SchedulingGated")):
        pod = odd[name] = made(name)
        del pod["spec"]["nodeName"]
        pod["spec"]["nodeSelector"] = {"no-such-label": "anywhere"}
        pod["status"] = {
            "phase": "Pending",
            "qosClass": pod["status"]["qosClass"],
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": reason}],
        }
    pod = odd["terminating"] = made("terminating")
    # Its grace period ends after the simulated now (frozen): the kubelet keeps it.
    pod["metadata"]["deletionTimestamp"] = "2026-11-29T08:00:30Z"
    pod["metadata"]["deletionGracePeriodSeconds"] = 30
    pod = odd["zurich"] = made("zurich")
    pod["metadata"]["labels"]["city"] = "zürich"
    pod["metadata"]["annotations"] = {"description": "Größe: ünïcödé ✓"}
    return odd


# Left raw to the generic path, through the API server (which writes JSON in ASCII).
LEFT_RAW = {"with-init", "with-gpu", "with-host-port", "numeric-cpu", "no-qos-class", "refused"}


@pytest.fixture(scope="module")
def server() -> Iterator[sim.SimServer]:
    generated = scenarios.generate_cluster(nodes=6, now=NOW, seed=7)
    objects = generated.cluster_document()["items"]
    template = next(
        o
        for o in objects
        if o["kind"] == "Pod"
        and o["metadata"].get("ownerReferences", [{}])[0].get("kind") == "ReplicaSet"
    )
    objects.extend(odd_pods(template).values())
    with sim_server(None, objects=objects, metrics=generated.metrics) as running:
        yield running


@pytest.fixture
def client(server: sim.SimServer, tmp_path: pathlib.Path) -> Iterator[kubernetes.client.ApiClient]:
    config = server.write_kubeconfig(tmp_path / "kubeconfig")
    client = kube.api_client(ClientSettings(kubeconfig=str(config)))
    yield client
    client.close()


def test_the_cache_holds_the_entries_the_generic_list_builds(
    client: kubernetes.client.ApiClient,
) -> None:
    settings = ClientSettings(page_size=50)  # several pages
    raw, version = _live.list_kind(client, PODS, settings)
    generic = converted(raw)
    assert generic[1] == {"pods: odd/refused": generic[1]["pods: odd/refused"]}
    assert "spec.priority" in generic[1]["pods: odd/refused"]

    with cluster.ClusterCache(client, settings=settings, watch_seconds=(30.0, 30.0)) as cache:
        assert cache.wait_synced(20)
        store = cache._store
        with store.lock:
            held = {k: (e.pod, e.class_priority, e.unschedulable) for k, e in store.pods.items()}
            refused = {k: v for k, v in store.invalid.items() if k.startswith("pods: ")}
            listed_version = store.kinds[PODS].version
    assert held == generic[0]
    assert refused == generic[1]
    assert listed_version == version
    assert held["odd/unschedulable"][2] is True
    assert held["odd/gated"][2] is False
    assert held["odd/terminating"][0].deletion_timestamp is not None
    assert held["odd/zurich"][0].labels["city"] == "zürich"


def test_the_odd_pods_are_left_raw_and_the_rest_read_typed(
    client: kubernetes.client.ApiClient,
) -> None:
    reader = _cache_pod_pages.PodPages(_convert.Converter())
    items, _ = _live.list_kind(client, PODS, ClientSettings(page_size=50), read_page=reader.read)
    raw_names = {i["metadata"]["name"] for i in items if isinstance(i, dict)}
    typed = [i for i in items if isinstance(i, _cache_objects.PodEntry)]
    assert raw_names == LEFT_RAW
    assert len(typed) > 100
    assert {"unschedulable", "gated", "terminating", "zurich"} <= {e.pod.name for e in typed}
    assert converted(items) == converted(_live.list_kind(client, PODS, ClientSettings())[0])


# --- pages, read directly -------------------------------------------------------------

CONDITION = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["PodScheduled", "Ready"]),
        "status": st.sampled_from(["False", "True", 0]),
    },
    optional={"reason": st.sampled_from(["Unschedulable", "SchedulingGated", "", 5, None])},
)


@st.composite
def listed_pods(draw: st.DrawFn) -> Any:
    pod = draw(st.one_of(api_server_pods(), pods()))
    status = pod.get("status")
    if isinstance(status, dict) and draw(st.booleans()):
        conditions = status.get("conditions")
        extra = draw(st.lists(CONDITION, min_size=1, max_size=2))
        status["conditions"] = [*conditions, *extra] if isinstance(conditions, list) else extra
    return pod


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(listed_pods(), max_size=4), st.sampled_from(["41", "", None, 7]))
def test_a_page_read_typed_converts_as_the_generic_page(items: list[Any], version: Any) -> None:
    typed, generic = read_both(page(items, version))
    assert typed == generic


def test_generated_pods_are_read_typed() -> None:
    generated = scenarios.generate_cluster(nodes=2, now=NOW, seed=3)
    items = [o for o in generated.cluster_document()["items"] if o["kind"] == "Pod"]
    data = page(items)
    read = _cache_pod_pages.PodPages(_convert.Converter()).read(PODS, data, {})
    assert all(isinstance(i, _cache_objects.PodEntry) for i in read)
    assert converted(read) == converted(_live.read_raw_page(PODS, data, {}))


def test_pods_not_in_ascii_are_read_the_generic_way() -> None:
    generated = scenarios.generate_cluster(nodes=1, now=NOW, seed=3)
    pod = next(o for o in generated.cluster_document()["items"] if o["kind"] == "Pod")
    other = copy.deepcopy(pod)
    other["metadata"]["name"] += "-other"
    pod["metadata"]["labels"]["city"] = "zürich"
    data = page([pod, other])  # msgspec writes UTF-8, not \u escapes
    assert "ü".encode() in data
    read = _cache_pod_pages.PodPages(_convert.Converter()).read(PODS, data, {})
    assert isinstance(read[0], dict)  # not ASCII: the generic way
    assert isinstance(read[1], _cache_objects.PodEntry)
    typed, generic = read_both(data)
    assert typed == generic
    key = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
    assert typed[0][0][key][0].labels["city"] == "zürich"


GOOD = page([{"metadata": {"name": "a", "namespace": "shop"}, "spec": {"containers": []}}])


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"not json", id="not-json"),
        pytest.param(b"[]", id="not-a-list-object"),
        pytest.param(b'{"kind":"PodList","items":[{"metadata":{"name":"a"},}]}', id="bad-item"),
        pytest.param(b'{"kind":"PodList","items":[{"metadata":{"name":"a"}}', id="cut"),
        pytest.param(b'{"kind":"PodList","items":[1]}', id="item-not-an-object"),
        pytest.param(b'{"kind":"PodList","items":{"a":1}}', id="items-an-object"),
        pytest.param(b'{"kind":"PodList","metadata":[1],"items":[]}', id="metadata-a-list"),
        pytest.param(b'{"kind":7,"apiVersion":null,"items":[]}', id="kind-a-number"),
        pytest.param(GOOD.replace(b'"a"', b'"\xff"'), id="item-not-utf8"),
        pytest.param(GOOD.replace(b"{", b'{"x":"\xff",', 1), id="page-not-utf8"),
        pytest.param(GOOD.replace(b'"a"', b'"a\xc3\xbc","n":1e400'), id="huge-number"),
        pytest.param(GOOD.replace(b'"shop"', b'"\\ud800"'), id="lone-surrogate"),
    ],
)
def test_a_bad_page_says_what_the_generic_path_says(data: bytes) -> None:
    typed, generic = read_both(data)
    assert typed == generic


def test_the_first_pages_resource_version_is_kept() -> None:
    reader = _cache_pod_pages.PodPages(_convert.Converter())
    meta: dict[str, Any] = {}
    reader.read(PODS, page([], "41"), meta)
    reader.read(PODS, page([], "42"), meta)
    assert meta == {"resourceVersion": "41"}


def test_items_keep_their_place_for_the_errors_named_by_position() -> None:
    nameless = {"metadata": {"namespace": "shop"}, "spec": {"containers": []}}
    pod = json.loads(GOOD)["items"][0]
    typed, generic = read_both(page([pod, nameless]))
    assert typed == generic
    assert typed[0][1] == {"pods: shop/None": "Pod (object #2): metadata.name: missing"}


def test_a_pod_whose_metadata_is_not_an_object_is_refused_and_the_rest_kept() -> None:
    generated = scenarios.generate_cluster(nodes=1, now=NOW, seed=3)
    good = next(o for o in generated.cluster_document()["items"] if o["kind"] == "Pod")
    bad = copy.deepcopy(good)
    bad["metadata"] = "web-1"
    read = _cache_pod_pages.PodPages(_convert.Converter()).read(PODS, page([bad, good]), {})
    entries, refused = converted(read)
    assert list(entries) == [f"{good['metadata']['namespace']}/{good['metadata']['name']}"]
    assert list(refused) == ["pods: None"]
