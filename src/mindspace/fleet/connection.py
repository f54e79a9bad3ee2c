"""Where the fleet's queue lives: the store's own PostgreSQL database.

The store takes a SQLAlchemy URL (``postgresql+psycopg://user@host/db``); procrastinate's
psycopg connector takes a libpq connection string, which accepts the same URL without
the driver suffix.
"""

from __future__ import annotations

import psycopg

from mindspace.errors import ConfigError, StorageError

__all__ = ["check_reachable", "conninfo_of", "require_postgres", "shown"]

SQLITE_MESSAGE = (
    "the worker fleet needs PostgreSQL; SQLite runs ticks in-process: use `mindspace serve` "
    "(or pass --db postgresql+psycopg://USER@HOST/DB)"
)


def require_postgres(url: str) -> None:
    """Refuse anything but a PostgreSQL URL, saying what to do instead.

    Raises:
        ConfigError: ``url`` names SQLite or another database.
    """
    scheme = url.partition("://")[0].partition("+")[0].lower()
    if scheme == "sqlite":
        raise ConfigError(f"{SQLITE_MESSAGE} (got {shown(url)!r}).")
    if scheme not in ("postgresql", "postgres"):
        raise ConfigError(
            f"The worker fleet needs a PostgreSQL URL such as "
            f"'postgresql+psycopg://USER@HOST/DB', got {shown(url)!r}."
        )


def conninfo_of(url: str) -> str:
    """The libpq connection string of a SQLAlchemy PostgreSQL URL.

    Example:
        >>> conninfo_of("postgresql+psycopg://me:pw@db.local:5432/mind?sslmode=require")
        'postgresql://me:pw@db.local:5432/mind?sslmode=require'

    Raises:
        ConfigError: ``url`` is not a PostgreSQL URL.
    """
    require_postgres(url)
    _, _, rest = url.partition("://")
    return f"postgresql://{rest}"


def shown(url: str) -> str:
    """``url`` with any password masked, for messages."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    credentials, _, host = rest.rpartition("@")
    user, colon, _ = credentials.partition(":")
    return f"{scheme}://{user}{':***' if colon else ''}@{host}"


def check_reachable(url: str, *, timeout: float = 5.0) -> None:
    """Connect once, so that a wrong URL fails with one clear line before anything starts.

    Raises:
        ConfigError: ``url`` is not a PostgreSQL URL.
        StorageError: the database cannot be reached (the message says what to check).
    """
    try:
        with psycopg.connect(conninfo_of(url), connect_timeout=max(1, round(timeout))):
            pass
    except psycopg.Error as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise StorageError(
            f"Cannot reach the database {shown(url)!r}: {reason}. Check that PostgreSQL "
            "is running and that the URL (host, port, user, database) is right."
        ) from None
