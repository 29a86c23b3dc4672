"""The Alertmanager webhook: which notifications start a round, and which never do.

A notification starts a round only when all of these hold, checked in this
order (the first that fails decides the answer):

1. the credential matches (bearer token or basic auth, compared in constant
   time) -> else 401;
2. it is JSON (Content-Type application/json) -> else 415; it has a body no
   larger than webhook.maxBodyBytes -> else 413 (411 without a length);
3. it is a version-4 Alertmanager payload -> else 400 (unknown fields are
   ignored: Grafana-managed alerts send more);
4. this replica leads -> else 503, so that Alertmanager retries and reaches the
   leader;
5. at least one of its alerts is firing and carries the opt-in label
   (actionLabel) -> else 200 "ignored": resolved notifications never trigger;
6. no round started within webhook.cooldown for the same group (groupKey) with
   all of these alerts (fingerprints) among its own, and no round is running ->
   else 200 "coalesced";

and it is then answered 202 at once, the round running in the background.
The firing alerts' `node` label (else `instance`, port stripped) names the
round's source nodes; an alert with neither leaves the round cluster-wide.

Never logged: the Authorization header, the credential, the body.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
import hmac
import logging
import pathlib
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import pydantic
from pydantic.alias_generators import to_camel

from loadaware import policy
from loadaware.errors import LoadawareError

log = logging.getLogger(__name__)

# (namespace, name, key) -> the decoded value of that key of a Secret.
SecretReader = Callable[[str, str, str], str]
# Starts a round unless one is running or this replica may not: returns "started",
# "round-in-progress", "not-leader" or "shutting-down".
StartRound = Callable[[frozenset[str] | None, str], str]

# A Secret is read again at most this often: a flood of notifications must not
# become a flood of API calls, and a rotated Secret is picked up soon enough.
SECRET_CACHE_SECONDS = 10.0
_PORT = re.compile(r"^(?P<host>.+):\d+$")


class _Raw(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(
        extra="ignore", alias_generator=to_camel, populate_by_name=True, frozen=True
    )


class RawAlert(_Raw):
    status: Literal["firing", "resolved"]
    labels: dict[str, str] = pydantic.Field(default_factory=dict)
    annotations: dict[str, str] = pydantic.Field(default_factory=dict)
    starts_at: str = ""
    ends_at: str = ""
    generator_url: str = pydantic.Field(default="", alias="generatorURL")
    fingerprint: str = ""

    def identity(self) -> str:
        """Alertmanager's fingerprint, or one derived from the labels when it is absent."""
        if self.fingerprint:
            return self.fingerprint
        text = "\x00".join(f"{k}\x01{v}" for k, v in sorted(self.labels.items()))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


class RawNotification(_Raw):
    """Alertmanager's webhook payload, version 4."""

    version: Literal["4"]
    group_key: str = pydantic.Field(min_length=1)
    status: Literal["firing", "resolved"]
    receiver: str = ""
    group_labels: dict[str, str] = pydantic.Field(default_factory=dict)
    common_labels: dict[str, str] = pydantic.Field(default_factory=dict)
    common_annotations: dict[str, str] = pydantic.Field(default_factory=dict)
    external_url: str = pydantic.Field(default="", alias="externalURL")
    truncated_alerts: int = 0
    alerts: list[RawAlert]


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    status: int
    result: str  # the loadaware_webhook_notifications_total result, or "" (not counted)
    detail: str
    headers: Mapping[str, str] = field(default_factory=dict)

    def body(self) -> dict[str, str]:
        return {"result": self.result or "error", "detail": self.detail}


def node_from_labels(labels: Mapping[str, str]) -> str | None:
    """The node an alert is about: `node`, else `instance` without its port."""
    node = labels.get("node")
    if node:
        return node
    instance = labels.get("instance")
    if not instance:
        return None
    match = _PORT.match(instance)
    host = match.group("host") if match else instance
    return host.removeprefix("[").removesuffix("]")


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """What a notification asks for: None when nothing in it may trigger."""

    key: tuple[str, tuple[str, ...]]  # groupKey and the triggering alerts' fingerprints
    source_nodes: frozenset[str] | None  # None: any hot node
    alerts: int


