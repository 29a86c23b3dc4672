"""metrics.k8s.io as metrics-server serves it: NodeMetrics and PodMetrics from the usage
model; NotReady nodes and pods that are not running have none."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadaware.sim import _cluster, _resources, _response, _selectors, _status


def answer(
    sim: _cluster.SimCluster, method: str, rest: list[str], query: dict[str, str]
) -> _response.Response:
    """GET of NodeMetrics or PodMetrics (one, or a list with a label selector); `rest` is
    the path after /apis/metrics.k8s.io/v1beta1."""
    if method != "GET":
        raise _status.method_not_allowed()
    namespace: str | None = None
    if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] == "pods":
        namespace, rest = rest[1], rest[2:]
    if not rest or rest[0] not in ("nodes", "pods") or len(rest) > 2:
        raise _status.no_such_path()
    plural = rest[0]
    name = rest[1] if len(rest) > 1 else None
    if plural == "pods" and name is not None and namespace is None:
        raise _status.no_such_path()
    labels = _selectors.parse_label_selector(query.get("labelSelector", ""))
    store = sim.store
    usage = sim.usage
    with store.lock:
        nodes = store.objects(_resources.NODES)
        if plural == "nodes":
            chosen = [n for n in nodes if name is None or n["metadata"]["name"] == name]
            items = usage.node_metrics(
                n for n in chosen if labels(n["metadata"].get("labels") or {})
            )
            kind = "NodeMetrics"
        else:
            ready = {n["metadata"]["name"] for n in nodes if _is_ready(n)}
            pods = store.objects(_resources.PODS, namespace)
            if name is not None:
                pods = [p for p in pods if p["metadata"]["name"] == name]
            items = usage.pod_metrics(
                (p for p in pods if labels(p["metadata"].get("labels") or {})), ready
            )
            kind = "PodMetrics"
    api_version = f"{_resources.METRICS_GROUP}/{_resources.METRICS_VERSION}"
    if name is not None:
        if not items:
            raise _status.not_found(f"{plural[:-1]}metrics", name, _resources.METRICS_GROUP)
        return _response.Response(200, {"kind": kind, "apiVersion": api_version, **items[0]})
    return _response.Response(
        200,
        {"kind": f"{kind}List", "apiVersion": api_version, "metadata": {}, "items": items},
    )


def _is_ready(node: Mapping[str, Any]) -> bool:
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            return condition.get("status") == "True"
    return False
