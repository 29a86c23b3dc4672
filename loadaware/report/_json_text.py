"""A JSON document as the CLI prints it: indented by two spaces, ASCII only.

The text of `json.dumps(document, indent=2)`, encoded by msgspec: a 5,000-node
plan's 13 MB in a fiftieth of a second rather than a third of one (json.dumps
falls back to its pure-Python encoder whenever it indents). What may differ is
spelling, never a value:

- a float in exponent form is written as msgspec writes it (0.00001, 1e16 where
  json.dumps writes 1e-05, 1e+16);
- NaN and the infinities, which JSON has no word for, are written null, where
  json.dumps writes NaN and Infinity, which strict parsers refuse. A plan holds
  none: the metrics checks refuse a NaN or infinite sample and the solver drops
  a bound that is not finite.

A document msgspec cannot encode as json.dumps would (a key that is not a string,
a number or a bool; a string that is not valid Unicode) is given to json.dumps.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

# What json.dumps (ensure_ascii) escapes and msgspec writes as is: DEL and every
# character beyond ASCII. Control characters both escape alike.
_UNESCAPED = re.compile("[\x7f-\U0010ffff]")


def _plain(value: object) -> object:
    """A subclass of str, int or float (a numpy float among them) as its base type,
    as json.dumps writes it; anything else cannot be encoded, as with json.dumps."""
    for base in (str, int, float):
        if isinstance(value, base):
            return base(value)  # type: ignore[call-overload]
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


_encoder = msgspec.json.Encoder(enc_hook=_plain)


def json_text(document: Any) -> str:
    """The document as `json.dumps(document, indent=2)` writes it, with a newline."""
    try:
        raw = msgspec.json.format(_encoder.encode(document), indent=2)
    except (TypeError, ValueError, msgspec.EncodeError):
        return json.dumps(document, indent=2) + "\n"
    text = raw.decode("utf-8")
    if not raw.isascii() or b"\x7f" in raw:
        text = _UNESCAPED.sub(_escaped, text)
    return text + "\n"


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"
