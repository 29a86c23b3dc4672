"""The flags section of the command reference: generated from the command's parser,
committed in docs/reference/cli.md and kept current (`make docs-reference`).

Covered: the committed page is the generated one, and a stale page, or one without
the markers, fails the check with the command that regenerates it; writing replaces
only the part between the markers; every flag of every command is on the page,
under its command, with its value, default and help, the flags the page once left
out among them; every flag has a help text, and a flag without one stops the
generator naming it; `metrics dump` says where its kubeconfig comes from and takes
`--context`.
"""

from __future__ import annotations

import argparse
import pathlib

import pytest

from loadaware import _cli_reference, cli

REPO = pathlib.Path(__file__).resolve().parents[2]
COMMITTED = REPO / "docs" / "reference" / "cli.md"


def _section(page: str, command: str) -> str:
    """The generated section of one command: from its heading to the next."""
    generated = page.split(_cli_reference.BEGIN, 1)[1]
    heading = f"### `{command}`\n"
    assert heading in generated, command
    return generated.split(heading, 1)[1].split("\n### ", 1)[0]


def _walk(
    parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
) -> list[tuple[str, list[str]]]:
    """Every command and its flags, walked apart from the generator."""
    found = []
    own = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _walk(sub, (*words, name))
        elif action.option_strings and not isinstance(action, argparse._HelpAction):
            own.append(action.option_strings[-1])
    return ([(" ".join(("loadaware", *words)), own)] if own else []) + found


def test_committed_page_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    code = _cli_reference.main(["--check", "--output", str(COMMITTED)])
    assert code == 0, (
        "docs/reference/cli.md is stale: run `make docs-reference`\n" + capsys.readouterr().err
    )


def test_a_stale_page_fails_the_check_naming_the_command(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "cli.md"
    page = COMMITTED.read_text(encoding="utf-8")
    stale.write_text(page.replace("| `--seed` |", "| `--sead` |"), encoding="utf-8")
    assert _cli_reference.main(["--check", "--output", str(stale)]) == 1
    assert "stale; regenerate it with `make docs-reference`" in capsys.readouterr().err
    unmarked = tmp_path / "unmarked.md"
    unmarked.write_text("# Commands and files\n", encoding="utf-8")
    assert _cli_reference.main(["--check", "--output", str(unmarked)]) == 1
    assert "no generated part" in capsys.readouterr().err
    assert _cli_reference.main(["--check", "--output", str(tmp_path / "missing.md")]) == 1
    assert "missing" in capsys.readouterr().err


def test_writing_replaces_only_the_generated_part(tmp_path: pathlib.Path) -> None:
    page = tmp_path / "cli.md"
    page.write_text(
        f"# Title\n\nprose before\n\n{_cli_reference.BEGIN}\nold\n{_cli_reference.END}\n"
        "\nprose after\n",
        encoding="utf-8",
    )
    assert _cli_reference.main(["--output", str(page)]) == 0
    written = page.read_text(encoding="utf-8")
    assert written == (
        "# Title\n\nprose before\n\n" + _cli_reference.render_cli_flags() + "\nprose after\n"
    )
    assert _cli_reference.main(["--check", "--output", str(page)]) == 0


def test_every_flag_of_every_command_is_on_the_page() -> None:
    page = COMMITTED.read_text(encoding="utf-8")
    commands = _walk(cli._build_parser())
    assert {c for c, _ in commands} >= {
        "loadaware",
        "loadaware simulate",
        "loadaware plan",
        "loadaware run",
        "loadaware serve",
        "loadaware sim serve",
        "loadaware metrics dump",
    }
    for command, flags in commands:
        section = _section(page, command)
        for flag in flags:
            assert f"`{flag}` |" in section, f"{command} {flag}"


@pytest.mark.parametrize(
    ("command", "flags"),
    [
        ("loadaware run", ["--report", "--forecast-horizon"]),
        ("loadaware serve", ["--identity"]),
        (
            "loadaware sim serve",
            ["--ready-delay", "--token-file", "--seed", "--watch-bookmark-seconds"],
        ),
        ("loadaware simulate", ["--now", "--output", "--all-nodes", "--solver", "--forecast"]),
        ("loadaware metrics dump", ["--kubeconfig", "--context"]),
    ],
)
def test_the_flags_the_page_left_out_are_on_it(command: str, flags: list[str]) -> None:
    section = _section(COMMITTED.read_text(encoding="utf-8"), command)
    for flag in flags:
        assert f"`{flag}` |" in section, flag


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(
            "| `-o`, `--output` | `table\\|json` | `table` | the before/after table, or the "
            "plan's JSON with the simulation's result |",
            id="choices and a default",
        ),
        pytest.param(
            "| `--policy` | `FILE` | required | policy file (LoadAwarePolicy YAML) |",
            id="required",
        ),
        pytest.param(
            "| `--seed` | `SEED` | `0` | seed of the scheduler's random choice among equally "
            "scored nodes |",
            id="a default of 0",
        ),
        pytest.param(
            "| `--dry-run` |  |  | evict with dryRun=All: change nothing |", id="a switch"
        ),
    ],
)
def test_rows_spell_value_default_and_help(row: str) -> None:
    assert row in COMMITTED.read_text(encoding="utf-8")


def test_synopses_mark_required_optional_and_exclusive_flags() -> None:
    page = COMMITTED.read_text(encoding="utf-8")
    assert "loadaware sim serve (--scenario SCENARIO | --cluster CLUSTER) " in page
    assert "loadaware run --once --policy FILE [--dry-run] " in page
    assert "loadaware simulate [--scenario SCENARIO | --cluster CLUSTER] " in page


def test_every_flag_has_a_help_text() -> None:
    assert _cli_reference.undocumented_flags() == [], "add help= to these flags in loadaware/cli.py"


def test_a_flag_without_a_help_text_stops_the_generator() -> None:
    parser = argparse.ArgumentParser(prog="loadaware")
    commands = parser.add_subparsers()
    plan = commands.add_parser("plan", help="plan")
    plan.add_argument("--policy", required=True)
    plan.add_argument("--now", help="when")
    assert _cli_reference.undocumented_flags(parser) == ["loadaware plan --policy"]
    with pytest.raises(_cli_reference.UndocumentedFlagError, match="loadaware plan --policy"):
        _cli_reference.render_cli_flags(parser)


def test_metrics_dump_says_where_its_kubeconfig_comes_from(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["metrics", "dump", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "~/.kube/config" in text
    assert "--context CONTEXT" in text
