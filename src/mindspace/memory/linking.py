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

from mindspace.memory.records import Memory, MemoryLinks
from mindspace.state.models import Record
from mindspace.state.unit import StateCache

__all__ = ["UnlinkedMemories"]


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
