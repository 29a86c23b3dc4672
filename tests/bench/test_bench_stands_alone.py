"""bench/ stands apart from the tests: the tests may use its Prometheus and history
helpers, but nothing under bench/ may import from tests/, so the benchmarks run
from a checkout or a wheel without the test tree."""

from __future__ import annotations

import ast
import pathlib

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench"


def imported_modules(path: pathlib.Path) -> list[str]:
    modules = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.append(node.module)
    return modules


def test_bench_has_modules_to_check() -> None:
    assert len(sorted(BENCH.glob("*.py"))) > 5


@pytest.mark.parametrize("path", sorted(BENCH.rglob("*.py")), ids=lambda p: p.name)
def test_bench_module_does_not_import_tests(path: pathlib.Path) -> None:
    offending = [m for m in imported_modules(path) if m == "tests" or m.startswith("tests.")]
    assert offending == [], f"{path.relative_to(BENCH.parent)} imports {offending}"
