"""Kubernetes resource quantities (`250m`, `1.5Gi`, `1e3`), read exactly.

The grammar is resource.Quantity's:

    <quantity> ::= <sign>? <number> (<binarySI> | <decimalSI> | <decimalExponent>)?
    <number>   ::= <digits> | <digits>.<digits>? | .<digits>
    binarySI   ::= Ki | Mi | Gi | Ti | Pi | Ei
    decimalSI  ::= n | u | m | k | M | G | T | P | E
    exponent   ::= (e | E) <sign>? <digits>

Values are Fractions, so `0.1` is one tenth and sums of requests stay exact until
the single rounding Kubernetes itself applies (MilliValue, Value: away from zero).

Knows nothing of pods or nodes: the cluster reader and the metrics-server
provider both read quantities through it.
"""

from __future__ import annotations

import functools
import math
import re
from fractions import Fraction

_SUFFIX_FACTORS: dict[str, Fraction] = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}

# The exponent alternative comes first so that `1E3` is 1000 while a bare `1E`
# is one exa, as Kubernetes reads them.
_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?"
    r"(?:[eE](?P<exp>[+-]?[0-9]+)|(?P<suffix>[KMGTPE]i|[numkMGTPE])?)"
)

_NANOS_PER_UNIT = 10**9

_FORMS = (
    "a number with an optional suffix (m, k, M, G, Ki, Mi, Gi, ...) or exponent, "
    "e.g. 250m, 1.5Gi, 1e3"
)

# Kubernetes refuses exponents this large; refusing them here too keeps a typo
# like `1e999999999` from turning into a number with a billion digits.
_MAX_EXPONENT = 1000


def parse_quantity(value: str | int | float) -> Fraction:
    """The exact value of a quantity; ValueError naming the accepted forms on garbage.

    Ints and floats are what YAML makes of unquoted `2` or `0.5`; a float is read
    by its shortest decimal spelling, which is what the file said.
    """
    if isinstance(value, bool):
        raise ValueError(f"invalid quantity {value!r}: expected {_FORMS}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"invalid quantity {value!r}: expected a finite number")
        return Fraction(repr(value))
    if not isinstance(value, str):
        raise ValueError(f"invalid quantity {value!r}: expected {_FORMS}")
    return _parse_text(value)


@functools.lru_cache(maxsize=4096)
def _parse_text(text: str) -> Fraction:
    # Cached: a cluster dump repeats the same few dozen quantities across
    # hundreds of thousands of containers.
    match = _QUANTITY.fullmatch(text)
    if match is None or not (match["int"] or match["frac"]):
        raise ValueError(f"invalid quantity {text!r}: expected {_FORMS}")
    digits = match["int"] + (match["frac"] or "")
    number = Fraction(int(digits), 10 ** len(match["frac"] or ""))
    if match["exp"] is not None:
        exponent = int(match["exp"])
        if abs(exponent) > _MAX_EXPONENT:
            raise ValueError(f"invalid quantity {text!r}: exponent out of range")
        number *= Fraction(10) ** exponent
    else:
        number *= _SUFFIX_FACTORS[match["suffix"] or ""]
    return -number if match["sign"] == "-" else number


def to_nanos(value: str | int | float) -> int:
    """The value in units of 10^-9, rounded away from zero, as Kubernetes' ParseQuantity
    stores it. Integers add fast and exactly, so sums over many containers use these."""
    if type(value) is str:
        return _text_nanos(value)
    return round_away_from_zero(parse_quantity(value) * _NANOS_PER_UNIT)


@functools.lru_cache(maxsize=4096)
def _text_nanos(text: str) -> int:
    return round_away_from_zero(_parse_text(text) * _NANOS_PER_UNIT)


def nanos_to_millicores(nanos: int) -> int:
    """Millicores from nano-units, rounded up as MilliValue() does."""
    return _divide_away_from_zero(nanos, 10**6)


def nanos_to_units(nanos: int) -> int:
    """Whole units (bytes, pods) from nano-units, rounded up as Value() does."""
    return _divide_away_from_zero(nanos, 10**9)


def _divide_away_from_zero(numerator: int, denominator: int) -> int:
    return -(-numerator // denominator) if numerator >= 0 else numerator // denominator


def round_away_from_zero(value: Fraction) -> int:
    """Kubernetes' rounding for Value() and MilliValue(): up for positive values."""
    return math.ceil(value) if value >= 0 else math.floor(value)


def to_millicores(value: str | int | float | Fraction) -> int:
    """CPU in millicores, rounded up as Quantity.MilliValue() does (`0.1m` is 1)."""
    amount = value if isinstance(value, Fraction) else parse_quantity(value)
    return round_away_from_zero(amount * 1000)


def to_bytes(value: str | int | float | Fraction) -> int:
    """Memory (or any count) as an integer, rounded up as Quantity.Value() does."""
    amount = value if isinstance(value, Fraction) else parse_quantity(value)
    return round_away_from_zero(amount)
