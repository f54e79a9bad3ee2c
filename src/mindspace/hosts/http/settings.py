"""The HTTP server's settings and its token policy (who may see which assistants).

Two environment variables grant access, and they combine:

* ``MINDSPACE_API_TOKEN`` - one token that may use every assistant;
* ``MINDSPACE_API_TOKENS`` - an allow-list, ``token=key1,key2;token2=*``: each token may use
  the assistants it names (``*`` for all of them).

With neither set the API is open, which the server allows on a loopback address only.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass, field
from ipaddress import ip_address

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from mindspace.errors import ConfigError

__all__ = [
    "ALL_ASSISTANTS",
    "MIN_TOKEN_CHARS",
    "Grant",
    "ServerSettings",
    "TokenPolicy",
    "is_loopback",
]

ALL_ASSISTANTS = "*"
MIN_TOKEN_CHARS = 16
_MAKE_TOKEN = 'python -c "import secrets; print(secrets.token_urlsafe(32))"'


class ServerSettings(BaseSettings):
    """Settings of ``mindspace serve``; each field is ``MINDSPACE_<FIELD>`` in the environment."""

    model_config = SettingsConfigDict(env_prefix="MINDSPACE_", extra="ignore")

    api_token: SecretStr | None = Field(
        default=None, description="A bearer token that may use every assistant."
    )
    api_tokens: SecretStr | None = Field(
        default=None,
        description="Allow-list of bearer tokens: 'token=key1,key2;token2=*'.",
    )
    api_max_body_bytes: int = Field(
        default=1_048_576, ge=1_024, description="Largest request body accepted (bytes)."
    )
    api_tick_history: int = Field(
        default=20, ge=1, le=500, description="Recent ticks kept per assistant for the dashboard."
    )
    api_max_streams: int = Field(
        default=32, ge=1, le=1_000, description="Live event streams open at once."
    )
    api_stream_heartbeat: float = Field(
        default=15.0, gt=0, description="Seconds between keep-alive comments on a stream."
    )


@dataclass(frozen=True)
class Grant:
    """What one token may use: every assistant, or the keys listed."""

    token: str = field(repr=False)
    keys: frozenset[str] = frozenset()
    every: bool = False

    def allows(self, key: str) -> bool:
        """Whether this token may use the assistant ``key``."""
        return self.every or key in self.keys


class TokenPolicy:
    """Checks bearer tokens; with no grants at all, every request is allowed (open mode).

    Args:
        grants: The tokens and what each may use.
    """

    def __init__(self, grants: list[Grant] | None = None) -> None:
        self.grants = list(grants or [])

    @classmethod
    def from_settings(cls, settings: ServerSettings) -> TokenPolicy:
        """The policy the settings describe.

        Raises:
            ConfigError: a token is too short or an allow-list entry is malformed.
        """
        grants: list[Grant] = []
        if settings.api_token is not None and settings.api_token.get_secret_value().strip():
            token = settings.api_token.get_secret_value().strip()
            _check_token(token, "MINDSPACE_API_TOKEN")
            grants.append(Grant(token, every=True))
        if settings.api_tokens is not None:
            grants += parse_token_list(settings.api_tokens.get_secret_value())
        return cls(grants)

    @property
    def open(self) -> bool:
        """True when no token is configured: every request is allowed."""
        return not self.grants

    def grant_for(self, token: str | None) -> Grant | None:
        """The grant of ``token`` (compared in constant time), or None."""
        if token is None:
            return None
        found = None
        for grant in self.grants:
            if hmac.compare_digest(grant.token.encode(), token.encode()):
                found = grant
        return found


def parse_token_list(text: str) -> list[Grant]:
    """Parse ``token=key1,key2;token2=*`` into grants.

    Raises:
        ConfigError: an entry without ``=``, without keys, or with a short token. The
            message names the entry by position, never by its token.
    """
    grants: list[Grant] = []
    for number, raw in enumerate(text.split(";"), start=1):
        entry = raw.strip()
        if not entry:
            continue
        token, sep, keys_text = entry.partition("=")
        token = token.strip()
        if not sep or not token:
            raise ConfigError(
                f"MINDSPACE_API_TOKENS entry {number} is not 'token=key1,key2': write each "
                "entry as a token, '=', and the assistant keys it may use (or '*'), with "
                "entries separated by ';'."
            )
        _check_token(token, f"MINDSPACE_API_TOKENS entry {number}")
        keys = [k.strip() for k in keys_text.split(",") if k.strip()]
        if not keys:
            raise ConfigError(
                f"MINDSPACE_API_TOKENS entry {number} lists no assistant keys; add the keys "
                "after '=' (e.g. 'token=alice,bob') or '*' for every assistant."
            )
        every = ALL_ASSISTANTS in keys
        grants.append(Grant(token, frozenset(k for k in keys if k != ALL_ASSISTANTS), every))
    return grants


def _check_token(token: str, where: str) -> None:
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"The token in {where} has {len(token)} characters; use at least "
            f"{MIN_TOKEN_CHARS}. Make one with: {_MAKE_TOKEN}"
        )
    if any(c.isspace() or c in ",;=" for c in token):
        raise ConfigError(
            f"The token in {where} contains whitespace, ',', ';' or '='; use URL-safe "
            f"characters only. Make one with: {_MAKE_TOKEN}"
        )


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (127.0.0.0/8, ::1) or ``localhost``."""
    name = host.strip().strip("[]")
    if name.lower() == "localhost":
        return True
    try:
        return ip_address(name).is_loopback
    except ValueError:
        return False
