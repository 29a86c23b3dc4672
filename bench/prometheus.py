"""A real Prometheus for tests and benchmarks, and what goes around it.

- OpenMetrics history (`Family`, `write_openmetrics`) backfilled into a TSDB with
  `promtool tsdb create-blocks-from openmetrics` (`backfill`);
- `PrometheusServer`: Debian's `prometheus` on 127.0.0.1, a free port, that TSDB
  and a config without scrape targets, ready when /-/ready says so;
- `AuthProxy`: a loopback reverse proxy in front of it that checks a bearer
  token or basic auth, required headers (X-Scope-OrgID) and a path prefix, can
  speak TLS (optionally requiring a client certificate), and records requests;
- `make_tls_files`: a self-signed CA with server and client certificates, made
  with the openssl command.

Backfilled samples may lie in the future: an instant query at time t sees the
newest sample at or before t, so a series running to now+10m looks like a live
exporter to any query made during the test session.
"""

from __future__ import annotations

import http.client
import http.server
import pathlib
import shutil
import socket
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO

READY_TIMEOUT_SECONDS = 60.0


def tools_available() -> bool:
    return shutil.which("prometheus") is not None and shutil.which("promtool") is not None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Family:
    """One OpenMetrics metric family: its series, each a label set and (unix time, value) points.

    For counters `name` is the family name without `_total`."""

    name: str
    kind: str  # counter | gauge
    series: list[tuple[Mapping[str, str], Sequence[tuple[float, float]]]] = field(
        default_factory=list
    )

    def add(self, labels: Mapping[str, str], points: Iterable[tuple[float, float]]) -> None:
        self.series.append((labels, list(points)))


def _labels(labels: Mapping[str, str]) -> str:
    body = ",".join(
        f'{k}="{v}"'.replace("\\", "\\\\").replace("\n", "\\n") for k, v in sorted(labels.items())
    )
    return "{" + body + "}"


def write_openmetrics(families: Iterable[Family], out: IO[str]) -> int:
    """Write families as OpenMetrics text ending in `# EOF`; returns the number of samples.

    Each series' points are written in time order, as promtool requires."""
    count = 0
    for family in families:
        out.write(f"# TYPE {family.name} {family.kind}\n")
        sample_name = f"{family.name}_total" if family.kind == "counter" else family.name
        for labels, points in family.series:
            prefix = f"{sample_name}{_labels(labels)} "
            out.writelines(f"{prefix}{value:.6f} {moment:.3f}\n" for moment, value in points)
            count += len(points)
    out.write("# EOF\n")
    return count


GiB = 1024**3


@dataclass(frozen=True)
class NodeTruth:
    """What a node really uses, and how its node-exporter series look.

    cpu_cores: non-idle cores in use (spread evenly over `cpus`, 70% user and
    30% system). memory_step: from that unix time on, memory_used_bytes becomes
    the second value. end: the last sample's time (None: the history's end)."""

    name: str
    cpu_cores: float
    memory_used_bytes: float
    memory_total_bytes: float = 16 * GiB
    cpus: int = 4
    end: float | None = None
    memory_step: tuple[float, float] | None = None
    instance: str | None = None  # default "<name>:9100"
    job: str = "node-exporter"

    def memory_at(self, moment: float) -> float:
        if self.memory_step is not None and moment >= self.memory_step[0]:
            return self.memory_step[1]
        return self.memory_used_bytes


@dataclass(frozen=True)
class PodTruth:
    """What a pod's containers really use: container -> (cpu cores, memory bytes)."""

    namespace: str
    name: str
    node: str
    containers: Mapping[str, tuple[float, float]]
    end: float | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def cpu_cores(self) -> float:
        return sum(cpu for cpu, _ in self.containers.values())

    @property
    def memory_bytes(self) -> float:
        return sum(memory for _, memory in self.containers.values())


