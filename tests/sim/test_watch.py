"""The simulated API server's watch, through the official client's `watch.Watch` and
`kubectl get -w`: a resourceVersion to start from and 410 Gone for one too old,
bookmarks, label and field selectors (an object leaving the selection is DELETED,
one entering it ADDED), the stream ended by the server's timeout, a stream cut
mid-flight, and the request log that counts lists and watches."""

from __future__ import annotations

import pathlib
import queue
import subprocess
import threading
import time
from collections.abc import Iterator

import kubernetes.client
import kubernetes.watch
import pytest
from kubernetes.client.exceptions import ApiException

from loadaware import kube, sim
from loadaware.kube import ClientSettings
from tests.lib.sim import KUBECTL, sim_server


@pytest.fixture
def server() -> Iterator[sim.SimServer]:
    # Bookmarks every 0.2 s: a quiet kind's age stays well under any bound tested.
    with sim_server(watch_bookmark_seconds=0.2) as running:
        yield running


@pytest.fixture
def core(server: sim.SimServer, tmp_path: pathlib.Path) -> kubernetes.client.CoreV1Api:
    config = server.write_kubeconfig(tmp_path / "kubeconfig")
    return kubernetes.client.CoreV1Api(kube.api_client(ClientSettings(kubeconfig=str(config))))


def _configmap(name: str, labels: dict[str, str] | None = None) -> dict[str, object]:
    return {"metadata": {"name": name, "labels": labels or {}}, "data": {"k": "v"}}


def _collect(
    stream: Iterator[dict[str, object]], until: int, deadline: float = 10.0
) -> list[tuple[str, str]]:
    """(type, name) of the stream's events until `until` of them came (or the stream ended)."""
    seen: list[tuple[str, str]] = []
    stop = time.monotonic() + deadline
    for event in stream:
        obj = event["raw_object"]
        seen.append((str(event["type"]), obj["metadata"].get("name", "")))  # type: ignore[index]
        if len(seen) >= until or time.monotonic() > stop:
            break
    return seen


def test_watch_from_a_resource_version_replays_what_came_after(
    core: kubernetes.client.CoreV1Api,
) -> None:
    listed = core.list_namespaced_config_map("shop")
    version = listed.metadata.resource_version
    core.create_namespaced_config_map("shop", _configmap("one"))
    core.patch_namespaced_config_map("one", "shop", {"data": {"k": "w"}})
    core.delete_namespaced_config_map("one", "shop")
    watch = kubernetes.watch.Watch()
    events = _collect(
        watch.stream(
            core.list_namespaced_config_map,
            "shop",
            resource_version=version,
            timeout_seconds=5,
        ),
        until=3,
    )
    watch.stop()
    assert events == [("ADDED", "one"), ("MODIFIED", "one"), ("DELETED", "one")]


def test_watch_from_a_compacted_version_is_gone(
    server: sim.SimServer, core: kubernetes.client.CoreV1Api
) -> None:
    version = core.list_namespaced_config_map("shop").metadata.resource_version
    core.create_namespaced_config_map("shop", _configmap("two"))
    server.sim.store.compact()
    watch = kubernetes.watch.Watch()
    with pytest.raises(ApiException) as raised:
        for _ in watch.stream(
            core.list_namespaced_config_map, "shop", resource_version=version, timeout_seconds=5
        ):
            pass
    assert raised.value.status == 410


def test_bookmarks_carry_the_watch_progress(
    server: sim.SimServer, core: kubernetes.client.CoreV1Api
) -> None:
    version = int(core.list_namespaced_config_map("shop").metadata.resource_version)
    # A change to another resource moves the store on; the bookmark says the watch
    # has seen it, with nothing of its own to show.
    core.create_namespace({"metadata": {"name": "elsewhere"}})
    watch = kubernetes.watch.Watch()
    bookmarks = []
    for event in watch.stream(
        core.list_namespaced_config_map,
        "shop",
        resource_version=str(version),
        allow_watch_bookmarks=True,
        timeout_seconds=5,
    ):
        if event["type"] == "BOOKMARK":
            bookmarks.append(int(event["raw_object"]["metadata"]["resourceVersion"]))
            break
    watch.stop()
    assert bookmarks
    assert bookmarks[0] > version
    assert bookmarks[0] >= server.sim.store.resource_version


def test_without_bookmarks_allowed_none_are_sent(core: kubernetes.client.CoreV1Api) -> None:
    version = core.list_namespaced_config_map("shop").metadata.resource_version
    started = time.monotonic()
    events = _collect(
        kubernetes.watch.Watch().stream(
            core.list_namespaced_config_map, "shop", resource_version=version, timeout_seconds=1
        ),
        until=1,
    )
    assert events == []
    # Ended by the server's timeout, not by the client.
    assert 0.9 <= time.monotonic() - started < 5


