"""How long the live cluster reader takes on a large cluster served by the simulated API.

    python -m bench.cluster_read [--nodes 5000] [--pods-per-node 30] [--page-size 500]

Generates the cluster in a child process that serves it with `loadaware sim
serve`'s server (so the server's work runs on the other core, as a real API
server would), then times, in this process:

- first raw read: every list the reader requests, with urllib3, bodies read but
  not parsed; the server serialises each object on first use, so this is the
  cold-server cost;
- raw HTTP: the same requests again (server warm): what HTTP and the server cost;
- raw HTTP + json: the same, bodies parsed;
- read_cluster: `cluster.read_cluster` end to end through the official client
  (rate limiter, raw JSON pages, parsing, `cluster_state_from_objects`);
- client models: the client's typed path (list_pod_for_all_namespaces into V1Pod
  models, then sanitize_for_serialization) on the first pages of pods,
  extrapolated to every pod: the alternative the reader does not take.

The issue's target is read_cluster <= 20 s for 5,000 nodes and 150,000 pods on 2 cores.
Not part of `make test`: generating the cluster takes a while.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import multiprocessing
import multiprocessing.connection
import pathlib
import sys
import tempfile
import time
from collections.abc import Sequence

import kubernetes
import urllib3

from loadaware import cluster, kube
from loadaware.cluster import _live
from loadaware.sim import _cluster, _server, scenarios

_MODEL_PAGES = 10


def _serve(
    nodes: int, pods_per_node: int, port_pipe: multiprocessing.connection.Connection
) -> None:
    now = datetime.datetime.now(datetime.UTC)
    started = time.perf_counter()
    generated = scenarios.generate_cluster(nodes=nodes, pods_per_node=pods_per_node, now=now)
    sim = _cluster.SimCluster(generated.objects, generated.metrics)
    del generated
    gc.collect()
    gc.freeze()  # millions of long-lived dicts: keep the collector off them while serving
    server = _server.SimServer(sim).start()
    port_pipe.send((server.port, time.perf_counter() - started))
    port_pipe.recv()  # until the parent is done
    server.stop()


def write_kubeconfig(path: pathlib.Path, url: str) -> pathlib.Path:
    """A kubeconfig for the simulated API at `url`, without credentials."""
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: sim, cluster: {{server: '{url}'}}}}]\n"
        "users: [{name: sim, user: {}}]\n"
        "contexts: [{name: sim, context: {cluster: sim, user: sim}}]\n"
        "current-context: sim\n"
    )
    return path


def _raw_pass(url: str, page_size: int, parse: bool) -> tuple[float, int, int]:
    """(seconds, requests, bytes) for every list, as the reader pages through them."""
    pool = urllib3.PoolManager(maxsize=1)
    started = time.perf_counter()
    requests = size = 0
    kept: list[object] = []  # held like the reader holds its items: no free churn per page
    gc.disable()
    try:
        for path, _ in _live._LISTS:
            token = ""
            while True:
                query = f"?limit={page_size}" + (f"&continue={token}" if token else "")
                response = pool.request("GET", url + path + query, preload_content=True)
                requests += 1
                size += len(response.data)
                if response.status == 404:
                    break
                if parse:
                    page = json.loads(response.data)
                    kept.append(page)
                    token = (page.get("metadata") or {}).get("continue") or ""
                else:
                    # Find the token without parsing the page: it sits in the list's metadata.
                    head = response.data[:400].decode("utf-8", "replace")
                    marker = '"continue":"'
                    token = head.split(marker, 1)[1].split('"', 1)[0] if marker in head else ""
                if not token:
                    break
        seconds = time.perf_counter() - started
    finally:
        del kept
        gc.enable()
    return seconds, requests, size


def _models_pass(kubeconfig: pathlib.Path, page_size: int, total_pods: int) -> tuple[float, int]:
    """Seconds for the typed client path on the first pages of pods, and how many pods."""
    client = kube.api_client(kube.ClientSettings(kubeconfig=str(kubeconfig)))
    core = kubernetes.client.CoreV1Api(client)
    started = time.perf_counter()
    token = None
    count = 0
    for _ in range(_MODEL_PAGES):
        page = core.list_pod_for_all_namespaces(limit=page_size, _continue=token)
        raw = client.sanitize_for_serialization(page.items)
        count += len(raw)
        token = page.metadata._continue
        if not token:
            break
    seconds = time.perf_counter() - started
    client.close()
    return seconds, count


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cluster_read", description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods-per-node", type=int, default=30)
    parser.add_argument("--page-size", type=int, default=500)
    parser.add_argument("--target-seconds", type=float, default=20.0)
    args = parser.parse_args(argv)

    context = multiprocessing.get_context("fork")
    parent_end, child_end = context.Pipe()
    child = context.Process(
        target=_serve, args=(args.nodes, args.pods_per_node, child_end), daemon=True
    )
    child.start()
    port, setup_seconds = parent_end.recv()
    url = f"http://127.0.0.1:{port}"
    rows: list[tuple[str, float, str]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = write_kubeconfig(pathlib.Path(tmp) / "kubeconfig", url)
            seconds, requests, size = _raw_pass(url, args.page_size, parse=False)
            rows.append(("first raw read (server cold)", seconds, f"{requests} requests"))
            seconds, requests, size = _raw_pass(url, args.page_size, parse=False)
            rows.append(("raw HTTP (baseline)", seconds, f"{size / 1e6:.0f} MB"))
            seconds, _, _ = _raw_pass(url, args.page_size, parse=True)
            rows.append(("raw HTTP + json", seconds, ""))
            settings = kube.ClientSettings(kubeconfig=str(kubeconfig), page_size=args.page_size)
            started = time.perf_counter()
            state = cluster.read_cluster(settings)
            read_seconds = time.perf_counter() - started
            rows.append(
                (
                    "read_cluster",
                    read_seconds,
                    f"{len(state.nodes)} nodes, {len(state.pods)} pods",
                )
            )
            pods = len(state.pods)
            del state
            seconds, sampled = _models_pass(kubeconfig, args.page_size, pods)
            rows.append(
                (
                    "client models (extrapolated)",
                    seconds * pods / max(sampled, 1),
                    f"pods only; measured on {sampled} pods",
                )
            )
    finally:
        parent_end.send("stop")
        child.join(timeout=30)

    print(f"cluster: {args.nodes} nodes, ~{args.nodes * args.pods_per_node} pods")
    print(f"server setup (generate + load): {setup_seconds:.1f} s\n")
    print(f"{'step':32} {'seconds':>8}  note")
    for name, seconds, note in rows:
        print(f"{name:32} {seconds:8.2f}  {note}")
    verdict = "within" if read_seconds <= args.target_seconds else "OVER"
    print(f"\nread_cluster {read_seconds:.1f} s: {verdict} the {args.target_seconds:.0f} s target")
    return 0 if read_seconds <= args.target_seconds else 1


if __name__ == "__main__":
    sys.exit(main())
