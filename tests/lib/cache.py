"""The cluster cache against the simulated API in tests.

The simulator's clock is virtual: a test moves it, the controllers react at
once, and the cache hears of it over its watches a moment later. `caught_up`
waits for that moment, so that what a test reads from the cache is what the
store holds, with no sleep.
"""

from __future__ import annotations

from loadaware import cluster, sim


def _resource_key(path: str) -> tuple[str, str]:
    parts = [p for p in path.split("/") if p]
    if parts[0] == "api":
        return "", parts[-1]
    return parts[1], parts[-1]


def is_caught_up(cache: cluster.ClusterCache, server: sim.SimServer) -> bool:
    """Whether every watched kind has read up to its newest change in the store."""
    latest = server.sim.store.latest_change
    return all(
        version >= latest.get(_resource_key(path), 0) for path, version in cache.versions().items()
    )


def all_watching(cache: cluster.ClusterCache, server: sim.SimServer) -> None:
    """Wait until every kind the server serves has its watch open."""
    server.wait_for(lambda: server.sim.open_watches() == len(cache.versions()))


def caught_up(cache: cluster.ClusterCache, server: sim.SimServer, timeout: float = 20.0) -> None:
    server.wait_for(lambda: is_caught_up(cache, server), timeout=timeout, interval=0.005)
