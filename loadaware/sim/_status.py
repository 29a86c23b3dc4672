"""metav1.Status bodies and the errors that carry them, worded as kube-apiserver words them.

Clients match on `reason` and `code` (the official client raises ApiException
with both, kubectl prints `message`), so these follow
k8s.io/apimachinery/pkg/api/errors.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A request the simulated API refuses; `status` is the metav1.Status body sent back."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    @property
    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body


def success(code: int = 200, details: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}}
    body["status"] = "Success"
    if details is not None:
        body["details"] = details
    body["code"] = code
    return body


def _qualified(plural: str, group: str) -> str:
    return f"{plural}.{group}" if group else plural


def _details(name: str, plural: str, group: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name}
    if group:
        details["group"] = group
    details["kind"] = plural
    return details


def not_found(plural: str, name: str, group: str = "") -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f'{_qualified(plural, group)} "{name}" not found',
        details=_details(name, plural, group),
    )


def already_exists(plural: str, name: str, group: str = "") -> ApiError:
    return ApiError(
        409,
        "AlreadyExists",
        f'{_qualified(plural, group)} "{name}" already exists',
        details=_details(name, plural, group),
    )


def conflict(plural: str, name: str, group: str = "", problem: str = "") -> ApiError:
    problem = problem or (
        "the object has been modified; please apply your changes to the latest version "
        "and try again"
    )
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {_qualified(plural, group)} "{name}": {problem}',
        details=_details(name, plural, group),
    )


def invalid(kind: str, name: str, causes: list[tuple[str, str, str]], group: str = "") -> ApiError:
    """422; causes are (field, reason such as FieldValueRequired, message)."""
    text = "; ".join(f"{field}: {message}" for field, _, message in causes)
    if len(causes) > 1:
        text = "[" + ", ".join(f"{field}: {message}" for field, _, message in causes) + "]"
    details: dict[str, Any] = {"name": name}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [
        {"reason": reason, "message": message, "field": field} for field, reason, message in causes
    ]
    qualified = f"{kind}.{group}" if group else kind
    return ApiError(422, "Invalid", f'{qualified} "{name}" is invalid: {text}', details=details)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def method_not_allowed() -> ApiError:
    return ApiError(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
        details={},
    )


def no_such_path() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", details={})


def unsupported_media_type(content_type: str, accepted: tuple[str, ...]) -> ApiError:
    return ApiError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: "
        f"{', '.join(accepted)}",
    )


def internal(message: str) -> ApiError:
    return ApiError(
        500,
        "InternalError",
        f"Internal error occurred: {message}",
        details={"causes": [{"message": message}]},
    )


def forbidden(plural: str, name: str, message: str, group: str = "") -> ApiError:
    return ApiError(
        403,
        "Forbidden",
        f'{_qualified(plural, group)} "{name}" is forbidden: {message}',
        details=_details(name, plural, group),
    )


def too_many_requests(message: str, causes: list[dict[str, str]] | None = None) -> ApiError:
    details: dict[str, Any] = {}
    if causes:
        details["causes"] = causes
    return ApiError(429, "TooManyRequests", message, details=details)


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")