def kube_prometheus_history(
    nodes: Iterable[NodeTruth],
    pods: Iterable[PodTruth],
    *,
    start: float,
    end: float,
    step: float,
    cadvisor_labels: bool = True,
) -> list[Family]:
    """node-exporter and cAdvisor series as kube-prometheus-stack scrapes them.

    Counters grow linearly at the true rate, so rate() recovers it exactly. Each
    pod also gets cAdvisor's pod-level cgroup series (container="") holding the
    pod's total, which the queries must leave out or they would count it twice."""

    def times(last: float | None) -> list[float]:
        stop = end if last is None else min(end, last)
        return [start + k * step for k in range(int((stop - start) // step) + 1)]

    cpu = Family("node_cpu_seconds", "counter")
    total = Family("node_memory_MemTotal_bytes", "gauge")
    available = Family("node_memory_MemAvailable_bytes", "gauge")
    for node in nodes:
        moments = times(node.end)
        base = {
            "instance": node.instance or f"{node.name}:9100",
            "job": node.job,
            "node": node.name,
        }
        per_cpu = node.cpu_cores / node.cpus
        for index in range(node.cpus):
            for mode, rate in (
                ("idle", 1.0 - per_cpu),
                ("user", 0.7 * per_cpu),
                ("system", 0.3 * per_cpu),
            ):
                labels = {**base, "cpu": str(index), "mode": mode}
                cpu.add(labels, ((t, 1000.0 + rate * (t - start)) for t in moments))
        total.add(base, ((t, node.memory_total_bytes) for t in moments))
        available.add(base, ((t, node.memory_total_bytes - node.memory_at(t)) for t in moments))

    usage = Family("container_cpu_usage_seconds", "counter")
    working_set = Family("container_memory_working_set_bytes", "gauge")
    for pod in pods:
        moments = times(pod.end)
        base = {"namespace": pod.namespace, "pod": pod.name}
        if cadvisor_labels:
            base |= {
                "instance": f"{pod.node}:10250",
                "job": "kubelet",
                "metrics_path": "/metrics/cadvisor",
                "node": pod.node,
            }
        parts = [*pod.containers.items(), ("", (pod.cpu_cores, pod.memory_bytes))]
        for container, (cores, memory) in parts:
            labels = {**base, "container": container}
            if cadvisor_labels:
                labels["id"] = f"/kubepods/{pod.namespace}/{pod.name}/{container}"
                labels["image"] = f"registry.example/{container}:1" if container else ""
            usage.add(labels, ((t, 10.0 + cores * (t - start)) for t in moments))
            working_set.add(labels, ((t, memory) for t in moments))
    return [cpu, total, available, usage, working_set]


def backfill(
    openmetrics: pathlib.Path, tsdb: pathlib.Path, *, max_block_duration: str | None = None
) -> None:
    """max_block_duration: blocks up to this long (promtool's hidden flag; default 2h).
    Weeks of history in 2h blocks are hundreds of blocks and a minute of backfill."""
    tsdb.mkdir(parents=True, exist_ok=True)
    flags = [f"--max-block-duration={max_block_duration}"] if max_block_duration else []
    subprocess.run(
        [
            "promtool",
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            *flags,
            str(openmetrics),
            str(tsdb),
        ],
        check=True,
        capture_output=True,
        text=True,
    )


class PrometheusServer:
    """`prometheus` serving a backfilled TSDB on 127.0.0.1 (use as a context manager).

    Retention is set far beyond the test data (backfilled blocks older than the
    retention would be deleted at start-up); the config has no scrape targets, so
    the TSDB holds the backfilled series and nothing else."""

    def __init__(self, tsdb: pathlib.Path, workdir: pathlib.Path) -> None:
        self.tsdb = tsdb
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def __enter__(self) -> PrometheusServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        config = self.workdir / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 15s\nscrape_configs: []\n")
        self._log = (self.workdir / "prometheus.log").open("wb")
        self._process = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={config}",
                f"--storage.tsdb.path={self.tsdb}",
                "--storage.tsdb.retention.time=3650d",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--web.enable-lifecycle",
                "--log.level=warn",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
            cwd=self.workdir,
        )
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while True:
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"prometheus exited at start-up:\n{self.log_text()}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"prometheus not ready in {READY_TIMEOUT_SECONDS}s")
            # Polling, not synchronising: the deadline above bounds the wait.
            time.sleep(0.05)

    def log_text(self) -> str:
        path = self.workdir / "prometheus.log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None


@dataclass
class SeenRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class AuthProxy:
    """A loopback reverse proxy in front of `upstream` that checks what clients send.

    authorization: the exact Authorization header required (None: not checked).
    headers: other headers required with exact values. prefix: a path prefix that
    must be present and is stripped before forwarding (as behind Mimir's
    /prometheus). tls: (certfile, keyfile); client_ca: require a client
    certificate issued by that CA.
    """

    def __init__(
        self,
        upstream: str,
        *,
        authorization: str | None = None,
        headers: Mapping[str, str] | None = None,
        prefix: str = "",
        tls: tuple[pathlib.Path, pathlib.Path] | None = None,
        client_ca: pathlib.Path | None = None,
        status: int | None = None,
    ) -> None:
        self.upstream = upstream
        self.authorization = authorization
        self.required_headers = dict(headers or {})
        self.prefix = prefix.rstrip("/")
        self.forced_status = status
        self.seen: list[SeenRequest] = []
        handler = self._handler_class()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            if client_ca is not None:
                context.verify_mode = ssl.CERT_REQUIRED
                context.load_verify_locations(str(client_ca))
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
            scheme = "https"
        self.url = f"{scheme}://127.0.0.1:{self._server.server_address[1]}{self.prefix}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> AuthProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def _handler_class(self) -> type[http.server.BaseHTTPRequestHandler]:
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass  # keep test output clean

            def do_GET(self) -> None:
                self._forward()

            def do_POST(self) -> None:
                self._forward()

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                proxy.seen.append(
                    SeenRequest(self.command, self.path, dict(self.headers.items()), body)
                )
                if proxy.forced_status is not None:
                    return self._reply(proxy.forced_status, b'{"status":"error"}')
                if proxy.authorization is not None and (
                    self.headers.get("Authorization") != proxy.authorization
                ):
                    return self._reply(401, b"Unauthorized\n", "text/plain")
                for name, value in proxy.required_headers.items():
                    if self.headers.get(name) != value:
                        return self._reply(401, f"no {name}\n".encode(), "text/plain")
                if not self.path.startswith(proxy.prefix + "/"):
                    return self._reply(404, b"404 page not found\n", "text/plain")
                path = self.path[len(proxy.prefix) :]
                target = http.client.HTTPConnection(
                    proxy.upstream.removeprefix("http://"), timeout=30
                )
                try:
                    forward = {"Content-Type": self.headers.get("Content-Type", "")}
                    target.request(self.command, path, body=body, headers=forward)
                    answer = target.getresponse()
                    data = answer.read()
                    self._reply(
                        answer.status, data, answer.getheader("Content-Type", "application/json")
                    )
                finally:
                    target.close()

            def _reply(
                self, status: int, data: bytes, content_type: str = "application/json"
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


@dataclass(frozen=True)
class TlsFiles:
    ca_cert: pathlib.Path
    server_cert: pathlib.Path
    server_key: pathlib.Path
    client_cert: pathlib.Path
    client_key: pathlib.Path


def make_tls_files(directory: pathlib.Path) -> TlsFiles:
    """A self-signed CA and a server (IP 127.0.0.1) and client certificate it issued."""
    directory.mkdir(parents=True, exist_ok=True)

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=directory)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl(
        "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
        "-subj", "/CN=loadaware test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )  # fmt: skip
    for name, usage, san in (
        ("server", "serverAuth", "subjectAltName=IP:127.0.0.1,DNS:localhost\n"),
        ("client", "clientAuth", ""),
    ):
        openssl(
            "req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr",
            "-subj", f"/CN=loadaware test {name}",
        )  # fmt: skip
        (directory / f"{name}.ext").write_text(
            f"basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n"
            f"extendedKeyUsage={usage}\n{san}"
        )
        openssl(
            "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", f"{name}.crt", "-days", "2",
            "-extfile", f"{name}.ext",
        )  # fmt: skip
    return TlsFiles(
        ca_cert=directory / "ca.crt",
        server_cert=directory / "server.crt",
        server_key=directory / "server.key",
        client_cert=directory / "client.crt",
        client_key=directory / "client.key",
    )
