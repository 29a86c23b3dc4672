"""Prometheus' HTTP query API for one round: a session with its own retries, timeout,
TLS and credentials, queries POSTed (never in the URL), the answer's shape checked and
every failure a RefusedError whose text carries no secret.
"""

from __future__ import annotations

import datetime
import json
import logging
import time
import urllib.parse
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import requests
import requests.adapters
import urllib3
import urllib3.util

from loadaware.errors import RefusedError
from loadaware.metrics import _auth
from loadaware.policy import PrometheusSource

log = logging.getLogger(__name__)

UNREACHABLE = "metrics-unreachable"
QUERY_FAILED = "metrics-query-failed"
# Error bodies are cut to this length before they reach a message.
MAX_ERROR_TEXT = 300


@contextmanager
def open_session(
    source: PrometheusSource, base: str, credentials: _auth.Credentials
) -> Iterator[QueryClient]:
    """A client for one round: its own retries, timeout, TLS and credentials (see the
    provider module for why requests); closed at the end of the round."""
    session = requests.Session()
    retry = urllib3.util.Retry(
        total=1, connect=1, read=0, status=0, other=0, redirect=0, backoff_factor=0
    )
    adapter = requests.adapters.HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers.update(source.headers)
    session.auth = credentials.requests_auth()
    # Given per request, not on the session: requests lets REQUESTS_CA_BUNDLE
    # override a session's verify, which would silently drop caFile.
    verify: bool | str = True
    if source.insecure_skip_verify:
        verify = False
    elif source.ca_file is not None:
        verify = source.ca_file
    if source.cert_file is not None and source.key_file is not None:
        session.cert = (source.cert_file, source.key_file)
    try:
        with warnings.catch_warnings():
            if source.insecure_skip_verify:
                # The policy asked for it; say so once per round rather than per request.
                warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
                log.warning(
                    "TLS certificate verification of the metrics source is disabled",
                    extra={"source": base},
                )
            yield QueryClient(session, base, source.timeout, credentials, verify)
    finally:
        session.close()


class QueryClient:
    """POSTs to the query API and checks the answer's shape. One per round."""

    def __init__(
        self,
        session: requests.Session,
        base: str,
        timeout: datetime.timedelta,
        credentials: _auth.Credentials,
        verify: bool | str,
    ) -> None:
        self._verify = verify
        self._session = session
        self._base = base
        self._timeout = timeout.total_seconds()
        self._credentials = credentials

    def instant(self, query: str, now: datetime.datetime, what: str) -> list[Any]:
        """The raw vector: a list of {"metric": {...}, "value": [time, "text"]}."""
        data = self._post("query", {"query": query, "time": _unix(now)}, query, what)
        return self._result(data, "vector", query, what)

    def range(
        self,
        query: str,
        start: datetime.datetime,
        end: datetime.datetime,
        step: float,
        what: str,
    ) -> list[tuple[Mapping[str, str], list[tuple[float, float]]]]:
        form = {"query": query, "start": _unix(start), "end": _unix(end), "step": f"{step:g}"}
        data = self._post("query_range", form, query, what)
        result = self._result(data, "matrix", query, what)
        parsed = []
        for series in result:
            try:
                points = [(float(t), float(v)) for t, v in series["values"]]
                parsed.append((series["metric"], points))
            except (KeyError, TypeError, ValueError):
                raise self.bad_shape(query, what, "a series without metric or values") from None
        return parsed

    def _post(self, endpoint: str, form: dict[str, str], query: str, what: str) -> Any:
        url = f"{self._base}/api/v1/{endpoint}"
        # Prometheus stops evaluating at its own timeout too, so a slow query is not
        # left running after the client gave up.
        form = {**form, "timeout": f"{self._timeout:g}s"}
        started = time.perf_counter()
        try:
            response = self._session.post(
                url, data=form, timeout=self._timeout, allow_redirects=False, verify=self._verify
            )
        except requests.Timeout:
            raise RefusedError(
                f"{self._base} did not answer within {self._timeout:g}s ({what})",
                reference=UNREACHABLE,
            ) from None
        except requests.exceptions.SSLError as exc:
            raise RefusedError(
                f"TLS with {self._base} failed: {self._reason(exc)}", reference=UNREACHABLE
            ) from None
        except requests.RequestException as exc:
            # `from None`: the chained exception holds the prepared request, headers included.
            raise RefusedError(
                f"cannot reach {self._base}: {self._reason(exc)}", reference=UNREACHABLE
            ) from None
        log.debug(
            "metrics query answered",
            extra={
                "query_name": what,
                "status": response.status_code,
                "bytes": len(response.content),
                "seconds": round(time.perf_counter() - started, 3),
            },
        )
        status = response.status_code
        if status != 200:
            raise self._http_error(response, query, what)
        try:
            return json.loads(response.content)
        except ValueError:
            raise self.bad_shape(query, what, "a body that is not JSON") from None

    def _result(self, data: Any, expected: str, query: str, what: str) -> list[Any]:
        if not isinstance(data, dict) or data.get("status") != "success":
            raise self.bad_shape(query, what, "no success status")
        body = data.get("data")
        if not isinstance(body, dict):
            raise self.bad_shape(query, what, "no data")
        kind = body.get("resultType")
        if kind != expected:
            raise RefusedError(
                f"{what} query returned a {kind} where a {expected} was expected: {query}",
                reference=QUERY_FAILED,
            )
        result = body.get("result")
        if not isinstance(result, list):
            raise self.bad_shape(query, what, "no result list")
        return result

    def _http_error(self, response: requests.Response, query: str, what: str) -> RefusedError:
        status = response.status_code
        detail = response.reason or ""
        try:
            body = response.json()
            if isinstance(body, dict) and isinstance(body.get("error"), str):
                detail = body["error"]
        except ValueError:
            detail = response.text[:MAX_ERROR_TEXT].strip() or detail
        detail = self._clean(detail)
        if status in (401, 403):
            return RefusedError(
                f"{self._base} refused the credentials: HTTP {status} {detail}".rstrip(),
                reference=_auth.AUTH_FAILED,
                hint="check the policy's authToken, tokenFile or basicAuth",
            )
        if 300 <= status < 400:
            target = urllib.parse.urlsplit(response.headers.get("Location", ""))
            return RefusedError(
                f"{self._base} redirected the query (HTTP {status} to "
                f"{target.scheme}://{target.netloc}{target.path}); "
                "is the URL that of an auth proxy's login page?",
                reference=QUERY_FAILED,
            )
        reference = UNREACHABLE if status in (502, 503, 504) else QUERY_FAILED
        return RefusedError(
            f"{self._base} answered HTTP {status} to the {what} query: {detail}; query: {query}",
            reference=reference,
        )

    def bad_shape(self, query: str, what: str, problem: str) -> RefusedError:
        return RefusedError(
            f"{self._base} answered the {what} query with {problem}; query: {query}",
            reference=QUERY_FAILED,
        )

    def _reason(self, exc: Exception) -> str:
        # requests wraps urllib3's MaxRetryError, whose `reason` is the useful part
        # ("Connection refused", "certificate verify failed").
        inner: BaseException = exc
        if exc.args and isinstance(exc.args[0], BaseException):
            inner = exc.args[0]
        reason = getattr(inner, "reason", None)
        if isinstance(reason, BaseException):
            inner = reason
        return self._clean(str(inner) or type(inner).__name__)

    def _clean(self, text: str) -> str:
        return _auth.redact(" ".join(text.split())[:MAX_ERROR_TEXT], self._credentials)


def _unix(moment: datetime.datetime) -> str:
    return f"{moment.timestamp():.3f}"
