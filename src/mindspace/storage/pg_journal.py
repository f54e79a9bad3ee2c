"""The journal side of the semantic-store port on PostgreSQL: an exact pgvector scan in SQL.

``journal_vectors.embedding`` is a pgvector ``vector`` on PostgreSQL
(:class:`~mindspace.storage.vectors.Embedding`). ``search_journal`` filters entries
first (tags, days, project), so a search ranks a known candidate list: one statement
joins the candidates (``unnest`` of keys and digests, with their order) to their
vectors and returns each one's inner product with the query (the cosine: vectors are
unit length), or NULL where no current vector is stored. Python then applies the same
ranking as the embedded index (:func:`mindspace.state.semantic.rank_candidates`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

import numpy as np
import numpy.typing as npt
from sqlalchemy import Connection, text

from mindspace.state.semantic import Ranked, rank_candidates
from mindspace.storage.vectors import vector_literal

__all__ = ["PgJournalIndex"]

Transaction = Callable[[str], AbstractContextManager[Connection]]

_SCORES = text(
    "SELECT -(v.embedding <#> CAST(:query AS vector)) FROM "
    "unnest(CAST(:keys AS text[]), CAST(:digests AS text[])) WITH ORDINALITY AS c(key, digest, n) "
    "LEFT JOIN journal_vectors v ON v.assistant_id = :a AND v.key = c.key "
    "AND v.embedder = :e AND v.digest = c.digest "
    "AND vector_dims(v.embedding) = :dim ORDER BY c.n"
)
_MISSING = text(
    "SELECT c.key FROM unnest(CAST(:keys AS text[]), CAST(:digests AS text[])) "
    "WITH ORDINALITY AS c(key, digest, n) WHERE NOT EXISTS (SELECT 1 FROM journal_vectors v "
    "WHERE v.assistant_id = :a AND v.key = c.key AND v.embedder = :e AND v.digest = c.digest) "
    "ORDER BY c.n LIMIT :limit"
)
_KEYS = text("SELECT key FROM journal_vectors WHERE assistant_id = :a AND embedder = :e")


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
        candidates: Sequence[tuple[str, str]],
        *,
        limit: int,
        threshold: float,
    ) -> Ranked:
        """Rank ``candidates`` by cosine similarity of their stored vectors to ``vector``."""
        keys = [k for k, _ in candidates]
        if not candidates:
            return Ranked([], 0, [])
        params = {
            "query": vector_literal(vector),
            "keys": keys,
            "digests": [d for _, d in candidates],
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

    def unembedded(self, candidates: Sequence[tuple[str, str]], *, limit: int) -> list[str]:
        """Up to ``limit`` keys of ``candidates`` without a current stored vector."""
        if not candidates or limit <= 0:
            return []
        params = {
            "keys": [k for k, _ in candidates],
            "digests": [d for _, d in candidates],
            "a": self.assistant_id,
            "e": self.embedder,
            "limit": limit,
        }
        with self._transaction("finding journal entries to embed") as conn:
            return [str(k) for k in conn.execute(_MISSING, params).scalars()]

    def stored_keys(self) -> set[str]:
        """Keys of every stored vector by this embedder."""
        with self._transaction("listing journal vectors") as conn:
            return {
                str(k)
                for k in conn.execute(_KEYS, {"a": self.assistant_id, "e": self.embedder}).scalars()
            }
