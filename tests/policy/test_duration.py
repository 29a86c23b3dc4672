"""Durations: Kubernetes-style text in, timedelta inside, shortest text out.

Covers accepted forms, rejected forms (with the form named), YAML's bare 0,
overflow, and format/parse round trips down to the microsecond.
"""

from __future__ import annotations

import datetime

import pytest

from loadaware import errors, policy

td = datetime.timedelta


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("90s", td(seconds=90), id="seconds"),
        pytest.param("10m", td(minutes=10), id="minutes"),
        pytest.param("1h30m", td(hours=1, minutes=30), id="hours-and-minutes"),
        pytest.param("500ms", td(milliseconds=500), id="milliseconds"),
        pytest.param("0", td(0), id="bare-zero"),
        pytest.param("0s", td(0), id="zero-seconds"),
        pytest.param("1.5h", td(minutes=90), id="fractional-hours"),
        pytest.param("250us", td(microseconds=250), id="microseconds"),
        pytest.param("2h0m5s", td(hours=2, seconds=5), id="go-style-zero-parts"),
    ],
)
def test_parse_accepts(text: str, expected: datetime.timedelta) -> None:
    assert policy.parse_duration(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("10", id="number-without-unit"),
        pytest.param("2 minutes", id="words"),
        pytest.param("1d", id="days-are-not-a-go-unit"),
        pytest.param("-5s", id="negative"),
        pytest.param("5s10", id="trailing-number"),
        pytest.param("1e3s", id="exponent"),
    ],
)
def test_parse_rejects_with_the_form(text: str) -> None:
    with pytest.raises(ValueError, match=r"number with a unit \(ns, us, ms, s, m, h\)"):
        policy.parse_duration(text)


def test_huge_duration_is_a_value_error_not_a_crash() -> None:
    with pytest.raises(ValueError, match="too large"):
        policy.parse_duration("99999999999999999999h")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        pytest.param(td(0), "0s", id="zero"),
        pytest.param(td(seconds=90), "1m30s", id="minute-and-seconds"),
        pytest.param(td(minutes=10), "10m", id="minutes"),
        pytest.param(td(hours=1, minutes=30), "1h30m", id="hours-and-minutes"),
        pytest.param(td(days=2), "48h", id="days-as-hours"),
        pytest.param(td(milliseconds=500), "500ms", id="milliseconds"),
        pytest.param(td(microseconds=1), "1us", id="microsecond"),
        pytest.param(td(seconds=1, milliseconds=500), "1.5s", id="fractional-seconds"),
        pytest.param(td(hours=1, milliseconds=250), "1h0.25s", id="hour-and-fraction"),
    ],
)
def test_format_is_short_and_reads_back(value: datetime.timedelta, text: str) -> None:
    assert policy.format_duration(value) == text
    assert policy.parse_duration(text) == value


def test_policy_accepts_unquoted_zero_from_yaml() -> None:
    p = policy.parse_policy({"evictor": {"minPodAge": 0}})
    assert p.evictor.min_pod_age == td(0)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        pytest.param("2 minutes", "'2 minutes'", id="words"),
        pytest.param("10", "'10'", id="no-unit"),
    ],
)
def test_policy_names_the_field_and_the_form(value: str, shown: str) -> None:
    with pytest.raises(errors.PolicyError) as info:
        policy.parse_policy({"metrics": {"maxSampleAge": value}})
    (problem,) = info.value.problems
    assert problem.startswith(f"metrics.maxSampleAge: invalid duration {shown}")
    assert "e.g. 90s, 10m, 1h30m" in problem


def test_policy_rejects_a_bare_number_other_than_zero() -> None:
    with pytest.raises(errors.PolicyError) as info:
        policy.parse_policy({"serve": {"webhook": {"cooldown": 300}}})
    (problem,) = info.value.problems
    assert problem.startswith("serve.webhook.cooldown: ")
    assert "duration string such as 90s, 10m or 1h" in problem
