"""Planning ahead: how past weeks are read into a forecast (`metrics.prometheus.forecast`)
and how far ahead a schedule plans (`schedules[].forecast`).
"""

from __future__ import annotations

import datetime

from pydantic import Field, field_validator, model_validator

from loadaware.policy import _strict
from loadaware.policy._duration import Duration


class ForecastSettings(_strict.StrictModel):
    """How a schedule with `forecast` reads the usage to come: for each node and
    workload, the `quantile` across the last `weeks` weeks of the peak over the
    same time-of-week window (see docs/planning-ahead.md)."""

    weeks: int = Field(
        default=4,
        ge=1,
        le=52,
        description="How many past weeks are read: the same time-of-week window of each.",
    )
    min_weeks: int = Field(
        default=3,
        ge=1,
        description=(
            "Weeks with data a node or workload needs for a forecast; with fewer it has "
            "none (fail closed: the node is excluded or the round refused as for stale "
            "metrics, the workload's pods do not move)."
        ),
    )
    quantile: float = Field(
        default=0.9,
        gt=0,
        le=1,
        description=(
            "The quantile across weeks of each week's peak over the window (1: the highest week)."
        ),
    )
    step: Duration = Field(
        default=datetime.timedelta(minutes=5),
        description=(
            "The subquery step inside each week's window: the peak is the highest "
            "value at this resolution."
        ),
    )

    @field_validator("step")
    @classmethod
    def _positive_step(cls, value: datetime.timedelta) -> datetime.timedelta:
        if value <= datetime.timedelta(0):
            raise ValueError("must be a positive duration")
        return value

    @model_validator(mode="after")
    def _min_weeks_within(self) -> ForecastSettings:
        if self.min_weeks > self.weeks:
            raise ValueError(f"minWeeks ({self.min_weeks}) must not exceed weeks ({self.weeks})")
        return self


# A forecast looks at most this far ahead: beyond it the windows of past weeks
# would overlap the next week's.
MAX_FORECAST_HORIZON = datetime.timedelta(days=1)


class ScheduleForecast(_strict.StrictModel):
    """A round that plans on the usage forecast for the coming `horizon` rather than
    the usage of the moment (needs metrics.prometheus; see its `forecast`)."""

    horizon: Duration = Field(
        description=(
            "How far ahead the round plans, from its start: nodes are classified and "
            "moves chosen on the usage expected over [start, start + horizon]."
        ),
    )

    @field_validator("horizon")
    @classmethod
    def _horizon_range(cls, value: datetime.timedelta) -> datetime.timedelta:
        if not datetime.timedelta(0) < value <= MAX_FORECAST_HORIZON:
            raise ValueError("must be a positive duration of at most 24h")
        return value
