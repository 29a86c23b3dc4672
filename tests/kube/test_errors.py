"""loadaware.kube: the one client factory and the one translation of the client's errors,
against real servers (the simulated API, a closed port, a TLS server nobody trusts).

Covered: a closed port is UnreachableError naming the server and "connection
refused"; a certificate the kubeconfig does not trust is UnreachableError naming
the TLS verification failure; a wrong token is UnauthorizedError (401) naming the
server, never the token; 403, 404, 409 and 429 as their classes, with the Status
message; a body that is not a Status is never quoted; the Status reader; a
kubeconfig that does not exist is InputError naming its path; the public names.
"""

from __future__ import annotations

import http.server
import pathlib
import socket
import ssl
import threading
from collections.abc import Iterator

import kubernetes.client
import pytest
import yaml
from kubernetes.client.exceptions import ApiException

from bench.prometheus import make_tls_files
from loadaware import errors, kube
from tests.lib.sim import sim_server


def _kubeconfig(path: pathlib.Path, server: str, token: str = "t0ken") -> pathlib.Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server}}],
                "users": [{"name": "u", "user": {"token": token}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    return path


@pytest.fixture
def closed_port() -> Iterator[int]:
    # Bound, never listening: a connection to it is refused, and no other test takes it.
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def _list_nodes(client: kubernetes.client.ApiClient) -> None:
    with kube.translated("listing nodes", kube.server_of(client)):
        kubernetes.client.CoreV1Api(client).list_node(_request_timeout=5)


def test_a_closed_port_is_unreachable_naming_the_server_and_the_cause(
    tmp_path: pathlib.Path, closed_port: int
) -> None:
    config = _kubeconfig(tmp_path / "config", f"https://127.0.0.1:{closed_port}")
    client = kube.api_client(kubeconfig=config)
    with pytest.raises(errors.UnreachableError) as caught:
        _list_nodes(client)
    message = str(caught.value)
    assert message == (
        f"listing nodes: cannot reach the Kubernetes API at https://127.0.0.1:{closed_port}: "
        "connection refused"
    )
    assert caught.value.reference == "cluster-unreachable"
    assert isinstance(caught.value.__cause__, Exception)  # raised from the client's error
    assert "t0ken" not in message


class _Quiet(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


def test_an_untrusted_certificate_is_a_tls_failure_named(tmp_path: pathlib.Path) -> None:
    files = make_tls_files(tmp_path / "tls")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(files.server_cert, files.server_key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        address = f"https://127.0.0.1:{server.server_address[1]}"
        client = kube.api_client(kubeconfig=_kubeconfig(tmp_path / "config", address))
        with pytest.raises(errors.UnreachableError) as caught:
            _list_nodes(client)
    finally:
        server.shutdown()
        server.server_close()
    message = str(caught.value)
    assert message.startswith(f"listing nodes: cannot reach the Kubernetes API at {address}: ")
    assert "TLS certificate verification failed: " in message


def test_a_wrong_token_is_401_naming_the_server_not_the_token(tmp_path: pathlib.Path) -> None:
    with sim_server(token="s3cret") as server:
        config = server.write_kubeconfig(tmp_path / "config")
        document = yaml.safe_load(config.read_text())
        document["users"][0]["user"]["token"] = "wr0ng-t0ken"
        config.write_text(yaml.safe_dump(document))
        client = kube.api_client(kubeconfig=config)
        with pytest.raises(errors.UnauthorizedError) as caught:
            _list_nodes(client)
    message = str(caught.value)
    assert message.startswith(f"listing nodes (http://{server.host}:{server.port}): 401 ")
    assert caught.value.reference == "cluster-unauthorized"
    assert caught.value.status_code == 401
    assert caught.value.exit_code == 1
    assert "wr0ng-t0ken" not in message
    assert "s3cret" not in message


@pytest.mark.parametrize(
    ("status", "error", "reference"),
    [
        (403, errors.ForbiddenError, "cluster-forbidden"),
        (404, errors.NotFoundError, "not-found"),
        (409, errors.ConflictError, "conflict"),
        (429, errors.TooManyRequestsError, "too-many-requests"),
        (500, errors.ClusterError, "cluster-error"),
    ],
)
def test_each_status_has_its_class_and_the_status_message(
    tmp_path: pathlib.Path, status: int, error: type[errors.ClusterError], reference: str
) -> None:
    with sim_server() as server:
        server.faults.add(path="^/api/v1/nodes$", status=status)
        client = kube.api_client(kubeconfig=server.write_kubeconfig(tmp_path / "config"))
        with pytest.raises(error) as caught:
            _list_nodes(client)
    assert type(caught.value) is error
    assert caught.value.reference == reference
    assert caught.value.status_code == status
    text = str(caught.value)
    assert text.startswith(f"listing nodes: {status} ")
    # The Status message the simulator sends.
    assert "injected fault" in text or "Too many requests" in text


def test_a_body_that_is_not_a_status_is_never_quoted() -> None:
    exc = ApiException(status=502, reason="Bad Gateway")
    exc.body = "<html>proxy error; Authorization: Bearer t0ken</html>"
    translated = kube.api_error(exc, "listing pods", "https://10.0.0.1:6443")
    assert str(translated) == "listing pods: 502 Bad Gateway"
    assert kube.status_of(exc) == kube.Status(code=502, reason="Bad Gateway", message="")


def test_the_status_reader_reads_reason_message_and_details() -> None:
    exc = ApiException(status=404, reason="Not Found")
    exc.body = (
        '{"kind":"Status","status":"Failure","reason":"NotFound","code":404,'
        '"message":"namespaces \\"loadaware\\" not found",'
        '"details":{"name":"loadaware","kind":"namespaces"}}'
    )
    assert kube.status_of(exc) == kube.Status(
        code=404,
        reason="NotFound",
        message='namespaces "loadaware" not found',
        details_kind="namespaces",
    )
    exc.body = '{"kind":"Status","code":403,"message":"' + "x" * 5000 + '"}'
    assert len(kube.status_of(exc).message) == kube.MESSAGE_MAX_CHARS


def test_the_server_is_named_without_credentials() -> None:
    client = kubernetes.client.ApiClient(kubernetes.client.Configuration())
    client.configuration.host = "https://admin:pa55@api.example.com:6443"
    assert kube.server_of(client) == "https://api.example.com:6443"


def test_a_missing_kubeconfig_is_bad_input_naming_the_path(tmp_path: pathlib.Path) -> None:
    missing = tmp_path / "nowhere" / "config"
    with pytest.raises(errors.InputError) as caught:
        kube.api_client(kubeconfig=missing)
    assert str(missing) in str(caught.value)
    assert "No configuration found" not in str(caught.value)
    assert caught.value.exit_code == 2


def test_an_unknown_context_is_bad_input(tmp_path: pathlib.Path) -> None:
    config = _kubeconfig(tmp_path / "config", "https://127.0.0.1:6443")
    with pytest.raises(errors.InputError) as caught:
        kube.api_client(kubeconfig=config, context="elsewhere")
    assert str(config) in str(caught.value)
    assert "elsewhere" in str(caught.value)
