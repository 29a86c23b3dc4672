"""The live read through `sim serve`: a first sync of the cluster cache against one
read_cluster, and a round on the warm cache, with the API requests each sends.

    python -m bench.cache_read [--nodes 1000 5000] [--pods-per-node 30] [--churn 20]

For each size a child process serves a generated cluster (usage independent of
requests) with the simulated API; every measurement runs in a fresh process of
its own, so that its memory is its own:

- read: `cluster.read_cluster`, as every round did before the cache: seconds,
  requests, and the process's peak RSS above what it had before reading;
- first sync: a ClusterCache from start to its first snapshot: seconds, requests
  (lists, then one watch per kind), and its steady RSS above the same baseline
  once synced (the cache holding the cluster, as serve does between rounds);
- warm round: `churn` evictions and the replacements the simulated controllers
  make; once the cluster is at rest and the cache has heard of every change,
  the trigger: the freshness check and the snapshot a round plans from, as
  serve's rounds do. Seconds from the trigger, and the lists and gets sent
  (none is the point).

Targets (issue "the cluster as a watched cache"): at 5,000 nodes / 150,000 pods a
warm round starts planning within 1 s with no LIST; the cache's memory within 1.5x
that of one read. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import multiprocessing
import multiprocessing.connection
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from typing import Any

from bench.cluster_read import write_kubeconfig
from bench.harness import status_bytes
from loadaware import cluster, kube
from loadaware.sim import _cluster, _server, _settings, scenarios


def _serve(nodes: int, pods_per_node: int, pipe: multiprocessing.connection.Connection) -> None:
    now = datetime.datetime.now(datetime.UTC)
    started = time.perf_counter()
    generated = scenarios.generate_cluster(
        nodes=nodes,
        pods_per_node=pods_per_node,
        family="usage-independent",
        hot_fraction=0.1,
        seed=1,
        now=now,
    )
    sim = _cluster.SimCluster(
        generated.objects, generated.metrics, settings=_settings.SimSettings(ready_delay=1.0)
    )
    del generated
    gc.collect()
    gc.freeze()
    server = _server.SimServer(sim).start()
    pipe.send((server.port, time.perf_counter() - started))
    pipe.recv()
    server.stop()


def _admin(url: str, path: str, method: str = "GET") -> Any:
    request = urllib.request.Request(url + path, method=method)
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def _reads(url: str) -> dict[str, int]:
    """Requests by verb since the log was last cleared."""
    counts: dict[str, int] = {}
    for row in _admin(url, "/_sim/requests")["requests"]:
        counts[row["verb"]] = counts.get(row["verb"], 0) + row["count"]
    return counts


def _rss_mb() -> float:
    return (status_bytes("VmRSS") or 0) / 2**20


def _peak_mb() -> float:
    return (status_bytes("VmHWM") or 0) / 2**20


def _caught_up(url: str, cache: cluster.ClusterCache) -> bool:
    latest = _admin(url, "/_sim/versions")["latestChange"]
    for path, version in cache.versions().items():
        parts = [p for p in path.split("/") if p]
        key = parts[-1] if parts[0] == "api" else f"{parts[1]}/{parts[-1]}"
        if version < latest.get(key, 0):
            return False
    return True


def _quiet(url: str, seconds: float = 2.0, timeout: float = 900.0) -> None:
    """Wait until the simulated cluster has not changed for `seconds`."""
    deadline = time.monotonic() + timeout
    last = _admin(url, "/_sim/versions")["latestChange"]
    stable_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = _admin(url, "/_sim/versions")["latestChange"]
        if now != last:
            last, stable_since = now, time.monotonic()
        elif time.monotonic() - stable_since >= seconds:
            return
    raise TimeoutError("the simulated cluster never came to rest")


def _measure(kind: str, url: str, kubeconfig: str, churn: int) -> dict[str, Any]:
    settings = kube.ClientSettings(kubeconfig=kubeconfig)
    client = kube.api_client(settings)
    gc.collect()
    base = _rss_mb()
    _admin(url, "/_sim/requests", "DELETE")
    if kind == "read":
        started = time.perf_counter()
        state = cluster.read_cluster(settings, client=client)
        seconds = time.perf_counter() - started
        return {
            "seconds": seconds,
            "requests": _reads(url),
            "pods": len(state.pods),
            "memoryMb": _peak_mb() - base,
        }
    cache = cluster.ClusterCache(client).start()
    started = time.perf_counter()
    cache.wait_synced()
    state = cache.snapshot()
    sync_seconds = time.perf_counter() - started
    deadline = time.monotonic() + 60
    while not _caught_up(url, cache) and time.monotonic() < deadline:
        time.sleep(0.05)
    sync_requests = _reads(url)
    gc.collect()
    held = _rss_mb() - base
    # The warm round: pods evicted meanwhile, replaced by the simulated controllers.
    import kubernetes.client

    core = kubernetes.client.CoreV1Api(client)
    movable = [p for p in state.pods if p.owner is not None and p.owner.kind == "ReplicaSet"]
    evicted = 0
    for pod in movable[:: max(1, len(movable) // max(churn, 1))]:
        if evicted >= churn:
            break
        try:
            core.create_namespaced_pod_eviction(
                pod.name,
                pod.namespace,
                {"metadata": {"name": pod.name, "namespace": pod.namespace}},
                _preload_content=False,
                _request_timeout=120,
            )
        except kubernetes.client.ApiException:
            continue  # a PodDisruptionBudget said no: another pod then
        evicted += 1
    # The controllers recreate and bind; the round is triggered once they are done,
    # as a schedule's round comes to a cluster at rest.
    _quiet(url)
    _admin(url, "/_sim/requests", "DELETE")
    heard = time.perf_counter()
    while not _caught_up(url, cache):
        time.sleep(0.005)
    # The trigger: what a round does before it plans (serve's cached_reader).
    trigger = time.perf_counter()
    cache.check_fresh(datetime.timedelta(minutes=2))
    warm = cache.snapshot()
    warm_seconds = time.perf_counter() - trigger
    catch_up_seconds = trigger - heard
    warm_requests = _reads(url)
    relists = {name: stats["relists"] for name, stats in cache.stats().items() if stats["relists"]}
    cache.stop()
    return {
        "seconds": sync_seconds,
        "requests": sync_requests,
        "pods": len(state.pods),
        "memoryMb": held,
        "warmSeconds": warm_seconds,
        "catchUpSeconds": catch_up_seconds,
        "warmRequests": warm_requests,
        "warmPods": len(warm.pods),
        "events": sum(s["events"] for s in cache.stats().values()),
        "relists": relists,
    }


def _child(kind: str, url: str, kubeconfig: str, churn: int) -> dict[str, Any]:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.cache_read",
            "--measure",
            kind,
            "--url",
            url,
            "--kubeconfig",
            kubeconfig,
            "--churn",
            str(churn),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    if out.returncode != 0:
        raise RuntimeError(f"measuring {kind} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _size(nodes: int, pods_per_node: int, churn: int) -> list[str]:
    context = multiprocessing.get_context("fork")
    parent_end, child_end = context.Pipe()
    server = context.Process(target=_serve, args=(nodes, pods_per_node, child_end), daemon=True)
    server.start()
    port, setup = parent_end.recv()
    url = f"http://127.0.0.1:{port}"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            kubeconfig = write_kubeconfig(pathlib.Path(tmp) / "kubeconfig", url)
            read = _child("read", url, str(kubeconfig), churn)
            cached = _child("cache", url, str(kubeconfig), churn)
    finally:
        parent_end.send("stop")
        server.join(timeout=60)

    def count(requests: dict[str, int], verb: str) -> int:
        return requests.get(verb, 0)

    ratio = cached["memoryMb"] / read["memoryMb"] if read["memoryMb"] > 0 else float("nan")
    return [
        f"{nodes} nodes, {read['pods']} pods (server setup {setup:.0f} s)",
        f"  {'read':22} {read['seconds']:7.2f} s  {count(read['requests'], 'list'):4} lists  "
        f"{count(read['requests'], 'watch'):3} watches  {read['memoryMb']:7.0f} MB peak",
        f"  {'first sync':22} {cached['seconds']:7.2f} s  "
        f"{count(cached['requests'], 'list'):4} lists  "
        f"{count(cached['requests'], 'watch'):3} watches  {cached['memoryMb']:7.0f} MB held "
        f"({ratio:.2f}x the read)",
        f"  {'warm round to plan':22} {cached['warmSeconds']:7.2f} s  "
        f"{count(cached['warmRequests'], 'list'):4} lists  "
        f"{count(cached['warmRequests'], 'get'):3} gets     after {churn} evictions, "
        f"{cached['events']} events applied",
        f"  (the cache had heard of every change {cached['catchUpSeconds']:.2f} s after "
        "the cluster came to rest)",
        f"  relists: {cached['relists'] or 'none'}",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cache_read", description=__doc__)
    parser.add_argument("--nodes", type=int, nargs="+", default=[1000, 5000])
    parser.add_argument("--pods-per-node", type=int, default=30)
    parser.add_argument("--churn", type=int, default=20)
    parser.add_argument("--measure", choices=("read", "cache"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--kubeconfig", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(_measure(args.measure, args.url, args.kubeconfig, args.churn)))
        return 0
    for nodes in args.nodes:
        for line in _size(nodes, args.pods_per_node, args.churn):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
