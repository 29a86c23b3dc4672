"""Size limits of loadaware's code: no module over 800 lines and no class over 400.

Covered: every module under loadaware/ is read with `ast`; a module over
MAX_MODULE_LINES or a class (nested ones too, decorators counted) over
MAX_CLASS_LINES fails the test, named with its size. Data tables may be allowed by
name in DATA_TABLES; an entry there that no longer needs it fails too, so the set
only shrinks. The measure itself is checked on made-up source.
"""

from __future__ import annotations

import ast
import pathlib
import textwrap
from dataclasses import dataclass

import loadaware

MAX_MODULE_LINES = 800
MAX_CLASS_LINES = 400
ROOT = pathlib.Path(loadaware.__file__).parent

# Modules that are data (literal tables), not code, allowed over the limits, each
# with a comment saying what it holds. None so far: keep it that way if you can.
DATA_TABLES: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Oversize:
    module: str  # path relative to loadaware/, with forward slashes
    what: str  # "module", or the name of the class
    lines: int
    limit: int

    def __str__(self) -> str:
        where = self.module if self.what == "module" else f"{self.module}: class {self.what}"
        return f"{where} has {self.lines} lines (limit {self.limit})"


def measure(module: str, source: str) -> list[Oversize]:
    """What in one module's source is over its limit."""
    found: list[Oversize] = []
    lines = len(source.splitlines())
    if lines > MAX_MODULE_LINES:
        found.append(Oversize(module, "module", lines, MAX_MODULE_LINES))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            assert node.end_lineno is not None
            lines = node.end_lineno - first + 1
            if lines > MAX_CLASS_LINES:
                found.append(Oversize(module, node.name, lines, MAX_CLASS_LINES))
    return found


def oversized() -> list[Oversize]:
    found: list[Oversize] = []
    for path in sorted(ROOT.rglob("*.py")):
        module = path.relative_to(ROOT).as_posix()
        found.extend(measure(module, path.read_text(encoding="utf-8")))
    return found


def test_no_module_or_class_over_its_limit() -> None:
    over = [o for o in oversized() if o.module not in DATA_TABLES]
    assert not over, "split by job (one job per module):\n" + "\n".join(map(str, over))


def test_every_exemption_is_still_needed() -> None:
    over = {o.module for o in oversized()}
    stale = sorted(DATA_TABLES - over)
    assert not stale, (
        f"within the limits or gone, so no longer exempt; remove from DATA_TABLES: "
        f"{', '.join(stale)}"
    )


def _class_source(name: str, body_lines: int) -> str:
    body = "".join(f"    x{i} = {i}\n" for i in range(body_lines))
    return f"class {name}:\n{body}"


def test_measure_names_a_long_class_and_module() -> None:
    source = _class_source("Short", MAX_CLASS_LINES - 1) + _class_source("Long", MAX_CLASS_LINES)
    source += "y = 0\n" * (MAX_MODULE_LINES + 1 - len(source.splitlines()))
    found = measure("pkg/_big.py", source)
    assert [str(o) for o in found] == [
        f"pkg/_big.py has {MAX_MODULE_LINES + 1} lines (limit {MAX_MODULE_LINES})",
        f"pkg/_big.py: class Long has {MAX_CLASS_LINES + 1} lines (limit {MAX_CLASS_LINES})",
    ]


def test_measure_counts_decorators_and_nested_classes() -> None:
    inner = textwrap.indent(_class_source("Inner", MAX_CLASS_LINES - 1), "    ")
    source = "@decorate\nclass Outer:\n" + inner
    found = measure("pkg/_nested.py", source)
    # Outer: decorator + class line + Inner (400 lines) = 402; Inner: exactly 400.
    assert [(o.what, o.lines) for o in found] == [("Outer", MAX_CLASS_LINES + 2)]
