"""A column index over journal entries, so episodic scoring runs on whole arrays.

Per row (one entry) it keeps the timestamp (epoch seconds), the importance, the id and
an alive flag as NumPy arrays, and the sparse entry x word matrix: in coordinate form
(two growable int32 arrays, the row and the vocabulary id of each distinct lowercased
word of an entry) and, for all but a short tail of recent additions, sorted by word into
postings (a CSC form: the rows holding each word). Keyword overlap with a query is then
one ``bincount`` over the postings of the query's words (plus a scan of the tail), and
the score of every entry is a handful of array operations - no Python loop per entry.
Deleted rows are only flagged dead; the arrays are compacted once half the rows are dead.

One index is kept per :class:`~mindspace.state.StateCache` (that is, per assistant and
process) and follows the committed journal: it is stamped with the cache's version of the
``journal_entry`` topic; when a commit changes it, only the entries that changed are
re-indexed (found by identity, since the cache holds frozen records), and a reload of
the cache (another process wrote) rebuilds it. Uncommitted entries of a unit of work are
scored in a small overlay index built on the fly (see :func:`indexes_for`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mindspace.clock import parse_time
from mindspace.journal.columns import grow
from mindspace.journal.records import JournalEntry
from mindspace.state.unit import StateCache, Unit
from mindspace.text import whitespace_words

__all__ = ["EpisodicIndex", "RowScores", "indexes_for", "query_words"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


query_words = whitespace_words
"""The words the spec's keyword overlap compares (:func:`mindspace.text.whitespace_words`)."""


@dataclass(frozen=True)
class RowScores:
    """Scores of the best rows of one index, best first."""

    entries: list[JournalEntry]
    score: Floats
    recency: Floats
    importance: Floats
    relevance: Floats


