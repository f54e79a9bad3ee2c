"""Which memories the night has not linked yet, found in O(batch) at any age.

A-MEM linking processes memories oldest first, a few per dreaming tick. Asking the store
for "memories without a links record, oldest first" each tick is an anti-join that has
to step over every memory already linked, so linking a whole store grew quadratically.
:class:`UnlinkedMemories` instead keeps the unlinked ids in insertion order, built once
per process by streaming two id columns from the store and then kept in step with every
commit (this process's and, through the change feed, others') as a cache listener.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, cast

import numpy as np

from mindspace.clock import Clock, format_time
from mindspace.embeddings.port import Vectors
from mindspace.memory.records import Memory, MemoryLink, MemoryLinks
from mindspace.memory.semantic import MemoryState
from mindspace.state.models import Record
from mindspace.state.semantic import SemanticIndex
from mindspace.state.unit import StateCache, Unit

__all__ = ["UnlinkedMemories", "prune_orphaned_memory_links", "run_dreaming_tick"]


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

    def applied(self, kind: str, key: str, record: Record | None) -> None:
        """A committed write of a memory or of a links record."""
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


def run_dreaming_tick(
    unit: Unit,
    clock: Clock,
    index: SemanticIndex,
    threshold: float,
    unlinked: UnlinkedMemories,
    batch_size: int = 5,
) -> dict[str, Any]:
    """A-MEM links: for memories not yet processed, link those with similarity >= threshold.

    The oldest unlinked memories come from :class:`UnlinkedMemories` and the batch's
    neighbours from one :meth:`SemanticIndex.nearest` call, so a tick costs the same at
    1k memories as at 100k.
    """
    keys = unlinked.head(batch_size)
    already = list(unit.get_many(MemoryLinks, keys))
    if already:  # edited after being linked: nothing to redo
        unlinked.discard(already)
        keys = [k for k in keys if k not in already]
    found_memories = unit.get_many(Memory, keys)
    todo = [found_memories[k] for k in keys if k in found_memories]
    now = format_time(clock.now())
    created = 0
    with_vector = [m for m in todo if m.vector() is not None]
    found: dict[str, list[MemoryLink]] = {}
    if with_vector:
        neighbours = index.nearest(
            np.stack([cast("Vectors", m.vector()) for m in with_vector]),
            k=5,
            threshold=threshold,
            exclude=[m.id for m in with_vector],
        )
        for memory, near in zip(with_vector, neighbours, strict=True):
            found[memory.id] = [MemoryLink(id=n.key, score=n.score) for n in near]
    for memory in todo:
        links = found.get(memory.id, [])
        unit.put(MemoryLinks(memory_id=memory.id, linked_to=tuple(links), processed_at=now))
        created += len(links)
    return {
        "processed": len(todo),
        "links_created": created,
        "remaining": max(0, len(unlinked) - len(todo)),
    }


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