def select_alerts(
    notification: RawNotification, action_label: Mapping[str, str]
) -> Selection | None:
    chosen = [
        a
        for a in notification.alerts
        if a.status == "firing" and all(a.labels.get(k) == v for k, v in action_label.items())
    ]
    if not chosen:
        return None
    nodes = [node_from_labels(a.labels) for a in chosen]
    scope = None if any(n is None for n in nodes) else frozenset(n for n in nodes if n)
    return Selection(
        key=(notification.group_key, tuple(sorted({a.identity() for a in chosen}))),
        source_nodes=scope,
        alerts=len(chosen),
    )


class CredentialError(LoadawareError):
    """The webhook's own credential could not be read (a missing file, an unreadable Secret)."""

    reference = "webhook-credential"


class Authenticator:
    """Checks the Authorization header against the configured credential.

    The token file is read for every request (a mounted Secret rotates in place);
    a Secret through the API at most every SECRET_CACHE_SECONDS."""

    def __init__(
        self,
        settings: policy.WebhookSettings,
        *,
        read_secret: SecretReader | None = None,
        monotonic: Callable[[], float],
    ) -> None:
        self._settings = settings
        self._read_secret = read_secret
        self._monotonic = monotonic
        self._cache: dict[tuple[str, str, str], tuple[float, str]] = {}
        self._lock = threading.Lock()

    @property
    def required(self) -> bool:
        return not self._settings.allow_unauthenticated

    def is_configured(self) -> bool:
        s = self._settings
        return bool(s.token_file or s.auth_token or s.basic_auth)

    def check(self, authorization: str | None) -> bool:
        """True when the header carries the credential. Raises CredentialError when
        the expected credential itself cannot be read."""
        s = self._settings
        if s.allow_unauthenticated:
            return True
        if not self.is_configured():
            return False  # fail closed: no credential configured accepts nobody
        header = (authorization or "").strip()
        scheme, _, value = header.partition(" ")
        value = value.strip()
        if s.basic_auth is not None:
            if scheme.lower() != "basic":
                return False
            try:
                decoded = base64.b64decode(value, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                return False
            user, sep, password = decoded.partition(":")
            expected_password = (
                self._file(s.basic_auth.password_file)
                if s.basic_auth.password_file is not None
                else self._secret(s.basic_auth.password)  # type: ignore[arg-type]
            )
            # Both compared, always: no early exit that would time the username.
            user_ok = hmac.compare_digest(user.encode(), s.basic_auth.username.encode())
            password_ok = hmac.compare_digest(password.encode(), expected_password.encode())
            return bool(sep) and user_ok and password_ok
        if scheme.lower() != "bearer" or not value:
            return False
        expected = (
            self._file(s.token_file)
            if s.token_file is not None
            else self._secret(s.auth_token.secret_reference)  # type: ignore[union-attr]
        )
        return hmac.compare_digest(value.encode(), expected.encode())

    def _file(self, path: str) -> str:
        try:
            value = pathlib.Path(path).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise CredentialError(
                f"webhook credential file {path} unreadable ({type(exc).__name__})"
            ) from None
        if not value:
            raise CredentialError(f"webhook credential file {path} is empty")
        return value

    def _secret(self, ref: policy.SecretReference) -> str:
        key = (ref.namespace, ref.name, ref.key)
        now = self._monotonic()
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None and now - cached[0] < SECRET_CACHE_SECONDS:
                return cached[1]
        if self._read_secret is None:
            raise CredentialError("webhook credential is a Secret but there is no API access")
        try:
            value = self._read_secret(*key).strip()
        except Exception as exc:
            raise CredentialError(
                f"webhook credential Secret {ref.namespace}/{ref.name} unreadable "
                f"({type(exc).__name__})"
            ) from None
        if not value:
            raise CredentialError(
                f"webhook credential Secret {ref.namespace}/{ref.name} key {ref.key} is empty"
            )
        with self._lock:
            self._cache[key] = (now, value)
        return value


class Webhook:
    """Decides what to answer to a notification and starts the round it asks for."""

    def __init__(
        self,
        settings: policy.WebhookSettings,
        *,
        start_round: StartRound,
        is_leader: Callable[[], bool],
        clock: Callable[[], datetime.datetime],
        monotonic: Callable[[], float],
        read_secret: SecretReader | None = None,
    ) -> None:
        self.settings = settings
        self.max_body_bytes = settings.max_body_bytes
        self._start_round = start_round
        self._is_leader = is_leader
        self._clock = clock
        self.authenticator = Authenticator(settings, read_secret=read_secret, monotonic=monotonic)
        # groupKey + fingerprints -> when it last started a round.
        self._started: dict[tuple[str, tuple[str, ...]], datetime.datetime] = {}
        # Held from the cooldown check to remembering the start, so that two copies
        # of one notification arriving together cannot both start a round.
        self._lock = threading.Lock()

    def _covered(self, key: tuple[str, tuple[str, ...]]) -> bool:
        """Whether a round started within the cooldown for the same group already
        covered every one of these alerts: a group whose alerts resolve one by one
        while a round relieves them sends ever smaller sets."""
        group, fingerprints = key
        wanted = set(fingerprints)
        return any(g == group and wanted <= set(f) for g, f in self._started)

    def authenticate(self, authorization: str | None) -> Reply | None:
        """None when the request may go on; else the reply (401, or 500 for our own
        unreadable credential, which Alertmanager retries)."""
        try:
            if self.authenticator.check(authorization):
                return None
        except CredentialError as exc:
            log.error("webhook credential unreadable", extra={"reason": str(exc)})
            return Reply(status=500, result="rejected", detail="credential unavailable")
        return Reply(
            status=401,
            result="unauthorized",
            detail="missing or wrong credential",
            headers={"WWW-Authenticate": 'Bearer realm="loadaware"'}
            if self.settings.basic_auth is None
            else {"WWW-Authenticate": 'Basic realm="loadaware"'},
        )

    def handle(self, body: bytes) -> Reply:
        """A notification whose credential, content type and size were accepted."""
        try:
            notification = RawNotification.model_validate_json(body)
        except pydantic.ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}"
                for e in exc.errors()[:5]
            )
            return Reply(
                status=400,
                result="rejected",
                detail=f"not an Alertmanager version 4 payload: {problems}"[:500],
            )
        if not self._is_leader():
            return Reply(status=503, result="rejected", detail="not the leader; retry another")
        selection = select_alerts(notification, self.settings.action_label)
        if selection is None:
            return Reply(status=200, result="ignored", detail=_ignored_detail(notification))
        with self._lock:
            now = self._clock()
            self._forget_older_than(now - self.settings.cooldown)
            if self._covered(selection.key):
                return Reply(
                    status=200,
                    result="coalesced",
                    detail="the same alerts started a round within the cooldown",
                )
            started = self._start_round(selection.source_nodes, notification.group_key)
            if started == "started":
                self._started[selection.key] = now
        if started == "started":
            log.info(
                "notification starts a round",
                extra={
                    "node": ",".join(sorted(selection.source_nodes or ())) or "*",
                    "reason": f"{selection.alerts} firing alert(s)",
                },
            )
            return Reply(status=202, result="accepted", detail="round started")
        if started == "round-in-progress":
            return Reply(status=200, result="coalesced", detail="a round is running")
        if started == "not-leader":
            return Reply(status=503, result="rejected", detail="not the leader; retry another")
        return Reply(status=503, result="rejected", detail=started)

    def _forget_older_than(self, cutoff: datetime.datetime) -> None:
        for key in [k for k, at in self._started.items() if at <= cutoff]:
            del self._started[key]

    def state(self) -> dict[str, Any]:
        with self._lock:
            return {
                "cooldownSeconds": self.settings.cooldown.total_seconds(),
                "groupsInCooldown": len(self._started),
            }


def _ignored_detail(notification: RawNotification) -> str:
    if all(a.status == "resolved" for a in notification.alerts):
        return "resolved notifications never trigger"
    return "no firing alert carries the opt-in label"
