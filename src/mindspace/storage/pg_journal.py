"""The journal side of the semantic-store port on PostgreSQL: pgvector in SQL, through indexes.

``journal_vectors.embedding`` is a pgvector ``vector`` on PostgreSQL
(:class:`~mindspace.storage.vectors.Embedding`). ``search_journal`` filters entries
first (tags, days, project), so a search ranks a known candidate list: one statement
joins the candidates (``unnest`` of their keys, with their order) to their entries and
vectors and returns each one's inner product with the query (the cosine: vectors are
unit length), or NULL where no current vector is stored (a vector is current while its
digest is ``md5`` of the entry's text, computed here in SQL). Python then applies the same
ranking as the embedded index (:func:`mindspace.state.semantic.rank_candidates`).

:meth:`PgJournalIndex.search` puts the filter itself in the SQL of that scan (no key list
crosses the wire): the timestamp compares byte-wise (``COLLATE "C"``, the order of
Python's ``str``), tags and projects through ``lower()`` (Python casefolds: the two
differ only for a few letters such as ``ß``), and the statement returns the top hits
(best first, ties newest first), the count reaching the cut-off and the entries with no
current vector.

That scan read every vector of the assistant (O(entries) a search). A search now first
counts its candidate window through the ``(assistant_id, timestamp)`` B-tree (schema
version 10), stopping past :data:`WALK_WINDOW`:

- a window of at most that many entries (a small journal, or the last few days of a
  large one) is scored exactly: the window's entries come from the B-tree, each one's
  vector from the ``(assistant_id, key)`` unique index, and whether that vector is
  current from the entry's ``vector_state`` (schema version 12,
  :mod:`~mindspace.storage.pg_journal_state`), so the cost follows the window;
- a larger window walks the partial HNSW index of the query's dimension
  (:func:`ensure_journal_hnsw`) for the :data:`COUNTED` nearest entries passing the
  filter (pgvector's iterative scan; each checked against its entry's filter and state),
  ranks those exactly and counts the matches among them: ``total`` is a floor at
  :data:`COUNTED` (docs/postgresql.md). The entries without a current vector come from
  the vector-state index, so the walk reads what it returns, not the journal;
- when the walk cannot answer (no HNSW index of that dimension, a pgvector older than
  0.8.0 without iterative scans, or fewer than :data:`COUNTED` vectors pass the filter
  within the walk's reach), the window is scored exactly: one scan of the assistant's
  vectors hash-joined to the filtered entries (the statement before version 10, which
  hashes every text and so does not depend on ``vector_state``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
from sqlalchemy import Connection, text

from mindspace.state.semantic import EntryFilter, Neighbour, Ranked, Vector, rank_candidates
from mindspace.storage.pg_journal_state import embedder_bounds, lacking, vector_state
from mindspace.storage.vectors import ensure_hnsw_index, vector_literal

__all__ = [
    "COUNTED",
    "EF_SEARCH",
    "EXACT_WINDOW",
    "WALK_WINDOW",
    "PgJournalIndex",
    "drop_journal_indexes",
    "ensure_journal_hnsw",
    "journal_hnsw_name",
]

EXACT_WINDOW = 4096
"""Candidate entries up to which a search scores every one exactly through the B-tree.

:data:`WALK_WINDOW` raises it when larger; with the walk off, a window larger than this
is scored by one scan of the assistant's vectors."""

COUNTED = 256
"""Nearest candidates a search through the HNSW index ranks and counts matches among."""

WALK_WINDOW: int | None = 16_384
"""Windows larger than this walk the HNSW index (None: never); smaller ones are exact.

Up to it, scoring the window's entries through the timestamp B-tree costs less than a
walk whose filter drops most of what it yields (the last days of a large journal)."""

EF_SEARCH = 1000
"""``hnsw.ef_search`` of the walk (pgvector's maximum): candidates kept per step.

At 100,000 entries with the hashing embedder (bench/RESULTS.md) 100 / 400 / 1000 found
0.82 / 0.87 / 0.95 of the exact top 10, in 12 / 14 / 25 ms against the scan's 181 ms."""

Transaction = Callable[[str], AbstractContextManager[Connection]]

