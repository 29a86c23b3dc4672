"""Write the policy JSON schema, or the policy reference page.

    python -m loadaware.policy [--check] [--output PATH]             # policy/schema.json
    python -m loadaware.policy reference [--check] [--output PATH]   # docs/reference/policy.md

Run from the repository root; `--check` exits 1 when the file is missing or stale,
which is how CI keeps the committed files in step with the model.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from collections.abc import Sequence

from loadaware.policy import _reference, _schema

DEFAULT_OUTPUT = pathlib.Path("policy") / "schema.json"
REFERENCE_OUTPUT = pathlib.Path("docs") / "reference" / "policy.md"

# What each page is, where it goes by default, and the command that regenerates it.
_TARGETS = {
    "schema": (DEFAULT_OUTPUT, "python -m loadaware.policy"),
    "reference": (REFERENCE_OUTPUT, "make docs-reference"),
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m loadaware.policy",
        description="Write the policy JSON schema, or (reference) the policy reference page.",
    )
    parser.add_argument(
        "target",
        nargs="?",
        choices=sorted(_TARGETS),
        default="schema",
        help=f"default: schema ({DEFAULT_OUTPUT}); reference: {REFERENCE_OUTPUT}",
    )
    parser.add_argument("--output", "-o", type=pathlib.Path, help="default: by target")
    parser.add_argument(
        "--check", action="store_true", help="do not write; exit 1 if the file is not current"
    )
    args = parser.parse_args(argv)
    default_output, regenerate = _TARGETS[args.target]
    output: pathlib.Path = args.output or default_output
    if args.target == "reference":
        try:
            expected = _reference.render_policy_reference()
        except _reference.UndocumentedFieldError as exc:
            print(exc, file=sys.stderr)
            return 1
    else:
        expected = _schema.render_policy_json_schema()

    if args.check:
        try:
            current = output.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = None
        if current != expected:
            state = "missing" if current is None else "stale"
            print(f"{output} is {state}; regenerate it with `{regenerate}`", file=sys.stderr)
            return 1
        return 0

    if not output.parent.is_dir():
        # Most likely run outside the repository root; don't scatter files.
        print(f"directory {output.parent} does not exist", file=sys.stderr)
        return 2
    output.write_text(expected, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
