"""PrometheusProvider credentials and TLS, through loopback proxies in front of a real Prometheus.

Covers: 401 without a token and with a wrong one; a correct token from a file
and from a Secret (read through the injected reader each round, never cached);
a rotated token file picked up by the next round; basic auth from Secrets; a
missing token file or Secret; TLS with a self-signed CA (caFile, no caFile,
insecureSkipVerify), a client certificate for mutual TLS; and the token never
in logs, exception text, reprs or the CLI's output.
"""

from __future__ import annotations

import base64
import json
import logging
import pathlib
from typing import Any

import pytest

from bench.prometheus import AuthProxy, TlsFiles
from loadaware import cli
from loadaware.errors import RefusedError
from loadaware.metrics import PrometheusProvider, Secret, _auth
from loadaware.policy import MetricsSettings
from tests.metrics.conftest import FRESH_NODES, PrometheusWithHistory

TOKEN = "tok-3f9c1e7a-very-secret"


def settings(url: str, **source: Any) -> MetricsSettings:
    return MetricsSettings.model_validate({"prometheus": {"url": url, "timeout": "5s", **source}})


def fetch(prom: PrometheusWithHistory, url: str, read_secret=None, **source: Any):
    provider = PrometheusProvider(settings(url, **source), read_secret=read_secret)
    return provider.fetch_usage(FRESH_NODES, [], now=prom.now)


@pytest.fixture
def bearer_proxy(prometheus: PrometheusWithHistory):
    with AuthProxy(prometheus.server.url, authorization=f"Bearer {TOKEN}") as proxy:
        yield proxy


def test_no_token_is_refused(prometheus: PrometheusWithHistory, bearer_proxy: AuthProxy) -> None:
    with pytest.raises(RefusedError) as info:
        fetch(prometheus, bearer_proxy.url)
    assert info.value.reference == "metrics-auth-failed"
    assert "HTTP 401" in str(info.value)


