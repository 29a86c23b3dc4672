"""The container image, built from the Containerfile with `make image` and run with podman.

The base is the Containerfile's default where it can be pulled; elsewhere a
Debian 12 base with python3 from Debian's packages (mmdebstrap, podman import),
kept in podman's storage for the next run. Where the base cannot reach PyPI,
the dependencies' wheels are built on the host into build/wheels (inside the
build context) and installed from there (`make image WHEELS=...`).

Covered: the image carries the OCI labels (version, revision, source) and runs
as UID 65532; `loadaware version` in it reports the revision it was built from;
as that user, with a read-only root filesystem, every capability dropped and no
network, `loadaware simulate` succeeds; on the host network `loadaware run
--once` against a simulated cluster on the host carries out its plan: pods
evicted within the policy's budget, gone from the cluster, replacements Ready.

podman runs containers with runc and explicit ulimits: crun refuses a hybrid
cgroup layout, and without explicit limits runc may fail to apply the defaults.
"""

from __future__ import annotations

import json
import pathlib
import resource
import shutil
import subprocess
import tempfile
from collections.abc import Iterator

import pytest

from loadaware import __version__, sim

pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[2]
IMAGE = "localhost/loadaware:test"
DEFAULT_BASE = "docker.io/library/python:3.11-slim"
DEBIAN_BASE = "localhost/loadaware-test-base:bookworm"
WHEELS = "build/wheels"  # relative to the build context, the repository
UID = 65532
POLICY = """\
metrics:
  metricsServer: {}
  maxSampleAge: 2m
limits:
  maxNoOfPodsToEvictTotal: 3
verify:
  timeout: 30s
  # The relief check waits for samples after the moves; not what this test is about.
  reliefTimeout: 5s
state:
  namespace: default
"""


def _podman() -> str:
    podman = shutil.which("podman")
    if podman is None:
        pytest.fail("podman is needed for the image tests: make system-deps")
    return podman


def _run_flags() -> list[str]:
    nofile = min(resource.getrlimit(resource.RLIMIT_NOFILE)[1], 65536)
    nproc = min(resource.getrlimit(resource.RLIMIT_NPROC)[1], 4096)
    if nofile < 0:  # RLIM_INFINITY
        nofile = 65536
    if nproc < 0:
        nproc = 4096
    runtime = ["--runtime", "runc"] if shutil.which("runc") else []
    return [*runtime, "--ulimit", f"nofile={nofile}:{nofile}", "--ulimit", f"nproc={nproc}:{nproc}"]


def _run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT
    )


def _base(podman: str) -> str:
    """The default base if it is here or can be pulled, else the Debian one (built once)."""
    if _run(podman, "image", "exists", DEFAULT_BASE).returncode == 0:
        return DEFAULT_BASE
    if _run(podman, "pull", "--quiet", DEFAULT_BASE, timeout=300).returncode == 0:
        return DEFAULT_BASE
    if _run(podman, "image", "exists", DEBIAN_BASE).returncode == 0:
        return DEBIAN_BASE
    mmdebstrap = shutil.which("mmdebstrap")
    if mmdebstrap is None:
        pytest.fail(f"{DEFAULT_BASE} cannot be pulled and mmdebstrap is missing: make system-deps")
    with tempfile.TemporaryDirectory() as scratch:
        tarball = pathlib.Path(scratch) / "base.tar"
        built = _run(
            mmdebstrap, "--variant=minbase", "--include=python3,python3-venv,ca-certificates",
            "bookworm", str(tarball),
        )  # fmt: skip
        assert built.returncode == 0, built.stderr[-2000:]
        imported = _run(podman, "import", str(tarball), DEBIAN_BASE)
        assert imported.returncode == 0, imported.stderr
    return DEBIAN_BASE


def _reaches_pypi(podman: str, base: str) -> bool:
    probe = (
        "import urllib.request; urllib.request.urlopen('https://pypi.org/simple/pip/', timeout=10)"
    )
    probed = _run(
        podman, "run", "--rm", *_run_flags(), "--network", "host", base, "python3", "-c", probe,
        timeout=60,
    )  # fmt: skip
    return probed.returncode == 0


