"""Schema version 6 on PostgreSQL: the vector extension, the search columns, the backfill."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest
from sqlalchemy import create_engine, insert, inspect, text

import mindspace.storage.migrations as migrations
from mindspace.errors import MigrationError
from mindspace.state.semantic import SearchRequest
from mindspace.state.unit import StateCache
from mindspace.storage import SqlStore
from mindspace.storage.pg_journal_state import PG_JOURNAL_COLUMNS
from mindspace.storage.pg_memory import PG_COLUMNS, hnsw_name
from mindspace.storage.tables import journal_entries, memories, metadata
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
        extra |= set(PG_JOURNAL_COLUMNS) if table is journal_entries else set()
        assert migrated == {c.name for c in table.columns} | extra, table.name
    indexes = {ix["name"] for ix in inspector.get_indexes("memories")}
    assert "ix_memories_lex" in indexes
    assert {c["name"] for c in inspector.get_columns("memory_postings")} == {
        "assistant_id",
        "term",
        "memory_id",
        "tf",
        "len",
    }
    assert {c["name"] for c in inspector.get_columns("memory_stats")} == {
        "assistant_id",
        "docs",
        "terms",
    }
    with engine.connect() as conn:
        versions = conn.execute(text("SELECT version FROM schema_migrations")).scalars().all()
    assert sorted(versions) == [m.version for m in migrations.MIGRATIONS]
    engine.dispose()


def test_memories_stored_before_version_6_are_backfilled(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before_6 = tuple(m for m in migrations.MIGRATIONS if m.version < 6)
    monkeypatch.setattr(migrations, "MIGRATIONS", before_6)
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
    with store.engine.connect() as conn:
        stats = conn.execute(text("SELECT docs, terms FROM memory_stats")).one()
        postings = conn.execute(text("SELECT count(*) FROM memory_postings")).scalar()
    assert tuple(stats) == (2, 10)
    assert postings == 10
    cache = StateCache(store, info.id, store.revision(info.id))
    index = store.semantic_index(cache, "hand")
    assert [h.key for h in index.search(SearchRequest("", vector), limit=5)] == ["mem_1"]
    assert sorted(h.key for h in index.search(SearchRequest("fair bees"), limit=5)) == [
        "mem_1",
        "mem_2",
    ]
    store.close()


def test_commits_keep_the_bm25_statistics_and_postings_exact(pg_url: str) -> None:
    from mindspace.memory.records import Memory

    store = SqlStore(pg_url)
    caches = []
    for key in ("keeper", "rival"):
        info = store.open_assistant(key, create=True)
        caches.append(StateCache(store, info.id, info.revision))

    def put(cache: StateCache, *records: Memory) -> None:
        unit = cache.begin()
        unit.put_all(records)
        cache.commit(unit)

    def mem(key: str, content: str) -> Memory:
        return Memory(id=key, content=content, created_at=WHEN, occurred_at=WHEN)

    keeper, rival = caches
    put(keeper, mem("mem_1", "bees bees honey"), mem("mem_2", "clocks"), mem("mem_3", "ale"))
    put(rival, mem("mem_1", "rival words here"))
    put(keeper, mem("mem_2", "old clocks repaired twice"))  # an update: longer
    unit = keeper.begin()
    unit.delete(Memory, "mem_3")
    keeper.commit(unit)

    with store.engine.connect() as conn:
        stats = dict(
            conn.execute(text("SELECT assistant_id, (docs, terms)::text FROM memory_stats")).all()
        )
        truth = dict(
            conn.execute(
                text(
                    "SELECT assistant_id, (count(*), sum(lex_len))::text FROM memories "
                    "GROUP BY assistant_id"
                )
            ).all()
        )
        postings = conn.execute(
            text(
                "SELECT memory_id, term, tf, len FROM memory_postings "
                "WHERE assistant_id = :a ORDER BY memory_id, term"
            ),
            {"a": keeper.assistant_id},
        ).all()
    assert stats == truth
    assert truth[keeper.assistant_id] == "(2,7)"
    assert [tuple(p) for p in postings] == [
        ("mem_1", "bee", 2, 3),
        ("mem_1", "honey", 1, 3),
        ("mem_2", "clock", 1, 4),
        ("mem_2", "old", 1, 4),
        ("mem_2", "repair", 1, 4),
        ("mem_2", "twice", 1, 4),
    ]
    store.close()
