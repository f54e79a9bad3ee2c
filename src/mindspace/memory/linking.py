"""Which memories the night has not linked yet, found in O(batch) at any age.

A-MEM linking processes memories oldest first, a few per dreaming tick. Asking the store
for "memories without a links record, oldest first" each tick is an anti-join that has
to step over every memory already linked, so linking a whole store grew quadratically.
:class:`UnlinkedMemories` instead keeps the unlinked ids in insertion order, built once
per process by streaming two id columns from the store and then kept in step with every
commit (this process's and, through the change feed, others') as a cache listener.

Neighbours are looked up ahead: a tick asks the index for the next
:data:`LOOKAHEAD` unlinked memories at once and later ticks take theirs from that
answer while no memory has been committed since (any memory write may be a new
neighbour, so it drops the answer). One index call for many memories costs far less
than one call per tick: the exact pass reads the whole matrix once per call, and past
32,768 memories the cells are read from main memory once per call whether 5 or 128
queries probe them (bench/RESULTS.md, "Balanced cells, round 4"). The links are the
same as looking each batch up in its own tick.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, cast

import numpy as np

from mindspace.clock import Clock, format_time
from mindspace.embeddings.port import Vectors
from mindspace.memory.index import MemoryIndex
from mindspace.memory.records import Memory, MemoryLink, MemoryLinks
from mindspace.memory.semantic import MemoryState
from mindspace.state.models import Record
from mindspace.state.semantic import SemanticIndex
from mindspace.state.unit import StateCache, Unit

__all__ = ["LOOKAHEAD", "UnlinkedMemories", "prune_orphaned_memory_links", "run_dreaming_tick"]

LOOKAHEAD = 128
"""Unlinked memories whose neighbours one index call finds at most.

At 100k memories a query through the cells cost 0.23 ms in calls of 32 and 0.15 ms in
calls of 128 (256: 0.14 ms); 128 keeps the tick that makes the call near 30 ms there."""


class _Listener:
    """Forwards one kind's committed writes (the cache tells keys, not kinds, on delete)."""

    def __init__(self, owner: UnlinkedMemories, kind: str) -> None:
        self._owner = owner
        self._kind = kind

    def applied(self, key: str, record: Record | None) -> None:
        self._owner.applied(self._kind, key, record)

    def reset(self) -> None:
        self._owner.reset()


class UnlinkedMemories:
    """The ids of memories with no A-MEM links record yet, oldest first.

    Args:
        cache: The assistant's state cache (its store is read once to build).
    """

    def __init__(self, cache: StateCache) -> None:
        self._cache = cache
        # An OrderedDict, not a dict: a dict iterated after many deletions from its front
        # steps over their holes, so finding the head would cost O(linked so far).
        self._ids: OrderedDict[str, None] | None = None
        # Neighbours found ahead (None: the memory has no usable vector), valid until the
        # next committed memory write; the span grows while such answers get used up.
        self._ahead: dict[str, list[MemoryLink] | None] = {}
        self._span = 0
        cache.listen(Memory.kind, _Listener(self, Memory.kind))
        cache.listen(MemoryLinks.kind, _Listener(self, MemoryLinks.kind))

    def _ensure(self) -> OrderedDict[str, None]:
        if self._ids is None:
            store, owner = self._cache.store, self._cache.assistant_id
            scanned = store.scan(owner, MemoryLinks.kind, ("memory_id",))
            linked = {str(r["memory_id"]) for r in scanned}
            self._ids = OrderedDict(
                (key, None)
                for r in store.scan(owner, Memory.kind, ("id",))
                if (key := str(r["id"])) not in linked
            )
        return self._ids

    def head(self, limit: int) -> list[str]:
        """The ``limit`` oldest unlinked memory ids."""
        found: list[str] = []
        for key in self._ensure():
            if len(found) == limit:
                break
            found.append(key)
        return found

    def __len__(self) -> int:
        return len(self._ensure())

    def discard(self, keys: list[str]) -> None:
        """Forget ``keys`` (found linked already)."""
        ids = self._ensure()
        for key in keys:
            ids.pop(key, None)

    def ahead(self, keys: list[str]) -> dict[str, list[MemoryLink] | None]:
        """The neighbours found ahead for those of ``keys`` still valid (taken out)."""
        return {key: self._ahead.pop(key) for key in keys if key in self._ahead}

    def look_ahead(self, batch: int) -> list[str]:
        """The unlinked ids to look neighbours up for now: ``batch`` or more, oldest first.

        The number doubles (up to :data:`LOOKAHEAD`) each time the previous answer was
        used up, and drops back to ``batch`` when a memory write invalidated one.
        """
        self._span = min(LOOKAHEAD, max(batch, 2 * self._span if self._span else batch))
        return self.head(max(batch, self._span))

    def remember(self, found: dict[str, list[MemoryLink] | None]) -> None:
        """Keep neighbours found ahead until a memory write makes them stale."""
        self._ahead.update(found)

    def applied(self, kind: str, key: str, record: Record | None) -> None:
        """A committed write of a memory or of a links record."""
        if kind == Memory.kind and self._ahead:
            self._ahead.clear()  # any memory written may be a new neighbour
            self._span = 0
        if self._ids is None:
            return  # built from the store on first use, which already holds it
        if kind == Memory.kind:
            if record is None:
                self._ids.pop(key, None)
            else:
                # Memories are almost only ever inserted; an edited one that was linked
                # already is dropped again by :meth:`discard` when the night reaches it.
                self._ids.setdefault(key, None)
        elif record is not None:
            self._ids.pop(key, None)

    def reset(self) -> None:
        """The cache was reloaded: rebuild on next use."""
        self._ids = None
        self._ahead.clear()
        self._span = 0


