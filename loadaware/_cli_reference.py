"""The flags section of docs/reference/cli.md, generated from the command's own
parser so that the page cannot leave a flag out.

    python -m loadaware._cli_reference [--check] [--output PATH]   # make docs-reference

The page's prose stays hand-written; only the part between the two markers is
generated. `--check` exits 1 when that part is missing or stale, which is how the
tests keep the committed page in step with the parser. A flag without a help
text stops the generator, naming it.

argparse has no public way to walk a parser: this reads its `_actions` and
mutually exclusive groups, as argparse's own help formatter does.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from collections.abc import Iterator, Sequence

from loadaware import cli

REFERENCE_OUTPUT = pathlib.Path("docs") / "reference" / "cli.md"
BEGIN = "<!-- BEGIN generated flags: `make docs-reference` writes this part from the parser -->"
END = "<!-- END generated flags -->"
REGENERATE = "make docs-reference"


class UndocumentedFlagError(ValueError):
    """Flags without a help text: the page would list them with nothing to say."""

    def __init__(self, flags: Sequence[str]) -> None:
        super().__init__("add help= to these flags in loadaware/cli.py: " + ", ".join(flags))
        self.flags = tuple(flags)


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = (), summary: str = ""
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
    """(command words, its parser, its one-line help) for the parser and every
    subcommand below it, depth first, in the order they were added."""
    yield path, parser, summary
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield from commands(sub, (*path, name), helps.get(name, ""))


def flags(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's own flags: neither -h nor the subcommand choice."""
    return [
        a
        for a in parser._actions
        if a.option_strings
        and not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
    ]


def undocumented_flags(parser: argparse.ArgumentParser | None = None) -> list[str]:
    parser = parser or cli._build_parser()
    return [
        " ".join(("loadaware", *words, a.option_strings[-1]))
        for words, sub, _ in commands(parser)
        for a in flags(sub)
        if not a.help or a.help == argparse.SUPPRESS
    ]


def _value(action: argparse.Action) -> str:
    """What follows the flag on a command line: nothing for a switch, the choices,
    or the metavar (the destination's name, upper case, as --help shows it)."""
    if action.nargs == 0:
        return ""
    if action.choices is not None:
        return "|".join(str(c) for c in action.choices)
    metavar = action.metavar or action.dest.upper()
    return metavar if isinstance(metavar, str) else " ".join(metavar)


def _spelled(action: argparse.Action) -> str:
    value = _value(action)
    return action.option_strings[-1] + (f" {value}" if value else "")


def synopsis(words: tuple[str, ...], parser: argparse.ArgumentParser) -> str:
    """`loadaware run --once --policy POLICY [--dry-run] ...`: required flags bare,
    optional ones in brackets, exclusive ones joined by `|`."""
    parts = ["loadaware", *words]
    grouped: dict[int, argparse._MutuallyExclusiveGroup] = {}
    for group in parser._mutually_exclusive_groups:
        for action in group._group_actions:
            grouped[id(action)] = group
    done: set[int] = set()
    for action in flags(parser):
        group = grouped.get(id(action))
        if group is None:
            spelled = _spelled(action)
            parts.append(spelled if action.required else f"[{spelled}]")
        elif id(group) not in done:
            done.add(id(group))
            either = " | ".join(_spelled(a) for a in group._group_actions)
            parts.append(f"({either})" if group.required else f"[{either}]")
    if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
        parts.append("COMMAND")
    return " ".join(parts)


def _default(action: argparse.Action) -> str:
    if action.required:
        return "required"
    default = action.default
    # By identity: a default of 0 is a default, unlike False.
    if default is None or default is False or default == "" or action.nargs == 0:
        return ""
    if default is argparse.SUPPRESS:
        return ""
    return f"`{default}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_cli_flags(parser: argparse.ArgumentParser | None = None) -> str:
    """The generated part of the page, markers included."""
    parser = parser or cli._build_parser()
    missing = undocumented_flags(parser)
    if missing:
        raise UndocumentedFlagError(missing)
    out = [BEGIN, ""]
    for words, sub, text in commands(parser):
        if not flags(sub):
            continue
        title = " ".join(("loadaware", *words))
        out += [f"### `{title}`", ""]
        if words and text:
            out += [_cell(text)[:1].upper() + _cell(text)[1:] + ".", ""]
        elif not words:
            out += ["Options of every command, given before it.", ""]
        out += ["```text", synopsis(words, sub), "```", ""]
        out += ["| flag | value | default | what it does |", "| --- | --- | --- | --- |"]
        for action in flags(sub):
            names = ", ".join(f"`{o}`" for o in action.option_strings)
            value = _value(action)
            out.append(
                f"| {names} | {f'`{_cell(value)}`' if value else ''} | {_cell(_default(action))} "
                f"| {_cell(str(action.help))} |"
            )
        out.append("")
    out.append(END)
    return "\n".join(out) + "\n"


def splice(page: str, flags_part: str) -> str:
    """The page with its generated part replaced; ValueError without the markers."""
    start, end = page.find(BEGIN), page.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the page has no generated part (the markers {BEGIN!r} and {END!r})")
    return page[:start] + flags_part + page[end + len(END) + 1 :]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m loadaware._cli_reference",
        description="Write the flags section of the command reference from the parser.",
    )
    parser.add_argument(
        "--output", "-o", type=pathlib.Path, default=REFERENCE_OUTPUT, help="the page"
    )
    parser.add_argument(
        "--check", action="store_true", help="do not write; exit 1 if the page is not current"
    )
    args = parser.parse_args(argv)
    output: pathlib.Path = args.output
    try:
        current = output.read_text(encoding="utf-8")
    except FileNotFoundError:
        print(f"{output} is missing", file=sys.stderr)
        return 1
    try:
        expected = splice(current, render_cli_flags())
    except (UndocumentedFlagError, ValueError) as exc:
        print(f"{output}: {exc}", file=sys.stderr)
        return 1
    if args.check:
        if current != expected:
            print(f"{output} is stale; regenerate it with `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    output.write_text(expected, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