_SCORES = text(
    "SELECT -(v.embedding <#> CAST(:query AS vector)) FROM "
    "unnest(CAST(:keys AS text[])) WITH ORDINALITY AS c(key, n) "
    "LEFT JOIN journal_entries e ON e.assistant_id = :a AND e.key = c.key "
    "LEFT JOIN journal_vectors v ON v.assistant_id = :a AND v.key = c.key "
    "AND v.embedder = :e AND v.digest = md5(e.content) "
    "AND vector_dims(v.embedding) = :dim ORDER BY c.n"
)
# The filter of ``journal_entries e`` (timestamp byte-wise, projects and tags lowered).
_FILTER = (
    "e.assistant_id = :a AND e.key <> ALL(CAST(:exclude AS text[])) "
    'AND (CAST(:since AS text) IS NULL OR e.timestamp COLLATE "C" >= CAST(:since AS text)) '
    "AND (CAST(:project AS text) IS NULL OR EXISTS (SELECT 1 FROM "
    "json_array_elements_text(e.related_projects) p WHERE lower(p) = CAST(:project AS text))) "
    "AND (cardinality(CAST(:tags AS text[])) = 0 OR (SELECT count(DISTINCT lower(t)) FROM "
    "json_array_elements_text(e.tags) t WHERE lower(t) = ANY(CAST(:tags AS text[]))) "
    ">= CASE WHEN :any_tag THEN 1 ELSE cardinality(CAST(:tags AS text[])) END)"
)
# How many entries the window holds, up to :cap (an index-only range of the B-tree), and
# whether the walk can run: the HNSW index of the dimension exists and pgvector has
# iterative scans (0.8.0).
_WINDOW = text(
    "SELECT count(*), bool_and(to_regclass(CAST(:hnsw AS text)) IS NOT NULL AND "
    "(SELECT string_to_array(extversion, '.')::int[] >= '{0,8}' FROM pg_extension "
    "WHERE extname = 'vector')) FROM (SELECT 1 FROM journal_entries e WHERE e.assistant_id = :a "
    'AND (CAST(:since AS text) IS NULL OR e.timestamp COLLATE "C" >= CAST(:since AS text)) '
    "LIMIT :cap) w"
)
_RESULT = (
    # pgvector's inner product is single precision widened to double; compare with the
    # threshold rounded the same way, as rank_candidates compares float32s.
    "passing AS (SELECT * FROM c WHERE score >= CAST(CAST(:threshold AS real) AS float8)) "
    "SELECT 0 AS part, key, score, row_number() OVER "
    "(ORDER BY score DESC, ts DESC, id DESC) AS n FROM "
    "(SELECT * FROM passing ORDER BY score DESC, ts DESC, id DESC LIMIT :limit) AS best "
    "UNION ALL SELECT 1, NULL, count(*), 0 FROM passing "
)
_UNEMBEDDED = (
    "UNION ALL SELECT 2, key, NULL, row_number() OVER (ORDER BY ts DESC, id DESC) "
    "FROM c WHERE score IS NULL ORDER BY part, n"
)
# A large window, exactly: every vector of the assistant scored in one scan, hash-joined
# to the filtered entries (main's statement before version 10).
_SCAN_SEARCH = text(
    # Each vector is scored where it is read, so only (key, digest, score) reach the join:
    # joining the vectors themselves (1 kB each) spilled the hash to disk at 100k entries.
    "WITH v AS MATERIALIZED (SELECT key, digest, -(embedding <#> CAST(:query AS vector)) "
    "AS score FROM journal_vectors WHERE assistant_id = :a AND embedder = :e "
    "AND vector_dims(embedding) = :dim), "
    # A key has one vector: join on the key alone and check the digest once per entry.
    'c AS MATERIALIZED (SELECT e.key, e.id, e.timestamp COLLATE "C" AS ts, '
    "CASE WHEN v.digest = md5(e.content) THEN v.score END AS score "
    f"FROM journal_entries e LEFT JOIN v ON v.key = e.key WHERE {_FILTER}), "
    + _RESULT
    + _UNEMBEDDED
)
# A window, exactly: each candidate's vector is one probe of the unique key index, and
# whether it is current is the entry's own ``vector_state`` (schema version 12).
_WINDOW_SEARCH = text(
    'WITH c AS MATERIALIZED (SELECT e.key, e.id, e.timestamp COLLATE "C" AS ts, s.score '
    "FROM journal_entries e LEFT JOIN LATERAL (SELECT "
    "-(v.embedding <#> CAST(:query AS vector)) AS score FROM journal_vectors v "
    "WHERE v.assistant_id = :a AND v.key = e.key AND e.vector_state = :state) s ON true "
    f"WHERE {_FILTER}), " + _RESULT + _UNEMBEDDED
)


