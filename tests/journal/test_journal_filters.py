"""Semantic journal search with the filter inside the journal index, on both backends.

``JournalIndex.search`` filters (days, tags, project) and ranks in one call: on SQLite
over the embedded index's column arrays, on PostgreSQL in the SQL of the pgvector scan.
Whatever the journal, it must answer exactly as ``rank`` over the entries that pass the
filter in Python, newest first; and ``search_journal`` through it must find what the
query-time path (every entry embedded at query time) finds, uncommitted writes included.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mindspace.embeddings import HashingEmbedder
from mindspace.journal.records import EntryVector, JournalEntry, text_digest
from mindspace.journal.search import JournalFilter, SemanticJournal, search_journal
from mindspace.journal.vectors import embed_pending_entries
from mindspace.state.semantic import JournalIndex, SemanticStore
from mindspace.state.unit import StateCache
from mindspace.storage import SqlStore

DIM = 8
NOW = datetime(2025, 12, 6, 10, 0, tzinfo=UTC)
TIMES = ["2025-11-01T08:00:00Z", "2025-12-01T09:30:00Z", "2025-12-05T10:00:00Z"]
TAGS = ["Bees", "bees", "HONEY", "garden"]
PROJECTS = ["Farm", "farm", "Orchard"]
DIRECTIONS = [
    np.eye(DIM, dtype=np.float32)[0],
    np.eye(DIM, dtype=np.float32)[1],
    ((np.eye(DIM)[0] + np.eye(DIM)[2]) / np.sqrt(2)).astype(np.float32),
    -np.eye(DIM, dtype=np.float32)[0],
]
"""Few directions, so equal scores (ties broken newest first) are common."""

_names = itertools.count()


class Backend:
    """One store per test; each example gets an assistant of its own."""

    def __init__(self, url: str) -> None:
        self.store = SqlStore(url)

    def journal(self, embedder: str = "hand") -> tuple[StateCache, JournalIndex]:
        info = self.store.open_assistant(f"filters{next(_names)}", create=True)
        cache = StateCache(self.store, info.id, info.revision)
        assert isinstance(self.store, SemanticStore)
        return cache, self.store.journal_index(cache, embedder)


@pytest.fixture
def backend(backend_url: str) -> Iterator[Backend]:
    opened = Backend(backend_url)
    yield opened
    opened.store.close()


entries_st = st.lists(
    st.tuples(
        st.sampled_from(TIMES),
        st.lists(st.sampled_from(TAGS), max_size=2),
        st.lists(st.sampled_from(PROJECTS), max_size=1),
        st.sampled_from(["current", "stale", "other-embedder", "none"]),
        st.integers(min_value=0, max_value=len(DIRECTIONS) - 1),
    ),
    max_size=14,
)
filter_st = st.builds(
    JournalFilter,
    tags=st.lists(st.sampled_from(["bees", "Honey", "GARDEN", "wasps"]), max_size=2).map(tuple),
    any_tag=st.booleans(),
    days_back=st.sampled_from([None, 2, 10, 100]),
    project=st.sampled_from([None, "FARM", "orchard", "none"]),
)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=entries_st,
    where=filter_st,
    direction=st.integers(min_value=0, max_value=len(DIRECTIONS) - 1),
    limit=st.integers(min_value=0, max_value=6),
    threshold=st.sampled_from([-1.0, 0.0, 0.5, 0.70710677]),
    excluded=st.sets(st.integers(min_value=1, max_value=14), max_size=3),
)
def test_search_equals_rank_over_the_entries_filtered_in_python(
    backend: Backend,
    rows: list[tuple[str, list[str], list[str], str, int]],
    where: JournalFilter,
    direction: int,
    limit: int,
    threshold: float,
    excluded: set[int],
) -> None:
    cache, index = backend.journal()
    unit = cache.begin()
    entries = []
    for number, (when, tags, projects, vector, axis) in enumerate(rows, start=1):
        entry = JournalEntry(
            id=number,
            timestamp=when,
            content=f"entry {number}",
            importance=5,
            tags=tuple(tags),
            related_projects=tuple(projects),
        )
        entries.append(entry)
        unit.put(entry)
        if vector != "none":
            unit.put(
                EntryVector(
                    key=str(number),
                    embedder="other" if vector == "other-embedder" else "hand",
                    digest=text_digest("old text" if vector == "stale" else entry.content),
                    embedding=DIRECTIONS[axis].tobytes(),
                )
            )
    cache.commit(unit)
    since = where.since(NOW)
    exclude = {str(n) for n in excluded}
    passing = [e for e in entries if where.accepts(e, since) and str(e.id) not in exclude]
    passing.sort(key=lambda e: (e.timestamp, e.id), reverse=True)
    query = DIRECTIONS[direction]

    found = index.search(query, where.for_index(NOW, exclude), limit=limit, threshold=threshold)
    expected = index.rank(query, [str(e.id) for e in passing], limit=limit, threshold=threshold)
    assert found == expected


def test_filters_reach_the_index(backend: Backend) -> None:
    cache, index = backend.journal()
    unit = cache.begin()
    for number, (when, tags, projects) in enumerate(
        [
            (TIMES[0], ("Bees",), ("Farm",)),
            (TIMES[2], ("honey", "BEES"), ()),
            (TIMES[2], (), ("farm",)),
            (TIMES[1], ("garden",), ("Orchard",)),
        ],
        start=1,
    ):
        entry = JournalEntry(
            id=number,
            timestamp=when,
            content=f"entry {number}",
            importance=5,
            tags=tags,
            related_projects=projects,
        )
        unit.put(entry)
        if number != 4:
            vector = EntryVector(
                key=str(number),
                embedder="hand",
                digest=text_digest(entry.content),
                embedding=DIRECTIONS[0].tobytes(),
            )
            unit.put(vector)
    cache.commit(unit)
    query = DIRECTIONS[0]

    def keys(where: JournalFilter) -> tuple[list[str], list[str]]:
        found = index.search(query, where.for_index(NOW), limit=10, threshold=0.5)
        return [h.key for h in found.hits], found.unembedded

    assert keys(JournalFilter()) == (["3", "2", "1"], ["4"])  # ties newest first
    assert keys(JournalFilter(tags=("bees",))) == (["2", "1"], [])
    assert keys(JournalFilter(tags=("bees", "HONEY"))) == (["2"], [])
    assert keys(JournalFilter(tags=("garden", "honey"), any_tag=True)) == (["2"], ["4"])
    assert keys(JournalFilter(project="FARM")) == (["3", "1"], [])
    assert keys(JournalFilter(days_back=10)) == (["3", "2"], ["4"])
    # An entry re-filed under other tags leaves the old tags' results.
    commit = cache.begin()
    commit.put(
        JournalEntry(id=2, timestamp=TIMES[2], content="entry 2", importance=7, tags=("wasps",))
    )
    cache.commit(commit)
    assert keys(JournalFilter(tags=("bees",))) == (["1"], [])
    assert keys(JournalFilter(tags=("wasps",))) == (["2"], [])


def test_search_journal_through_the_index_sees_uncommitted_writes(backend: Backend) -> None:
    embedder = HashingEmbedder(64)
    cache, index = backend.journal(embedder.name)
    texts = [
        "bees swarmed in the orchard",
        "honey harvest at the farm",
        "the bees came back to the hive",
        "clock repairs in town",
        "more bees near the garden",
        "bees and honey and wax",
    ]
    unit = cache.begin()
    for number, text in enumerate(texts, start=1):
        tags = ("bees",) if "bees" in text else ()
        unit.put(
            JournalEntry(
                id=number, timestamp=TIMES[number % 3], content=text, importance=5, tags=tags
            )
        )
    cache.commit(unit)

    async def store_some() -> None:
        unit = cache.begin()
        await embed_pending_entries(unit, index, embedder, batch=4)
        cache.commit(unit)

    asyncio.run(store_some())
    # The unit deletes one stored entry, rewrites another and adds one, uncommitted.
    unit = cache.begin()
    unit.delete(JournalEntry, "1")
    unit.put(JournalEntry(id=3, timestamp=TIMES[2], content="no insects", importance=5))
    unit.put(
        JournalEntry(
            id=7, timestamp=TIMES[2], content="bees everywhere", importance=5, tags=("Bees",)
        )
    )
    for where in (JournalFilter(), JournalFilter(tags=("BEES",)), JournalFilter(days_back=3)):
        indexed = asyncio.run(
            search_journal(
                unit, NOW, "bees", where, limit=3, meaning=SemanticJournal(embedder, index, -1.0)
            )
        )
        every = asyncio.run(
            search_journal(
                unit, NOW, "bees", where, limit=3, meaning=SemanticJournal(embedder, None, -1.0)
            )
        )
        assert [e.id for e in indexed.entries] == [e.id for e in every.entries]
        assert indexed.scores == pytest.approx(every.scores, abs=1e-6)
        assert indexed.total_matches == every.total_matches
        assert 1 not in [e.id for e in indexed.entries]


def test_search_survives_many_refiled_and_deleted_entries(backend: Backend) -> None:
    cache, index = backend.journal()
    unit = cache.begin()
    for number in range(1, 201):
        entry = JournalEntry(
            id=number, timestamp=TIMES[number % 3], content=f"entry {number}", importance=5
        )
        unit.put(entry)
        unit.put(
            EntryVector(
                key=str(number),
                embedder="hand",
                digest=text_digest(entry.content),
                embedding=DIRECTIONS[number % len(DIRECTIONS)].tobytes(),
            )
        )
    cache.commit(unit)
    # Re-file 150 entries under a tag (their old rows die) and delete 30 others.
    unit = cache.begin()
    for number in range(1, 151):
        unit.put(
            JournalEntry(
                id=number,
                timestamp=TIMES[number % 3],
                content=f"entry {number}",
                importance=5,
                tags=("Moved",),
            )
        )
    for number in range(171, 201):
        unit.delete(JournalEntry, str(number))
    cache.commit(unit)
    alive = sorted(range(1, 171), key=lambda n: (TIMES[n % 3], n), reverse=True)
    for where, keys in (
        (JournalFilter(), [str(n) for n in alive]),
        (JournalFilter(tags=("moved",)), [str(n) for n in alive if n <= 150]),
    ):
        found = index.search(DIRECTIONS[0], where.for_index(NOW), limit=7, threshold=0.5)
        assert found == index.rank(DIRECTIONS[0], keys, limit=7, threshold=0.5)
        assert found.total == len([k for k in keys if int(k) % len(DIRECTIONS) in (0, 2)])