def test_token_from_file_reread_each_round(
    prometheus: PrometheusWithHistory, bearer_proxy: AuthProxy, tmp_path: pathlib.Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("wrong-token\n")
    provider = PrometheusProvider(settings(bearer_proxy.url, tokenFile=str(token_file)))
    with pytest.raises(RefusedError, match="refused the credentials: HTTP 401"):
        provider.fetch_usage(FRESH_NODES, [], now=prometheus.now)
    # A projected token rotates: the next round reads the file again.
    token_file.write_text(f"{TOKEN}\n")
    usage = provider.fetch_usage(FRESH_NODES, [], now=prometheus.now)
    assert set(usage.nodes) == set(FRESH_NODES)


def test_token_from_secret_read_each_round(
    prometheus: PrometheusWithHistory, bearer_proxy: AuthProxy
) -> None:
    reads: list[tuple[str, str, str]] = []

    def read_secret(namespace: str, name: str, key: str) -> str:
        reads.append((namespace, name, key))
        return TOKEN

    ref = {"secretReference": {"namespace": "loadaware", "name": "prom", "key": "token"}}
    provider = PrometheusProvider(
        settings(bearer_proxy.url, authToken=ref), read_secret=read_secret
    )
    provider.fetch_usage(FRESH_NODES, [], now=prometheus.now)
    provider.fetch_usage(FRESH_NODES, [], now=prometheus.now)
    assert reads == [("loadaware", "prom", "token")] * 2


def test_basic_auth_from_secrets(prometheus: PrometheusWithHistory) -> None:
    expected = "Basic " + base64.b64encode(b"loadaware:p4ss").decode()
    values = {"username": "loadaware", "password": "p4ss"}
    basic = {
        "username": {"namespace": "lw", "name": "prom-basic", "key": "username"},
        "password": {"namespace": "lw", "name": "prom-basic", "key": "password"},
    }
    with AuthProxy(prometheus.server.url, authorization=expected) as proxy:
        usage = fetch(
            prometheus, proxy.url, read_secret=lambda ns, n, k: values[k], basicAuth=basic
        )
    assert set(usage.nodes) == set(FRESH_NODES)


def test_unreadable_credentials_refuse(
    prometheus: PrometheusWithHistory, tmp_path: pathlib.Path
) -> None:
    with pytest.raises(RefusedError) as info:
        fetch(prometheus, prometheus.url, tokenFile=str(tmp_path / "absent"))
    assert info.value.reference == "metrics-auth-failed"
    assert "cannot read tokenFile" in str(info.value)

    def failing_reader(namespace: str, name: str, key: str) -> str:
        raise PermissionError("secrets is forbidden")

    ref = {"secretReference": {"namespace": "lw", "name": "prom", "key": "token"}}
    with pytest.raises(RefusedError, match="cannot read Secret lw/prom key token"):
        fetch(prometheus, prometheus.url, read_secret=failing_reader, authToken=ref)
    with pytest.raises(RefusedError, match="no Kubernetes API access"):
        fetch(prometheus, prometheus.url, authToken=ref)


def test_tls_with_a_self_signed_ca(prometheus: PrometheusWithHistory, tls_files: TlsFiles) -> None:
    tls = (tls_files.server_cert, tls_files.server_key)
    with AuthProxy(prometheus.server.url, tls=tls) as proxy:
        assert proxy.url.startswith("https://")
        usage = fetch(prometheus, proxy.url, caFile=str(tls_files.ca_cert))
        assert set(usage.nodes) == set(FRESH_NODES)
        with pytest.raises(RefusedError) as info:
            fetch(prometheus, proxy.url)
        assert info.value.reference == "metrics-unreachable"
        assert "certificate verify failed" in str(info.value)
        assert set(fetch(prometheus, proxy.url, insecureSkipVerify=True).nodes) == set(FRESH_NODES)


def test_client_certificate(prometheus: PrometheusWithHistory, tls_files: TlsFiles) -> None:
    tls = (tls_files.server_cert, tls_files.server_key)
    with AuthProxy(prometheus.server.url, tls=tls, client_ca=tls_files.ca_cert) as proxy:
        usage = fetch(
            prometheus,
            proxy.url,
            caFile=str(tls_files.ca_cert),
            certFile=str(tls_files.client_cert),
            keyFile=str(tls_files.client_key),
        )
        assert set(usage.nodes) == set(FRESH_NODES)
        with pytest.raises(RefusedError) as info:
            fetch(prometheus, proxy.url, caFile=str(tls_files.ca_cert))
    assert info.value.reference == "metrics-unreachable"


def test_secret_masks_itself() -> None:
    secret = Secret(TOKEN)
    assert TOKEN not in repr(secret)
    assert TOKEN not in str(secret)
    assert TOKEN not in f"{secret}"
    credentials = _auth.Credentials(bearer_token=secret)
    assert TOKEN not in repr(credentials)
    assert TOKEN not in repr(credentials.requests_auth())
    assert _auth.redact(f"echo {TOKEN}!", credentials) == "echo ********!"


def test_token_never_shown(
    prometheus: PrometheusWithHistory,
    tmp_path: pathlib.Path,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    # The proxy wants another token, so the round fails after sending this one.
    caplog.set_level(logging.DEBUG)
    with AuthProxy(prometheus.server.url, authorization="Bearer other") as proxy:
        provider = PrometheusProvider(settings(proxy.url, tokenFile=str(token_file)))
        with pytest.raises(RefusedError) as info:
            provider.fetch_usage(FRESH_NODES, [], now=prometheus.now)
        shown = [str(info.value), repr(info.value), repr(provider), str(info.value.hint)]

        cluster_file = tmp_path / "cluster.json"
        cluster_file.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": []}))
        policy_file = tmp_path / "policy.yaml"
        policy_file.write_text(
            json.dumps(
                {"metrics": {"prometheus": {"url": proxy.url, "tokenFile": str(token_file)}}}
            )
        )
        code = cli.main(
            [
                "--log-level",
                "DEBUG",
                "metrics",
                "dump",
                "--policy",
                str(policy_file),
                "--cluster",
                str(cluster_file),
            ]
        )
        assert proxy.seen
        assert proxy.seen[0].headers["Authorization"] == f"Bearer {TOKEN}"
    out = capsys.readouterr()
    assert code == 3
    assert "metrics-auth-failed" in out.err
    assert "HTTP 401" in out.err
    for text in [*shown, out.out, out.err, caplog.text]:
        assert TOKEN not in text