def test_label_selector_turns_leaving_into_deleted_and_entering_into_added(
    core: kubernetes.client.CoreV1Api,
) -> None:
    core.create_namespaced_config_map("shop", _configmap("tagged", {"team": "a"}))
    version = core.list_namespaced_config_map("shop").metadata.resource_version
    core.patch_namespaced_config_map("tagged", "shop", {"metadata": {"labels": {"team": "b"}}})
    core.create_namespaced_config_map("shop", _configmap("other", {"team": "b"}))
    core.patch_namespaced_config_map("tagged", "shop", {"metadata": {"labels": {"team": "a"}}})
    core.patch_namespaced_config_map("tagged", "shop", {"data": {"k": "x"}})
    events = _collect(
        kubernetes.watch.Watch().stream(
            core.list_namespaced_config_map,
            "shop",
            label_selector="team=a",
            resource_version=version,
            timeout_seconds=2,
        ),
        until=3,
    )
    assert events == [("DELETED", "tagged"), ("ADDED", "tagged"), ("MODIFIED", "tagged")]


def test_field_selector_on_a_watch(
    server: sim.SimServer, core: kubernetes.client.CoreV1Api
) -> None:
    pods = core.list_pod_for_all_namespaces()
    node = pods.items[0].spec.node_name
    on_node = {p.metadata.name for p in pods.items if p.spec.node_name == node}
    elsewhere = next(p for p in pods.items if p.spec.node_name != node)
    version = pods.metadata.resource_version
    victim = next(
        p for p in pods.items if p.metadata.name in on_node and p.metadata.owner_references
    )
    server.sim.evict(victim.metadata.namespace, victim.metadata.name)
    server.sim.evict(elsewhere.metadata.namespace, elsewhere.metadata.name)
    events = _collect(
        kubernetes.watch.Watch().stream(
            core.list_pod_for_all_namespaces,
            field_selector=f"spec.nodeName={node}",
            resource_version=version,
            timeout_seconds=2,
        ),
        until=50,
    )
    names = {name for _, name in events}
    assert victim.metadata.name in names
    assert elsewhere.metadata.name not in names


def test_a_cut_stream_ends_the_watch(
    server: sim.SimServer, core: kubernetes.client.CoreV1Api
) -> None:
    version = core.list_namespaced_config_map("shop").metadata.resource_version
    ended = threading.Event()
    failures: list[BaseException] = []

    def watch() -> None:
        try:
            for _ in kubernetes.watch.Watch().stream(
                core.list_namespaced_config_map,
                "shop",
                resource_version=version,
                timeout_seconds=30,
            ):
                pass
        except Exception as exc:  # a cut stream may end either way
            failures.append(exc)
        ended.set()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    server.wait_for(lambda: server.sim.open_watches() == 1)
    assert server.sim.close_watches() == 1
    assert ended.wait(10)


def test_request_log_counts_lists_and_watches(
    server: sim.SimServer, core: kubernetes.client.CoreV1Api
) -> None:
    server.sim.requests.clear()
    core.list_pod_for_all_namespaces(limit=5)
    version = core.list_namespaced_config_map("shop").metadata.resource_version
    _collect(
        kubernetes.watch.Watch().stream(
            core.list_namespaced_config_map, "shop", resource_version=version, timeout_seconds=1
        ),
        until=1,
    )
    counts = server.sim.requests.counts()
    assert counts[("list", "pods")] == 1
    assert counts[("list", "configmaps")] == 1
    assert counts[("watch", "configmaps")] == 1
    assert server.sim.requests.total("get") == 0


@pytest.mark.skipif(not pathlib.Path(KUBECTL).exists(), reason="kubectl not installed")
def test_kubectl_get_watch_sees_changes(
    server: sim.SimServer, core: kubernetes.client.CoreV1Api, tmp_path: pathlib.Path
) -> None:
    config = server.write_kubeconfig(tmp_path / "kubectl-config")
    process = subprocess.Popen(
        [
            KUBECTL,
            "--kubeconfig",
            str(config),
            "get",
            "configmaps",
            "-n",
            "shop",
            "--watch-only",
            "--output-watch-events",
            "--no-headers",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(" ".join(line.split()[:2]))

    threading.Thread(target=read, daemon=True).start()
    try:
        server.wait_for(lambda: server.sim.open_watches() >= 1)
        core.create_namespaced_config_map("shop", _configmap("seen-by-kubectl"))
        core.delete_namespaced_config_map("seen-by-kubectl", "shop")
        got: list[str] = []
        deadline = time.monotonic() + 15
        while len(got) < 2 and time.monotonic() < deadline:
            try:
                got.append(lines.get(timeout=0.5))
            except queue.Empty:
                continue
        assert got == ["ADDED seen-by-kubectl", "DELETED seen-by-kubectl"]
    finally:
        process.terminate()
        process.wait(10)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
