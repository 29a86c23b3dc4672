"""The `loadaware` process as a user starts it (`python -m loadaware`, the console
script): a one-shot command's process leaves with os._exit once its output is
flushed, so its exit code and its whole output, through a pipe, must be what
cli.main gives in-process; an error exits with its code and says why; a pipe
closed early ends it as it always has; the other commands exit as before."""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import subprocess
import sys

import pytest

from loadaware import cli
from loadaware.sim import builtin_scenario
from loadaware.sim.scenarios import generate_cluster

NOW = datetime.datetime(2026, 11, 29, 8, 0, tzinfo=datetime.UTC)
REPO = pathlib.Path(__file__).resolve().parents[1]
MODULE = [sys.executable, "-m", "loadaware"]
# As `loadaware` ran before it had a process entry of its own.
MAIN_ONLY = [sys.executable, "-c", "from loadaware import cli; raise SystemExit(cli.main())"]


def _write(scenario, directory: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    cluster = directory / "cluster.json"
    metrics = directory / "metrics.json"
    cluster.write_text(json.dumps(scenario.cluster_document()))
    metrics.write_text(json.dumps(scenario.metrics))
    return cluster, metrics


@pytest.fixture
def small_files(tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    return _write(builtin_scenario("small", now=NOW), tmp_path)


@pytest.fixture
def generated_files(tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    # 100 nodes: a plan whose JSON (about 50 kB) is written through the pipe in
    # several blocks, the last of them by the flush before the process leaves.
    scenario = generate_cluster(nodes=100, seed=0, family="usage-independent", now=NOW)
    return _write(scenario, tmp_path)


def _plan(files: tuple[pathlib.Path, pathlib.Path], *extra: str, now: str = NOW.isoformat()):
    cluster, metrics = files
    return [
        "plan",
        "--cluster",
        str(cluster),
        "--metrics",
        str(metrics),
        "--policy",
        str(REPO / "policy/default.yaml"),
        "--now",
        now,
        *extra,
    ]


# Standard output block-buffered, as a user's is when it is a pipe: what is still
# in the buffer when the command ends is written only by the flush before exit.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=REPO, env=ENV)


def _without_timing(text: str) -> dict:
    body = json.loads(text)
    body["solver"].pop("seconds", None)
    return body


def test_plan_json_through_a_pipe_is_the_in_process_plan(
    generated_files, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _plan(generated_files, "-o", "json")
    assert cli.main(args) == 0
    in_process = capsys.readouterr().out
    done = _run([*MODULE, *args])
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.endswith("}\n")
    assert len(done.stdout) > 16_384
    assert _without_timing(done.stdout) == _without_timing(in_process)
    assert _without_timing(done.stdout)["evictions"]


def test_console_script_plan_table_exits_0(small_files) -> None:
    script = pathlib.Path(sys.executable).with_name("loadaware")
    done = _run([str(script), *_plan(small_files)])
    assert done.returncode == 0, done.stderr
    assert "evict" in done.stdout.lower()
    assert done.stdout.endswith("\n")


def test_refused_plan_exits_3_with_its_json(small_files) -> None:
    # An hour after the samples: every one is stale and the plan refuses.
    late = (NOW + datetime.timedelta(hours=1)).isoformat()
    done = _run([*MODULE, *_plan(small_files, "-o", "json", now=late)])
    assert done.returncode == 3, done.stderr
    body = json.loads(done.stdout)
    assert body["status"] == "refused"
    assert body["evictions"] == []


def test_unreadable_cluster_file_exits_2_naming_it(small_files, tmp_path) -> None:
    missing = tmp_path / "no-such-cluster.json"
    done = _run([*MODULE, *_plan((missing, small_files[1]))])
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("error: ")
    assert "no-such-cluster.json" in done.stderr


def test_bad_flags_exit_2(small_files) -> None:
    done = _run([*MODULE, "plan", "--cluster"])
    assert done.returncode == 2
    assert "--cluster" in done.stderr


def test_a_pipe_closed_early_ends_the_process_as_before(generated_files) -> None:
    args = _plan(generated_files, "-o", "json")
    outcomes = []
    for command in (MODULE, MAIN_ONLY):
        with subprocess.Popen(
            [*command, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=ENV
        ) as child:
            assert child.stdout is not None
            assert child.stderr is not None
            child.stdout.close()  # nobody reads: the plan's JSON cannot be written
            err = child.stderr.read().decode()
            outcomes.append((child.wait(timeout=120), err))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0] != 0


def test_standard_output_closed_ends_the_process_as_before(small_files) -> None:
    # Started with descriptor 1 closed: sys.stdout is None, nothing can be printed.
    args = " ".join(_plan(small_files, "-o", "json"))
    outcomes = []
    for command in (MODULE, MAIN_ONLY):
        line = " ".join(f"'{part}'" for part in command)
        outcomes.append(_run(["sh", "-c", f"exec {line} {args} >&-"]))
    entry, main_only = outcomes
    assert (entry.returncode, entry.stderr) == (main_only.returncode, main_only.stderr)
    assert outcomes[0].returncode == 1
    assert "unexpected failure" in outcomes[0].stderr


def _with_exit_hook(argv: list[str]) -> subprocess.CompletedProcess[str]:
    # An atexit hook runs when the interpreter tears itself down, never after os._exit.
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('torn down', file=sys.stderr))\n"
        f"sys.argv = ['loadaware', *{argv!r}]\n"
        "from loadaware import cli\n"
        "cli.entry()\n"
    )
    return _run([sys.executable, "-c", script])


def test_a_one_shot_command_leaves_without_teardown(small_files) -> None:
    done = _with_exit_hook(_plan(small_files, "-o", "json"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "planned"
    assert "torn down" not in done.stderr


def test_other_exits_tear_down_as_before() -> None:
    # Flags that do not parse: not a command's end, the interpreter exits as usual.
    done = _with_exit_hook(["plan", "--cluster"])
    assert done.returncode == 2
    assert "torn down" in done.stderr
