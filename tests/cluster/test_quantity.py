"""Kubernetes quantities: parse_quantity, to_millicores, to_bytes.

Covered: decimal SI suffixes (n, u, m, k, M, G, T, P, E), binary suffixes
(Ki ... Ei), decimal exponents (e, E, negative), signs, fractional numbers,
YAML ints and floats, exactness (no float rounding), rounding up as
MilliValue()/Value() do, and clear errors on garbage.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from loadaware.cluster import parse_quantity, to_bytes, to_millicores


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("250m", Fraction(1, 4)),
        ("1.5Gi", Fraction(3 * 2**29)),
        ("1e3", Fraction(1000)),
        ("1E3", Fraction(1000)),
        ("12e-3", Fraction(12, 1000)),
        ("1E", Fraction(10**18)),
        ("512Mi", Fraction(512 * 2**20)),
        ("0.1", Fraction(1, 10)),
        ("100n", Fraction(100, 10**9)),
        ("5u", Fraction(5, 10**6)),
        ("2k", Fraction(2000)),
        ("3M", Fraction(3 * 10**6)),
        ("4G", Fraction(4 * 10**9)),
        ("1T", Fraction(10**12)),
        ("1P", Fraction(10**15)),
        ("1Ki", Fraction(1024)),
        ("1Ti", Fraction(2**40)),
        ("1Pi", Fraction(2**50)),
        ("1Ei", Fraction(2**60)),
        ("15225804Ki", Fraction(15225804 * 1024)),
        ("+1", Fraction(1)),
        ("-1.5", Fraction(-3, 2)),
        (".5", Fraction(1, 2)),
        ("5.", Fraction(5)),
        ("0", Fraction(0)),
    ],
    ids=lambda value: str(value),
)
def test_text_quantities_are_read_exactly(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(2, Fraction(2)), (0.5, Fraction(1, 2)), (0.1, Fraction(1, 10)), (1e3, Fraction(1000))],
    ids=["int", "half", "tenth-is-a-decimal-tenth", "float-exponent"],
)
def test_yaml_numbers_are_read_as_written(value: int | float, expected: Fraction) -> None:
    assert parse_quantity(value) == expected


@pytest.mark.parametrize(
    ("value", "millicores"),
    [
        ("250m", 250),
        ("2", 2000),
        ("0.1", 100),
        (0.1, 100),
        ("100n", 1),  # rounds up: any request is at least 1m
        ("1.0001", 1001),
        ("3920m", 3920),
        ("12e-3", 12),
    ],
)
def test_millicores_round_up(value: str | float, millicores: int) -> None:
    assert to_millicores(value) == millicores


@pytest.mark.parametrize(
    ("value", "bytes_"),
    [("512Mi", 536870912), ("1.5Gi", 1610612736), ("1k", 1000), ("0.5", 1), ("100m", 1)],
)
def test_bytes_round_up(value: str, bytes_: int) -> None:
    assert to_bytes(value) == bytes_


def test_negative_values_round_away_from_zero_as_kubernetes_does() -> None:
    assert to_millicores("-1.5m") == -2
    assert to_bytes("-0.5") == -1


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "1.5.5",
        "10Qi",
        "1K",
        "1e",
        "Mi",
        ".",
        "+",
        "1 Gi",
        " 1",
        "1ki",
        "1e3Mi",
        "0x10",
        "1_000",
    ],
)
def test_garbage_is_refused_with_the_accepted_forms(garbage: str) -> None:
    with pytest.raises(ValueError, match="invalid quantity") as info:
        parse_quantity(garbage)
    assert "1.5Gi" in str(info.value)  # the message shows what would be accepted


@pytest.mark.parametrize("value", [True, None, float("nan"), float("inf"), [1]])
def test_non_quantities_are_refused(value: object) -> None:
    with pytest.raises(ValueError, match="invalid quantity"):
        parse_quantity(value)  # type: ignore[arg-type]


def test_huge_exponents_are_refused() -> None:
    with pytest.raises(ValueError, match="exponent out of range"):
        parse_quantity("1e999999999")
