"""Bearer-token checks for the API's routes.

``require_caller`` runs on every ``/v1`` route but ``/v1/health``: without a token that
the policy knows, 401. Routes under ``/v1/assistants/{key}`` then check that the
caller's token may use ``key`` (403 otherwise, whether or not the assistant exists, so
a token learns nothing about assistants it may not use).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from mindspace.hosts.http.errors import ApiError
from mindspace.hosts.http.settings import Grant, TokenPolicy
from mindspace.validation import ASSISTANT_KEY_PATTERN

__all__ = ["ASSISTANT_KEY_PATTERN", "Caller", "CallerDep", "KeyDep", "require_caller"]


_bearer = HTTPBearer(auto_error=False, description="A token from MINDSPACE_API_TOKEN(S).")
_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="mindspace"'}


@dataclass(frozen=True)
class Caller:
    """Who is calling: their grant, or None when the API is open (no tokens configured)."""

    grant: Grant | None

    def allows(self, key: str) -> bool:
        """Whether the caller may use the assistant ``key``."""
        return self.grant is None or self.grant.allows(key)


def require_caller(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Caller:
    """The caller, or 401 when a token is needed and missing or unknown."""
    policy: TokenPolicy = request.app.state.policy
    if policy.open:
        return Caller(None)
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise ApiError(401, "This API needs a bearer token", headers=_CHALLENGE)
    grant = policy.grant_for(credentials.credentials)
    if grant is None:
        raise ApiError(401, "The bearer token is not valid", headers=_CHALLENGE)
    return Caller(grant)


CallerDep = Annotated[Caller, Depends(require_caller)]


def authorized_key(
    key: Annotated[
        str,
        Path(
            description="The assistant's key.",
            min_length=1,
            max_length=64,
            pattern=ASSISTANT_KEY_PATTERN,
        ),
    ],
    caller: CallerDep,
) -> str:
    """The ``{key}`` of the path, once the caller may use it (403 otherwise)."""
    if not caller.allows(key):
        raise ApiError(
            403,
            f"This token may not use assistant {key!r}",
            "Use a token whose MINDSPACE_API_TOKENS entry names this assistant, or '*'.",
        )
    return key


KeyDep = Annotated[str, Depends(authorized_key)]
