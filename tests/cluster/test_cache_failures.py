"""The cluster cache when its first lists fail: it says so at once rather than after
its sync timeout, when waiting cannot help.

Covered: a closed port fails every kind's first list alike: wait_synced returns
within seconds, failure(), check_fresh() and the evictor's reads raise a
RefusedError (cluster-unreachable) naming the server and "connection refused",
and the cause is logged once, not per kind; a wrong token fails at once as
cluster-unauthorized; a 403 on one kind as cluster-forbidden naming it, and the
cache syncs once the permission is granted; a 503 on one kind while the others
list is not a failure (the wait goes on until its timeout).
"""

from __future__ import annotations

import datetime
import logging
import pathlib
import socket
import time
from collections.abc import Iterator

import pytest
import yaml

from loadaware import cluster, kube
from loadaware.errors import RefusedError
from tests.lib.live import poll
from tests.lib.sim import sim_server

SYNC_TIMEOUT = 300.0  # as the default clusterCache.syncTimeout: never waited for here


@pytest.fixture
def closed_port() -> Iterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def _kubeconfig(path: pathlib.Path, server: str) -> pathlib.Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": "t0ken"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    return path


def test_a_closed_port_fails_at_once_naming_the_server_and_the_cause(
    tmp_path: pathlib.Path, closed_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="loadaware")
    address = f"http://127.0.0.1:{closed_port}"
    client = kube.api_client(kubeconfig=_kubeconfig(tmp_path / "config", address))
    started = time.monotonic()
    with cluster.ClusterCache(client, sync_timeout=SYNC_TIMEOUT) as cache:
        assert not cache.wait_synced(SYNC_TIMEOUT)
        assert time.monotonic() - started < 10
        failure = cache.failure()
        assert isinstance(failure, RefusedError)
        assert failure.reference == "cluster-unreachable"
        assert failure.exit_code == 3
        assert f"cannot reach the Kubernetes API at {address}: connection refused" in str(failure)
        with pytest.raises(RefusedError, match="connection refused"):
            cache.check_fresh(datetime.timedelta(minutes=5))
        # The evictor's reads do not wait for the sync timeout either.
        with pytest.raises(RefusedError, match="connection refused"):
            cache.find_namespace("loadaware")
        assert time.monotonic() - started < 10
    said = [r for r in caplog.records if r.getMessage() == "cluster cache cannot list"]
    assert len(said) == 1
    assert "connection refused" in said[0].reason  # type: ignore[attr-defined]


def test_a_wrong_token_fails_at_once_as_unauthorized(tmp_path: pathlib.Path) -> None:
    with sim_server(token="s3cret") as server:
        config = server.write_kubeconfig(tmp_path / "config")
        document = yaml.safe_load(config.read_text())
        document["users"][0]["user"]["token"] = "wrong"
        config.write_text(yaml.safe_dump(document))
        client = kube.api_client(kubeconfig=config)
        started = time.monotonic()
        with cluster.ClusterCache(client, sync_timeout=SYNC_TIMEOUT) as cache:
            assert not cache.wait_synced(SYNC_TIMEOUT)
            failure = cache.failure()
        assert time.monotonic() - started < 10
    assert failure is not None
    assert failure.reference == "cluster-unauthorized"
    assert f"(http://{server.host}:{server.port}): 401 " in str(failure)
    assert "wrong" not in str(failure)
    assert "s3cret" not in str(failure)


def test_a_forbidden_kind_fails_naming_it_and_syncs_once_granted(tmp_path: pathlib.Path) -> None:
    with sim_server() as server:
        rule = server.faults.add(path="^/api/v1/pods$", method="GET", status=403)
        client = kube.api_client(kubeconfig=server.write_kubeconfig(tmp_path / "config"))
        with cluster.ClusterCache(client, sync_timeout=SYNC_TIMEOUT) as cache:
            started = time.monotonic()
            assert not cache.wait_synced(SYNC_TIMEOUT)
            assert time.monotonic() - started < 10
            failure = cache.failure()
            assert failure is not None
            assert failure.reference == "cluster-forbidden"
            assert "listing /api/v1/pods: 403 " in str(failure)
            server.faults.remove(rule.id)
            # The list is retried (backing off up to 5 s); its success clears the failure.
            poll(lambda: cache.synced, "the pods listed once granted", timeout=30)
            assert cache.failure() is None
            assert cache.wait_synced(0)


def test_one_kind_failing_while_the_others_list_is_waited_for(tmp_path: pathlib.Path) -> None:
    with sim_server() as server:
        server.faults.add(path="^/api/v1/pods$", method="GET", status=503)
        client = kube.api_client(
            kube.ClientSettings(
                kubeconfig=str(server.write_kubeconfig(tmp_path / "config")), retries=0
            )
        )
        with cluster.ClusterCache(client, sync_timeout=SYNC_TIMEOUT) as cache:
            started = time.monotonic()
            assert not cache.wait_synced(3.0)
            assert time.monotonic() - started >= 3.0  # waited: the server answers
            assert cache.failure() is None
            with pytest.raises(RefusedError, match="pods never listed"):
                cache.check_fresh(datetime.timedelta(minutes=5))
