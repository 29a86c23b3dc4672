"""Credentials for a metrics source, read afresh for every round and never shown.

Tokens come from a Kubernetes Secret (read through the API by an injectable
SecretReader) or a file (projected ServiceAccount tokens rotate, so the file is
read again each round). Values are held in Secret, whose repr and str are
masked, and error messages name where a credential comes from, never its value.
"""

from __future__ import annotations

import base64
import pathlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import requests
import requests.auth

from loadaware import kube
from loadaware.errors import ClusterError, RefusedError
from loadaware.policy import PrometheusSource, SecretReference

# (namespace, name, key) -> the decoded value of that key of the Secret.
SecretReader = Callable[[str, str, str], str]

AUTH_FAILED = "metrics-auth-failed"
_MASK = "********"


class Secret:
    """A credential. Only reveal() gives the value; repr, str and format mask it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret({_MASK!r})"

    def __str__(self) -> str:
        return _MASK

    def __format__(self, spec: str) -> str:
        return _MASK

    def __reduce__(self) -> object:
        raise TypeError("a Secret cannot be pickled")


@dataclass(frozen=True, slots=True)
class Credentials:
    bearer_token: Secret | None = None
    basic_auth: tuple[Secret, Secret] | None = None  # username, password

    def secrets(self) -> Iterable[str]:
        """The raw values, for scrubbing them out of any text shown to a user."""
        if self.bearer_token is not None:
            yield self.bearer_token.reveal()
        if self.basic_auth is not None:
            yield from (part.reveal() for part in self.basic_auth)

    def requests_auth(self) -> requests.auth.AuthBase | None:
        if self.bearer_token is not None:
            return _HeaderAuth(Secret(f"Bearer {self.bearer_token.reveal()}"))
        if self.basic_auth is not None:
            user, password = (part.reveal() for part in self.basic_auth)
            encoded = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
            return _HeaderAuth(Secret(f"Basic {encoded}"))
        return None


class _HeaderAuth(requests.auth.AuthBase):
    # requests' own HTTPBasicAuth keeps the password in a plain attribute; this
    # keeps the header value masked should the object ever be logged.
    def __init__(self, value: Secret) -> None:
        self._value = value

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = self._value.reveal()
        return request

    def __repr__(self) -> str:
        return f"{type(self).__name__}({_MASK})"


def redact(text: str, credentials: Credentials) -> str:
    """text with every credential value replaced by a mask."""
    for value in credentials.secrets():
        if value:
            text = text.replace(value, _MASK)
    return text


def resolve_credentials(source: PrometheusSource, read_secret: SecretReader | None) -> Credentials:
    """The credentials `source` names, read now. Raises RefusedError (metrics-auth-failed)."""
    if source.token_file is not None:
        return Credentials(bearer_token=_read_token_file(source.token_file))
    if source.auth_token is not None:
        ref = source.auth_token.secret_reference
        return Credentials(bearer_token=_read_secret(ref, read_secret, "authToken"))
    if source.basic_auth is not None:
        user = _read_secret(source.basic_auth.username, read_secret, "basicAuth.username")
        password = _read_secret(source.basic_auth.password, read_secret, "basicAuth.password")
        return Credentials(basic_auth=(user, password))
    return Credentials()


def _read_token_file(path: str) -> Secret:
    try:
        text = pathlib.Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RefusedError(
            f"cannot read tokenFile {path}: {exc.strerror or type(exc).__name__}",
            reference=AUTH_FAILED,
        ) from None
    except UnicodeDecodeError:
        raise RefusedError(f"tokenFile {path} is not UTF-8 text", reference=AUTH_FAILED) from None
    token = text.strip()
    if not token:
        raise RefusedError(f"tokenFile {path} is empty", reference=AUTH_FAILED)
    return Secret(token)


def _read_secret(ref: SecretReference, read_secret: SecretReader | None, field: str) -> Secret:
    where = f"Secret {ref.namespace}/{ref.name} key {ref.key} ({field})"
    if read_secret is None:
        raise RefusedError(
            f"cannot read {where}: no Kubernetes API access configured",
            reference=AUTH_FAILED,
            hint="pass --kubeconfig, or run in a pod whose ServiceAccount may read the Secret",
        )
    try:
        value = read_secret(ref.namespace, ref.name, ref.key)
    except RefusedError:
        raise
    except Exception as exc:
        # The reader's exception may carry a response body; only its type is shown.
        raise RefusedError(
            f"cannot read {where}: {type(exc).__name__}", reference=AUTH_FAILED
        ) from None
    value = value.strip()
    if not value:
        raise RefusedError(f"{where} is empty", reference=AUTH_FAILED)
    return Secret(value)


def kubernetes_secret_reader(api_client: object) -> SecretReader:
    """A SecretReader using CoreV1Api.read_namespaced_secret on `api_client`.

    Nothing is cached: each call is one GET, so a rotated Secret is picked up by
    the next round."""
    from kubernetes import client

    api = client.CoreV1Api(api_client)  # type: ignore[arg-type]
    server = kube.server_of(api_client)

    def read(namespace: str, name: str, key: str) -> str:
        where = f"Secret {namespace}/{name} key {key}"
        try:
            with kube.translated(f"cannot read {where}", server):
                secret = api.read_namespaced_secret(name, namespace, _request_timeout=10)
        except ClusterError as exc:
            # The translation quotes a Status message at most: never the Secret.
            raise RefusedError(str(exc), reference=AUTH_FAILED) from exc
        data = secret.data or {}
        if key not in data:
            keys = ", ".join(sorted(data)) or "none"
            raise RefusedError(
                f"{where}: the Secret has no such key (keys: {keys})", reference=AUTH_FAILED
            )
        try:
            return base64.b64decode(data[key], validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            raise RefusedError(
                f"{where} is not base64-encoded UTF-8", reference=AUTH_FAILED
            ) from None

    return read
