"""`serve` removes the steering taints a killed process left, once it leads.

Covers: a follower leaves them alone; on becoming leader the service removes
them without waiting for a round, through the official client against the
simulated API.
"""

from __future__ import annotations

from loadaware import evict, runtime
from tests.lib.live import live_context, metrics_server_policy
from tests.lib.sim import sim_server
from tests.lib.wait import hold, poll
from tests.runtime.conftest import SwitchLeader


def _tainted(server) -> set[str]:
    return {
        n["metadata"]["name"]
        for n in server.list("nodes")
        if any(t["key"] == evict.HOTSPOT_TAINT_KEY for t in n["spec"].get("taints") or [])
    }


def test_the_new_leader_removes_leftover_taints(tmp_path) -> None:
    settings = metrics_server_policy(serve={"listen": "127.0.0.1:0"})
    with sim_server("small") as server:
        context = live_context(server, tmp_path, settings)
        evict.add_hotspot_taint(context.kube, "default-b-001")
        leader = SwitchLeader(leading=False)
        service = runtime.Service(settings, context, elector=leader)
        service.start_background()
        try:
            # A follower must not write: give its loop a few turns (it polls each second).
            hold(
                lambda: _tainted(server) == {"default-b-001"},
                "the taint left in place",
                2.5,
                interval=0.1,
            )
            leader.leading = True
            poll(lambda: not _tainted(server), "the leader to remove the taint", 10)
        finally:
            service.stop(round_timeout=10)
