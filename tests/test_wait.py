"""The shared wait helpers: poll returns the first truthy answer or fails naming
what it waited for; hold fails the first time its condition is falsy."""

from __future__ import annotations

import itertools

import pytest

from tests.lib.wait import hold, poll


def test_poll_returns_the_first_truthy_answer() -> None:
    answers = iter([None, 0, "", {"ready": True}, "later"])
    assert poll(lambda: next(answers), "an answer", 5, interval=0.0) == {"ready": True}


def test_poll_fails_naming_what_it_waited_for_and_how_long() -> None:
    with pytest.raises(AssertionError, match=r"timed out after 0\.05s waiting for the moon"):
        poll(lambda: False, "the moon", 0.05, interval=0.01)


def test_hold_asks_until_its_time_is_up() -> None:
    asked = itertools.count()
    hold(lambda: next(asked) >= 0, "counting", 0.05, interval=0.01)
    assert next(asked) >= 2


def test_hold_fails_the_first_time_its_condition_is_falsy() -> None:
    answers = iter([True, True, False, True])
    with pytest.raises(AssertionError, match=r"^the lease stopped holding after"):
        hold(lambda: next(answers), "the lease", 5, interval=0.0)
