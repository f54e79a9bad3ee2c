"""Versioned schema migrations, applied in order and recorded in ``schema_migrations``.

Each migration is a module with ``NAME`` and ``upgrade(op)``, where ``op`` is Alembic's
``Operations`` bound to the connection, so the DDL is portable across SQLite and
PostgreSQL; from version 10 on also ``downgrade(op)``, which :func:`revert` runs. A
migration is never edited once released; a change is a new version.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from alembic.migration import MigrationContext
from alembic.operations import Operations
from sqlalchemy import Connection, select

from mindspace.clock import format_time
from mindspace.errors import MigrationError
from mindspace.storage.migrations import (
    v0001_core,
    v0002_journal,
    v0003_engine,
    v0004_memory,
    v0005_changes,
    v0006_pgvector,
    v0007_journal_vectors,
    v0008_history,
    v0009_memory_validity,
    v0010_journal_index,
    v0012_journal_vector_state,
)
from mindspace.storage.tables import schema_migrations

__all__ = ["MIGRATIONS", "Migration", "migrate", "revert"]


@dataclass(frozen=True)
class Migration:
    """One schema version."""

    version: int
    name: str
    upgrade: Callable[[Operations], None]
    downgrade: Callable[[Operations], None] | None = None


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, v0001_core.NAME, v0001_core.upgrade),
    Migration(2, v0002_journal.NAME, v0002_journal.upgrade),
    Migration(3, v0003_engine.NAME, v0003_engine.upgrade),
    Migration(4, v0004_memory.NAME, v0004_memory.upgrade),
    Migration(5, v0005_changes.NAME, v0005_changes.upgrade),
    Migration(6, v0006_pgvector.NAME, v0006_pgvector.upgrade),
    Migration(7, v0007_journal_vectors.NAME, v0007_journal_vectors.upgrade),
    Migration(8, v0008_history.NAME, v0008_history.upgrade),
    Migration(9, v0009_memory_validity.NAME, v0009_memory_validity.upgrade),
    Migration(
        10,
        v0010_journal_index.NAME,
        v0010_journal_index.upgrade,
        v0010_journal_index.downgrade,
    ),
    # 11 is taken by another branch's migration; versions apply in order of number.
    Migration(
        12,
        v0012_journal_vector_state.NAME,
        v0012_journal_vector_state.upgrade,
        v0012_journal_vector_state.downgrade,
    ),
)


def migrate(connection: Connection) -> list[int]:
    """Bring the schema up to date on ``connection``; returns the versions applied.

    Raises:
        MigrationError: the database was written by a newer mindspace.
    """
    schema_migrations.create(connection, checkfirst=True)
    applied = set(connection.execute(select(schema_migrations.c.version)).scalars())
    newest = max(m.version for m in MIGRATIONS)
    if applied and max(applied) > newest:
        raise MigrationError(
            f"The database has schema version {max(applied)!r} but this mindspace knows up to "
            f"{newest!r}; upgrade mindspace, or point MINDSPACE_DATABASE_URL at another database."
        )
    done: list[int] = []
    op = Operations(MigrationContext.configure(connection))
    for migration in sorted(MIGRATIONS, key=lambda m: m.version):
        if migration.version in applied:
            continue
        migration.upgrade(op)
        connection.execute(
            schema_migrations.insert().values(
                version=migration.version,
                name=migration.name,
                applied_at=format_time(datetime.now(UTC)),
            )
        )
        done.append(migration.version)
    return done


def revert(connection: Connection, version: int) -> None:
    """Undo the applied migration ``version`` (it must be the newest applied).

    Raises:
        MigrationError: ``version`` is not the newest applied one, or has no downgrade.
    """
    applied = set(connection.execute(select(schema_migrations.c.version)).scalars())
    if not applied or max(applied) != version:
        raise MigrationError(
            f"Cannot revert schema version {version!r}: the newest applied is "
            f"{max(applied) if applied else None!r}; revert the newer ones first."
        )
    migration = next((m for m in MIGRATIONS if m.version == version), None)
    if migration is None or migration.downgrade is None:
        raise MigrationError(
            f"Schema version {version!r} cannot be reverted (it has no downgrade); restore "
            "a backup taken before it instead."
        )
    migration.downgrade(Operations(MigrationContext.configure(connection)))
    connection.execute(schema_migrations.delete().where(schema_migrations.c.version == version))
