"""Peak-hour schedules: the policy's `schedules` as APScheduler 3.x cron jobs.

Each schedule becomes one job on a BackgroundScheduler with coalesce=True (runs
missed while the process was stalled collapse into one), max_instances=1, and
a misfire grace time: a run more than MISFIRE_GRACE late is dropped rather than
started at a moment nobody chose. A job only *asks* for a round; the service's
single-flight lock decides (a schedule firing during a round is skipped and
counted), so a job never blocks the scheduler's thread for a round's length.

Day-of-week numbers: APScheduler 3 counts 0 as Monday, crontab as Sunday. The
field is translated to weekday names before APScheduler sees it, so
`* * * * 1-5` means Monday to Friday, as in crontab.
"""

from __future__ import annotations

import datetime
import logging
import zoneinfo
from collections.abc import Callable, Sequence

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger

from loadaware import policy
from loadaware.errors import PolicyError

log = logging.getLogger(__name__)

MISFIRE_GRACE = datetime.timedelta(minutes=2)
_DAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def _day_number(text: str, cron: str) -> int:
    text = text.strip().lower()
    if text in _DAY_NAMES:
        return _DAY_NAMES.index(text)
    if text.isdigit() and 0 <= int(text) <= 7:
        return int(text) % 7  # 7 is Sunday too
    raise PolicyError(
        f"schedule cron {cron!r}: bad day of week {text!r}",
        problems=[f"cron {cron!r}: day of week must be 0-7 or sun-sat, got {text!r}"],
    )


def crontab_day_of_week(field: str, cron: str = "") -> str:
    """A crontab day-of-week field as APScheduler 3 reads it: weekday names."""
    if field == "*":
        return field
    days: set[int] = set()
    for part in field.split(","):
        base, _, step_text = part.partition("/")
        step = int(step_text) if step_text.isdigit() and int(step_text) > 0 else None
        if step_text and step is None:
            raise PolicyError(
                f"schedule cron {cron!r}: bad step {step_text!r}",
                problems=[f"cron {cron!r}: a day-of-week step must be a positive number"],
            )
        if base == "*":
            first, last = 0, 6
        elif "-" in base:
            low, _, high = base.partition("-")
            first, last = _day_number(low, cron), _day_number(high, cron)
            if high.strip() == "7":
                last = 7  # crontab allows 0-7 and 5-7: up to Sunday at the end
        else:
            first = last = _day_number(base, cron)
            if step is not None:
                last = 6  # "N/step" means from N to the end of the week
        if first > last:
            raise PolicyError(
                f"schedule cron {cron!r}: day-of-week range {base!r} runs backwards",
                problems=[f"cron {cron!r}: write {base!r} as two ranges"],
            )
        days.update(d % 7 for d in range(first, last + 1, step or 1))
    return ",".join(_DAY_NAMES[d] for d in sorted(days))


def cron_trigger(schedule: policy.Schedule) -> CronTrigger:
    fields = schedule.cron.split()
    fields[4] = crontab_day_of_week(fields[4], schedule.cron)
    try:
        return CronTrigger.from_crontab(
            " ".join(fields), timezone=zoneinfo.ZoneInfo(schedule.timezone)
        )
    except ValueError as exc:
        raise PolicyError(
            f"schedule {schedule.name}: bad cron {schedule.cron!r}",
            problems=[f"schedules[{schedule.name}].cron: {exc}"],
        ) from None


def next_fire_time(schedule: policy.Schedule, after: datetime.datetime) -> datetime.datetime | None:
    """When the schedule fires next after `after` (None: never again)."""
    return cron_trigger(schedule).get_next_fire_time(None, after)


class Schedules:
    """The running schedules. fire(schedule) is called on the scheduler's thread."""

    def __init__(
        self,
        schedules: Sequence[policy.Schedule],
        fire: Callable[[policy.Schedule], None],
        *,
        clock: Callable[[], datetime.datetime],
    ) -> None:
        # The policy has checked that their names are unique and their pools exist.
        self._schedules = list(schedules)
        self._fire = fire
        self._clock = clock
        # Parsed up front, so that a bad cron fails `serve` at start, not at 08:00.
        self._triggers = {s.name: cron_trigger(s) for s in self._schedules}
        self._scheduler = BackgroundScheduler(timezone=datetime.UTC, daemon=True)

    def start(self) -> None:
        for schedule in self._schedules:
            self._scheduler.add_job(
                self._fire,
                trigger=self._triggers[schedule.name],
                args=(schedule,),
                id=schedule.name,
                name=f"schedule {schedule.name}",
                coalesce=True,
                max_instances=1,
                misfire_grace_time=int(MISFIRE_GRACE.total_seconds()),
            )
        self._scheduler.start()

    def shutdown(self) -> None:
        if self._scheduler.running:
            # Jobs only ask for a round, so waiting for them is short.
            self._scheduler.shutdown(wait=True)

    def wakeup(self) -> None:
        """Re-evaluate due jobs now (tests that move the clock)."""
        self._scheduler.wakeup()

    def next_runs(self) -> dict[str, datetime.datetime | None]:
        """Each schedule's next fire time, from the injected clock."""
        now = self._clock()
        return {name: t.get_next_fire_time(None, now) for name, t in self._triggers.items()}

    def describe(self) -> list[dict[str, object]]:
        runs = self.next_runs()
        return [
            {
                "name": s.name,
                "cron": s.cron,
                "timezone": s.timezone,
                "dryRun": s.dry_run,
                "pools": s.pools,
                "nextRun": _rfc3339(runs[s.name]),
            }
            for s in self._schedules
        ]


def _rfc3339(moment: datetime.datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(datetime.UTC).isoformat().replace("+00:00", "Z")