def _nearest_search(dim: int) -> str:
    """A large window: the :data:`COUNTED` nearest through the HNSW index of ``dim``."""
    dim = int(dim)
    distance = f"(v.embedding::vector({dim})) <=> CAST(:query AS vector({dim}))"
    return (
        # The index scan drives: each vector it yields is checked against its entry.
        "WITH near AS MATERIALIZED (SELECT v.key, "
        "-(v.embedding <#> CAST(:query AS vector)) AS score FROM journal_vectors v "
        f"WHERE v.assistant_id = :a AND v.embedder = :e AND vector_dims(v.embedding) = {dim} "
        "AND EXISTS (SELECT 1 FROM journal_entries e WHERE e.key = v.key "
        f"AND e.vector_state = :state AND {_FILTER}) "
        f"ORDER BY {distance} LIMIT :counted), "
        'c AS MATERIALIZED (SELECT n.key, e.id, e.timestamp COLLATE "C" AS ts, n.score '
        "FROM near n JOIN journal_entries e ON e.assistant_id = :a AND e.key = n.key), "
        + _RESULT
        + "UNION ALL SELECT 3, NULL, count(*), 0 FROM near "
        # The entries to embed come from the vector-state index: O(those entries).
        + "UNION ALL SELECT 2, e.key, NULL, row_number() OVER "
        '(ORDER BY e.timestamp COLLATE "C" DESC, e.id DESC) FROM journal_entries e '
        f"WHERE {_FILTER} AND {lacking()} ORDER BY part, n"
    )


_MISSING = text(
    f"SELECT e.key FROM journal_entries e WHERE e.assistant_id = :a AND {lacking(any_dims=True)} "
    "ORDER BY e.row_id LIMIT :limit"
)
_ORPHANS = text(
    "SELECT v.key FROM journal_vectors v WHERE v.assistant_id = :a AND NOT EXISTS "
    "(SELECT 1 FROM journal_entries e WHERE e.assistant_id = :a AND e.key = v.key) "
    "ORDER BY v.row_id LIMIT :limit"
)


