"""The whole engine on PostgreSQL: memories stored, recalled and linked in the database."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mindspace import Assistant, ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.storage.pg_semantic import PgSemanticIndex
from mindspace.testing.assistants import assistant_on

FACTS = [
    ("Alice prefers formal address", 0.9, ["people"]),
    ("The north gate closes at midnight", 0.8, ["world"]),
    ("Bob owes Alice ten gold coins", 0.3, ["people", "debts"]),
    ("The cellar holds twenty barrels of ale", 0.8, ["world", "cellar"]),
    ("Carol the smith forges a sword called Nightglass", 0.6, ["people"]),
]
PEOPLE = ["Alice", "Bob", "Carol"]
ITEMS = ["ale", "bread", "a sword", "rope", "lantern oil"]


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[SqlStore]:
    store = SqlStore(pg_url)
    yield store
    store.close()


@pytest.fixture
def pg_assistant(pg_store: SqlStore, clock: ManualClock, settings: Settings) -> Assistant:
    return assistant_on(
        pg_store,
        "innkeeper",
        llm=OfflineLLM(announce=False),
        clock=clock,
        settings=settings,
        embedder=HashingEmbedder(256),
    )


async def test_memories_are_stored_and_recalled_through_the_database(
    pg_assistant: Assistant,
) -> None:
    assert isinstance(pg_assistant._core.memory_index, PgSemanticIndex)
    for content, trust, tags in FACTS:
        result = await pg_assistant.call_tool(
            "store_memory", {"content": content, "source_trust": trust, "tags": tags}
        )
        assert result["success"] is True
    found = await pg_assistant.call_tool(
        "recall_memories", {"query": "When does the north gate close?", "limit": 3}
    )
    assert found["success"] is True
    assert found["memories"][0]["content"] == "The north gate closes at midnight"
    assert found["memories"][0]["metadata"]["tags"] == ["world"]
    tagged = await pg_assistant.call_tool(
        "recall_memories", {"query": "Alice", "tags": ["people", "debts"], "limit": 10}
    )
    assert [m["content"] for m in tagged["memories"]] == ["Bob owes Alice ten gold coins"]
    trusted = await pg_assistant.call_tool(
        "recall_memories", {"query": "Alice gold coins", "min_source_trust": 0.5, "limit": 10}
    )
    assert "Bob owes Alice ten gold coins" not in [m["content"] for m in trusted["memories"]]
    assert pg_assistant._core.memory_index.count() == len(FACTS)


async def test_a_night_consolidates_and_links_memories_in_the_database(
    pg_assistant: Assistant, clock: ManualClock
) -> None:
    for n in range(30):
        who = PEOPLE[n % len(PEOPLE)]
        result = await pg_assistant.call_tool(
            "add_journal_entry",
            {
                "content": f"{who} bought {ITEMS[n % len(ITEMS)]} for {n} coins",
                "source_type": "observation",
                "source_entity": who,
            },
        )
        assert result["success"] is True
    await pg_assistant.sleep("closing time")
    dreaming = []
    for _ in range(200):
        result = await pg_assistant.tick()
        assert result.sleep is not None
        clock.advance(minutes=1)
        ops = result.sleep.operations
        if "run_dreaming_tick" in ops:
            dreaming.append(ops["run_dreaming_tick"])
            if ops["run_dreaming_tick"]["remaining"] == 0:
                break
    store = pg_assistant._core.store
    assert isinstance(store, SqlStore)
    owner = pg_assistant._core.info.id
    memories = store.page(owner, "memory", offset=0, limit=1000, newest_first=False)
    links = store.page(owner, "memory_links", offset=0, limit=1000, newest_first=False)
    assert len(memories) == 30
    assert pg_assistant._core.memory_index.count() == 30
    assert sorted(x["memory_id"] for x in links) == sorted(m["id"] for m in memories)
    assert sum(d["links_created"] for d in dreaming) > 0
    ids = {m["id"] for m in memories}
    for record in links:
        linked = {link["id"] for link in record["linked_to"]}
        assert record["memory_id"] not in linked  # never linked to itself
        assert linked <= ids
    found = await pg_assistant.call_tool("recall_memories", {"query": "lantern oil", "limit": 3})
    assert found["memories"]
    assert all("lantern oil" in m["content"] for m in found["memories"])
