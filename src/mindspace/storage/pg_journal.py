"""The journal side of the semantic-store port on PostgreSQL: an exact pgvector scan in SQL.

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
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, text

from mindspace.state.semantic import EntryFilter, Neighbour, Ranked, rank_candidates
from mindspace.storage.vectors import vector_literal

__all__ = ["PgJournalIndex"]

Transaction = Callable[[str], AbstractContextManager[Connection]]

_SCORES = text(
    "SELECT -(v.embedding <#> CAST(:query AS vector)) FROM "
    "unnest(CAST(:keys AS text[])) WITH ORDINALITY AS c(key, n) "
    "LEFT JOIN journal_entries e ON e.assistant_id = :a AND e.key = c.key "
    "LEFT JOIN journal_vectors v ON v.assistant_id = :a AND v.key = c.key "
    "AND v.embedder = :e AND v.digest = md5(e.content) "
    "AND vector_dims(v.embedding) = :dim ORDER BY c.n"
)
_CANDIDATES = (
    # Each vector is scored where it is read, so only (key, digest, score) reach the join:
    # joining the vectors themselves (1 kB each) spilled the hash to disk at 100k entries.
    "WITH v AS MATERIALIZED (SELECT key, digest, -(embedding <#> CAST(:query AS vector)) "
    "AS score FROM journal_vectors WHERE assistant_id = :a AND embedder = :e "
    "AND vector_dims(embedding) = :dim), "
    # A key has one vector: join on the key alone and check the digest once per entry
    # (in the join condition, a nested loop would hash every entry for every vector).
    'c AS MATERIALIZED (SELECT e.key, e.id, e.timestamp COLLATE "C" AS ts, '
    "CASE WHEN v.digest = md5(e.content) THEN v.score END AS score "
    "FROM journal_entries e LEFT JOIN v ON v.key = e.key "
    "WHERE e.assistant_id = :a AND e.key <> ALL(CAST(:exclude AS text[])) "
    'AND (CAST(:since AS text) IS NULL OR e.timestamp COLLATE "C" >= CAST(:since AS text)) '
    "AND (CAST(:project AS text) IS NULL OR EXISTS (SELECT 1 FROM "
    "json_array_elements_text(e.related_projects) p WHERE lower(p) = CAST(:project AS text))) "
    "AND (cardinality(CAST(:tags AS text[])) = 0 OR (SELECT count(DISTINCT lower(t)) FROM "
    "json_array_elements_text(e.tags) t WHERE lower(t) = ANY(CAST(:tags AS text[]))) "
    ">= CASE WHEN :any_tag THEN 1 ELSE cardinality(CAST(:tags AS text[])) END)), "
    # pgvector's inner product is single precision widened to double; compare with the
    # threshold rounded the same way, as rank_candidates compares float32s.
    "passing AS (SELECT * FROM c WHERE score >= CAST(CAST(:threshold AS real) AS float8)) "
)
_SEARCH = text(
    _CANDIDATES + "SELECT 0 AS part, key, score, row_number() OVER "
    "(ORDER BY score DESC, ts DESC, id DESC) AS n FROM "
    "(SELECT * FROM passing ORDER BY score DESC, ts DESC, id DESC LIMIT :limit) AS best "
    "UNION ALL SELECT 1, NULL, count(*), 0 FROM passing "
    "UNION ALL SELECT 2, key, NULL, row_number() OVER (ORDER BY ts DESC, id DESC) "
    "FROM c WHERE score IS NULL ORDER BY part, n"
)
_MISSING = text(
    "SELECT e.key FROM journal_entries e WHERE e.assistant_id = :a AND NOT EXISTS "
    "(SELECT 1 FROM journal_vectors v WHERE v.assistant_id = :a AND v.key = e.key "
    "AND v.embedder = :e AND v.digest = md5(e.content)) ORDER BY e.row_id LIMIT :limit"
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

    def rank(
        self,
        vector: npt.NDArray[np.float32],
        keys: Sequence[str],
        *,
        limit: int,
        threshold: float,
    ) -> Ranked:
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

    def search(
        self,
        vector: npt.NDArray[np.float32],
        where: EntryFilter,
        *,
        limit: int,
        threshold: float,
        exclude: Collection[str] = (),
    ) -> Ranked:
        """Rank the entries passing ``where`` by similarity: one statement, filter in SQL."""
        params = {
            "query": vector_literal(vector),
            "a": self.assistant_id,
            "e": self.embedder,
            "dim": int(np.asarray(vector).shape[0]),
            "exclude": list(exclude),
            "since": where.since,
            "project": None if where.project is None else where.project.lower(),
            "tags": list(dict.fromkeys(t.lower() for t in where.tags)),
            "any_tag": where.any_tag,
            "threshold": float(threshold),
            "limit": max(limit, 0),
        }
        hits: list[Neighbour] = []
        total = 0
        unembedded: list[str] = []
        with self._transaction("searching journal entries") as conn:
            # Before a new journal's first ANALYZE the planner guesses a few hundred rows
            # on each side and nests loops over the scored vectors: quadratic (50 ms at
            # 1,000 entries). Every row is read anyway, so hash joins are never worse.
            conn.exec_driver_sql("SET LOCAL enable_nestloop = off")
            for part, key, score, _ in conn.execute(_SEARCH, params):
                if part == 0:
                    hits.append(Neighbour(str(key), float(np.float32(score))))
                elif part == 1:
                    total = int(score)
                else:
                    unembedded.append(str(key))
        return Ranked(hits, total, unembedded)

    def unembedded(self, *, limit: int) -> list[str]:
        """Up to ``limit`` keys of entries without a current vector, oldest first."""
        if limit <= 0:
            return []
        params = {"a": self.assistant_id, "e": self.embedder, "limit": limit}
        with self._transaction("finding journal entries to embed") as conn:
            return [str(k) for k in conn.execute(_MISSING, params).scalars()]

    def orphans(self, *, limit: int) -> list[str]:
        """Up to ``limit`` keys of stored vectors whose entry no longer exists."""
        if limit <= 0:
            return []
        with self._transaction("finding vectors of deleted journal entries") as conn:
            found = conn.execute(_ORPHANS, {"a": self.assistant_id, "limit": limit})
            return [str(k) for k in found.scalars()]
