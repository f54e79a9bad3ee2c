"""The SQL store on SQLAlchemy 2: SQLite by default, PostgreSQL through the same schema.

Only portable SQL is issued (Core ``insert``/``update``/``delete``/``select``) apart from
three places that know about a dialect. On PostgreSQL, memories carry search columns and
postings (:mod:`mindspace.storage.pg_memory`) that every commit fills, and
:meth:`SqlStore.semantic_index` searches them in the database
(:mod:`mindspace.storage.pg_semantic`). On SQLite and PostgreSQL a commit writes a record
that may exist with ``INSERT ... ON CONFLICT DO UPDATE`` (:mod:`mindspace.storage.writes`).
SQLite's connection tuning (WAL, ``BEGIN IMMEDIATE`` for writes) and the URL rules live
in :mod:`mindspace.storage.connection`.

Opened with ``create=False`` (what read-only hosts do), the store never creates anything:
a SQLite file that does not exist is an error instead of a new empty database, and no
directory is made. An existing file is still migrated to the current schema.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    create_engine,
    event,
    insert,
    select,
)
from sqlalchemy.exc import SQLAlchemyError

from mindspace.clock import format_time
from mindspace.config import database_url
from mindspace.errors import AssistantNotFoundError, ConfigError, StorageError
from mindspace.journal.vectors import EntryVectorIndex
from mindspace.memory.index import MemoryIndex
from mindspace.state.port import AssistantInfo, Change, StoredRecord
from mindspace.state.semantic import JournalIndex, SemanticIndex
from mindspace.state.unit import StateCache
from mindspace.storage import queries
from mindspace.storage.connection import begin_sqlite, file_of, parse_url, sqlite_file, tune_sqlite
from mindspace.storage.feed import read_feed
from mindspace.storage.migrations import migrate
from mindspace.storage.pg_journal import PgJournalIndex, ensure_journal_hnsw
from mindspace.storage.pg_memory import ensure_hnsw
from mindspace.storage.pg_semantic import PgSemanticIndex
from mindspace.storage.tables import assistants, kind_table
from mindspace.storage.writes import VectorTable, write_changes
from mindspace.validation import assistant_key_problem

__all__ = ["STAGING_PREFIX", "SemanticFactory", "SqlStore", "sqlite_file"]

SemanticFactory = Callable[[StateCache, str | None], SemanticIndex]
"""Builds an assistant's memory search in place of the store's own (see ``semantic``)."""

logger = logging.getLogger("mindspace.storage")

_KEY_MAX = 128

STAGING_PREFIX = "~import-"
"""Keys of assistants an import is still writing (``mindspace.storage.swap``)."""


class SqlStore:
    """A :class:`~mindspace.state.Store` on any SQLAlchemy database.

    Args:
        url: A SQLAlchemy URL such as ``sqlite:///path/to/mindspace.db``.
        migrate_schema: Bring the schema up to date on open (the default).
        create: Create a missing SQLite file and its directory (the default). With
            False, a missing file raises :class:`StorageError` and nothing is created.
        semantic: Builds each assistant's memory search instead of the store's own
            (the Mem0 tier: :func:`mindspace.storage.mem0_semantic.mem0_semantic`).

    Raises:
        ConfigError: ``url`` is not a database URL.
        StorageError: the database cannot be opened, or (``create=False``) does not exist.
    """

    def __init__(
        self,
        url: str,
        *,
        migrate_schema: bool = True,
        create: bool = True,
        semantic: SemanticFactory | None = None,
    ) -> None:
        self._semantic = semantic
        parsed = parse_url(url)
        self.url = parsed.render_as_string(hide_password=True)
        path = file_of(parsed)
        if path is not None:
            if path.is_dir():
                raise StorageError(
                    f"{str(path)!r} is a directory; give a database file inside it, "
                    f"e.g. {str(path / 'mindspace.db')!r}."
                )
            if not create and not path.is_file():
                # SQLite would create the file on the first connection: refuse before that.
                raise StorageError(
                    f"No database file at {str(path)!r}; check the path (--db, "
                    "MINDSPACE_DATABASE_URL or MINDSPACE_DATA_DIR), or open it with "
                    "create=True to start a new one."
                )
        if path is not None and create:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StorageError(
                    f"Cannot create the directory for {str(path)!r}: {exc.strerror}. "
                    "Choose a writable location with MINDSPACE_DATA_DIR or --db."
                ) from exc
        try:
            self.engine: Engine = create_engine(parsed)
        except ImportError as exc:
            missing = exc.name or str(exc)
            extra = "postgres" if "psycopg" in missing else None
            hint = (
                f'install the {extra!r} extra (from a clone: pip install -e ".[{extra}]")'
                if extra
                else "install the database driver it names"
            )
            raise StorageError(
                f"Cannot open database {self.url!r}: its driver is missing ({exc}); {hint}."
            ) from exc
        except SQLAlchemyError as exc:
            raise StorageError(
                f"Cannot open database {self.url!r}: {exc}. Check MINDSPACE_DATABASE_URL or --db."
            ) from exc
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", tune_sqlite)
            event.listen(self.engine, "begin", begin_sqlite)
        self._hnsw_dims: set[tuple[VectorTable, int]] = set()
        self._writing = self.engine.execution_options(mindspace_write=True)
        # PostgreSQL reads at READ COMMITTED, where every statement has its own snapshot:
        # a read outside a transaction block sees the same and spares the BEGIN and
        # COMMIT round trips. SQLite's reads keep their snapshot (begin_sqlite's BEGIN).
        self._reading = (
            self.engine.execution_options(isolation_level="AUTOCOMMIT")
            if self.engine.dialect.name == "postgresql"
            else self.engine
        )
        if migrate_schema:
            with self._transaction(f"migrating {url!r}", write=True) as conn:
                migrate(conn)

    @classmethod
    def from_path(cls, path: str | Path, *, create: bool = True) -> SqlStore:
        """A store on the SQLite file at ``path``.

        The file and its directory are created when missing, unless ``create`` is False:
        then a missing file raises :class:`StorageError`.
        """
        return cls(database_url(path), create=create)

    def close(self) -> None:
        """Release every pooled connection (blocking; on an event loop, await :meth:`aclose`)."""
        self.engine.dispose()

    async def aclose(self) -> None:
        """Release every pooled connection in a worker thread, off the event loop.

        Disposing waits for the driver to close each connection (file or network I/O).
        """
        await asyncio.to_thread(self.engine.dispose)

    def scrub(self) -> None:
        """Checkpoint SQLite's write-ahead log and truncate it (after forgetting).

        Deleted rows are zeroed in the database file as they go (``secure_delete``, see
        :func:`~mindspace.storage.connection.tune_sqlite`), but the log keeps the page
        images of earlier transactions, words included, until it is checkpointed and
        reset. A reader holding an old snapshot makes the truncation wait for the next
        scrub. PostgreSQL: nothing (deleted row versions stay in its files until its own
        VACUUM; no query returns them).
        """
        if self.engine.dialect.name != "sqlite":
            return
        # The driver's own connection: outside any transaction (a checkpoint inside one
        # cannot reset the log). tune_sqlite left it in autocommit.
        raw = self.engine.raw_connection()
        try:
            cursor = raw.cursor()
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            cursor.close()
        finally:
            raw.close()

    @contextmanager
    def _transaction(
        self, doing: str, *, write: bool = False, read: bool = False
    ) -> Iterator[Connection]:
        """A connection in one transaction; StorageError naming ``doing`` on failure.

        Args:
            doing: What the caller does, for the error message.
            write: A writing transaction (SQLite takes the write lock at its start).
            read: Plain reads that need no transaction block (no ``SET LOCAL``, no
                snapshot shared between statements): on PostgreSQL they run in
                autocommit, one round trip per statement.
        """
        engine = self._writing if write else self._reading if read else self.engine
        try:
            with engine.begin() as conn:
                yield conn
        except (StorageError, AssistantNotFoundError):
            raise
        except SQLAlchemyError as exc:
            detail = str(getattr(exc, "orig", None) or exc).splitlines()[0]
            raise StorageError(
                f"Database error while {doing} in {self.url!r}: {detail}. Check that the "
                "database is reachable and writable."
            ) from exc

    # -- AssistantDirectory ------------------------------------------------------------
    def open_assistant(self, key: str, *, create: bool) -> AssistantInfo:
        """The assistant stored under ``key``, created when absent and ``create`` is set."""
        if not key or len(key) > _KEY_MAX or key != key.strip():
            raise ConfigError(
                f"Invalid assistant key {key!r}: use 1-{_KEY_MAX} characters without "
                "leading or trailing spaces."
            )
        with self._transaction(f"opening assistant {key!r}", read=True) as conn:
            found = _find(conn, key)
        if found is not None:
            return found
        if not create:
            raise AssistantNotFoundError(
                f"No assistant {key!r} in {self.url!r}; create it first (talking to it or "
                "calling a tool creates it, e.g. `mindspace chat --assistant KEY`) or check --db."
            )
        # A new key obeys the API's rule, so every assistant is reachable over HTTP (an
        # import's staging copy is the store's own, never listed or served).
        problem = None if key.startswith(STAGING_PREFIX) else assistant_key_problem(key)
        if problem is not None:
            raise ConfigError(f"{problem}.")
        with self._transaction(f"creating assistant {key!r}", write=True) as conn:
            found = _find(conn, key)  # another process may have created it meanwhile
            if found is None:
                conn.execute(
                    insert(assistants).values(
                        key=key, created_at=format_time(datetime.now(UTC)), revision=0
                    )
                )
                found = _find(conn, key)
        if found is None:  # pragma: no cover - the insert above makes it
            raise StorageError(f"Assistant {key!r} vanished while being created")
        return found

    def list_assistants(self) -> list[AssistantInfo]:
        """Every assistant in the store, by key (not an import's staging copy)."""
        # Hidden so that no server or worker opens (and writes to) an import under way.
        visible = ~assistants.c.key.startswith(STAGING_PREFIX, autoescape=True)
        with self._transaction("listing assistants", read=True) as conn:
            query = select(assistants).where(visible).order_by(assistants.c.key)
            rows = conn.execute(query).mappings()
            return [_info(row) for row in rows]

    # -- RecordStore -------------------------------------------------------------------
    def revision(self, assistant_id: int) -> int:
        """The assistant's current revision."""
        with self._transaction("reading a revision", read=True) as conn:
            value = conn.execute(
                select(assistants.c.revision).where(assistants.c.id == assistant_id)
            ).scalar_one_or_none()
        if value is None:
            raise AssistantNotFoundError(f"Assistant id {assistant_id!r} no longer exists")
        return int(value)

    def load(self, assistant_id: int, kind: str) -> list[StoredRecord]:
        """All records of ``kind`` for the assistant, in insertion order."""
        spec = kind_table(kind)
        table = spec.table
        columns = [table.c[name] for name in spec.value_columns]
        query = (
            select(*columns).where(table.c.assistant_id == assistant_id).order_by(table.c.row_id)
        )
        with self._transaction(f"loading {kind!r} records", read=True) as conn:
            return [dict(row) for row in conn.execute(query).mappings()]

    def load_keys(self, assistant_id: int, kind: str, keys: Sequence[str]) -> list[StoredRecord]:
        """The records of ``kind`` under ``keys``, in insertion order (absent keys left out)."""
        query = queries.by_keys(kind)
        found: list[tuple[int, StoredRecord]] = []
        wanted = list(dict.fromkeys(keys))
        with self._transaction(f"loading {kind!r} records by key", read=True) as conn:
            for at in range(0, len(wanted), 500):  # stay under every driver's parameter limit
                chunk = {"owner": assistant_id, "keys": wanted[at : at + 500]}
                for row in conn.execute(query, chunk).mappings():
                    record = dict(row)
                    found.append((int(record.pop("row_id")), record))
        found.sort(key=lambda item: item[0])
        return [record for _, record in found]

    def scan(
        self, assistant_id: int, kind: str, fields: Sequence[str], *, batch: int = 2000
    ) -> Iterator[StoredRecord]:
        """Some ``fields`` of every record of ``kind`` in insertion order, ``batch`` rows a query.

        Each batch is its own short read (keyset pagination on the row id), so a long
        scan never holds a transaction open between batches.
        """
        spec = kind_table(kind)
        table = spec.table
        unknown = set(fields) - set(spec.value_columns)
        if unknown:
            raise StorageError(f"Records of kind {kind!r} have no fields {sorted(unknown)!r}")
        columns = [table.c.row_id, *(table.c[name] for name in fields)]
        after = 0
        while True:
            query = (
                select(*columns)
                .where(table.c.assistant_id == assistant_id)
                .where(table.c.row_id > after)
                .order_by(table.c.row_id)
                .limit(batch)
            )
            with self._transaction(f"scanning {kind!r} records", read=True) as conn:
                rows = [dict(row) for row in conn.execute(query).mappings()]
            if not rows:
                return
            after = int(rows[-1]["row_id"])
            for row in rows:
                del row["row_id"]
                yield row
            if len(rows) < batch:
                return

    def commit(self, assistant_id: int, expected_revision: int, changes: Sequence[Change]) -> int:
        """Apply ``changes`` in one transaction after checking the revision.

        The writing itself is :func:`mindspace.storage.writes.write_changes`.
        """
        with self._transaction("committing changes", write=True) as conn:
            dims = write_changes(
                conn,
                assistant_id,
                expected_revision,
                changes,
                dialect=self.engine.dialect.name,
                supports_batches=self.engine.dialect.supports_sane_multi_rowcount,
            )
        self._ensure_hnsw(dims)
        return expected_revision + 1

    # -- PostgreSQL memory search --------------------------------------------------------
    @property
    def postgres(self) -> bool:
        """Whether this store is on PostgreSQL (memory search then runs in the database)."""
        return self.engine.dialect.name == "postgresql"

    def _ensure_hnsw(self, dims: set[tuple[VectorTable, int]]) -> None:
        """Build the HNSW index of each new vector size, after (not inside) the commit.

        Building takes a lock that conflicts with other writers' inserts, so it runs in
        its own short transaction once the changes are committed; this process remembers
        the sizes it has seen, so the check costs nothing on later commits.
        """
        for table, dim in sorted(dims - self._hnsw_dims):
            ensure = ensure_hnsw if table == "memories" else ensure_journal_hnsw
            try:
                with self._transaction(f"indexing {dim}-d {table} vectors", write=True) as c:
                    ensure(c, dim)
            except StorageError as exc:
                # The changes are committed; searches stay correct without the index
                # (an exact scan), and the next commit of this size tries again.
                logger.warning("%s", exc)
                continue
            self._hnsw_dims.add((table, dim))

    def semantic_index(self, cache: StateCache, embedder: str | None) -> SemanticIndex:
        """The memory search of the cache's assistant (the :class:`SemanticStore` port).

        PostgreSQL searches in the database (pgvector HNSW and full-text, see
        :class:`~mindspace.storage.pg_semantic.PgSemanticIndex`); SQLite gets the
        embedded exact index kept in step with the state cache. A ``semantic`` factory
        given to the constructor (the Mem0 tier, ``MINDSPACE_SEMANTIC_BACKEND=mem0``)
        replaces both.
        """
        if self._semantic is not None:
            return self._semantic(cache, embedder)
        if self.postgres:
            return PgSemanticIndex(self._transaction, cache.assistant_id, embedder)
        return MemoryIndex(cache, embedder)

    def journal_index(self, cache: StateCache, embedder: str) -> JournalIndex:
        """The journal's vector ranking of the cache's assistant (the :class:`SemanticStore` port).

        PostgreSQL ranks in the database (an exact pgvector scan over the candidates,
        :class:`~mindspace.storage.pg_journal.PgJournalIndex`); SQLite gets the embedded
        index kept in step with the state cache.
        """
        if self.postgres:
            return PgJournalIndex(self._transaction, cache.assistant_id, embedder)
        return EntryVectorIndex(cache, embedder)

    def changes_since(self, assistant_id: int, revision: int) -> list[tuple[int, str, str]] | None:
        """(revision, kind, key) of every change after ``revision``; None if trimmed away."""
        with self._transaction("reading the change feed", read=True) as conn:
            return read_feed(conn, assistant_id, revision)

    def count(self, assistant_id: int, kind: str) -> int:
        """How many records of ``kind`` the assistant has."""
        with self._transaction(f"counting {kind!r} records", read=True) as conn:
            return queries.count(conn, assistant_id, kind)

    def page(
        self,
        assistant_id: int,
        kind: str,
        *,
        offset: int,
        limit: int,
        newest_first: bool = True,
    ) -> list[StoredRecord]:
        """``limit`` records of ``kind`` after skipping ``offset``, by insertion order."""
        with self._transaction(f"paging {kind!r} records", read=True) as conn:
            return queries.page(conn, assistant_id, kind, offset, limit, newest_first)

    def missing(
        self, assistant_id: int, kind: str, other_kind: str, *, limit: int
    ) -> tuple[list[str], int]:
        """Keys of ``kind`` records (oldest first) lacking an ``other_kind`` one, and how many."""
        doing = f"finding {kind!r} records without {other_kind!r}"
        with self._transaction(doing, read=True) as conn:
            return queries.missing(conn, assistant_id, kind, other_kind, limit)

    # -- EventInbox --------------------------------------------------------------------
    def enqueue(self, assistant_id: int, event: StoredRecord) -> None:
        """Store a new event (no revision bump: hosts enqueue while ticks run)."""
        with self._transaction("enqueueing an event", write=True) as conn:
            queries.enqueue(conn, assistant_id, event)

    def open_events(self, assistant_id: int, limit: int) -> list[StoredRecord]:
        """Events still pending or processing, oldest first."""
        with self._transaction("reading open events", read=True) as conn:
            return queries.open_events(conn, assistant_id, limit)

    def revision_and_open_events(
        self, assistant_id: int, limit: int
    ) -> tuple[int, list[StoredRecord]]:
        """The revision and the open events, in one statement (the :class:`TickStart` port)."""
        with self._transaction("reading the revision and open events", read=True) as conn:
            found = queries.revision_and_open_events(conn, assistant_id, limit)
        if found is None:
            raise AssistantNotFoundError(f"Assistant id {assistant_id!r} no longer exists")
        return found

    def find_event(self, assistant_id: int, event_id: str) -> StoredRecord | None:
        """One event by id."""
        with self._transaction("reading an event", read=True) as conn:
            return queries.find_event(conn, assistant_id, event_id)

    def update_event(self, assistant_id: int, event_id: str, fields: StoredRecord) -> None:
        """Change some fields of one event."""
        queries.check_event_fields(fields)
        with self._transaction("updating an event", write=True) as conn:
            queries.update_event(conn, assistant_id, event_id, fields)


def _find(conn: Connection, key: str) -> AssistantInfo | None:
    row = conn.execute(select(assistants).where(assistants.c.key == key)).mappings().first()
    return _info(row) if row is not None else None


def _info(row: Any) -> AssistantInfo:
    return AssistantInfo(
        id=int(row["id"]),
        key=str(row["key"]),
        created_at=str(row["created_at"]),
        revision=int(row["revision"]),
    )
