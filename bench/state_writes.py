"""The state store's CPU per eviction: what a round spends in its StateStore for each
eviction it carries out, at the history lengths of whole plans at 1,000 and 5,000
nodes.

    python -m bench.state_writes                       # 262 and 1,406 evictions
    python -m bench.state_writes --lengths 262 --repeat 1

The store runs in this process against `loadaware sim serve` in a process of its
own, as a round's would: for every length it carries out a round of that many
evictions on a ConfigMap of its own, each eviction a reservation and then the
settlement "evicted" as the executor makes them (carried to the next write, and
flushed once at the end, as the executor does when the round's evicting ends).
The history starts empty and grows with the round, so that the table's "round"
column is the mean over a round's history lengths; its "at length" column is the
same work for evictions added to a history that already holds `length` records,
the cost of a round's last evictions. CPU seconds are this process's only (the
simulator's are not counted), divided by evictions; writes are the ConfigMap
updates the simulator answered, per eviction.

No cluster file is needed: the built-in "small" scenario serves, and the records
name pods that need not exist (nothing is evicted).
"""

from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Sequence

from loadaware import evict, kube, policy
from loadaware.kube import ClientSettings

DEFAULT_LENGTHS = (262, 1406)
AT_LENGTH_EVICTIONS = 100
NAMESPACE = "loadaware"


def _serve(directory: pathlib.Path) -> tuple[subprocess.Popen[bytes], pathlib.Path]:
    kubeconfig = directory / "kubeconfig.yaml"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "loadaware",
            "sim",
            "serve",
            "--scenario",
            "small",
            "--port",
            "0",
            "--kubeconfig-out",
            str(kubeconfig),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not kubeconfig.exists():
        if server.poll() is not None or time.monotonic() > deadline:
            server.terminate()
            raise RuntimeError("sim serve did not start")
        time.sleep(0.1)
    return server, kubeconfig


def _settings(config_map: str) -> policy.LoadAwarePolicy:
    return policy.parse_policy(
        {
            "metrics": {"metricsServer": {}},
            "limits": {
                "cooldown": "30m",
                "window": {"duration": "1h", "maxEvictions": 100_000},
            },
            "state": {"namespace": NAMESPACE, "configMap": config_map},
        }
    )


def _record(i: int) -> evict.EvictionRecord:
    namespace = f"team-{i % 15}"
    workload = f"worker-{i}"
    return evict.EvictionRecord(
        at="1970-01-01T00:00:00Z",  # stamped by reserve()
        round="bench",
        pod=f"{namespace}/{workload}-7d4f9c8b6d-x2k9q",
        uid=str(uuid.uuid4()),
        namespace=namespace,
        workload=f"Deployment/{namespace}/{workload}",
        node=f"default-a-{i % 1600:04d}",
    )


def _evict(store: evict.StateStore, first: int, count: int) -> None:
    for i in range(first, first + count):
        record = _record(i)
        store.reserve(record)
        store.note_evicted(record)
    store.flush()


def _updates(server_url: str) -> int:
    with urllib.request.urlopen(f"{server_url}/_sim/requests") as answer:
        log = json.load(answer)
    return sum(
        entry["count"]
        for entry in log["requests"]
        if entry["resource"] == "configmaps" and entry["verb"] in ("create", "update")
    )


def _measure(kube_: evict.Kube, server_url: str, length: int, name: str) -> tuple[float, ...]:
    now = datetime.datetime.now(datetime.UTC)
    store = evict.StateStore(kube_, _settings(name), lambda: now)
    writes = _updates(server_url)
    started = time.process_time()
    _evict(store, 0, length)
    round_cpu = (time.process_time() - started) / length
    round_writes = (_updates(server_url) - writes) / length
    writes = _updates(server_url)
    started = time.process_time()
    _evict(store, length, AT_LENGTH_EVICTIONS)
    at_length_cpu = (time.process_time() - started) / AT_LENGTH_EVICTIONS
    at_length_writes = (_updates(server_url) - writes) / AT_LENGTH_EVICTIONS
    return round_cpu, round_writes, at_length_cpu, at_length_writes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.state_writes")
    parser.add_argument("--lengths", type=int, nargs="+", default=list(DEFAULT_LENGTHS))
    parser.add_argument("--repeat", type=int, default=3, help="best of this many")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as directory:
        server, kubeconfig = _serve(pathlib.Path(directory))
        try:
            client = kube.api_client(ClientSettings(kubeconfig=str(kubeconfig)))
            server_url = client.configuration.host
            kube_ = evict.Kube(client)
            urllib.request.urlopen(
                urllib.request.Request(
                    f"{server_url}/api/v1/namespaces",
                    data=json.dumps({"metadata": {"name": NAMESPACE}}).encode(),
                    headers={"Content-Type": "application/json"},
                    method="POST",
                )
            ).close()
            print(
                "length | round ms CPU/eviction | writes/eviction "
                "| at length ms CPU/eviction | writes/eviction"
            )
            for length in args.lengths:
                runs = [
                    _measure(kube_, server_url, length, f"bench-state-{length}-{n}")
                    for n in range(args.repeat)
                ]
                best = min(runs)
                print(
                    f"{length} | {best[0] * 1000:.2f} | {best[1]:.2f} "
                    f"| {min(r[2] for r in runs) * 1000:.2f} | {best[3]:.2f}"
                )
        finally:
            server.terminate()
            server.wait(timeout=60)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
