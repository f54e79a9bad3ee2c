"""Opening a database: the URL rules and SQLite's connection tuning.

:func:`tune_sqlite` turns on WAL, foreign keys and a busy timeout for SQLite files, and
takes over ``BEGIN`` from the driver (the recipe in SQLAlchemy's pysqlite notes) so DDL
is transactional and a writing transaction takes the write lock up front
(``BEGIN IMMEDIATE``, :func:`begin_sqlite`) instead of failing on a stale snapshot when
another process wrote first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Connection
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import SQLAlchemyError

from mindspace.errors import ConfigError

__all__ = ["begin_sqlite", "file_of", "parse_url", "sqlite_file", "tune_sqlite"]


def sqlite_file(url: str) -> Path | None:
    """The file a SQLite URL names; None for other databases and in-memory SQLite.

    Raises:
        ConfigError: ``url`` is not a database URL.
    """
    return file_of(parse_url(url))


def parse_url(url: str) -> URL:
    """``url`` parsed, or a ConfigError that says what a database URL looks like."""
    try:
        return make_url(url)
    except SQLAlchemyError as exc:
        raise ConfigError(
            f"{url!r} is not a database URL; give a file path or a URL such as "
            "'sqlite:///mindspace.db' (MINDSPACE_DATABASE_URL or --db)."
        ) from exc


def file_of(parsed: URL) -> Path | None:
    """The SQLite file a parsed URL names (None for other databases and in-memory SQLite)."""
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        return Path(str(parsed.database)).expanduser()
    return None


def tune_sqlite(dbapi_connection: Any, _record: Any) -> None:
    """Connection hook: WAL, foreign keys, a busy timeout, zeroed deletions; BEGIN is ours.

    ``secure_delete`` overwrites deleted content (and freed pages) with zeros, so what
    an edit or a forgetting removes is not left in the file's free space.
    """
    dbapi_connection.isolation_level = None  # we emit BEGIN ourselves in begin_sqlite
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA secure_delete=ON")
    finally:
        cursor.close()


def begin_sqlite(conn: Connection) -> None:
    """Begin hook: ``BEGIN IMMEDIATE`` for writing transactions, ``BEGIN`` otherwise."""
    write = conn.get_execution_options().get("mindspace_write", False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")
