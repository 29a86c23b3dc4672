"""Making the simulated scheduler bind pods: Deployments scaled up through the API, so
that the simulated controllers create pods and its scheduler binds them."""

from __future__ import annotations

from loadaware import sim
from tests.lib.sim import call


def scale_up(server: sim.SimServer, pods: int, *, per_deployment: int = 5) -> int:
    """Add `per_deployment` replicas to Deployments, in the store's order, until `pods`
    more are wanted; how many were added."""
    added = 0
    for deployment in server.list("deployments", group="apps"):
        if added >= pods:
            break
        more = min(per_deployment, pods - added)
        meta = deployment["metadata"]
        status, body = call(
            server,
            "PATCH",
            f"/apis/apps/v1/namespaces/{meta['namespace']}/deployments/{meta['name']}",
            {"spec": {"replicas": int(deployment["spec"].get("replicas", 1)) + more}},
            content_type="application/merge-patch+json",
        )
        assert status == 200, body
        added += more
    assert added == pods, f"only {added} replicas could be added"
    return added


def bound_pods(server: sim.SimServer) -> int:
    return sum(1 for p in server.list("pods") if p["spec"].get("nodeName"))
