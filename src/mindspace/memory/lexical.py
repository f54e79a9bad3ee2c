"""An incremental BM25 index: adds and deletes apply in place, queries score with NumPy.

Static BM25 libraries rebuild their matrices to add a document, which is too slow for
memories that arrive a few at a time while queries keep coming. Here each term keeps a
growing posting list; a query gathers the postings of its terms and scores them in a
few vectorised operations (Okapi BM25, Lucene's idf, k1=0.9, b=0.4). Terms come from
:func:`mindspace.text.tokenize`, the analysis journal search shares.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

# ``tokenize`` is re-exported: memory.semantic and evaluation import it from here.
from mindspace.text import STOPWORDS, tokenize

__all__ = ["K1", "STOPWORDS", "B", "LexicalIndex", "tokenize"]


K1 = 0.9
B = 0.4
"""BM25 parameters (PostgreSQL's search uses the same). Chosen by leave-one-conversation-out
cross-validation on LoCoMo's dev split (bench/RESULTS.md, "Recall round 2"): memories are
short turns, so a term's repetition saturates sooner and length matters less than with
the usual 1.2-1.5 / 0.75 tuned for documents."""

_CACHED_POSTINGS = 2_048
"""Terms with at least this many live postings keep their scores between writes."""


class _Postings:
    """One term's rows and term frequencies, packed (4 + 2 bytes a posting, not ~70)."""

    __slots__ = ("cached", "live", "rows", "tfs")

    def __init__(self) -> None:
        self.rows = array("i")
        self.tfs = array("H")
        self.cached: tuple[int, npt.NDArray[np.int32], npt.NDArray[np.float32]] | None = None
        """(index version, live rows, BM25 contributions) of a long list, valid until a write."""
        self.live: _Live | None = None
        """The live postings of a long list as scoring reads them, valid until a removal."""

    def add(self, row: int, tf: int) -> None:
        self.rows.append(row)
        self.tfs.append(min(tf, 65_535))

    def arrays(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint16]]:
        # Views over the packed buffers: no copy per query.
        return (
            np.frombuffer(self.rows, dtype=np.int32),
            np.frombuffer(self.tfs, dtype=np.uint16),
        )

    @property
    def nbytes(self) -> int:
        return self.rows.buffer_info()[1] * 4 + self.tfs.buffer_info()[1] * 2


