"""The filter columns of journal entries as NumPy arrays, for the embedded journal index.

:class:`~mindspace.journal.vectors.EntryVectorIndex` keeps one row per committed entry:
its timestamp (UTF-8 bytes, so byte order is the text order ``JournalFilter`` compares),
its id, whether it is alive, and the row of its current stored vector (-1: none); tags
and projects as postings (casefolded name -> rows holding it). A semantic search is then
a few array masks over the rows, not a pass over the entries in Python.

Rows of deleted or re-filed entries (a change of timestamp, tags or projects) are only
flagged dead; the arrays are compacted once more than half the rows are dead. An entry
rewritten without a change to those columns (an importance upgrade, a consolidation
flag, an edit of its text) keeps its row.

Memory: per entry 8 (id) + 8 (vector row) + 1 (alive) + the timestamp's width (20 bytes
for the spec's format) in arrays, 8 bytes per tag or project in the postings, plus a
dict slot, a list slot and a tuple of what the row is filed under in Python
(``bench/journal_columns_memory.py`` measures it), on top of the vectors' ``4 * dim``.
"""

from __future__ import annotations

import sys
from array import array as machine_ints
from collections.abc import Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from mindspace.journal.records import JournalEntry
from mindspace.state.semantic import EntryFilter

__all__ = ["EntryColumns", "grow"]

G = TypeVar("G", bound=np.generic)
Rows = npt.NDArray[np.intp]
Mask = npt.NDArray[np.bool_]


def grow(array: npt.NDArray[G], needed: int) -> npt.NDArray[G]:
    """``array`` with room for ``needed`` rows: itself, or a zero-padded copy twice as long."""
    if needed <= array.shape[0]:
        return array
    bigger = np.zeros(max(needed, 2 * array.shape[0], 64), dtype=array.dtype)
    bigger[: array.shape[0]] = array
    return bigger


Filed = tuple[str, int, tuple[str, ...], tuple[str, ...]]


def _names(names: tuple[str, ...]) -> tuple[str, ...]:
    # Sorted distinct tuples, not frozensets: most entries have none, and the empty tuple
    # is shared, where each empty frozenset would cost ~200 bytes.
    # (interned: the same few names recur across thousands of entries.)
    return tuple(sorted({sys.intern(n.casefold()) for n in names})) if names else ()


def _filed(entry: JournalEntry) -> Filed:
    """What a row is filed under: the columns a filter reads."""
    return (entry.timestamp, entry.id, _names(entry.tags), _names(entry.related_projects))


class EntryColumns:
    """Alive flag, timestamp, id, vector row, tag and project postings per entry row."""

    def __init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self.size = 0
        """Rows in use (alive or dead)."""
        self.row_of: dict[str, int] = {}
        self.keys: list[str] = []
        self.times: npt.NDArray[np.bytes_] = np.zeros(0, dtype="S20")
        self.ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.vector_row: npt.NDArray[np.intp] = np.zeros(0, dtype=np.intp)
        self.alive: Mask = np.zeros(0, dtype=np.bool_)
        self._filed: list[Filed | None] = []
        # Postings as machine-int arrays: 8 bytes a row, not a list slot and an int object.
        self._tags: dict[str, machine_ints[int]] = {}
        self._projects: dict[str, machine_ints[int]] = {}
        self._dead = 0

    def put(self, key: str, entry: JournalEntry) -> int:
        """File ``entry`` under ``key``; its row (kept if the filter columns are unchanged)."""
        filed = _filed(entry)
        row = self.row_of.get(key)
        if row is not None:
            if self._filed[row] == filed:
                return row
            self.drop(key)
        return self._append(key, filed)

    def _append(self, key: str, filed: Filed) -> int:
        row = self.size
        stamp = filed[0].encode()
        if len(stamp) > self.times.dtype.itemsize:  # a longer timestamp: widen the column
            self.times = self.times.astype(f"S{len(stamp)}")
        self.times = grow(self.times, row + 1)
        self.ids = grow(self.ids, row + 1)
        self.vector_row = grow(self.vector_row, row + 1)
        self.alive = grow(self.alive, row + 1)
        self.times[row] = stamp
        self.ids[row] = filed[1]
        self.vector_row[row] = -1
        self.alive[row] = True
        for tag in filed[2]:
            self._tags.setdefault(tag, machine_ints("q")).append(row)
        for project in filed[3]:
            self._projects.setdefault(project, machine_ints("q")).append(row)
        self.row_of[key] = row
        self.keys.append(key)
        self._filed.append(filed)
        self.size = row + 1
        return row

    def drop(self, key: str) -> None:
        """Forget the entry under ``key`` (unknown keys are ignored)."""
        row = self.row_of.pop(key, None)
        if row is None:
            return
        self.alive[row] = False
        self.vector_row[row] = -1
        self._filed[row] = None
        self._dead += 1
        if self._dead > 64 and 2 * self._dead > self.size:
            self._compact()

    def _compact(self) -> None:
        # Postings are rebuilt from what each live row is filed under (no stale rows).
        live = [(self.keys[r], f, int(self.vector_row[r])) for r, f in enumerate(self._filed) if f]
        times = self.times.dtype
        self._clear()
        self.times = np.zeros(0, dtype=times)
        for key, filed, vector_row in live:
            # Not ``self.vector_row[self._append(...)] = ...``: Python reads the target
            # array before the call, and the call may replace it with a bigger one.
            row = self._append(key, filed)
            self.vector_row[row] = vector_row

    def matching(self, where: EntryFilter) -> Rows:
        """The live rows passing ``where`` (its ``exclude`` left out)."""
        size = self.size
        mask = self.alive[:size].copy()
        if where.since is not None:
            mask &= self.times[:size] >= where.since.encode()
        if where.project is not None:
            mask &= self._holding(self._projects, [where.project], every=False)
        if where.tags:
            mask &= self._holding(self._tags, where.tags, every=not where.any_tag)
        for key in where.exclude:
            row = self.row_of.get(key)
            if row is not None:
                mask[row] = False
        return np.flatnonzero(mask)

    def _holding(
        self, postings: dict[str, machine_ints[int]], names: Sequence[str], *, every: bool
    ) -> Mask:
        """Rows filed under every one (or any one) of ``names`` (casefolded already)."""
        result = np.full(self.size, every, dtype=np.bool_)
        for name in dict.fromkeys(names):
            holding = np.zeros(self.size, dtype=np.bool_)
            rows = postings.get(name)
            if rows is not None:
                holding[np.frombuffer(rows, dtype=np.int64)] = True
            result = result & holding if every else result | holding
        return result

    def newest_first(self, rows: Rows) -> Rows:
        """``rows`` newest first: by timestamp, then id, both descending."""
        return rows[np.lexsort((self.ids[rows], self.times[rows]))[::-1]]

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays (not the Python dicts and lists)."""
        arrays = (self.times, self.ids, self.vector_row, self.alive)
        return sum(int(a.nbytes) for a in arrays)
