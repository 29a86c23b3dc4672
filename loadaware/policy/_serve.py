"""`loadaware serve`: when it starts rounds by itself (`schedules`), and its HTTP server,
Alertmanager webhook and leader election (`serve`).
"""

from __future__ import annotations

import datetime
import zoneinfo
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from loadaware.policy import _forecast, _secrets, _strict
from loadaware.policy._duration import Duration


class Schedule(_strict.StrictModel):
    name: str = Field(
        min_length=1,
        description="Name of the schedule, shown on /status and in metrics.",
    )
    cron: str = Field(
        min_length=1,
        description=(
            "When rounds start: crontab, 5 fields (minute hour day-of-month month "
            "day-of-week; 0 and 7 are Sunday; names work too)."
        ),
    )
    timezone: str = Field(
        default="UTC",
        description="IANA time zone the cron is read in.",
    )
    dry_run: bool | None = Field(
        default=None,
        description=(
            "Overrides the policy's dryRun for this schedule's rounds; unset: the policy's."
        ),
    )
    pools: list[str] | None = Field(
        default=None,
        description="Only these pools' nodes are sources; unset: every pool.",
    )
    forecast: _forecast.ScheduleForecast | None = Field(
        default=None,
        description=(
            "Plan ahead: the round classifies nodes and chooses moves on the usage "
            "forecast for the coming horizon, from the same hours of past weeks "
            "(metrics.prometheus.forecast). Unset: on the usage of the moment."
        ),
    )

    @field_validator("cron")
    @classmethod
    def _five_fields(cls, value: str) -> str:
        # Only the shape is checked here; the scheduler parses the fields themselves.
        if len(value.split()) != 5:
            raise ValueError(
                f"cron {value!r} must have 5 fields: minute hour day-of-month month day-of-week"
            )
        return value

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        # A misspelt zone would otherwise only surface when `serve` starts.
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown time zone {value!r}; use an IANA name such as UTC or Europe/Berlin"
            ) from None
        return value


class WebhookBasicAuth(_strict.StrictModel):
    """HTTP basic auth Alertmanager sends (its `http_config.basic_auth`). The password
    comes from a file (read again for each request) or a Kubernetes Secret."""

    username: str = Field(
        min_length=1,
        description="The user name Alertmanager sends.",
    )
    password_file: str | None = Field(
        default=None,
        description="File holding the password, read again for each request.",
    )
    password: _secrets.SecretReference | None = Field(
        default=None,
        description="The Secret key holding the password.",
    )

    @model_validator(mode="after")
    def _one_password_source(self) -> WebhookBasicAuth:
        if (self.password_file is None) == (self.password is None):
            raise ValueError("set exactly one of passwordFile and password")
        return self


class WebhookSettings(_strict.StrictModel):
    """The Alertmanager webhook (`POST /alertmanager`).

    The credential Alertmanager must send: a bearer token from tokenFile (read
    again for each request, so a rotated Secret volume is picked up) or from a
    Kubernetes Secret (authToken), or basic auth. With none set every
    notification is refused (401) unless allowUnauthenticated says otherwise.
    """

    token_file: str | None = Field(
        default=None,
        description=(
            "File holding the bearer token Alertmanager must send, read again for each request."
        ),
    )
    auth_token: _secrets.AuthToken | None = Field(
        default=None,
        description=(
            "The bearer token Alertmanager must send, from a Kubernetes Secret (read "
            "at most every 10 seconds)."
        ),
    )
    basic_auth: WebhookBasicAuth | None = Field(
        default=None,
        description="Basic auth Alertmanager must send instead of a bearer token.",
    )
    allow_unauthenticated: bool = Field(
        default=False,
        description=(
            "Accept notifications without a credential. Without a credential and "
            "without this, every notification is refused (401)."
        ),
    )
    action_label: dict[str, str] = Field(
        default_factory=lambda: {"loadaware_action": "rebalance"},
        description=(
            "Labels a firing alert must have to start a round (the opt-in label on the alert rule)."
        ),
    )
    cooldown: Duration = Field(
        default=datetime.timedelta(minutes=5),
        description=(
            "Notifications of the same group and alerts that started a round within "
            "this are coalesced."
        ),
    )
    # Alertmanager's payload for a group of a few hundred alerts stays well under
    # 1 MiB, so the default leaves room and still bounds what is read.
    max_body_bytes: Annotated[int, Field(ge=1024)] = Field(
        default=1024 * 1024,
        description="Larger bodies are answered 413 without being parsed.",
    )

    @model_validator(mode="after")
    def _one_credential(self) -> WebhookSettings:
        given = [
            name
            for name, value in (
                ("tokenFile", self.token_file),
                ("authToken", self.auth_token),
                ("basicAuth", self.basic_auth),
            )
            if value is not None
        ]
        if len(given) > 1:
            raise ValueError(f"set at most one webhook credential; got {', '.join(given)}")
        if given and self.allow_unauthenticated:
            raise ValueError("allowUnauthenticated contradicts the credential given")
        return self


class LeaderElectionSettings(_strict.StrictModel):
    """A coordination.k8s.io/v1 Lease so that only one replica starts rounds.

    The timings are client-go's defaults and keep its invariants: a leader that
    cannot renew within renewDeadline stops acting before any other replica may
    take the lease (leaseDuration after its last renewal)."""

    enabled: bool = Field(
        default=True,
        description=(
            "Campaign for the Lease; off (for a single replica): the replica starts "
            "rounds without one."
        ),
    )
    lease_name: str = Field(
        default="loadaware",
        min_length=1,
        description="Name of the coordination.k8s.io/v1 Lease.",
    )
    lease_namespace: str = Field(
        default="loadaware",
        min_length=1,
        description="Namespace of the Lease; it must exist.",
    )
    lease_duration: Duration = Field(
        default=datetime.timedelta(seconds=15),
        description=(
            "How long a Lease is held after its last renewal before another replica may take it."
        ),
    )
    renew_deadline: Duration = Field(
        default=datetime.timedelta(seconds=10),
        description="A leader that cannot renew within this stops acting.",
    )
    retry_period: Duration = Field(
        default=datetime.timedelta(seconds=2),
        description="Time between attempts to take or renew the Lease.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> LeaderElectionSettings:
        if self.retry_period <= datetime.timedelta(0):
            raise ValueError("retryPeriod must be longer than 0s")
        if not self.retry_period < self.renew_deadline < self.lease_duration:
            raise ValueError("need retryPeriod < renewDeadline < leaseDuration")
        return self


class ServeSettings(_strict.StrictModel):
    listen: str = Field(
        default="0.0.0.0:8080",
        description=(
            "host:port of the HTTP server: /alertmanager, /metrics, /healthz, /readyz, /status."
        ),
    )
    webhook: WebhookSettings = Field(
        default=WebhookSettings(),
        description="The Alertmanager webhook (POST /alertmanager).",
    )
    leader_election: LeaderElectionSettings = Field(
        default=LeaderElectionSettings(),
        description="Leader election among replicas: only the leader starts rounds.",
    )
