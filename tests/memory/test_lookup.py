"""A prompt lookup embeds one text: the embedder's cache, and the speaker's side derived."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from mindspace import FunctionLLM, ManualClock
from mindspace.embeddings import HashingEmbedder
from mindspace.embeddings.cache import OWN_SIZE, CachedEmbedder, cached
from mindspace.embeddings.port import Vectors
from mindspace.llm.port import LLMResponse, Message, ToolSchema
from mindspace.memory.lookup import aquery_vectors
from mindspace.memory.semantic import MemoryQuery
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on


class Counting:
    """An embedder that records every text it is given."""

    def __init__(self, inner: HashingEmbedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.seen += list(texts)
        return self.inner.embed(texts)


def test_the_cache_embeds_each_text_once_and_forgets_the_least_recent() -> None:
    inner = Counting(HashingEmbedder(64))
    cache = CachedEmbedder(inner, size=2)
    first = cache.embed(["a pint", "a pint", "the fire"])
    assert inner.seen == ["a pint", "the fire"]
    assert np.allclose(first[0], inner.inner.embed(["a pint"])[0])
    assert np.allclose(first[0], first[1])
    cache.embed(["the fire", "a pint"])  # both cached: nothing embedded
    assert inner.seen == ["a pint", "the fire"]
    cache.embed(["the road"])  # evicts the least recently used ("the fire")
    cache.embed(["a pint", "the fire"])
    assert inner.seen == ["a pint", "the fire", "the road", "the fire"]
    assert asyncio.run(cache.aembed(["the road"])).shape == (1, 64)


def test_assistants_sharing_an_embedder_share_its_cache() -> None:
    inner = HashingEmbedder(32)
    assert cached(inner) is cached(inner)
    assert cached(cached(inner)) is cached(inner)
    assert cached(HashingEmbedder(32)) is not cached(inner)


def test_an_embedder_that_cannot_be_shared_gets_a_small_cache_of_its_own() -> None:
    class Unhashable(Counting):
        __hash__ = None  # type: ignore[assignment]

    embedder = Unhashable(HashingEmbedder(16))
    first, second = cached(embedder), cached(embedder)
    assert first is not second
    assert first.size == OWN_SIZE
    first.embed(["a", "a"])
    assert embedder.seen == ["a"]


def test_a_speakers_message_embeds_one_text_once_the_speaker_is_known() -> None:
    inner = Counting(HashingEmbedder(64))
    embedder = CachedEmbedder(inner)
    first = [MemoryQuery("what do I drink?", "Alice"), MemoryQuery("Keep the fire going")]
    asyncio.run(aquery_vectors(embedder, first, 0.75))
    # the keyed message, the speaker (once) and the goal
    assert inner.seen == ["Alice: what do I drink?", "Alice:", "Keep the fire going"]
    inner.seen.clear()
    later = [MemoryQuery("and where do I live?", "Alice"), MemoryQuery("Keep the fire going")]
    asyncio.run(aquery_vectors(embedder, later, 0.75))
    assert inner.seen == ["Alice: and where do I live?"]


def test_without_a_cache_both_texts_are_embedded_exactly() -> None:
    inner = Counting(HashingEmbedder(64))
    (vector,) = asyncio.run(aquery_vectors(inner, [MemoryQuery("hello", "Bob")], 0.75))
    assert inner.seen == ["Bob: hello", "hello"]
    keyed, plain = inner.inner.embed(["Bob: hello", "hello"])
    assert np.allclose(vector, 0.75 * keyed + 0.25 * plain, atol=1e-6)


def test_the_derived_lookup_stays_close_to_the_two_embeddings_with_minilm() -> None:
    minilm = pytest.importorskip("mindspace.embeddings.minilm").MiniLMEmbedder()
    messages = [
        "hi",
        "What do I usually drink when I come here?",
        "I moved to Lisbon last spring with my sister.",
        "The blacksmith owes me three silver coins.",
        "Can you remind me what we talked about yesterday?",
    ]
    for speaker in ("Alice", "Bob the Builder"):
        for text in messages:
            query = MemoryQuery(text, speaker)
            (derived,) = asyncio.run(aquery_vectors(CachedEmbedder(minilm), [query], 0.75))
            (exact,) = asyncio.run(aquery_vectors(minilm, [query], 0.75))
            cosine = float(derived @ exact) / float(np.linalg.norm(derived) * np.linalg.norm(exact))
            assert cosine > 0.97, (speaker, text, cosine)


async def test_an_awake_tick_embeds_only_the_text_that_changed(
    tmp_path: Path, clock: ManualClock
) -> None:
    # Every tick looks memories up by the message and the active goals; what was
    # embedded before (a goal's description, the speaker's name, a message said again)
    # is the embedder cache's, so a tick embeds what is new and nothing else.
    store = SqlStore(f"sqlite:///{tmp_path / 'ticks.db'}")
    inner = Counting(HashingEmbedder(64))

    def answer(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> LLMResponse:
        return LLMResponse(text="Aye.", model="test")

    assistant = assistant_on(store, "keeper", llm=FunctionLLM(answer), clock=clock, embedder=inner)
    await assistant.call_tool("add_goal", {"description": "Keep the fire going"})
    seen: list[list[str]] = []
    for said in ["I bought a red cloak", "The mill is closed today", "The mill is closed today"]:
        assistant.enqueue_event(said, source_entity="Alice", location="tavern")
        inner.seen.clear()
        assert (await assistant.tick()).status == "done"
        seen.append(list(inner.seen))
    await assistant.call_tool("add_goal", {"description": "Mend the nets"})
    assistant.enqueue_event("Bob owes me a silver coin", source_entity="Alice", location="tavern")
    inner.seen.clear()
    await assistant.tick()
    seen.append(list(inner.seen))
    assert seen == [
        ["Alice: I bought a red cloak", "Alice:", "Keep the fire going"],
        ["Alice: The mill is closed today"],
        [],  # said again: nothing new
        ["Alice: Bob owes me a silver coin", "Mend the nets"],
    ]
    store.close()
