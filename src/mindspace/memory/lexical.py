"""An incremental BM25 index: adds and deletes apply in place, queries score with NumPy.

Static BM25 libraries rebuild their matrices to add a document, which is too slow for
memories that arrive a few at a time while queries keep coming. Here each term keeps a
growing posting list; a query gathers the postings of its terms and scores them in a
few vectorised operations (Okapi BM25, Lucene's idf, k1=0.9, b=0.4). A term in a
large share of the rows is scored over every row instead, from its frequencies kept in
row order: the same numbers, without gathering and scattering most of the rows. Terms
come from :func:`mindspace.text.tokenize`, the analysis journal search shares.
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

_DENSE_SHARE = 0.25
"""A term with postings in at least this share of the rows is scored over every row:
contiguous arithmetic over all rows costs less than gathering and scattering most of
them (a frequent word of a 100k store; bench/RESULTS.md, round 5)."""

_DENSE_MIN_ROWS = 8_192
"""Rows below which every term is scored from its postings (the arrays are small)."""


class _Postings:
    """One term's rows and term frequencies, packed (4 + 2 bytes a posting, not ~70)."""

    __slots__ = ("cached", "dense", "live", "rows", "tfs")

    def __init__(self) -> None:
        self.rows = array("i")
        self.tfs = array("H")
        self.cached: tuple[int, npt.NDArray[np.int32], npt.NDArray[np.float32]] | None = None
        """(index version, live rows, BM25 contributions) of a long list, valid until a write."""
        self.live: _Live | None = None
        """The live postings of a long list as scoring reads them, valid until a removal."""
        self.dense: _Dense | None = None
        """A term in a large share of the rows: its frequency in every row, kept across writes."""

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
        self._arrays: _Columns | None = None
        self._dense: list[_Dense] = []
        """The frequencies kept for every row of frequent terms (a removal zeroes its row)."""

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
        for dense in self._dense:
            dense.forget(row)
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
        columns = self._columns()
        for term in set(tokenize(query)):
            postings = self._postings.get(term)
            if postings is None:
                continue
            cached = postings.cached
            rows: npt.NDArray[np.int32] | None
            if cached is not None and cached[0] == self._version:
                rows, contribution = cached[1], cached[2]
            else:
                rows, contribution = self._contribution(postings, columns)
                if rows is not None and len(rows) >= _CACHED_POSTINGS:
                    # Frequent terms cost most; memories are written far less often than
                    # they are searched, so their scores are kept until the next write
                    # (not those scored over every row: 4 bytes a row each, and cheap).
                    postings.cached = (self._version, rows, contribution)
            if rows is None:
                out += contribution  # every row; 0 where the term is not
            else:
                out[rows] += contribution  # a term's postings name each row once
        return out

    def _columns(self) -> _Columns:
        """The rows' columns as scoring reads them, made once per write."""
        if self._arrays is None or self._arrays.version != self._version:
            alive = np.frombuffer(self._alive, dtype=np.uint8).astype(bool)
            lengths = np.frombuffer(self._lengths, dtype=np.uint32).astype(np.float32)
            average = max(self._total_length / self._live, 1e-9) if self._live else 1e-9
            # Length normalisation depends on a row's length and the average only: worked
            # out once for every row, not once per query term.
            norm = self.k1 * (1.0 - self.b + self.b * lengths / average)
            self._arrays = _Columns(self._version, alive, norm)
        return self._arrays

    def _contribution(
        self, postings: _Postings, columns: _Columns
    ) -> tuple[npt.NDArray[np.int32] | None, npt.NDArray[np.float32]]:
        """The live rows of one term and each one's BM25 term score (rows None: every row)."""
        n = len(self.keys)
        dense = (
            n >= _DENSE_MIN_ROWS
            and len(postings.rows) >= _DENSE_SHARE * n
            and self.k1 * (1.0 - self.b) > 0  # so a row without the term scores exactly 0
        )
        if dense:
            postings.cached = None
            tf, df = self._dense_postings(postings, columns.alive)
            norm = columns.norm
            rows = None
        else:
            if postings.dense is not None:
                self._dense.remove(postings.dense)
                postings.dense = None
            rows, tf = self._live_postings(postings, columns.alive)
            if not len(rows):
                return rows, tf
            df = len(rows)
            norm = columns.norm[rows]
        idf = math.log(1.0 + (self._live - df + 0.5) / (df + 0.5))
        contribution = (idf * tf * (self.k1 + 1.0) / (tf + norm)).astype(np.float32)
        return rows, contribution

    def _live_postings(
        self, postings: _Postings, alive: npt.NDArray[np.bool_]
    ) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
        """A term's live rows with their term frequencies (as float32).

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
                return kept.rows, kept.tf
        rows, tfs = rows[start:], tfs[start:]
        live = alive[rows]
        rows, tf = rows[live], tfs[live].astype(np.float32)
        if start:
            assert kept is not None  # start > 0 only when extending what was kept
            rows = np.concatenate([kept.rows, rows])
            tf = np.concatenate([kept.tf, tf])
        if len(rows) >= _CACHED_POSTINGS:
            postings.live = _Live(self._removals, len(postings.rows), rows, tf)
        return rows, tf

    def _dense_postings(
        self, postings: _Postings, alive: npt.NDArray[np.bool_]
    ) -> tuple[npt.NDArray[np.float32], int]:
        """A frequent term's frequency in every row (0: absent or deleted), and its df.

        Kept between writes: an added row sets its own place (the array grows by an
        eighth when full) and a removal zeroes its row (:meth:`remove`), so a search
        right after a write reads it as it is.
        """
        postings.live = None
        kept = postings.dense
        if kept is None:
            kept = postings.dense = _Dense()
            self._dense.append(kept)
        rows, tfs = postings.arrays()
        n = len(self.keys)
        kept.grow(n)
        if kept.covered < len(rows):
            rows, tfs = rows[kept.covered :], tfs[kept.covered :]
            live = alive[rows]
            kept.tf[rows[live]] = tfs[live]
            kept.live += int(np.count_nonzero(live))
            kept.covered = len(postings.rows)
        return kept.tf[:n], kept.live

    def add_many(self, items: Iterable[tuple[str, str]]) -> None:
        """Index several (key, text) pairs."""
        for key, text in items:
            self.add(key, text)


class _Columns:
    """What scoring reads of every row at one index version."""

    __slots__ = ("alive", "norm", "version")

    def __init__(
        self, version: int, alive: npt.NDArray[np.bool_], norm: npt.NDArray[np.float32]
    ) -> None:
        self.version = version
        self.alive = alive
        self.norm = norm
        """BM25's length normalisation of each row, ``k1 * (1 - b + b * length / average)``."""


class _Live:
    """The live postings of one long list at a removal count, covering its first rows."""

    __slots__ = ("covered", "removals", "rows", "tf")

    def __init__(
        self,
        removals: int,
        covered: int,
        rows: npt.NDArray[np.int32],
        tf: npt.NDArray[np.float32],
    ) -> None:
        self.removals = removals
        self.covered = covered
        self.rows = rows
        self.tf = tf


class _Dense:
    """A frequent term's frequency in every row (0: absent or deleted), from its first postings."""

    __slots__ = ("covered", "live", "tf")

    def __init__(self) -> None:
        self.covered = 0
        self.live = 0
        self.tf = np.zeros(0, dtype=np.float32)

    def grow(self, rows: int) -> None:
        """Room for ``rows`` rows (the new ones 0), an eighth more when full: appends stay
        cheap without holding twice the rows."""
        if rows > len(self.tf):
            grown = np.zeros(max(rows, len(self.tf) + len(self.tf) // 8 + 1_024), np.float32)
            grown[: len(self.tf)] = self.tf
            self.tf = grown

    def forget(self, row: int) -> None:
        """A removed row no longer holds the term."""
        if row < len(self.tf) and self.tf[row] > 0:
            self.tf[row] = 0.0
            self.live -= 1
