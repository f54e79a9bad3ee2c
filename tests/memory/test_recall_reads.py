"""A recall reads each candidate memory from the store once, however many stages it has.

Memories are a lazy kind: the state cache keeps a bounded LRU of them and a miss is a
store query. A recall's stages (the query rules, fusion with dense and BM25 alone, the
page) read the same candidates; they share one reader, so a store of more memories than
the LRU holds is not asked for the same memory twice in one recall.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from mindspace import ManualClock
from mindspace.embeddings import HashingEmbedder
from mindspace.memory.records import Memory
from mindspace.offline import OfflineLLM
from mindspace.state import lazy as lazy_module
from mindspace.state.port import StoredRecord
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on


class CountingStore(SqlStore):
    """A SQLite store that counts how often each memory is loaded by key."""

    loaded: Counter[str]

    def load_keys(self, assistant_id: int, kind: str, keys: Sequence[str]) -> list[StoredRecord]:
        if kind == Memory.kind:
            self.loaded.update(keys)
        return super().load_keys(assistant_id, kind, keys)


TOWN = ["harbour", "market", "forge", "temple", "mill", "bridge"]


async def test_a_recall_reads_each_candidate_memory_once(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'memories.db'}"
    writer = SqlStore(url)
    assistant = assistant_on(
        writer, "keeper", llm=OfflineLLM(announce=False), clock=clock, embedder=HashingEmbedder(256)
    )
    for n in range(60):
        place = TOWN[n % len(TOWN)]
        said = {"content": f"Alice saw a lantern at the {place} on day {n}", "source_trust": 0.8}
        assert (await assistant.call_tool("store_memory", said))["success"] is True
    writer.close()
    # Another process, with a record cache far smaller than a recall's candidates: a
    # second read of a memory would be a second store query.
    monkeypatch.setattr(lazy_module, "LAZY_CACHE_SIZE", 4)
    store = CountingStore(url)
    store.loaded = Counter()
    reader = assistant_on(
        store, "keeper", llm=OfflineLLM(announce=False), clock=clock, embedder=HashingEmbedder(256)
    )

    result = await reader.call_tool(
        "recall_memories", {"query": "Where did Alice see a lantern at the forge?", "limit": 5}
    )

    found = [m["content"] for m in result["memories"]]
    assert len(found) == 5
    assert all("forge" in text for text in found[:3])
    assert len(store.loaded) > 10  # the candidates: the page and beyond
    assert max(store.loaded.values()) == 1
    store.close()
