"""The prompt's two stages in the spec's order: source trust, then the relevance window.

Issue 34 item 9: an overheard memory that matches the message better than a trusted one
must not push the trusted one out of the window and leave the prompt with nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mindspace import Assistant, ManualClock, ScriptedLLM, Settings
from mindspace.embeddings.minilm import MiniLMEmbedder
from mindspace.memory.semantic import MemoryQuery, SemanticMemory
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on

OVERHEARD = "The north gate closes at midnight."
TRUSTED = "Guards lock the northern entrance of the town every night."
QUESTION = "When does the north gate close?"


@pytest.fixture
def assistant(backend_url: str, clock: ManualClock, settings: Settings) -> Iterator[Assistant]:
    store = SqlStore(backend_url)
    yield assistant_on(
        store,
        "keeper",
        llm=ScriptedLLM(),
        clock=clock,
        settings=settings,
        embedder=MiniLMEmbedder(),
    )
    store.close()


def _memory(assistant: Assistant) -> SemanticMemory:
    core = assistant._core
    return SemanticMemory(core.read(), core.clock, core.settings, core.embedder, core.memory_index)


async def test_trust_filters_before_the_relevance_window(assistant: Assistant) -> None:
    for content, source_type in ((OVERHEARD, "environmental"), (TRUSTED, "direct")):
        result = await assistant.call_tool(
            "store_memory", {"content": content, "source_type": source_type}
        )
        assert result["success"] is True, result
    memory = _memory(assistant)
    everything = await memory.aretrieve_relevant([QUESTION], min_source_trust=0.0)
    scores = {r.memory.content: r.relevance or 0.0 for r in everything}
    # The overheard memory wins by more than the window: measured after it, the window
    # would keep only the overheard memory, which the trust stage then drops.
    window = assistant._core.settings.memory_relevance_window
    assert scores[OVERHEARD] > scores.get(TRUSTED, 0.0) + window
    assert [r.memory.content for r in everything] == [OVERHEARD]

    trusted = await memory.aretrieve_relevant([QUESTION], min_source_trust=0.5)

    assert [r.memory.content for r in trusted] == [TRUSTED]
    assert trusted[0].memory.source_trust == 0.9


async def test_the_pending_message_is_no_memory_of_itself(assistant: Assistant) -> None:
    assert (
        await assistant.call_tool("store_memory", {"content": "Dave's dog is called Biscuit."})
    )["success"]
    llm = assistant._core.llm
    assert isinstance(llm, ScriptedLLM)
    llm.enqueue("Noted.")
    assistant.enqueue_event("My dog Biscuit is ill.", source_entity="Dave")
    result = await assistant.tick()
    assert result.status == "done", result.error
    memory = _memory(assistant)
    found = await memory.aretrieve_relevant(
        [MemoryQuery("My dog Biscuit is ill.", "Dave")],
        skip_ref=f"event:{result.event_id}",
    )
    assert [r.memory.content for r in found] == ["Dave's dog is called Biscuit."]
    assert result.prompt is not None
    shown = "".join(c.content for c in result.prompt.components if c.key == "semantic_memories")
    assert "Dave's dog is called Biscuit." in shown
    assert "My dog Biscuit is ill." not in shown
