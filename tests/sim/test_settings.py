"""The simulated cluster's settings (SimSettings): one frozen object from `sim serve`'s
options down to the parts that use them.

Covered: the defaults are sim serve's; the object is frozen and keeps the token out of
its repr; build_cluster and start_server take it whole or as fields to change, and
refuse an unknown field; the token and the ready delay reach the server and the kubelet.
"""

from __future__ import annotations

import dataclasses

import pytest

from loadaware import sim
from tests.lib.sim import NOW, call


def test_defaults_are_sim_serve_defaults() -> None:
    settings = sim.SimSettings()
    assert settings.ready_delay == 2.0
    assert settings.token is None
    assert settings.scheduler_seed == 0
    assert settings.percentage_of_nodes_to_score == 0
    assert settings.watch_bookmark_seconds == 60.0


def test_frozen_and_token_not_in_repr() -> None:
    settings = sim.SimSettings(token="s3cret")
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.ready_delay = 1.0  # type: ignore[misc]
    assert "s3cret" not in repr(settings)


def test_build_cluster_takes_settings_or_changes() -> None:
    given = sim.SimSettings(ready_delay=5.0, scheduler_seed=3)
    whole = sim.build_cluster(scenario="small", now=NOW, settings=given)
    assert whole.settings is given
    changed = sim.build_cluster(scenario="small", now=NOW, settings=given, ready_delay=1.0)
    assert changed.settings == sim.SimSettings(ready_delay=1.0, scheduler_seed=3)
    with pytest.raises(TypeError):
        sim.build_cluster(scenario="small", now=NOW, ready_dely=1.0)


def test_token_and_ready_delay_reach_the_server() -> None:
    settings = sim.SimSettings(token="t0ken", ready_delay=7.0)
    clock = sim.SimClock(NOW, speed=0.0)
    with sim.start_server(scenario="small", clock=clock, settings=settings) as server:
        assert server.kubeconfig()["users"][0]["user"] == {"token": "t0ken"}
        assert call(server, "GET", "/api/v1/nodes")[0] == 401
        authorized = {"Authorization": "Bearer t0ken"}
        status, pods = call(server, "GET", "/api/v1/pods", headers=authorized)
        assert status == 200
        pod = next(
            p
            for p in pods["items"]
            if (p["metadata"].get("ownerReferences") or [{}])[0].get("kind") == "ReplicaSet"
        )
        server.evict(pod["metadata"]["namespace"], pod["metadata"]["name"])
        server.advance(1)

        def replacement_ready() -> bool:
            return all(
                c["status"] == "True"
                for p in server.list("pods", pod["metadata"]["namespace"])
                if p["metadata"]["name"] != pod["metadata"]["name"]
                for c in p["status"].get("conditions", [])
                if c["type"] == "Ready"
            )

        server.advance(4)
        assert not replacement_ready()  # 5 s after binding: Ready at 7 s, not the default 2 s
        server.advance(3)
        assert replacement_ready()
