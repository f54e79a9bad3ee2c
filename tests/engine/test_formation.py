"""What people say is memory at once, whatever the model does (issue 34, formation).

The model is the real OpenAI client against the scripted chat-completions server, on
both backends. It never calls a tool and answers every request - the chat turn, the
night's importance scores, fact mining, entity consolidation - with prose, as small
local models do; or it stalls past the client's timeout.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mindspace import Assistant, ManualClock, Settings
from mindspace.embeddings.minilm import MiniLMEmbedder
from mindspace.engine.formation import PASSAGE_CHARS
from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM
from mindspace.memory.records import Memory
from mindspace.storage import SqlStore
from mindspace.testing import ChatCompletionsServer
from mindspace.testing.assistants import assistant_on
from mindspace.testing.scripted_server import Step

PROSE = "Oh, how lovely! Tell me more about that, I am always happy to listen."

# (speaker, message): ten turns from two speakers, eight facts among them.
TURNS = [
    ("Dave", "Hi there! I prefer red wine with dinner."),
    ("Erin", "My sister lives in Lisbon, she moved there for work."),
    ("Dave", "What time is it? I work as a carpenter in the old town."),
    ("Erin", "I am allergic to peanuts, so no satay for me."),
    ("Dave", "Thanks, see you later!"),
    ("Dave", "My dog is called Biscuit."),
    ("Erin", "What do you think I should drink tonight?"),
    ("Erin", "I'm training for the Berlin marathon in April."),
    ("Dave", "I grew up on a farm near Cork."),
    ("Erin", "I play the cello in a string quartet."),
]

# (paraphrased question, speaker, a word only that fact's memory holds)
FACTS = [
    ("Which drink does Dave enjoy with his evening meal?", "Dave", "wine"),
    ("In which city is Erin's sibling based?", "Erin", "Lisbon"),
    ("What is Dave's job?", "Dave", "carpenter"),
    ("Does Erin have a food allergy?", "Erin", "peanuts"),
    ("What is the name of Dave's pet?", "Dave", "Biscuit"),
    ("Which race is Erin preparing for?", "Erin", "marathon"),
    ("Where was Dave raised as a child?", "Dave", "Cork"),
    ("Which musical instrument does Erin play?", "Erin", "cello"),
]


@pytest.fixture
def prose_server() -> Iterator[ChatCompletionsServer]:
    """A model that answers everything, structured requests too, with the same prose."""
    with ChatCompletionsServer(respond=lambda body: Step(content=PROSE)) as server:
        yield server


@pytest.fixture
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def _open(
    url: str, llm: OpenAICompatibleLLM, clock: ManualClock, settings: Settings, embedder: Any
) -> tuple[SqlStore, Assistant]:
    store = SqlStore(url)
    assistant = assistant_on(
        store, "keeper", llm=llm, clock=clock, settings=settings, embedder=embedder
    )
    return store, assistant


def _llm(server: ChatCompletionsServer, *, timeout: float = 30.0) -> OpenAICompatibleLLM:
    async def no_wait(delay: float) -> None:
        return None

    return OpenAICompatibleLLM(
        base_url=server.url,
        model="scripted",
        api_key="test",
        max_retries=0,
        timeout=timeout,
        sleep=no_wait,
    )


async def _search(assistant: Assistant, query: str, limit: int = 5) -> list[dict[str, Any]]:
    outcome = await assistant.views.search_memories({"query": query, "limit": limit})
    assert outcome.result["success"] is True, outcome.result
    memories: list[dict[str, Any]] = outcome.result["memories"]
    return memories


async def _check_every_fact(assistant: Assistant) -> None:
    for question, speaker, word in FACTS:
        top = await _search(assistant, question)
        holding = [m for m in top if word.casefold() in m["content"].casefold()]
        assert holding, f"{question!r}: no memory with {word!r} in {top}"
        # Attributed to whoever said it, and to nobody else.
        assert {m["metadata"]["source_entity"] for m in holding} == {speaker}
        # One fact, one memory: never the same words (or source) twice in the top five.
        contents = [" ".join(m["content"].casefold().split()) for m in top]
        assert len(set(contents)) == len(contents), top
        refs = [m["metadata"]["ref"] for m in top]
        assert len(set(refs)) == len(refs), top


async def _sleep_a_night(assistant: Assistant, clock: ManualClock) -> None:
    await assistant.sleep("night")
    for _ in range(300):
        clock.advance(minutes=1)
        result = await assistant.tick()
        assert result.sleep is not None
        if result.sleep.woke or result.sleep.finished:
            break
    else:
        pytest.fail("the night did not finish in 300 ticks")
    await assistant.wake("morning")


@pytest.fixture
def keeper(
    backend_url: str,
    prose_server: ChatCompletionsServer,
    clock: ManualClock,
    settings: Settings,
    embedder: MiniLMEmbedder,
) -> Iterator[Assistant]:
    """An assistant on each backend whose model is the prose server."""
    store, assistant = _open(backend_url, _llm(prose_server), clock, settings, embedder)
    yield assistant
    store.close()


async def test_a_prose_model_keeps_every_fact_before_and_after_a_night(
    keeper: Assistant, prose_server: ChatCompletionsServer, clock: ManualClock
) -> None:
    assistant = keeper
    for speaker, text in TURNS:
        assistant.enqueue_event(text, source_entity=speaker)
        result = await assistant.tick()
        assert result.status == "done", result.error
        assert result.reply == PROSE
        clock.advance(seconds=30)
    # The model never called a tool, and still every fact is memory before any night.
    assert prose_server.requests
    await _check_every_fact(assistant)
    # A message that only asks, or only chats, is not kept; one that also states
    # something is kept word for word.
    everything = await _search(assistant, "drink tonight see you later", limit=20)
    kept = {m["content"] for m in everything}
    assert not kept & {TURNS[4][1], TURNS[6][1]}, kept
    assert TURNS[2][1] in kept | {m["content"] for m in await _search(assistant, "time")}

    await _sleep_a_night(assistant, clock)
    await _check_every_fact(assistant)


async def test_a_turn_whose_model_call_times_out_loses_nothing(
    backend_url: str, clock: ManualClock, settings: Settings, embedder: MiniLMEmbedder
) -> None:
    with ChatCompletionsServer() as server:
        server.push(Step(content="too late", delay=2.0))
        server.push(Step(content=PROSE))
        store, assistant = _open(backend_url, _llm(server, timeout=0.3), clock, settings, embedder)
        try:
            event = assistant.enqueue_event("My dog is called Biscuit.", source_entity="Dave")
            result = await assistant.tick()
            assert result.status == "failed"
            assert "did not answer in time" in (result.error or "")

            top = await _search(assistant, "What is the name of Dave's pet?")
            assert top[0]["content"] == "My dog is called Biscuit."
            assert top[0]["metadata"]["source_entity"] == "Dave"
            assert top[0]["metadata"]["source_trust"] == 0.9
            # The event is kept (failed, with its error) and can be run again...
            failed = assistant.views.event(event.id)
            assert failed is not None
            assert failed.status == "failed"
            await assistant.retry_event(event.id)
            result = await assistant.tick()
            assert result.status == "done", result.error
            # ... which stores its words no second time.
            again = await _search(assistant, "Biscuit", limit=10)
            assert [m["content"] for m in again].count("My dog is called Biscuit.") == 1
        finally:
            store.close()


async def test_a_ten_thousand_character_message_is_kept_in_parts(
    keeper: Assistant, clock: ManualClock, settings: Settings
) -> None:
    filler = " ".join(
        f"Paragraph {n} of my notes says the shipment number {n} left the harbour on time."
        for n in range(140)
    )
    text = (filler + " The spare key to the lighthouse is hidden under the blue stone.")[-10_000:]
    assert len(text) == 10_000
    assistant = keeper
    assistant.enqueue_event(text, source_entity="Dave")
    result = await assistant.tick()
    assert result.status == "done", result.error
    read = assistant._core.read()
    parts = [read.get(Memory, memory_id) for memory_id in result.formed]
    # Passages short enough for the embedder to read whole (it reads 256 word pieces).
    assert len(parts) >= len(text) // PASSAGE_CHARS
    assert all(p is not None and len(p.content) <= PASSAGE_CHARS for p in parts)
    assert {p.ref for p in parts if p} == {f"event:{result.event_id}"}
    n = len(parts)
    assert [t for p in parts if p for t in p.tags] == [f"part:{i}/{n}" for i in range(1, n + 1)]
    # Nothing was lost between the parts.
    assert "".join(p.content for p in parts if p).replace(" ", "") == text.replace(" ", "")

    await _sleep_a_night(assistant, clock)
    top = await _search(assistant, "Where is the lighthouse key hidden?", limit=3)
    assert "under the blue stone" in top[0]["content"]
    assert top[0]["metadata"]["source_entity"] == "Dave"
    # The message is shown once, by its best passage: the others leave room for the rest.
    refs = [m["metadata"].get("ref") for m in await _search(assistant, "shipment harbour", 10)]
    assert refs.count(f"event:{result.event_id}") == 1


async def test_a_hosts_ref_is_kept_when_it_fits(keeper: Assistant) -> None:
    refs = []
    for ref, said in (("D3:7", "My dog is called Biscuit."), ("x" * 200, "I live in Cork.")):
        keeper.enqueue_event(said, source_entity="Dave", metadata={"ref": ref})
        result = await keeper.tick()
        assert result.status == "done", result.error
        memory = keeper._core.read().get(Memory, result.formed[0])
        assert memory is not None
        refs.append(memory.ref)
    # Too long for a memory's ref: the event's id points at the same message.
    assert refs[0] == "D3:7"
    assert refs[1] is not None
    assert refs[1].startswith("event:evt_")
