"""PostgreSQL journal search through indexes (schema versions 10 and 12), against the exact scan.

A search whose candidate window is larger than ``WALK_WINDOW`` walks the HNSW index of
the query's dimension for the ``COUNTED`` nearest entries (the exact scan answers when
fewer pass the filter); a smaller window is scored exactly through the timestamp B-tree.
Both must rank as the embedded index does (hits best first, ties newest first; total;
entries without a current vector, newest first)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from sqlalchemy import create_engine, text

import mindspace.storage.pg_journal as pg_journal
from mindspace.journal.records import EntryVector, JournalEntry, text_digest
from mindspace.state.semantic import EntryFilter, JournalIndex, Ranked
from mindspace.state.unit import StateCache
from mindspace.storage import SqlStore
from mindspace.storage.migrations import migrate, revert
from mindspace.storage.pg_journal_state import STATE_INDEX, embedder_bounds, vector_state

DIM = 16


def vectors(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    raw = rng.normal(size=(count, DIM)).astype(np.float32)
    return (raw / np.linalg.norm(raw, axis=1, keepdims=True)).astype(np.float32)


def fill(url: str, count: int, *, embedded_every: int = 1) -> tuple[SqlStore, JournalIndex]:
    """``count`` entries over 60 days, tagged by parity; one in ``embedded_every`` embedded."""
    store = SqlStore(url)
    info = store.open_assistant("keeper", create=True)
    cache = StateCache(store, info.id, info.revision)
    found = vectors(count, seed=count)
    for start in range(0, count, 2000):
        unit = cache.begin()
        for i in range(start, min(count, start + 2000)):
            day = 1 + (i * 60) // count
            content = f"entry {i}"
            unit.put(
                JournalEntry(
                    id=i + 1,
                    timestamp=f"2025-{10 + day // 31:02d}-{1 + day % 30:02d}T10:00:00Z",
                    content=content,
                    importance=5,
                    tags=("even",) if i % 2 == 0 else ("odd",),
                )
            )
            if i % embedded_every == 0:
                unit.put(
                    EntryVector(
                        key=str(i + 1),
                        embedder="hand",
                        digest=text_digest(content),
                        embedding=found[i].tobytes(),
                    )
                )
        cache.commit(unit)
    return store, store.journal_index(cache, "hand")


@pytest.fixture
def journal(pg_url: str) -> Iterator[tuple[SqlStore, JournalIndex]]:
    store, index = fill(pg_url, 600, embedded_every=7)
    yield store, index
    store.close()


def search(index: JournalIndex, query: np.ndarray, where: EntryFilter, **kw: float) -> Ranked:
    return index.search(
        query, where, limit=int(kw.get("limit", 10)), threshold=float(kw.get("threshold", 0.2))
    )


FILTERS = [
    EntryFilter(),
    EntryFilter(since="2025-11-15"),
    EntryFilter(tags=("even",)),
    EntryFilter(tags=("even", "odd"), any_tag=True),
]


@pytest.mark.parametrize("where", FILTERS)
def test_the_hnsw_path_ranks_as_the_exact_scan(
    journal: tuple[SqlStore, JournalIndex], where: EntryFilter, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, index = journal
    queries = vectors(12, seed=99)
    exact = [search(index, q, where) for q in queries]
    monkeypatch.setattr(pg_journal, "EXACT_WINDOW", 10)  # every window is large now
    scanned = [search(index, q, where) for q in queries]  # the default: one scan
    assert scanned == exact
    monkeypatch.setattr(pg_journal, "WALK_WINDOW", 10)  # walked through HNSW: fewer
    assert [search(index, q, where) for q in queries] == exact  # than COUNTED, so exact
    monkeypatch.setattr(pg_journal, "COUNTED", 12)  # the walk's own answer
    walked = [search(index, q, where) for q in queries]
    for mine, reference in zip(walked, exact, strict=True):
        assert [h.key for h in mine.hits] == [h.key for h in reference.hits]
        assert [h.score for h in mine.hits] == pytest.approx([h.score for h in reference.hits])
        # The walk counts matches among the 12 nearest: the total, or a floor at 12.
        assert mine.total == min(reference.total, 12)
        assert mine.unembedded == reference.unembedded
    assert any(r.hits for r in exact)
    assert all(r.unembedded for r in exact)  # six in seven entries have no vector
    if where == EntryFilter():
        assert any(r.total > 10 for r in exact)  # the limit cut some lists


def test_past_counted_matches_the_total_is_a_floor(
    journal: tuple[SqlStore, JournalIndex], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, index = journal
    query = vectors(1, seed=5)[0]
    exact = search(index, query, EntryFilter(), threshold=-1.0)
    assert exact.total == 86  # every stored vector (600 / 7, rounded up) matches
    monkeypatch.setattr(pg_journal, "EXACT_WINDOW", 10)
    monkeypatch.setattr(pg_journal, "WALK_WINDOW", 10)
    monkeypatch.setattr(pg_journal, "COUNTED", 40)
    walked = search(index, query, EntryFilter(), threshold=-1.0)
    assert walked.total == 40
    assert [h.key for h in walked.hits] == [h.key for h in exact.hits]


@pytest.mark.filterwarnings("ignore:Did not recognize type 'vector'")
def test_a_large_journal_is_searched_through_its_indexes(pg_url: str) -> None:
    store, index = fill(pg_url, 6000)
    query = vectors(1, seed=3)[0]
    params = {
        "query": "[" + ",".join(repr(float(x)) for x in query) + "]",
        "a": 1,
        "e": "hand",
        "dim": DIM,
        "exclude": [],
        "since": None,
        "project": None,
        "tags": [],
        "any_tag": False,
        "threshold": 0.2,
        "limit": 10,
        "counted": pg_journal.COUNTED,
        "state": vector_state("hand", DIM),
    }
    engine = create_engine(pg_url)
    with engine.begin() as conn:
        conn.exec_driver_sql("ANALYZE")
        conn.exec_driver_sql("SET LOCAL plan_cache_mode = force_custom_plan")
        conn.exec_driver_sql("SET LOCAL hnsw.iterative_scan = relaxed_order")
        walked = "\n".join(
            conn.execute(text("EXPLAIN " + pg_journal._nearest_search(DIM)), params).scalars()
        )
        missing = "\n".join(
            conn.execute(
                text("EXPLAIN " + str(pg_journal._MISSING)),
                {"a": 1, "limit": 50, **embedder_bounds("hand")},
            ).scalars()
        )
        recent = "\n".join(
            conn.execute(
                text("EXPLAIN " + str(pg_journal._WINDOW_SEARCH)),
                {**params, "since": "2025-11-28"},
            ).scalars()
        )
    engine.dispose()
    assert pg_journal.journal_hnsw_name(DIM) in walked
    assert STATE_INDEX in walked  # the entries to embed: no read of every entry
    assert "Seq Scan on journal_entries" not in walked
    assert "ix_journal_entries_ts" in recent
    assert STATE_INDEX in missing
    # And the answers: the last days exactly through the B-tree, everything by the scan.
    found = search(index, query, EntryFilter(since="2025-11-28"))
    assert found.hits
    assert found.total < pg_journal.EXACT_WINDOW
    assert len(search(index, query, EntryFilter()).hits) == 10
    store.close()


def _indexes(url: str) -> set[str]:
    engine = create_engine(url)
    with engine.connect() as conn:
        found = conn.execute(
            text(
                "SELECT indexname FROM pg_indexes WHERE indexname IN "
                f"('ix_journal_entries_ts', 'ix_journal_vectors_hnsw_{DIM}')"
            )
        ).scalars()
        names = set(found)
    engine.dispose()
    return names


def _versions(url: str) -> list[int]:
    engine = create_engine(url)
    with engine.connect() as conn:
        found = sorted(conn.execute(text("SELECT version FROM schema_migrations")).scalars())
    engine.dispose()
    return found


@pytest.mark.filterwarnings("ignore:Did not recognize type 'vector'")
def test_version_10_goes_down_and_up_again(backend_url: str) -> None:
    store, index = fill(backend_url, 50)
    before = search(index, vectors(1, seed=1)[0], EntryFilter())
    store.close()
    postgres = backend_url.startswith("postgresql")
    if postgres:
        assert _indexes(backend_url) == {"ix_journal_entries_ts", f"ix_journal_vectors_hnsw_{DIM}"}
    engine = create_engine(backend_url)
    with engine.begin() as conn:
        revert(conn, 12)
        revert(conn, 10)
    assert 10 not in _versions(backend_url)
    if postgres:
        assert _indexes(backend_url) == set()
    with engine.begin() as conn:
        assert migrate(conn) == [10, 12]
    engine.dispose()
    assert 10 in _versions(backend_url)
    if postgres:
        assert _indexes(backend_url) == {"ix_journal_entries_ts", f"ix_journal_vectors_hnsw_{DIM}"}
    store = SqlStore(backend_url)
    info = store.open_assistant("keeper", create=False)
    again = store.journal_index(StateCache(store, info.id, info.revision), "hand")
    after = search(again, vectors(1, seed=1)[0], EntryFilter())
    assert after == before
    store.close()
