"""The second hop of memory search: memories linked (A-MEM) from the best hits.

Checked through ``recall_memories`` on both backends, and shown to come from
``memory_recall_link_discount`` by switching it off.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mindspace import Assistant, ManualClock, Settings
from mindspace.embeddings import HashingEmbedder
from mindspace.llm import OfflineLLM
from mindspace.memory.records import MemoryLink, MemoryLinks
from mindspace.memory.semantic import MemoryDraft, SemanticMemory
from mindspace.storage import SqlStore

HIT = "Melanie signed up for a pottery class at the community centre"
LINKED = "The bowls came out of the kiln with a deep blue glaze"
QUERY = "Which class did Melanie sign up for at the community centre?"
CHATTER = [
    MemoryDraft(content=text, source_entity=speaker, tags=("chat",))
    for month in range(1, 13)
    for speaker, text in (
        ("Joanna", f"My screenplay draft number {month} is finally done"),
        ("Nate", f"The turtles ate lettuce {month} times this week"),
    )
]


@pytest.fixture
def backend_store(backend_url: str) -> Iterator[SqlStore]:
    store = SqlStore(backend_url)
    yield store
    store.close()


def _open(store: SqlStore, clock: ManualClock, key: str, discount: float) -> Assistant:
    return Assistant.open(
        store,
        key,
        llm=OfflineLLM(announce=False),
        clock=clock,
        settings=Settings(memory_recall_link_discount=discount),
        embedder=HashingEmbedder(256),
    )


def _dreamt(assistant: Assistant) -> None:
    """The memories, with the link dreaming would make from the hit to its companion."""
    with assistant.core.transaction() as unit:
        memory = SemanticMemory(
            unit,
            assistant.clock,
            assistant.settings,
            assistant.embedder,
            assistant.core.memory_index,
        )
        hit, linked, *_ = memory.store_many(
            [
                MemoryDraft(content=HIT, source_entity="Melanie", tags=("art",)),
                MemoryDraft(content=LINKED, source_entity="Caroline", tags=("kiln",)),
                *CHATTER,
            ]
        )
        unit.put(
            MemoryLinks(
                memory_id=hit.id,
                linked_to=(MemoryLink(id=linked.id, score=0.8),),
                processed_at="2026-01-01T00:00:00Z",
            )
        )


async def _recall(assistant: Assistant, **extra: object) -> list[str]:
    result = await assistant.call_tool("recall_memories", {"query": QUERY, "limit": 3, **extra})
    assert result["success"] is True, result
    return [m["content"] for m in result["memories"]]


async def test_a_memory_linked_from_the_best_hit_comes_in_below_it(
    backend_store: SqlStore, clock: ManualClock
) -> None:
    hopping = _open(backend_store, clock, "hopping", discount=1.0)
    _dreamt(hopping)
    found = await _recall(hopping)
    # The companion shares no word with the question; it comes in through its link.
    assert found[:2] == [HIT, LINKED]
    # The search's filters still hold for a memory brought in this way.
    assert LINKED not in await _recall(hopping, tags=["art"])
    staying = _open(backend_store, clock, "staying", discount=-1.0)
    _dreamt(staying)
    plain = await _recall(staying)
    assert plain[0] == HIT
    assert LINKED not in plain
