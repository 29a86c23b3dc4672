"""Schedules: crontab fields as cron means them, fire times in the schedule's zone,
and real APScheduler jobs firing on an injected clock.

Covered: numeric and named day-of-week (0 and 7 are Sunday; APScheduler 3
alone would read 1-5 as Tuesday to Saturday), Europe/Berlin across a DST
change and a weekend, the next fire times on /status and as a metric, a
schedule firing when the clock reaches it, missed runs coalesced into one, a
schedule firing during a round skipped and counted (single flight), a
schedule's pools scoping the sources and its dryRun passed on, bad crons
refused at start.
"""

from __future__ import annotations

import datetime
import json
import pathlib

import pytest
from prometheus_client import REGISTRY

from loadaware import cli, errors, policy, runtime
from tests.lib.builders import make_cluster, make_node
from tests.lib.wait import poll
from tests.runtime.conftest import FakeClock, ServiceFactory, notification

UTC = datetime.UTC


def at(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("*", "*"),
        ("1-5", "mon,tue,wed,thu,fri"),
        ("mon-fri", "mon,tue,wed,thu,fri"),
        ("0", "sun"),
        ("7", "sun"),
        ("5-7", "sun,fri,sat"),
        ("0,6", "sun,sat"),
        ("*/2", "sun,tue,thu,sat"),
        ("1/3", "mon,thu"),
        ("sat,SUN", "sun,sat"),
    ],
)
def test_day_of_week_reads_as_crontab(field: str, expected: str) -> None:
    assert runtime.crontab_day_of_week(field) == expected


@pytest.mark.parametrize("field", ["8", "mon-xyz", "5-1", "*/0"])
def test_bad_day_of_week_is_a_policy_error(field: str) -> None:
    with pytest.raises(errors.PolicyError):
        runtime.crontab_day_of_week(field)


def schedule(cron: str, timezone: str = "Europe/Berlin", **extra: object) -> policy.Schedule:
    return policy.Schedule.model_validate(
        {"name": "peak", "cron": cron, "timezone": timezone, **extra}
    )


@pytest.mark.parametrize(
    ("cron", "after", "expected"),
    [
        # 08:59 in Berlin on a Monday: the next ten-minute mark.
        ("*/10 8-20 * * mon-fri", "2026-11-30T07:59:00Z", "2026-11-30T08:00:00Z"),
        # Friday 20:55 in Berlin: next Monday 08:00 Berlin (07:00 UTC in winter).
        ("*/10 8-20 * * mon-fri", "2026-12-04T19:55:00Z", "2026-12-07T07:00:00Z"),
        ("*/10 8-20 * * 1-5", "2026-12-04T19:55:00Z", "2026-12-07T07:00:00Z"),
        # Saturday morning, numeric crontab: 1-5 is Monday to Friday, never Saturday.
        ("0 9 * * 1-5", "2026-12-05T06:00:00Z", "2026-12-07T08:00:00Z"),
        # Across the spring DST change (2026-03-29): 08:00 Berlin is 06:00 UTC after it.
        ("0 8 * * *", "2026-03-28T08:00:00Z", "2026-03-29T06:00:00Z"),
        ("0 8 * * *", "2026-03-27T08:00:00Z", "2026-03-28T07:00:00Z"),
    ],
)
def test_next_fire_time_in_the_schedule_zone(cron: str, after: str, expected: str) -> None:
    assert runtime.next_fire_time(schedule(cron), at(after)) == at(expected)


def test_bad_cron_fails_at_start() -> None:
    with pytest.raises(errors.PolicyError, match="bad cron"):
        runtime.Schedules([schedule("61 * * * *")], lambda s: None, clock=FakeClock())


# -- firing on an injected clock --------------------------------------------------