class EpisodicIndex:
    """Arrays over journal entries for vectorised episodic scoring."""

    def __init__(self) -> None:
        self._records: list[JournalEntry | None] = []
        self._row_of: dict[str, int] = {}
        self._times: Floats = np.zeros(0, dtype=np.float64)
        self._importance: Floats = np.zeros(0, dtype=np.float64)
        self._ids: Ints = np.zeros(0, dtype=np.int64)
        self._alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=np.bool_)
        self._size = 0
        self._dead = 0
        self._nz_rows: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._nz_words: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._nnz = 0
        self._vocab: dict[str, int] = {}
        # Postings (the same matrix sorted by word) for the first _posted nonzeros; later
        # ones form a short tail that is scanned directly until postings are rebuilt.
        self._posted = 0
        self._post_rows: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._post_ptr: Ints = np.zeros(1, dtype=np.int64)

    @classmethod
    def build(cls, entries: Iterable[JournalEntry]) -> EpisodicIndex:
        """An index over ``entries``."""
        index = cls()
        index.add(list(entries))
        index._post()
        return index

    def __len__(self) -> int:
        return len(self._row_of)

    # -- maintenance ---------------------------------------------------------------------
    def add(self, entries: Sequence[JournalEntry]) -> None:
        """Index ``entries``, replacing any indexed entry with the same key."""
        if not entries:
            return
        self.remove([e.record_key() for e in entries if e.record_key() in self._row_of])
        start, count = self._size, len(entries)
        end = start + count
        self._times = grow(self._times, end)
        self._importance = grow(self._importance, end)
        self._ids = grow(self._ids, end)
        self._alive = grow(self._alive, end)
        self._times[start:end] = [parse_time(e.timestamp).timestamp() for e in entries]
        self._importance[start:end] = [e.importance for e in entries]
        self._ids[start:end] = [e.id for e in entries]
        self._alive[start:end] = True
        rows: list[int] = []
        words: list[int] = []
        vocab = self._vocab
        for offset, entry in enumerate(entries):
            ids = [vocab.setdefault(w, len(vocab)) for w in query_words(entry.content)]
            words.extend(ids)
            rows.extend([start + offset] * len(ids))
            self._row_of[entry.record_key()] = start + offset
        self._records.extend(entries)
        self._size = end
        nnz_end = self._nnz + len(words)
        self._nz_rows = grow(self._nz_rows, nnz_end)
        self._nz_words = grow(self._nz_words, nnz_end)
        self._nz_rows[self._nnz : nnz_end] = rows
        self._nz_words[self._nnz : nnz_end] = words
        self._nnz = nnz_end

    def remove(self, keys: Iterable[str]) -> None:
        """Drop the entries under ``keys`` (unknown keys are ignored)."""
        for key in keys:
            row = self._row_of.pop(key, None)
            if row is None:
                continue
            self._alive[row] = False
            self._records[row] = None
            self._dead += 1
        if self._dead > 64 and self._dead * 2 > self._size:
            self._compact()

    def sync(self, committed: Mapping[str, JournalEntry]) -> None:
        """Follow ``committed`` (the cache's entries by key): re-index what changed."""
        changed: list[JournalEntry] = []
        new_keys = 0
        for key, entry in committed.items():
            row = self._row_of.get(key)
            if row is None:
                new_keys += 1
                changed.append(entry)
            elif self._records[row] is not entry:
                changed.append(entry)
        if len(self._row_of) + new_keys != len(committed):
            self.remove([k for k in list(self._row_of) if k not in committed])
        rewritten: list[JournalEntry] = []
        for entry in changed:
            row = self._row_of.get(entry.record_key())
            old = None if row is None else self._records[row]
            if row is not None and old is not None and _same_text(old, entry):
                # An importance upgrade or a consolidation flag: no words to re-index.
                self._importance[row] = entry.importance
                self._records[row] = entry
            else:
                rewritten.append(entry)
        self.add(rewritten)

    def _compact(self) -> None:
        size = self._size
        alive = self._alive[:size]
        new_row = np.cumsum(alive) - 1
        keep_nz = alive[self._nz_rows[: self._nnz]]
        rows = new_row[self._nz_rows[: self._nnz][keep_nz]].astype(np.int32)
        words = self._nz_words[: self._nnz][keep_nz]
        self._times = self._times[:size][alive].copy()
        self._importance = self._importance[:size][alive].copy()
        self._ids = self._ids[:size][alive].copy()
        kept = [r for r in self._records if r is not None]
        self._records = list(kept)
        self._size = len(kept)
        self._alive = np.ones(self._size, dtype=np.bool_)
        self._row_of = {r.record_key(): i for i, r in enumerate(kept)}
        self._nz_rows, self._nz_words, self._nnz = rows, words.copy(), int(rows.shape[0])
        self._dead = 0
        self._posted = 0
        self._post_rows = np.zeros(0, dtype=np.int32)
        self._post_ptr = np.zeros(1, dtype=np.int64)

    def _post(self) -> None:
        """Sort the nonzeros by word into postings (a CSC form of the matrix)."""
        words = self._nz_words[: self._nnz]
        order = np.argsort(words, kind="stable")
        self._post_rows = self._nz_rows[: self._nnz][order]
        counts = np.bincount(words, minlength=len(self._vocab))
        self._post_ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        self._posted = self._nnz

    # -- scoring -------------------------------------------------------------------------
    def overlap(self, words: set[str]) -> Ints:
        """How many of ``words`` each row contains (the spec's ``len(query & content)``)."""
        wanted = [self._vocab[w] for w in words if w in self._vocab]
        if not wanted or self._nnz == 0:
            return np.zeros(self._size, dtype=np.int64)
        if self._nnz - self._posted > max(4096, self._nnz // 8):
            self._post()
        posted = len(self._post_ptr) - 1
        parts = [
            self._post_rows[self._post_ptr[w] : self._post_ptr[w + 1]] for w in wanted if w < posted
        ]
        if self._nnz > self._posted:  # the tail added since the postings were built
            mark = np.zeros(len(self._vocab), dtype=np.bool_)
            mark[wanted] = True
            tail = slice(self._posted, self._nnz)
            parts.append(self._nz_rows[tail][mark[self._nz_words[tail]]])
        rows = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
        return np.bincount(rows, minlength=self._size).astype(np.int64)

    def top(
        self,
        words: set[str],
        now: float,
        weights: tuple[float, float, float],
        decay_rate: float,
        limit: int,
        *,
        exclude: Iterable[str] = (),
    ) -> RowScores:
        """The ``limit`` best rows by the spec's weighted score, best first.

        Ties go to the newer entry (later timestamp, then higher id). Rows under the
        ``exclude`` keys (entries a unit of work has replaced or deleted) are skipped.
        """
        size = self._size
        alive = self._alive[:size].copy()
        for key in exclude:
            row = self._row_of.get(key)
            if row is not None:
                alive[row] = False
        a_recency, a_importance, a_relevance = weights
        total = a_recency + a_importance + a_relevance
        age_hours = np.maximum(now - self._times[:size], 0.0) / 3600.0
        recency = np.exp(-decay_rate * age_hours)
        importance = self._importance[:size] / 10.0
        relevance = self.overlap(words) / max(len(words), 1)
        score = (a_recency * recency + a_importance * importance + a_relevance * relevance) / total
        candidates = np.flatnonzero(alive)
        k = min(max(limit, 0), candidates.shape[0])
        if k == 0:
            empty = np.zeros(0, dtype=np.float64)
            return RowScores([], empty, empty, empty, empty)
        if k < candidates.shape[0]:
            kth = np.partition(score[candidates], candidates.shape[0] - k)[candidates.shape[0] - k]
            candidates = candidates[score[candidates] >= kth]
        order = np.lexsort((-self._ids[candidates], -self._times[candidates], -score[candidates]))
        best = candidates[order[:k]]
        chosen = [self._records[int(row)] for row in best]
        return RowScores(
            [e for e in chosen if e is not None],
            score[best],
            recency[best],
            importance[best],
            relevance[best],
        )


def _same_text(old: JournalEntry, new: JournalEntry) -> bool:
    return (old.content, old.timestamp) == (new.content, new.timestamp)


class _Stamped:
    """The committed index of a cache and the journal version it was brought up to."""

    def __init__(self, cache: StateCache) -> None:
        self.token = cache.version(JournalEntry.kind)
        self.index = EpisodicIndex.build(cache.records(JournalEntry).values())


def committed_index(cache: StateCache) -> EpisodicIndex:
    """The index over ``cache``'s committed entries, brought up to date."""
    token = cache.version(JournalEntry.kind)
    stamped = cache.derived(_Stamped)
    if stamped.token[0] != token[0]:
        stamped.token = token
        stamped.index = EpisodicIndex.build(cache.records(JournalEntry).values())
    elif stamped.token != token:
        stamped.index.sync(cache.records(JournalEntry))
        stamped.token = token
    return stamped.index


def indexes_for(unit: Unit) -> tuple[EpisodicIndex, EpisodicIndex, set[str]]:
    """What a unit of work sees: the committed index, an overlay index, keys to skip.

    The overlay indexes the entries the unit (or its parents) added or replaced and has
    not committed; the keys to skip are the committed rows they replace or delete.
    """
    overlay: list[JournalEntry] = []
    shadowed: set[str] = set()
    for (kind, key), entry in unit.pending_changes().items():
        if kind != JournalEntry.kind:
            continue
        shadowed.add(key)
        if isinstance(entry, JournalEntry):
            overlay.append(entry)
    return committed_index(unit.cache), EpisodicIndex.build(overlay), shadowed
