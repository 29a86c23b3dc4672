"""Write the policy JSON schema: `python -m loadaware.policy [--check] [--output PATH]`.

Run from the repository root; `--check` exits 1 when the file is missing or stale,
which is how CI keeps the committed schema in step with the model.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
from collections.abc import Sequence

from loadaware.policy import _schema

DEFAULT_OUTPUT = pathlib.Path("policy") / "schema.json"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m loadaware.policy", description="Write the policy JSON schema."
    )
    parser.add_argument(
        "--output", "-o", type=pathlib.Path, default=DEFAULT_OUTPUT, help="default: %(default)s"
    )
    parser.add_argument(
        "--check", action="store_true", help="do not write; exit 1 if the file is not current"
    )
    args = parser.parse_args(argv)
    output: pathlib.Path = args.output
    expected = _schema.render_policy_json_schema()

    if args.check:
        try:
            current = output.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = None
        if current != expected:
            state = "missing" if current is None else "stale"
            print(
                f"{output} is {state}; regenerate it with `python -m loadaware.policy`",
                file=sys.stderr,
            )
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
