"""Fixtures for editing and forgetting: an assistant on each backend that knows Alice well."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator

import numpy as np
import pytest

from mindspace import Assistant, ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.journal.records import EntryVector, text_digest
from mindspace.memory.records import Conversation, MemoryLink, MemoryLinks, WorkingMemory
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on


@pytest.fixture
def backend_store(backend_url: str) -> Iterator[SqlStore]:
    """A migrated store on SQLite, then on PostgreSQL."""
    store = SqlStore(backend_url)
    yield store
    store.close()


async def know_alice(assistant: Assistant) -> dict[str, str]:
    """Fill every tier with things about Alice (and a few about Bob); returns the ids."""
    call = assistant.call_tool
    ids: dict[str, str] = {}
    for who, text in (("Alice", "Alice likes dark ale"), ("Bob", "Bob sings at night")):
        stored = await call("store_memory", {"content": text, "source_entity": who})
        ids[f"memory_{who}"] = stored["memory_id"]
        entry = await call("add_journal_entry", {"content": f"{text}.", "source_entity": who})
        ids[f"entry_{who}"] = str(entry["entry_id"])
        await call("update_entity_observation", {"entity_id": who, "observation": f"{who} came"})
    plain = await call("store_memory", {"content": "The cellar floods in spring"})
    ids["memory_plain"] = plain["memory_id"]
    vector = np.ones(8, dtype=np.float32).tobytes()
    with assistant._core.transaction() as unit:
        now = assistant._core.now()
        # Links from Alice's memory, and from Bob's and the cellar's to hers.
        alice, bob, cellar = ids["memory_Alice"], ids["memory_Bob"], ids["memory_plain"]
        unit.put(
            MemoryLinks(
                memory_id=alice, linked_to=(MemoryLink(id=bob, score=0.5),), processed_at=now
            )
        )
        unit.put(
            MemoryLinks(
                memory_id=bob,
                linked_to=(MemoryLink(id=alice, score=0.5), MemoryLink(id=cellar, score=0.4)),
                processed_at=now,
            )
        )
        for who in ("Alice", "Bob"):
            key = ids[f"entry_{who}"]
            unit.put(
                EntryVector(key=key, embedder="hash", digest=text_digest(who), embedding=vector)
            )
        talk = {
            who: Conversation(topic="ale", started_at=now, last_message_at=now, messages=("hi",))
            for who in ("Alice", "Bob")
        }
        unit.put_doc(WorkingMemory(conversations=talk))
    return ids


@pytest.fixture
def on_backend(backend_store: SqlStore, clock: ManualClock, settings: Settings) -> Assistant:
    """The assistant 'barkeep' on each backend, with a hashing embedder."""
    return assistant_on(
        backend_store,
        "barkeep",
        llm=OfflineLLM(announce=False),
        clock=clock,
        settings=settings,
        embedder=HashingEmbedder(64),
    )


@pytest.fixture
async def alice(on_backend: Assistant) -> dict[str, str]:
    """The ids of what ``on_backend`` knows about Alice, Bob and the cellar."""
    return await know_alice(on_backend)


@pytest.fixture
def teach() -> Callable[[Assistant], Awaitable[dict[str, str]]]:
    """Fill an assistant's tiers with things about Alice and Bob (returns the ids)."""
    return know_alice
