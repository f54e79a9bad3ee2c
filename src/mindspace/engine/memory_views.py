"""Read models of the semantic memory, listed through the store rather than loaded whole.

Memories are a lazy kind (an old assistant holds 100k of them): a page costs one store
query plus reading its records by key, never a load of every memory. Only a page
filtered by trust or tags reads the whole kind, and then only the three small fields
the filter needs (streamed), never the vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mindspace.engine.core import EngineCore
from mindspace.memory.records import Memory, MemoryLinks

__all__ = ["MAX_GRAPH_NODES", "MemoryListing", "MemoryViews"]

MAX_GRAPH_NODES = 500


@dataclass(frozen=True)
class MemoryListing:
    """One page of memories, newest first, and how many match in all."""

    total: int
    memories: list[Memory]


class MemoryViews:
    """Pages, counts and the link graph of one assistant's memories.

    Args:
        core: The assistant's state and ports.
    """

    def __init__(self, core: EngineCore) -> None:
        self.core = core

    def count(self) -> int:
        """How many memories the assistant has."""
        return self.core.store.count(self.core.info.id, Memory.kind)

    def listing(
        self, *, offset: int = 0, limit: int = 20, min_trust: float = 0.0, tags: Sequence[str] = ()
    ) -> MemoryListing:
        """Memories newest first (by when they were stored), optionally filtered."""
        store, owner = self.core.store, self.core.info.id
        unit = self.core.read()
        if min_trust <= 0.0 and not tags:
            rows = store.page(owner, Memory.kind, offset=offset, limit=limit, newest_first=True)
            keys = [str(row["id"]) for row in rows]
            total = store.count(owner, Memory.kind)
        else:
            wanted = {t.casefold() for t in tags}
            matching = [
                str(row["id"])
                for row in store.scan(owner, Memory.kind, ("id", "source_trust", "tags"))
                if float(row["source_trust"]) >= min_trust
                and wanted <= {str(t).casefold() for t in row["tags"] or ()}
            ]
            matching.reverse()
            total = len(matching)
            keys = matching[offset : offset + limit]
        found = unit.get_many(Memory, keys)
        return MemoryListing(total, [found[k] for k in keys if k in found])

    def without_vector(self) -> int:
        """How many memories have no vector from the current embedder (found by words only)."""
        embedder = self.core.embedder
        if embedder is None:
            return self.count()
        rows = self.core.store.scan(self.core.info.id, Memory.kind, ("embedder",))
        return sum(1 for row in rows if row["embedder"] != embedder.name)

    def page(
        self, *, offset: int = 0, limit: int = 20, min_trust: float = 0.0, tags: Sequence[str] = ()
    ) -> dict[str, Any]:
        """A page of memories in the HTTP API's shape, without their vectors."""
        listed = self.listing(offset=offset, limit=limit, min_trust=min_trust, tags=tags)
        return {
            "success": True,
            "total": listed.total,
            "offset": offset,
            "limit": limit,
            "memories": [
                {"id": m.id, "content": m.content, "metadata": m.metadata()}
                for m in listed.memories
            ],
        }

    def graph(self) -> dict[str, Any]:
        """The A-MEM link graph of the newest linked memories (at most 500 nodes)."""
        store, owner = self.core.store, self.core.info.id
        unit = self.core.read()
        link_rows = store.page(
            owner, MemoryLinks.kind, offset=0, limit=MAX_GRAPH_NODES, newest_first=True
        )
        records = unit.get_many(MemoryLinks, [str(r["memory_id"]) for r in link_rows])
        wanted: list[str] = []
        for links in records.values():
            wanted.append(links.memory_id)
            wanted.extend(link.id for link in links.linked_to)
        if len(set(wanted)) < MAX_GRAPH_NODES:  # room left: the newest memories too
            newest = store.page(
                owner, Memory.kind, offset=0, limit=MAX_GRAPH_NODES, newest_first=True
            )
            wanted.extend(str(r["id"]) for r in newest)
        memories = unit.get_many(Memory, list(dict.fromkeys(wanted)))
        edges = [
            {"source": x.memory_id, "target": link.id, "score": link.score}
            for x in records.values()
            for link in x.linked_to
            if x.memory_id in memories and link.id in memories
        ]
        linked = {e["source"] for e in edges} | {e["target"] for e in edges}
        ordered = sorted(memories.values(), key=lambda m: (m.id not in linked, m.created_at))
        shown = ordered[:MAX_GRAPH_NODES]
        ids = {m.id for m in shown}
        return {
            "success": True,
            "nodes": [
                {
                    "id": m.id,
                    "content": m.content,
                    "importance": m.importance,
                    "source_entity": m.source_entity,
                    "tags": list(m.tags),
                    "linked": m.id in linked,
                }
                for m in shown
            ],
            "edges": [e for e in edges if e["source"] in ids and e["target"] in ids],
            "processed": store.count(owner, MemoryLinks.kind),
            "total_memories": store.count(owner, Memory.kind),
        }