@pytest.fixture
def virtual_time(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """APScheduler 3 reads datetime.now() directly; give it the test's clock."""
    import apscheduler.executors.base
    import apscheduler.schedulers.base

    clock = FakeClock(at("2026-11-30T06:59:59Z"))  # Monday 07:59:59 in Berlin

    class VirtualDatetime(datetime.datetime):
        @classmethod
        def now(cls, tz: datetime.tzinfo | None = None) -> datetime.datetime:  # type: ignore[override]
            return clock().astimezone(tz)

    monkeypatch.setattr(apscheduler.schedulers.base, "datetime", VirtualDatetime)
    monkeypatch.setattr(apscheduler.executors.base, "datetime", VirtualDatetime)
    return clock


def settings_with(
    tmp_path_settings: policy.LoadAwarePolicy, *schedules: dict[str, object]
) -> policy.LoadAwarePolicy:
    return tmp_path_settings.model_copy(
        update={"schedules": [policy.Schedule.model_validate(s) for s in schedules]}
    )


def skipped(trigger: str, reason: str) -> float:
    value = REGISTRY.get_sample_value(
        "loadaware_skipped_triggers_total", {"trigger": trigger, "reason": reason}
    )
    return value or 0.0


def test_schedule_fires_when_the_clock_reaches_it_and_coalesces_missed_runs(
    running_service: ServiceFactory,
    virtual_time: FakeClock,
    tmp_path_settings: policy.LoadAwarePolicy,
) -> None:
    settings = settings_with(
        tmp_path_settings,
        {"name": "peak", "cron": "*/10 8-20 * * mon-fri", "timezone": "Europe/Berlin"},
    )
    run = running_service(settings, clock=virtual_time)
    run.service.start_background()
    status = json.loads(run.get("/status")[1])
    assert status["schedules"][0]["nextRun"] == "2026-11-30T07:00:00Z"
    assert (
        REGISTRY.get_sample_value(
            "loadaware_schedule_next_run_timestamp_seconds", {"schedule": "peak"}
        )
        == at("2026-11-30T07:00:00Z").timestamp()
    )
    assert run.service.rounds_started == 0

    virtual_time.advance(1.5)  # 08:00:00.5 in Berlin
    run.service.schedules.wakeup()
    poll(lambda: len(run.rounds.calls) == 1, "the 08:00 run")
    assert run.rounds.calls[0].trigger == "schedule"

    # The process stalls through 08:10, 08:20 and 08:30: one run, not three.
    virtual_time.advance(30 * 60 + 5)
    run.service.schedules.wakeup()
    poll(lambda: len(run.rounds.calls) == 2, "the coalesced run")
    assert run.service.wait_idle(10)
    poll(
        lambda: run.service.schedules.next_runs()["peak"] == at("2026-11-30T07:40:00Z"),
        "the next run to move on",
    )
    assert len(run.rounds.calls) == 2


def test_schedule_firing_during_a_round_is_skipped_and_counted(
    running_service: ServiceFactory,
    virtual_time: FakeClock,
    tmp_path_settings: policy.LoadAwarePolicy,
) -> None:
    settings = settings_with(
        tmp_path_settings,
        {"name": "peak", "cron": "*/10 8-20 * * mon-fri", "timezone": "Europe/Berlin"},
    )
    run = running_service(settings, clock=virtual_time)
    run.service.start_background()
    run.rounds.hold()
    assert run.post(notification())[0] == 202
    assert run.rounds.started.wait(10)
    before = skipped("schedule", "round-in-progress")
    virtual_time.advance(1.5)
    run.service.schedules.wakeup()
    poll(lambda: skipped("schedule", "round-in-progress") == before + 1, "the skip")
    run.rounds.release.set()
    assert run.service.wait_idle(10)
    assert len(run.rounds.calls) == 1
    assert run.rounds.max_active == 1


def test_schedule_pools_scope_the_sources_and_dry_run_is_passed_on(
    running_service: ServiceFactory,
    virtual_time: FakeClock,
    tmp_path_settings: policy.LoadAwarePolicy,
) -> None:
    settings = settings_with(
        tmp_path_settings.model_copy(
            update={
                "node_pools": [
                    policy.NodePool(name="batch", node_selector={"pool": "batch"}),
                    policy.NodePool(name="web", node_selector={"pool": "web"}),
                ]
            }
        ),
        {"name": "web-peak", "cron": "0 8 * * *", "timezone": "Europe/Berlin",
         "pools": ["web"], "dryRun": True},
    )  # fmt: skip
    cluster = make_cluster(
        [
            make_node("w1", labels={"pool": "web"}),
            make_node("w2", labels={"pool": "web"}),
            make_node("b1", labels={"pool": "batch"}),
            make_node("x1"),
        ]
    )
    run = running_service(settings, clock=virtual_time, read_cluster=lambda: cluster)
    run.service.start_background()
    virtual_time.advance(1.5)
    run.service.schedules.wakeup()
    poll(lambda: len(run.rounds.calls) == 1, "the run")
    options = run.rounds.calls[0]
    assert options.source_nodes == frozenset({"w1", "w2"})
    assert options.dry_run is True


def test_schedule_naming_an_unknown_pool_fails_at_start(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # serve reads its policy as validate does: refused before anything starts.
    file = tmp_path / "policy.yaml"
    file.write_text("schedules:\n- name: x\n  cron: '0 8 * * *'\n  pools: [nope]\n")
    for command in (["validate"], ["serve", "--listen", "127.0.0.1:0"]):
        assert cli.main([*command, "--policy", str(file)]) == 2
        assert "schedules[x].pools: unknown pool 'nope'" in capsys.readouterr().err


def test_next_runs_use_the_injected_clock() -> None:
    clock = FakeClock(at("2026-12-05T10:00:00Z"))  # a Saturday
    schedules = runtime.Schedules([schedule("*/10 8-20 * * mon-fri")], lambda s: None, clock=clock)
    assert schedules.next_runs() == {"peak": at("2026-12-07T07:00:00Z")}
    clock.advance(3 * 24 * 3600)  # Tuesday 11:00 in Berlin
    assert schedules.next_runs() == {"peak": at("2026-12-08T10:00:00Z")}  # due now
