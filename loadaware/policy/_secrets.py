"""References to Kubernetes Secrets: where a token or a password is read from, never the
value itself.
"""

from __future__ import annotations

from pydantic import Field

from loadaware.policy import _strict


class SecretReference(_strict.StrictModel):
    namespace: str = Field(
        min_length=1,
        description="Namespace of the Secret.",
    )
    name: str = Field(
        min_length=1,
        description="Name of the Secret.",
    )
    key: str = Field(
        min_length=1,
        description="Key in the Secret's data whose value is used.",
    )


class AuthToken(_strict.StrictModel):
    secret_reference: SecretReference = Field(
        description=(
            "The Kubernetes Secret holding the bearer token, read through the "
            "Kubernetes API at the start of every round and never kept past it."
        ),
    )


class BasicAuth(_strict.StrictModel):
    """HTTP basic auth, both parts read from Secrets (as prometheus-operator's basicAuth)."""

    username: SecretReference = Field(
        description="The Secret key holding the user name.",
    )
    password: SecretReference = Field(
        description="The Secret key holding the password.",
    )