class PgJournalIndex:
    """Ranks one assistant's journal entries by the vectors stored in PostgreSQL.

    Args:
        transaction: Opens a read transaction (the store's), given what it is for.
        assistant_id: The assistant whose entries are ranked.
        embedder: The embedder whose vectors are ranked.
    """

    def __init__(self, transaction: Transaction, assistant_id: int, embedder: str) -> None:
        self._transaction = transaction
        self.assistant_id = assistant_id
        self.embedder = embedder

    def rank(self, vector: Vector, keys: Sequence[str], *, limit: int, threshold: float) -> Ranked:
        """Rank the entries under ``keys`` by cosine similarity of their stored vectors."""
        if not keys:
            return Ranked([], 0, [])
        params = {
            "query": vector_literal(vector),
            "keys": list(keys),
            "a": self.assistant_id,
            "e": self.embedder,
            "dim": int(np.asarray(vector).shape[0]),
        }
        with self._transaction("ranking journal entries") as conn:
            found = conn.execute(_SCORES, params).scalars().all()
        scores = np.array([np.nan if s is None else s for s in found], dtype=np.float32)
        hits, total = rank_candidates(keys, scores, limit=limit, threshold=threshold)
        missing = [keys[i] for i in np.flatnonzero(np.isnan(scores)).tolist()]
        return Ranked(hits, total, missing)

    def search(self, vector: Vector, where: EntryFilter, *, limit: int, threshold: float) -> Ranked:
        """Rank the entries passing ``where`` by similarity: one statement, filter in SQL."""
        dim = int(np.asarray(vector).shape[0])
        params: dict[str, object] = {
            "query": vector_literal(vector),
            "a": self.assistant_id,
            "e": self.embedder,
            "dim": dim,
            "state": vector_state(self.embedder, dim),
            "counted": COUNTED,
            "exclude": sorted(where.exclude),
            "since": where.since,
            "project": None if where.project is None else where.project.lower(),
            "tags": list(dict.fromkeys(t.lower() for t in where.tags)),
            "any_tag": where.any_tag,
            "threshold": float(threshold),
            "limit": max(limit, 0),
        }
        with self._transaction("searching journal entries") as conn:
            # Plans for these values: a generic plan cannot drop the filters not asked
            # for, and would read every entry instead of the timestamp range.
            conn.exec_driver_sql("SET LOCAL plan_cache_mode = force_custom_plan")
            window, walkable = conn.execute(
                _WINDOW,
                {
                    "a": self.assistant_id,
                    "since": where.since,
                    "cap": max(EXACT_WINDOW, WALK_WINDOW or 0) + 1,
                    "hnsw": journal_hnsw_name(dim),
                },
            ).one()
            found = None
            if WALK_WINDOW is not None and window > max(WALK_WINDOW, EXACT_WINDOW) and walkable:
                found = self._walk(conn, params)
            if found is None:
                found = self._exact(conn, params, window <= max(EXACT_WINDOW, WALK_WINDOW or 0))
        return found

    @staticmethod
    def _walk(conn: Connection, params: dict[str, object]) -> Ranked | None:
        """The window through the HNSW index; None when it yields fewer than COUNTED.

        Fewer means the filter let through fewer vectors than the walk looks for, or
        the walk stopped early (``hnsw.max_scan_tuples``): either way the exact path
        answers, so below :data:`COUNTED` matches a search is exact.
        """
        conn.exec_driver_sql("SET LOCAL hnsw.iterative_scan = relaxed_order")
        conn.exec_driver_sql(f"SET LOCAL hnsw.ef_search = {int(EF_SEARCH)}")
        statement = text(_nearest_search(int(str(params["dim"]))))
        rows = conn.execute(statement, params).all()
        if any(row[0] == 3 and int(row[2]) < COUNTED for row in rows):
            return None
        return _ranked(rows)

    @staticmethod
    def _exact(conn: Connection, params: dict[str, object], by_window: bool) -> Ranked:
        """Every entry of the window scored: through the B-tree, or one scan of all vectors."""
        if by_window:
            return _ranked(conn.execute(_WINDOW_SEARCH, params).all())
        # Before a new journal's first ANALYZE the planner guesses a few hundred rows on
        # each side and nests loops over the scored vectors: quadratic. Every row is
        # read anyway, so hash joins are never worse.
        conn.exec_driver_sql("SET LOCAL enable_nestloop = off")
        return _ranked(conn.execute(_SCAN_SEARCH, params).all())

    def unembedded(self, *, limit: int) -> list[str]:
        """Up to ``limit`` keys of entries without a current vector, oldest first."""
        if limit <= 0:
            return []
        params = {"a": self.assistant_id, "limit": limit, **embedder_bounds(self.embedder)}
        with self._transaction("finding journal entries to embed") as conn:
            return [str(k) for k in conn.execute(_MISSING, params).scalars()]

    def orphans(self, *, limit: int) -> list[str]:
        """Up to ``limit`` keys of stored vectors whose entry no longer exists."""
        if limit <= 0:
            return []
        with self._transaction("finding vectors of deleted journal entries") as conn:
            found = conn.execute(_ORPHANS, {"a": self.assistant_id, "limit": limit})
            return [str(k) for k in found.scalars()]


def _ranked(rows: Sequence[Sequence[Any]]) -> Ranked:
    """A search statement's rows (hits, the total, entries to embed) as a :class:`Ranked`."""
    hits: list[Neighbour] = []
    total = 0
    unembedded: list[str] = []
    for row in rows:
        part, key, score = row[0], row[1], row[2]
        if part == 0:
            hits.append(Neighbour(str(key), float(np.float32(score))))
        elif part == 1:
            total = int(score)
        elif part == 2:
            unembedded.append(str(key))
    return Ranked(hits, total, unembedded)


def journal_hnsw_name(dim: int) -> str:
    """The name of the HNSW index over the journal vectors of dimension ``dim``."""
    return f"ix_journal_vectors_hnsw_{int(dim)}"


def ensure_journal_hnsw(connection: Connection, dim: int) -> bool:
    """Create the partial HNSW index of journal vectors of ``dim`` unless it exists.

    One index per dimension, as memories have
    (:func:`mindspace.storage.vectors.ensure_hnsw_index`).

    Returns:
        Whether it was created.
    """
    name = journal_hnsw_name(dim)
    return ensure_hnsw_index(connection, name, "journal_vectors", "embedding", dim)


def drop_journal_indexes(connection: Connection) -> None:
    """Drop the journal search indexes of schema version 10 (its downgrade)."""
    names = connection.execute(
        text(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'journal_vectors' "
            "AND indexname LIKE 'ix\\_journal\\_vectors\\_hnsw\\_%'"
        )
    ).scalars()
    for name in [*names, "ix_journal_entries_ts"]:
        connection.exec_driver_sql(f'DROP INDEX IF EXISTS "{name}"')