class LexicalIndex:
    """BM25 over documents identified by string keys."""

    def __init__(self, k1: float = K1, b: float = B) -> None:
        self.k1 = k1
        self.b = b
        self._row_of: dict[str, int] = {}
        self.keys: list[str] = []
        self._lengths = array("I")
        self._alive = bytearray()
        self._postings: dict[str, _Postings] = {}
        self._live = 0
        self._total_length = 0
        self._version = 0
        self._removals = 0
        self._arrays: tuple[int, npt.NDArray[np.bool_], npt.NDArray[np.uint32]] | None = None

    @property
    def nbytes(self) -> int:
        """Bytes held in the packed postings and per-row columns."""
        postings = sum(p.nbytes for p in self._postings.values())
        return postings + len(self._lengths) * 4 + len(self._alive)

    def __len__(self) -> int:
        return self._live

    def add(self, key: str, text: str) -> None:
        """Index ``text`` under ``key`` (replacing what was there)."""
        self.remove(key)
        self._version += 1
        terms = tokenize(text)
        row = len(self.keys)
        self.keys.append(key)
        self._row_of[key] = row
        self._lengths.append(len(terms))
        self._alive.append(1)
        self._live += 1
        self._total_length += len(terms)
        counts: dict[str, int] = {}
        for term in terms:
            counts[term] = counts.get(term, 0) + 1
        for term, tf in counts.items():
            postings = self._postings.get(term)
            if postings is None:
                postings = self._postings[sys.intern(term)] = _Postings()
            postings.add(row, tf)

    def remove(self, key: str) -> None:
        """Forget ``key`` (its postings stay but no longer count)."""
        row = self._row_of.pop(key, None)
        if row is None:
            return
        self._alive[row] = 0
        self._version += 1
        self._removals += 1
        self._live -= 1
        self._total_length -= self._lengths[row]

    def row(self, key: str) -> int | None:
        """The row of ``key``, if indexed."""
        return self._row_of.get(key)

    def scores(self, query: str) -> npt.NDArray[np.float32]:
        """BM25 score of every row for ``query`` (deleted rows score 0)."""
        n = len(self.keys)
        out = np.zeros(n, dtype=np.float32)
        if not self._live:
            return out
        alive, lengths = self._columns()
        average = max(self._total_length / self._live, 1e-9)
        for term in set(tokenize(query)):
            postings = self._postings.get(term)
            if postings is None:
                continue
            cached = postings.cached
            if cached is not None and cached[0] == self._version:
                rows, contribution = cached[1], cached[2]
            else:
                rows, contribution = self._contribution(postings, alive, lengths, average)
                if len(rows) >= _CACHED_POSTINGS:
                    # Frequent terms cost most; memories are written far less often than
                    # they are searched, so their scores are kept until the next write.
                    postings.cached = (self._version, rows, contribution)
            out[rows] += contribution  # a term's postings name each row once
        return out

    def _columns(self) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.uint32]]:
        """(alive, lengths) as arrays, copied once per write (no buffer export is held)."""
        if self._arrays is None or self._arrays[0] != self._version:
            alive = np.frombuffer(self._alive, dtype=np.uint8).astype(bool)
            lengths = np.frombuffer(self._lengths, dtype=np.uint32).copy()
            self._arrays = (self._version, alive, lengths)
        return self._arrays[1], self._arrays[2]

    def _contribution(
        self,
        postings: _Postings,
        alive: npt.NDArray[np.bool_],
        lengths: npt.NDArray[np.uint32],
        average: float,
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
        """The live rows of one term and each one's BM25 term score."""
        rows, tf, length = self._live_postings(postings, alive, lengths)
        if not len(rows):
            return rows, tf
        df = len(rows)
        idf = math.log(1.0 + (self._live - df + 0.5) / (df + 0.5))
        norm = self.k1 * (1.0 - self.b + self.b * length / average)
        contribution = (idf * tf * (self.k1 + 1.0) / (tf + norm)).astype(np.float32)
        return rows, contribution

    def _live_postings(
        self,
        postings: _Postings,
        alive: npt.NDArray[np.bool_],
        lengths: npt.NDArray[np.uint32],
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """A term's live rows with their term frequencies and lengths, as float32.

        Every write changes the average length and the idf, so a long list's scores
        are recomputed after each one; its live postings only change when a row is
        removed. An added row appends to the lists of its terms, so the live postings
        of a long list are kept and extended by the new tail (a 100k-memory store
        writes one memory a tick and searches right after).
        """
        rows, tfs = postings.arrays()
        kept = postings.live
        start = 0
        if kept is not None and kept.removals == self._removals and kept.covered <= len(rows):
            start = kept.covered
            if start == len(rows):
                return kept.rows, kept.tf, kept.length
        rows, tfs = rows[start:], tfs[start:]
        live = alive[rows]
        rows, tf = rows[live], tfs[live].astype(np.float32)
        length = lengths[rows].astype(np.float32)
        if start:
            assert kept is not None  # start > 0 only when extending what was kept
            rows = np.concatenate([kept.rows, rows])
            tf = np.concatenate([kept.tf, tf])
            length = np.concatenate([kept.length, length])
        if len(rows) >= _CACHED_POSTINGS:
            covered = len(postings.rows)
            postings.live = _Live(self._removals, covered, rows, tf, length)
        return rows, tf, length

    def add_many(self, items: Iterable[tuple[str, str]]) -> None:
        """Index several (key, text) pairs."""
        for key, text in items:
            self.add(key, text)


class _Live:
    """The live postings of one long list at a removal count, covering its first rows."""

    __slots__ = ("covered", "length", "removals", "rows", "tf")

    def __init__(
        self,
        removals: int,
        covered: int,
        rows: npt.NDArray[np.int32],
        tf: npt.NDArray[np.float32],
        length: npt.NDArray[np.float32],
    ) -> None:
        self.removals = removals
        self.covered = covered
        self.rows = rows
        self.tf = tf
        self.length = length
