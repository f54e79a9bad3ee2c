"""Semantic memory (tier 1) through its tools: store, recall, filters, two stages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from mindspace import Assistant
from mindspace.embeddings import HashingEmbedder
from mindspace.memory.records import Memory
from mindspace.memory.semantic import SemanticMemory
from mindspace.testing.inspect import stored_records

Snapshot = Callable[[], dict[str, list[tuple[Any, ...]]]]

FACTS = [
    ("Alice prefers formal address", 0.9, ["people"]),
    ("The north gate closes at midnight", 0.8, ["world"]),
    ("Bob owes Alice ten gold coins", 0.3, ["people", "debts"]),
    ("The cellar holds twenty barrels of ale", 0.8, ["world", "cellar"]),
    ("Carol the smith forges a sword called Nightglass", 0.6, ["people"]),
]


async def _store_facts(assistant: Assistant) -> None:
    for content, trust, tags in FACTS:
        result = await assistant.call_tool(
            "store_memory", {"content": content, "source_trust": trust, "tags": tags}
        )
        assert result["success"] is True


async def test_recall_ranks_best_first_with_scores_and_metadata(
    memory_assistant: Assistant,
) -> None:
    await _store_facts(memory_assistant)
    result = await memory_assistant.call_tool(
        "recall_memories", {"query": "When does the north gate close?", "limit": 3}
    )
    assert result["success"] is True
    memories = result["memories"]
    assert memories[0]["content"] == "The north gate closes at midnight"
    assert len(memories) == 1  # nothing else shares a word or any similarity with it
    assert memories[0]["metadata"]["source_trust"] == 0.8
    assert memories[0]["metadata"]["tags"] == ["world"]
    broad = await memory_assistant.call_tool("recall_memories", {"query": "Alice", "limit": 3})
    contents = [m["content"] for m in broad["memories"]]
    assert sorted(contents) == ["Alice prefers formal address", "Bob owes Alice ten gold coins"]
    scores = [m["score"] for m in broad["memories"]]
    assert scores == sorted(scores, reverse=True)


async def test_filters_by_trust_and_every_tag(memory_assistant: Assistant) -> None:
    await _store_facts(memory_assistant)
    trusted = await memory_assistant.call_tool(
        "recall_memories", {"query": "Alice gold coins", "min_source_trust": 0.5, "limit": 10}
    )
    assert all(m["metadata"]["source_trust"] >= 0.5 for m in trusted["memories"])
    assert "Bob owes Alice ten gold coins" not in [m["content"] for m in trusted["memories"]]
    tagged = await memory_assistant.call_tool(
        "recall_memories", {"query": "Alice", "tags": ["people", "debts"], "limit": 10}
    )
    assert [m["content"] for m in tagged["memories"]] == ["Bob owes Alice ten gold coins"]


async def test_a_rare_word_is_found_lexically(memory_assistant: Assistant) -> None:
    await _store_facts(memory_assistant)
    for n in range(40):
        await memory_assistant.call_tool(
            "store_memory", {"content": f"A traveller passed through the square on day {n}"}
        )
    result = await memory_assistant.call_tool(
        "recall_memories", {"query": "Nightglass", "limit": 1}
    )
    assert result["memories"][0]["content"].endswith("called Nightglass")


async def test_the_index_follows_deletes_and_survives_a_restart(
    memory_assistant: Assistant, make_assistant: Callable[..., Assistant]
) -> None:
    await _store_facts(memory_assistant)
    with memory_assistant._core.transaction() as unit:
        memory = SemanticMemory(
            unit,
            memory_assistant.clock,
            memory_assistant.settings,
            memory_assistant.embedder,
            memory_assistant._core.memory_index,
        )
        gate = next(m for m in stored_records(memory_assistant, Memory) if "gate" in m.content)
        memory.delete(gate.id)
    found = await memory_assistant.call_tool("recall_memories", {"query": "north gate midnight"})
    assert "The north gate closes at midnight" not in [m["content"] for m in found["memories"]]
    again = make_assistant("keeper", embedder=HashingEmbedder(256))
    reloaded = await again.call_tool("recall_memories", {"query": "barrels of ale", "limit": 1})
    assert reloaded["memories"][0]["content"] == "The cellar holds twenty barrels of ale"
    assert len(again._core.memory_index) == len(FACTS) - 1


async def test_memories_stored_earlier_in_the_same_unit_are_recalled(
    memory_assistant: Assistant,
) -> None:
    await _store_facts(memory_assistant)
    with memory_assistant._core.transaction() as unit:
        memory = SemanticMemory(
            unit,
            memory_assistant.clock,
            memory_assistant.settings,
            memory_assistant.embedder,
            memory_assistant._core.memory_index,
        )
        from mindspace.memory.semantic import MemoryDraft

        memory.store(MemoryDraft(content="The ferry to Eastport leaves at dawn"))
        found = memory.recall("ferry to Eastport", limit=2)
        assert found[0].memory.content == "The ferry to Eastport leaves at dawn"


async def test_two_stage_retrieval_applies_relevance_then_trust(
    memory_assistant: Assistant,
) -> None:
    await _store_facts(memory_assistant)
    unit = memory_assistant._core.read()
    memory = SemanticMemory(
        unit,
        memory_assistant.clock,
        memory_assistant.settings,
        memory_assistant.embedder,
        memory_assistant._core.memory_index,
    )
    query = "Bob owes Alice ten gold coins"
    loose = memory.retrieve_relevant([query], min_source_trust=0.0, threshold=0.7)
    assert [r.memory.content for r in loose] == [query]  # stage 1: only the relevant one
    strict = memory.retrieve_relevant([query], min_source_trust=0.5, threshold=0.7)
    assert strict == []  # stage 2: its source trust is 0.3


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("store_memory", {"content": ""}, "'content' is empty"),
        ("store_memory", {"content": "x" * 1_000_000}, "the limit is 4,000"),
        (
            "store_memory",
            {"content": "Alice is here", "source_trust": 1.5},
            "less than or equal to 1",
        ),
        (
            "store_memory",
            {"content": "Alice is here", "source_trust": -0.1},
            "greater than or equal",
        ),
        ("store_memory", {"content": "I poured Alice a drink"}, "reference assistant"),
        ("recall_memories", {"query": "ale", "limit": 0}, "greater than or equal to 1"),
        ("recall_memories", {"query": "ale", "limit": 10_000}, "less than or equal to 100"),
        ("recall_memories", {"query": "  "}, "'query' is empty"),
    ],
)
async def test_bad_memory_input_is_refused_and_nothing_is_stored(
    memory_assistant: Assistant, stored: Snapshot, tool: str, args: dict[str, Any], expected: str
) -> None:
    before = stored()
    result = await memory_assistant.call_tool(tool, args)
    assert result["success"] is False
    assert expected in result["error"]
    assert stored() == before


async def test_dense_search_matches_brute_force_and_reports_exact_similarity(
    memory_assistant: Assistant,
) -> None:
    # The index ranks on int8 codes (memory/quantized.py): its dense scores are within
    # 0.005 of float32, so its top 10 is brute force's up to ties closer than that, and
    # what recall_memories reports as relevance is the exact float32 similarity.
    rng = np.random.default_rng(7)
    words = ["ale", "gate", "sword", "dragon", "market", "river", "coin", "inn", "storm", "bread"]
    for n in range(150):
        text = " ".join(rng.choice(words, size=5)) + f" {n}"
        await memory_assistant.call_tool("store_memory", {"content": text})
    index = memory_assistant._core.memory_index
    memories = {m.id: m for m in stored_records(memory_assistant, Memory)}
    embedder = memory_assistant.embedder
    assert embedder is not None
    for query in ["ale and bread", "storm over the river", "dragon coin"]:
        vector = embedder.embed([query])[0]
        exact = {k: float(m.vector() @ vector) for k, m in memories.items()}  # type: ignore[operator]
        dense = index.dense_scores(vector)
        assert dense is not None
        for key, row in index._row_of.items():
            assert abs(float(dense[row]) - exact[key]) < 0.005
        ours = [index.keys[r] for r in index.top(dense, index.mask(), 10)]
        brute = sorted(exact, key=lambda k: -exact[k])[:10]
        tenth = exact[brute[-1]]
        for key in set(ours) ^ set(brute):
            assert abs(exact[key] - tenth) < 0.01  # only near-ties at the cut may swap
        recalled = await memory_assistant.call_tool("recall_memories", {"query": query})
        assert recalled["memories"]
        for hit in recalled["memories"]:
            if hit["relevance"] is not None:
                assert hit["relevance"] == round(exact[hit["id"]], 4)


async def test_vectors_of_another_embedder_are_not_compared(
    make_assistant: Callable[..., Assistant],
) -> None:
    old = make_assistant("switcher", embedder=HashingEmbedder(256))
    await old.call_tool("store_memory", {"content": "The ferry leaves at dawn"})

    class Renamed(HashingEmbedder):
        """Same size, different model: its vectors mean something else."""

        def __init__(self) -> None:
            super().__init__(256)
            self.name = "another-model"

    new = make_assistant("switcher", embedder=Renamed())
    await new.call_tool("store_memory", {"content": "Fresh bread at the bakery"})
    found = await new.call_tool("recall_memories", {"query": "ferry dawn", "limit": 2})
    by_content = {m["content"]: m for m in found["memories"]}
    assert by_content["The ferry leaves at dawn"]["relevance"] is None  # lexical only
    assert found["memories"][0]["content"] == "The ferry leaves at dawn"


async def test_tags_match_regardless_of_case(memory_assistant: Assistant) -> None:
    await memory_assistant.call_tool(
        "store_memory", {"content": "The mayor likes honey cakes", "tags": ["People"]}
    )
    found = await memory_assistant.call_tool(
        "recall_memories", {"query": "mayor", "tags": ["people"]}
    )
    assert [m["content"] for m in found["memories"]] == ["The mayor likes honey cakes"]


async def test_the_async_variants_answer_as_the_sync_ones(memory_assistant: Assistant) -> None:
    """arecall / aretrieve_relevant / astore embed off the loop and find the same."""
    from mindspace.memory.semantic import MemoryDraft, MemoryQuery

    await _store_facts(memory_assistant)
    unit = memory_assistant._core.read()
    memory = SemanticMemory(
        unit,
        memory_assistant.clock,
        memory_assistant.settings,
        memory_assistant.embedder,
        memory_assistant._core.memory_index,
    )
    queries = ["north gate midnight", MemoryQuery("what do I owe?", speaker="Bob")]
    sync = memory.recall("barrels of ale", limit=3)
    awaited = await memory.arecall("barrels of ale", limit=3)
    assert [(r.memory.id, r.score) for r in awaited] == [(r.memory.id, r.score) for r in sync]
    sync_relevant = memory.retrieve_relevant(queries, min_source_trust=0.0)
    async_relevant = await memory.aretrieve_relevant(queries, min_source_trust=0.0)
    assert [r.memory.id for r in async_relevant] == [r.memory.id for r in sync_relevant]
    assert async_relevant
    stored = await memory.astore(MemoryDraft(content="The ferry to Eastport leaves at dawn"))
    assert stored.embedding is not None
    assert (await memory.arecall("ferry to Eastport", limit=1))[0].memory.id == stored.id
