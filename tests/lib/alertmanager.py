"""A real Alertmanager (Debian's `prometheus-alertmanager`) and a scraping Prometheus for tests.

- `AlertmanagerServer`: on 127.0.0.1, a free port, temporary storage, clustering
  off (`--cluster.listen-address=` empty), ready when /-/ready says so;
- `ScrapingPrometheus`: `prometheus` scraping given targets every second,
  evaluating given rules every second and sending alerts to an Alertmanager.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import IO, Any

from bench.prometheus import free_port

READY_TIMEOUT_SECONDS = 60.0


def tools_available() -> bool:
    return (
        shutil.which("prometheus-alertmanager") is not None
        and shutil.which("prometheus") is not None
    )


class _Process:
    """A subprocess with a log file, a readiness URL and an orderly stop."""

    name = "process"

    def __init__(self, workdir: pathlib.Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def __enter__(self) -> _Process:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._log = (self.workdir / f"{self.name}.log").open("wb")
        self._process = subprocess.Popen(
            self.command(), stdout=self._log, stderr=subprocess.STDOUT, cwd=self.workdir
        )
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while True:
            if self._process.poll() is not None:
                raise RuntimeError(f"{self.name} exited at start-up:\n{self.log_text()}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} not ready in {READY_TIMEOUT_SECONDS}s")
            time.sleep(0.05)  # polling under the deadline above

    def get_json(self, path: str) -> Any:
        with urllib.request.urlopen(f"{self.url}{path}", timeout=5) as response:
            return json.loads(response.read())

    def log_text(self) -> str:
        path = self.workdir / f"{self.name}.log"
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


class AlertmanagerServer(_Process):
    """Alertmanager with the given configuration (YAML text)."""

    name = "alertmanager"

    def __init__(self, workdir: pathlib.Path, config: str) -> None:
        super().__init__(workdir)
        self.config_path = workdir / "alertmanager.yml"
        self.config_path.write_text(config)
        (workdir / "am-data").mkdir(exist_ok=True)

    def command(self) -> list[str]:
        return [
            "prometheus-alertmanager",
            f"--config.file={self.config_path}",
            f"--storage.path={self.workdir / 'am-data'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            "--cluster.listen-address=",
            "--log.level=warn",
        ]

    def alerts(self) -> list[dict[str, Any]]:
        return list(self.get_json("/api/v2/alerts"))


class ScrapingPrometheus(_Process):
    """Prometheus scraping `targets` (host:port) every second, with `rules` (YAML text)
    evaluated every second and alerts sent to `alertmanager` (host:port)."""

    name = "prometheus"

    def __init__(
        self,
        workdir: pathlib.Path,
        *,
        targets: Sequence[str],
        rules: str,
        alertmanager: str,
    ) -> None:
        super().__init__(workdir)
        (workdir / "rules.yml").write_text(rules)
        quoted = ", ".join(f"'{t}'" for t in targets)
        (workdir / "prometheus.yml").write_text(
            "global:\n"
            "  scrape_interval: 1s\n"
            "  evaluation_interval: 1s\n"
            "rule_files: [rules.yml]\n"
            "alerting:\n"
            "  alertmanagers:\n"
            f"  - static_configs: [{{targets: ['{alertmanager}']}}]\n"
            "scrape_configs:\n"
            "- job_name: sim\n"
            # The simulator exposes series as kube-prometheus-stack stores them,
            # job and instance included: keep those labels.
            "  honor_labels: true\n"
            f"  static_configs: [{{targets: [{quoted}]}}]\n"
        )
        (workdir / "tsdb").mkdir(exist_ok=True)

    def command(self) -> list[str]:
        return [
            "prometheus",
            f"--config.file={self.workdir / 'prometheus.yml'}",
            f"--storage.tsdb.path={self.workdir / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{self.port}",
            # Resend firing alerts every second, so Alertmanager never times them out.
            "--rules.alert.resend-delay=1s",
            "--log.level=warn",
        ]

    def firing(self, alertname: str) -> list[dict[str, Any]]:
        body = self.get_json("/api/v1/alerts")
        return [
            a
            for a in body["data"]["alerts"]
            if a["labels"].get("alertname") == alertname and a["state"] == "firing"
        ]
