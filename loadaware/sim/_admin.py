"""The admin API under /_sim/: over HTTP, what the cluster's Python API does for tests.

    GET    /_sim/healthz
    GET    /_sim/faults                      POST a fault, DELETE all, DELETE /_sim/faults/{id}
    GET    /_sim/clock                       POST {"advanceSeconds": s} moves it on
    POST   /_sim/nodes/{name}/ready          {"ready": bool}
    POST   /_sim/nodes/{name}/gpu-exporter   {"running": bool}
    PUT    /_sim/usage/{namespace}/{pod}     {"cpu": cores, "memory": bytes, "gpu": percent}
    GET    /_sim/requests                    DELETE clears the log
    GET    /_sim/versions                    each resource's newest change
    POST   /_sim/watches/close, /_sim/watches/expire, /_sim/compact, /_sim/reconcile

Bodies are JSON; a malformed one is 400 with {"error": ...}.
"""

from __future__ import annotations

import json
from typing import Any

from loadaware.sim import _clock, _cluster, _response, _status


def answer(sim: _cluster.SimCluster, method: str, path: str, raw: bytes) -> _response.Response:
    """The answer to one admin request (`path` starts with /_sim/)."""
    try:
        body = json.loads(raw) if raw else {}
    except ValueError:
        return _response.Response(400, {"error": "the body must be JSON"})
    try:
        return _route(sim, method, path, body)
    except _status.ApiError as exc:
        return _response.Response(exc.code, exc.status)
    except (KeyError, TypeError, ValueError) as exc:
        return _response.Response(400, {"error": str(exc)})


def _route(sim: _cluster.SimCluster, method: str, path: str, body: Any) -> _response.Response:
    parts = [p for p in path.split("/") if p][1:]
    if parts == ["healthz"]:
        return _response.Response(200, "ok", content_type=_response.TEXT)
    if parts and parts[0] == "faults":
        if method == "GET" and len(parts) == 1:
            return _response.Response(200, [f.to_json() for f in sim.faults.list()])
        if method == "POST" and len(parts) == 1:
            fault = sim.faults.add(
                str(body.get("path", "")),
                method=body.get("method"),
                latency=float(body.get("latency", 0)),
                status=body.get("status"),
                drop=bool(body.get("drop", False)),
                times=body.get("times"),
            )
            return _response.Response(201, fault.to_json())
        if method == "DELETE" and len(parts) == 1:
            sim.faults.clear()
            return _response.Response(200, [])
        if method == "DELETE" and len(parts) == 2:
            found = sim.faults.remove(int(parts[1]))
            return _response.Response(200 if found else 404, {"removed": found})
    if parts == ["clock"]:
        if method == "POST":
            sim.advance(float(body.get("advanceSeconds", 0)))
        return _response.Response(200, {"now": _clock.rfc3339(sim.clock.time())})
    if len(parts) == 3 and parts[0] == "nodes" and parts[2] == "ready" and method == "POST":
        sim.set_node_ready(parts[1], bool(body.get("ready", True)))
        return _response.Response(200, {"node": parts[1], "ready": bool(body.get("ready", True))})
    if len(parts) == 3 and parts[0] == "nodes" and parts[2] == "gpu-exporter" and method == "POST":
        running = bool(body.get("running", True))
        sim.set_gpu_exporter(parts[1], running)
        return _response.Response(200, {"node": parts[1], "running": running})
    if len(parts) == 3 and parts[0] == "usage" and method == "PUT":
        gpu = body.get("gpu")
        sim.set_pod_usage(
            parts[1],
            parts[2],
            float(body["cpu"]),
            float(body["memory"]),
            gpu_percent=None if gpu is None else float(gpu),
        )
        return _response.Response(200, {"pod": f"{parts[1]}/{parts[2]}"})
    if parts == ["requests"]:
        if method == "DELETE":
            sim.requests.clear()
        return _response.Response(200, sim.requests.to_json())
    if parts == ["versions"] and method == "GET":
        # Each resource's newest change: how far a watcher must have read.
        latest = {
            f"{group}/{plural}" if group else plural: rv
            for (group, plural), rv in sorted(sim.store.latest_change.items())
        }
        return _response.Response(200, {"latestChange": latest})
    if parts == ["watches", "close"] and method == "POST":
        return _response.Response(200, {"closed": sim.close_watches()})
    if parts == ["compact"] and method == "POST":
        return _response.Response(200, {"resourceVersion": str(sim.store.compact())})
    if parts == ["watches", "expire"] and method == "POST":
        return _response.Response(200, {"expired": sim.expire_watches()})
    if parts == ["reconcile"] and method == "POST":
        sim.reconcile()
        return _response.Response(200, {"resourceVersion": str(sim.store.resource_version)})
    raise _status.no_such_path()
