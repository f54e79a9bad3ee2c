"""Schema version 6 on PostgreSQL: the vector extension, the search columns, the backfill."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest
from sqlalchemy import create_engine, insert, inspect, text

import mindspace.storage.migrations as migrations
from mindspace.errors import MigrationError
from mindspace.state.unit import StateCache
from mindspace.storage import SqlStore
from mindspace.storage.pg_memory import PG_COLUMNS, hnsw_name
from mindspace.storage.tables import memories, metadata
from mindspace.testing.postgres import LocalPostgres

WHEN = "2025-12-06T10:00:00Z"


def test_a_server_without_pgvector_rights_gets_a_clear_error(
    postgres: LocalPostgres, pg_url: str
) -> None:
    # pgvector is not a trusted extension: an ordinary role cannot create it, as on a
    # managed server where nobody installed it for us.
    database = pg_url.split("/")[-1].split("?")[0]
    with psycopg.connect(postgres.conninfo(), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'plain'").fetchone()
        if exists is None:
            conn.execute("CREATE ROLE plain LOGIN NOSUPERUSER")
        conn.execute(f'ALTER DATABASE "{database}" OWNER TO plain')
    plain_url = pg_url.replace("postgres@", "plain@", 1)

    with pytest.raises(MigrationError) as raised:
        SqlStore(plain_url)
    message = str(raised.value)
    assert "pgvector extension is missing" in message
    assert "postgresql-NN-pgvector" in message
    assert "CREATE EXTENSION vector" in message
    assert "Traceback" not in message

    # Nothing was half-applied; once a superuser creates the extension, it opens.
    engine = create_engine(pg_url)
    with engine.begin() as conn:
        assert not inspect(conn).has_table("memories")
        conn.execute(text("CREATE EXTENSION vector"))
    engine.dispose()
    SqlStore(plain_url).close()


@pytest.mark.filterwarnings("ignore:Did not recognize type 'vector'")
def test_the_migrated_schema_is_the_declared_one_plus_the_search_columns(pg_url: str) -> None:
    SqlStore(pg_url).close()
    SqlStore(pg_url).close()  # a second open applies nothing again
    engine = create_engine(pg_url)
    inspector = inspect(engine)
    for table in metadata.sorted_tables:
        migrated = {c["name"] for c in inspector.get_columns(table.name)}
        extra = set(PG_COLUMNS) if table is memories else set()
        assert migrated == {c.name for c in table.columns} | extra, table.name
    indexes = {ix["name"] for ix in inspector.get_indexes("memories")}
    assert "ix_memories_lex" in indexes
    with engine.connect() as conn:
        versions = conn.execute(text("SELECT version FROM schema_migrations")).scalars().all()
    assert sorted(versions) == [m.version for m in migrations.MIGRATIONS]
    engine.dispose()


def test_memories_stored_before_version_6_are_backfilled(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:4])
    old = SqlStore(pg_url)
    info = old.open_assistant("keeper", create=True)
    vector = np.zeros(12, dtype=np.float32)
    vector[3] = 1.0
    row = {
        "assistant_id": info.id,
        "id": "mem_1",
        "content": "Alice keeps bees in the orchard",
        "source": "tool",
        "entry_id": None,
        "tags": [],
        "source_type": "observation",
        "source_trust": 0.8,
        "source_entity": None,
        "importance": 5,
        "importance_method": "manual",
        "created_at": WHEN,
        "occurred_at": WHEN,
        "ref": None,
        "context": "At the fair",
        "embedder": "hand",
        "embedding": vector.tobytes(),
    }
    with old.engine.begin() as conn:
        conn.execute(insert(memories), [row, {**row, "id": "mem_2", "embedding": None}])
    old.close()
    monkeypatch.undo()

    store = SqlStore(pg_url)  # applies version 6 and fills the new columns
    with store.engine.connect() as conn:
        filled = conn.execute(
            text("SELECT id, vector_dims(vec), lex_len FROM memories ORDER BY id")
        ).all()
        index_exists = conn.execute(
            text("SELECT to_regclass(:name)"), {"name": hnsw_name(12)}
        ).scalar()
    assert filled == [("mem_1", 12, 5), ("mem_2", None, 5)]  # fair alic keep bee orchard
    assert index_exists is not None
    cache = StateCache(store, info.id, store.revision(info.id))
    index = store.semantic_index(cache, "hand")
    assert [h.key for h in index.search("", vector, limit=5)] == ["mem_1"]
    assert sorted(h.key for h in index.search("fair bees", None, limit=5)) == ["mem_1", "mem_2"]
    store.close()