def run_dreaming_tick(
    unit: Unit,
    clock: Clock,
    index: SemanticIndex,
    threshold: float,
    unlinked: UnlinkedMemories,
    batch_size: int = 5,
) -> dict[str, Any]:
    """A-MEM links: for memories not yet processed, link those with similarity >= threshold.

    The oldest unlinked memories come from :class:`UnlinkedMemories` and their neighbours
    from one :meth:`SemanticIndex.nearest` call for up to :data:`LOOKAHEAD` of them (kept
    for the next ticks while no memory is written), so a tick's cost is the index's per
    memory: O(√N) rows through the embedded index's cells, O(log N) through HNSW.
    """
    keys = unlinked.head(batch_size)
    already = list(unit.get_many(MemoryLinks, keys))
    if already:  # edited after being linked: nothing to redo
        unlinked.discard(already)
        keys = [k for k in keys if k not in already]
    # Memories this unit wrote and has not committed are not in the index's answer.
    pending = any(kind == Memory.kind for kind, _ in unit.pending_changes())
    found = {} if pending else unlinked.ahead(keys)
    missing = [k for k in keys if k not in found]
    if missing:
        wanted = missing if pending else [*missing, *unlinked.look_ahead(batch_size)]
        found.update(_neighbours(unit, index, threshold, list(dict.fromkeys(wanted))))
        if not pending:
            unlinked.remember({k: v for k, v in found.items() if k not in keys})
    now = format_time(clock.now())
    created = processed = 0
    for key in keys:
        if key not in found:  # deleted since
            continue
        links = found[key] or []
        unit.put(MemoryLinks(memory_id=key, linked_to=tuple(links), processed_at=now))
        created += len(links)
        processed += 1
    remaining = max(0, len(unlinked) - processed)
    if not remaining and isinstance(index, MemoryIndex):
        index.release_cells()  # every memory linked: the cells' codes are not needed
    return {"processed": processed, "links_created": created, "remaining": remaining}


def _neighbours(
    unit: Unit, index: SemanticIndex, threshold: float, keys: list[str]
) -> dict[str, list[MemoryLink] | None]:
    """The links of each memory under ``keys`` that exists (None: it has no vector)."""
    memories = unit.get_many(Memory, keys)
    found: dict[str, list[MemoryLink] | None] = {}
    with_vector = []
    for key in keys:
        if key in memories:
            found[key] = None
            if memories[key].vector() is not None:
                with_vector.append(memories[key])
    if with_vector:
        neighbours = index.nearest(
            np.stack([cast("Vectors", m.vector()) for m in with_vector]),
            k=5,
            threshold=threshold,
            exclude=[m.id for m in with_vector],
        )
        for memory, near in zip(with_vector, neighbours, strict=True):
            found[memory.id] = [MemoryLink(id=n.key, score=n.score) for n in near]
    return found


def prune_orphaned_memory_links(unit: Unit, batch_size: int = 200) -> dict[str, Any]:
    """Drop links from or to memories that no longer exist.

    Costs nothing while no memory was deleted: a deleted memory is noted in
    :class:`MemoryState` ``forgotten`` when it is deleted. Only then are the links
    records of memories gone found by the store (an indexed anti-join) and the links
    records read (streamed, two fields) to drop links to the forgotten ones.
    """
    store = unit.cache.store
    owner = unit.cache.assistant_id
    state = unit.doc(MemoryState)
    forgotten = set(state.forgotten)
    if not forgotten:
        return {"removed_records": 0, "removed_links": 0}
    # Also links records whose memory went by another path (an import, a bulk delete).
    gone, _ = store.missing(owner, MemoryLinks.kind, Memory.kind, limit=batch_size)
    removed_records = removed_links = 0
    for links in unit.get_many(MemoryLinks, [*gone, *forgotten]).values():
        unit.delete(MemoryLinks, links.memory_id)
        removed_records += 1
        removed_links += len(links.linked_to)
    dropped = set(gone) | forgotten
    for row in store.scan(owner, MemoryLinks.kind, ("memory_id", "linked_to")):
        targets = {str(link["id"]) for link in row["linked_to"] or ()}
        if not targets & forgotten or row["memory_id"] in dropped:
            continue
        pointing = unit.get(MemoryLinks, str(row["memory_id"]))
        if pointing is None:
            continue
        alive = tuple(link for link in pointing.linked_to if link.id not in forgotten)
        removed_links += len(pointing.linked_to) - len(alive)
        unit.put(pointing.model_copy(update={"linked_to": alive}))
    unit.put_doc(state.model_copy(update={"forgotten": ()}))
    return {"removed_records": removed_records, "removed_links": removed_links}
