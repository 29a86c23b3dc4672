"""Errors loadaware raises on purpose, and the exit code each maps to.

    LoadawareError                 exit 1  (base; anything unexpected is a bug)
    ├── PolicyError                exit 2  invalid policy: names the field and what is allowed
    ├── InputError                 exit 2  unreadable or invalid files and flags
    │   └── SetupError             exit 2  the cluster lacks what the policy points at;
    │       │                              the message carries the fix, in one line
    │       ├── MissingNamespaceError      missing-namespace: state or lease namespace absent
    │       └── MissingPermissionError     missing-permission: RBAC denies a call loadaware needs
    ├── RefusedError               exit 3  fail-closed refusal; `reference` is the stable
    │                                      reason code (stale-metrics, implausible-metrics, ...)
    └── ClusterError               exit 1  the cluster refused or failed a call
        ├── UnreachableError               cluster-unreachable: no answer (connection
        │                                  refused, TLS, timeout); the message names
        │                                  the server and the cause
        ├── UnauthorizedError              401 cluster-unauthorized: the credentials
        ├── ForbiddenError                 403 cluster-forbidden: RBAC or admission
        ├── NotFoundError                  404: the object is gone
        ├── ConflictError                  409: the object changed under us
        └── TooManyRequestsError           429: a PodDisruptionBudget refused an eviction

An infeasible plan is not an error: it is an empty Plan with a reason.
Only the CLI wrapper turns these into exit codes. The Kubernetes client's own
exceptions become ClusterErrors in one place, loadaware.kube.
"""

from __future__ import annotations

from collections.abc import Sequence


class LoadawareError(Exception):
    exit_code: int = 1
    reference: str = "error"

    def __init__(self, message: str, *, reference: str | None = None, hint: str | None = None):
        super().__init__(message)
        self.message = message
        if reference is not None:
            self.reference = reference
        self.hint = hint

    def __str__(self) -> str:
        return self.message

    def summary(self) -> str:
        """The error in one line, its stable code first: `{reference}: {message}`."""
        return f"{self.reference}: {self}"


class PolicyError(LoadawareError):
    """The policy is invalid. `problems` lists every problem found, one per field."""

    exit_code = 2
    reference = "invalid-policy"

    def __init__(self, message: str, *, problems: Sequence[str] = (), hint: str | None = None):
        super().__init__(message, hint=hint)
        self.problems = tuple(problems)

    def __str__(self) -> str:
        if not self.problems:
            return self.message
        return self.message + "\n" + "\n".join(f"  - {p}" for p in self.problems)


class InputError(LoadawareError):
    exit_code = 2
    reference = "invalid-input"


class SetupError(InputError):
    """The cluster is not set up as the policy says: no round can keep its state or
    hold its Lease there. Found before anything is changed; fixed by the operator,
    not by retrying."""

    reference = "setup-error"


class MissingNamespaceError(SetupError):
    reference = "missing-namespace"


class MissingPermissionError(SetupError):
    reference = "missing-permission"


class RefusedError(LoadawareError):
    """A fail-closed refusal: nothing was evicted. `reference` is the reason code."""

    exit_code = 3
    reference = "refused"


class ClusterError(LoadawareError):
    """`status_code` and `details_kind`: the HTTP status and the kind a Status body's
    details name (a create in a missing namespace names "namespaces"), when the API
    server answered."""

    exit_code = 1
    reference = "cluster-error"

    def __init__(
        self,
        message: str,
        *,
        reference: str | None = None,
        hint: str | None = None,
        status_code: int | None = None,
        details_kind: str | None = None,
    ):
        super().__init__(message, reference=reference, hint=hint)
        self.status_code = status_code
        self.details_kind = details_kind


class UnreachableError(ClusterError):
    reference = "cluster-unreachable"


class UnauthorizedError(ClusterError):
    reference = "cluster-unauthorized"


class ForbiddenError(ClusterError):
    reference = "cluster-forbidden"


class NotFoundError(ClusterError):
    reference = "not-found"


class ConflictError(ClusterError):
    reference = "conflict"


class TooManyRequestsError(ClusterError):
    reference = "too-many-requests"
