"""The CLI's log formats: the text format keeps every `extra=` field (a warning's
reason above all), quoted where it has spaces, skips empty ones, and leaves a
traceback below the line; the JSON format carries the same fields. Default
levels: INFO for serve, WARNING for the offline commands and for run off a terminal.
"""

from __future__ import annotations

import io
import json
import logging
import sys

import pytest

from loadaware import cli


def _log(capsys: pytest.CaptureFixture[str], fmt: str, *, exc_info: bool = False) -> str:
    cli._configure_logging("INFO", fmt)
    log = logging.getLogger("loadaware.test")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        log.warning(
            "cluster cache relists",
            extra={"kind": "pods", "reason": 'failed: said "no" = refused', "node": None},
            exc_info=exc_info,
        )
    return capsys.readouterr().err


def test_text_lines_carry_every_field(capsys: pytest.CaptureFixture[str]) -> None:
    line = _log(capsys, "text").rstrip("\n")
    assert " WARNING loadaware.test: cluster cache relists " in line
    assert line.endswith(' kind=pods reason="failed: said \\"no\\" = refused"')
    assert "node=" not in line


def test_a_traceback_stays_below_the_line(capsys: pytest.CaptureFixture[str]) -> None:
    first, *rest = _log(capsys, "text", exc_info=True).splitlines()
    assert first.endswith('kind=pods reason="failed: said \\"no\\" = refused"')
    assert rest[0] == "Traceback (most recent call last):"
    assert rest[-1] == "RuntimeError: boom"


def test_json_lines_carry_the_same_fields(capsys: pytest.CaptureFixture[str]) -> None:
    body = json.loads(_log(capsys, "json"))
    assert body["message"] == "cluster cache relists"
    assert body["level"] == "WARNING"
    assert body["kind"] == "pods"
    assert body["reason"] == 'failed: said "no" = refused'


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("command", "terminal", "level"),
    [
        ("serve", False, "INFO"),
        ("run", False, "WARNING"),
        ("run", True, "INFO"),
        ("plan", True, "WARNING"),
        ("simulate", False, "WARNING"),
    ],
)
def test_default_levels(
    monkeypatch: pytest.MonkeyPatch, command: str, terminal: bool, level: str
) -> None:
    monkeypatch.setattr(sys, "stderr", _Terminal() if terminal else io.StringIO())
    assert cli._default_log_level(command) == level