def _build_wheels() -> None:
    """Every dependency's wheel (and the build backend's) for the build to install offline."""
    wheels = ROOT / WHEELS
    built = _run(
        str(ROOT / ".venv" / "bin" / "python"), "-m", "pip", "wheel", "--quiet",
        "--wheel-dir", str(wheels), ".", "setuptools>=77", "wheel",
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    # The image builds loadaware's own wheel from the source it is given.
    for own in wheels.glob("loadaware-*.whl"):
        own.unlink()


@pytest.fixture(scope="module")
def image() -> str:
    podman = _podman()
    base = _base(podman)
    make = [
        "make", "--no-print-directory", "image", f"IMAGE={IMAGE}", f"BASE={base}",
        f"CONTAINER_ENGINE={podman}", "IMAGE_BUILD_FLAGS=" + " ".join(_run_flags()),
    ]  # fmt: skip
    if not _reaches_pypi(podman, base):
        _build_wheels()
        make.append(f"WHEELS={WHEELS}")
    built = _run(*make, timeout=900)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return IMAGE


def _loadaware(
    image: str, *args: str, network: str = "none", volumes: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    locked_down = ["--read-only", "--cap-drop=all", "--security-opt=no-new-privileges"]
    mounts = [flag for volume in volumes for flag in ("--volume", volume)]
    return _run(
        _podman(), "run", "--rm", *_run_flags(), *locked_down, "--network", network, *mounts,
        image, *args, timeout=300,
    )  # fmt: skip


def _git_head() -> str:
    head = _run("git", "rev-parse", "HEAD")
    return head.stdout.strip() if head.returncode == 0 else "unknown"


def test_labels_and_user(image: str) -> None:
    inspected = _run(_podman(), "image", "inspect", image)
    assert inspected.returncode == 0, inspected.stderr
    (config,) = json.loads(inspected.stdout)
    labels = config["Labels"]
    assert labels["org.opencontainers.image.version"] == __version__
    assert labels["org.opencontainers.image.revision"] == _git_head()
    assert labels["org.opencontainers.image.source"].startswith("https://")
    assert config["Config"]["User"] == f"{UID}:{UID}"
    assert config["Config"]["Entrypoint"] == ["loadaware"]


def test_version_reports_the_revision_built_from(image: str) -> None:
    result = _loadaware(image, "version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"loadaware {__version__} (revision {_git_head()})\n"


def test_simulate_as_non_root_on_a_read_only_root(image: str) -> None:
    result = _loadaware(image, "simulate")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "verdict:" in result.stdout


@pytest.fixture
def live_sim(tmp_path: pathlib.Path) -> Iterator[tuple[sim.SimServer, pathlib.Path]]:
    # Real time, as in production: the round judges sample ages by the wall clock.
    server = sim.start_server(scenario="peak-hour", ready_delay=0.5)
    try:
        yield server, server.write_kubeconfig(tmp_path / "kubeconfig")
    finally:
        server.stop()


def test_run_once_against_a_simulated_cluster_carries_out_its_plan(
    image: str, live_sim: tuple[sim.SimServer, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    server, kubeconfig = live_sim
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    # The kubeconfig is the owner's only; the container's user reads it as a pod
    # reads a mounted Secret.
    readable = tmp_path / "kubeconfig-for-the-container"
    readable.write_text(kubeconfig.read_text())
    readable.chmod(0o644)
    result = _loadaware(
        image, "run", "--once", "--policy", "/etc/loadaware/policy.yaml",
        "--kubeconfig", "/etc/loadaware/kubeconfig",
        network="host",
        volumes=(f"{policy}:/etc/loadaware/policy.yaml:ro",
                 f"{readable}:/etc/loadaware/kubeconfig:ro"),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads(result.stdout)
    assert record["status"] == "executed"
    evicted = [e for e in record["evictions"] if e["result"] == "evicted"]
    assert 1 <= len(evicted) <= 3
    running = {
        f"{p['metadata']['namespace']}/{p['metadata']['name']}"
        for p in server.list("pods")
        if not p["metadata"].get("deletionTimestamp")
    }
    assert not {e["pod"] for e in evicted} & running
    for replacement in record["verification"]["replacements"]:
        assert replacement["ready"]
