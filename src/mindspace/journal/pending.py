"""Where compacting finds its work: the journal entries still pending, by queue.

A sleep tick scores a handful of entries and moves a handful to semantic memory. Finding
them by listing and sorting every entry made each tick cost O(E) and a night O(E^2).
Instead, one :class:`PendingIndex` per :class:`~mindspace.state.unit.StateCache` (per
assistant and process) keeps three queues of the committed entries' keys:

- ``scoring``: heuristic scores the LLM has not given up on, ordered by
  ``(scoring_attempts, id)`` (:func:`~mindspace.journal.importance.score_pending_entries`);
- ``consolidation``: entries not yet moved to semantic memory (syntheses never move),
  by id;
- ``ready``: those of them whose importance is settled, by id (the ones that move
  unless the LLM is failing outright).

The index is a :class:`~mindspace.state.committed.CacheListener`: every committed write or
delete of an entry moves its key between queues in O(log n); a reload of the cache
(another process wrote) drops it, and the next use rebuilds it once from the cache. A
unit of work's own uncommitted entries are merged in at query time
(:func:`pending_entries`), so what a tick sees is exactly what listing every entry
through the unit would give - the same entries, in the same order, with the same count.
"""

from __future__ import annotations

import heapq
from collections.abc import Container, Iterable
from dataclasses import dataclass
from typing import Literal

from mindspace.journal.records import JournalEntry
from mindspace.state.models import Record
from mindspace.state.unit import StateCache, Unit

__all__ = ["MAX_SCORING_ATTEMPTS", "PendingIndex", "PendingView", "Queue", "pending_entries"]

MAX_SCORING_ATTEMPTS = 3
"""Scorings that fell back (each one question and one repair) before an entry keeps its
heuristic score for good."""

Queue = Literal["scoring", "consolidation", "ready"]
QUEUES: tuple[Queue, ...] = ("scoring", "consolidation", "ready")
_Order = tuple[int, ...]


def queue_order(queue: Queue, entry: JournalEntry) -> _Order | None:
    """Where ``entry`` sorts in ``queue``, or None when it is not pending there."""
    if queue == "scoring":
        pending = entry.importance_method == "heuristic"
        if pending and entry.scoring_attempts < MAX_SCORING_ATTEMPTS:
            return (entry.scoring_attempts, entry.id)
        return None
    if entry.consolidated or entry.is_synthesis:
        return None
    if queue == "ready" and not settled(entry):
        return None
    return (entry.id,)


def settled(entry: JournalEntry) -> bool:
    """Whether the entry's importance is final: scored by the LLM or by hand, or given up on."""
    return entry.importance_method != "heuristic" or entry.scoring_attempts >= MAX_SCORING_ATTEMPTS


class _Heap:
    """Keys in order: a binary heap with lazy deletion, peeked without being consumed.

    ``_order`` holds each live key's position; heap items whose order no longer matches
    are stale and dropped when met. When stale items outnumber live ones the heap is
    rebuilt, so every operation is O(log n) amortised.
    """

    def __init__(self) -> None:
        self._order: dict[str, _Order] = {}
        self._heap: list[tuple[_Order, str]] = []

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, key: object) -> bool:
        return key in self._order

    def put(self, key: str, order: _Order) -> None:
        if self._order.get(key) == order:
            return
        self._order[key] = order
        heapq.heappush(self._heap, (order, key))
        self._tidy()

    def discard(self, key: str) -> None:
        if self._order.pop(key, None) is not None:
            self._tidy()

    def first(self, limit: int, skip: Container[str]) -> list[tuple[_Order, str]]:
        """The first ``limit`` live keys (with their order) not in ``skip``, in order."""
        taken: list[tuple[_Order, str]] = []
        popped: list[tuple[_Order, str]] = []
        seen: set[str] = set()
        while self._heap and len(taken) < limit:
            order, key = heapq.heappop(self._heap)
            if self._order.get(key) != order or key in seen:
                continue  # stale (moved or removed since), or a second copy: dropped
            seen.add(key)
            popped.append((order, key))
            if key not in skip:
                taken.append((order, key))
        for item in popped:
            heapq.heappush(self._heap, item)
        return taken

    def _tidy(self) -> None:
        if len(self._heap) > 2 * len(self._order) + 64:
            self._heap = [(order, key) for key, order in self._order.items()]
            heapq.heapify(self._heap)


class PendingIndex:
    """The pending queues over one cache's committed journal entries (a cache listener).

    Use :func:`pending_entries`; it finds (or creates) the index of a unit's cache.

    Args:
        cache: The cache it follows (it starts listening to the cache's journal entries).
    """

    def __init__(self, cache: StateCache) -> None:
        self._queues: dict[Queue, _Heap] = {queue: _Heap() for queue in QUEUES}
        self._epoch: int | None = None  # the cache epoch built from; None: not built
        self.rebuilds = 0
        cache.listen(JournalEntry.kind, self)

    # -- CacheListener -------------------------------------------------------------------
    def applied(self, key: str, record: Record | None) -> None:
        """Move a committed entry (None: deleted) to the queues it now belongs to."""
        if self._epoch is None:
            return  # not built: the next use reads the cache, this write included
        for queue, heap in self._queues.items():
            order = queue_order(queue, record) if isinstance(record, JournalEntry) else None
            if order is None:
                heap.discard(key)
            else:
                heap.put(key, order)

    def reset(self) -> None:
        """The cache was reloaded: rebuild on next use."""
        self._epoch = None

    # -- reads ---------------------------------------------------------------------------
    def queue(self, cache: StateCache, queue: Queue) -> _Heap:
        """The committed queue, rebuilt first when the cache was reloaded since."""
        if self._epoch != cache.epoch:
            self._build(cache.records(JournalEntry).values())
            self._epoch = cache.epoch
        return self._queues[queue]

    def _build(self, entries: Iterable[JournalEntry]) -> None:
        self.rebuilds += 1
        self._queues = {queue: _Heap() for queue in QUEUES}
        for entry in entries:
            for queue, heap in self._queues.items():
                order = queue_order(queue, entry)
                if order is not None:
                    heap.put(entry.record_key(), order)


def pending_index(cache: StateCache) -> PendingIndex:
    """The pending index of ``cache``, created (and listening) on first use."""
    return cache.derived(PendingIndex)


@dataclass(frozen=True)
class PendingView:
    """The head of a pending queue as a unit of work sees it.

    Attributes:
        entries: The first entries of the queue, in its order.
        total: How many entries the queue holds in all.
    """

    entries: list[JournalEntry]
    total: int


def pending_entries(unit: Unit, queue: Queue, limit: int) -> PendingView:
    """The first ``limit`` entries of ``queue`` and its size, as ``unit`` sees the journal.

    The same as filtering and sorting ``unit.all(JournalEntry)``, at the cost of the
    unit's own uncommitted entries plus ``limit`` heap steps.
    """
    committed = pending_index(unit.cache).queue(unit.cache, queue)
    overlay = unit.pending(JournalEntry)
    shadowed = sum(1 for key in overlay if key in committed)
    added: list[tuple[_Order, JournalEntry]] = []
    for entry in overlay.values():
        order = None if entry is None else queue_order(queue, entry)
        if entry is not None and order is not None:
            added.append((order, entry))
    records = unit.cache.records(JournalEntry)
    head = [(order, records[key]) for order, key in committed.first(max(0, limit), overlay)]
    merged = sorted(head + added, key=lambda item: item[0])[: max(0, limit)]
    return PendingView([entry for _, entry in merged], len(committed) - shadowed + len(added))
