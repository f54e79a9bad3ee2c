"""Each flow of text from one limit into a smaller one passes its producer's maximum.

:data:`mindspace.limits.FLOWS` lists every place text stored under one limit moves into
a store with a smaller one; each test here pushes the producer's longest text through
the consumer and checks that nothing is refused and, for a ``chunked`` flow, that every
word arrives (a ``cut`` flow keeps the whole text elsewhere, which is checked too).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence

from mindspace import Assistant, FunctionLLM, ManualClock, Settings
from mindspace.clock import format_time
from mindspace.embeddings import HashingEmbedder
from mindspace.engine.night.consolidation import run_sleep_consolidation
from mindspace.engine.records import ConversationMessage
from mindspace.journal.book import JournalBook
from mindspace.limits import (
    CONTEXT_NEIGHBOUR_CHARS,
    FLOWS,
    LIMITS,
    MAX_EVENT_CHARS,
    MINING_LINE_CHARS,
    MINING_TRANSCRIPT_CHARS,
)
from mindspace.llm.port import Message, ToolSchema
from mindspace.memory.entities import EntityBook
from mindspace.memory.entity_consolidation import run_entity_consolidation_batch
from mindspace.memory.mining import Utterance, mine_conversations
from mindspace.memory.records import EntityProfile, Memory
from mindspace.memory.semantic import SemanticMemory
from mindspace.state.unit import Unit
from mindspace.testing.inspect import stored_records

Flow = Callable[[Callable[..., Assistant], ManualClock], Awaitable[None]]


def _text(chars: int, word: str = "ledger") -> str:
    """Exactly ``chars`` characters of numbered sentences."""
    sentences: list[str] = []
    n = 0
    while sum(len(s) + 1 for s in sentences) <= chars:
        sentences.append(f"The {word} line {n} notes crate {word}{n}x at the pier.")
        n += 1
    return " ".join(sentences)[:chars].rsplit(" ", 1)[0].ljust(chars, "z")


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _memory(assistant: Assistant, unit: Unit) -> SemanticMemory:
    core = assistant._core
    return SemanticMemory(unit, core.clock, core.settings, core.embedder, core.memory_index)


async def journal_entry_to_memory(make: Callable[..., Assistant], clock: ManualClock) -> None:
    assistant = make("flows", embedder=HashingEmbedder(64))
    settings = assistant.settings
    entry = _text(LIMITS["journal_entry"].max_chars(settings))
    with assistant._core.transaction() as unit:
        added = JournalBook(unit, clock, settings).add(entry, importance=5).entry
        result = await run_sleep_consolidation(
            unit, clock, settings, _memory(assistant, unit), scoring_failed=True
        )
    assert result["completed"] is True
    memories = sorted(stored_records(assistant, Memory), key=lambda m: int(m.id[4:]))
    limit = LIMITS["memory"].max_chars(settings)
    assert len(memories) == -(-len(entry) // limit)
    assert all(len(m.content) <= limit and m.entry_id == added.id for m in memories)
    assert _squeezed("".join(m.content for m in memories)) == _squeezed(entry)


class Miner:
    """Answers mining with the speaker's whole lines as facts; records the transcripts."""

    def __init__(self) -> None:
        self.transcripts: list[str] = []

    def __call__(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str:
        prompt = messages[-1].content or ""
        if not prompt.startswith("Extract facts"):
            return "{}"
        lines = prompt.split("your replies, context only: never extract what you said or did.")
        transcript = lines[1].split("Return only a JSON array")[0].strip()
        self.transcripts.append(transcript)
        said = [line.removeprefix("Dana: ") for line in transcript.splitlines()]
        return json.dumps([{"fact": " ".join(said), "entity": "Dana", "importance": 5}])


async def _mine(assistant: Assistant, clock: ManualClock, text: str) -> None:
    said = [Utterance(1, "Dana", "user", text, format_time(clock.now()))]
    with assistant._core.transaction() as unit:
        core = assistant._core
        result = await mine_conversations(
            unit, core.settings, core.llm, core.guard, _memory(assistant, unit), said
        )
    assert result.error is None
    assert result.problems == []


async def event_to_mining_line(make: Callable[..., Assistant], clock: ManualClock) -> None:
    miner = Miner()
    assistant = make("flows", llm=FunctionLLM(miner), embedder=HashingEmbedder(64))
    message = _text(MAX_EVENT_CHARS)
    await _mine(assistant, clock, message)
    lines = [line for t in miner.transcripts for line in t.splitlines()]
    assert all(len(line) <= len("Dana: ") + MINING_LINE_CHARS for line in lines)
    assert len(lines) >= len(message) // MINING_LINE_CHARS
    spoken = "".join(line.removeprefix("Dana: ") for line in lines)
    assert _squeezed(spoken) == _squeezed(message)


async def event_to_mining_transcript(make: Callable[..., Assistant], clock: ManualClock) -> None:
    miner = Miner()
    assistant = make("flows", llm=FunctionLLM(miner), embedder=HashingEmbedder(64))
    message = _text(MAX_EVENT_CHARS)
    await _mine(assistant, clock, message)
    assert len(miner.transcripts) == -(-len(message) // MINING_TRANSCRIPT_CHARS)
    assert all(len(t) <= MINING_TRANSCRIPT_CHARS for t in miner.transcripts)


async def event_to_memory(make: Callable[..., Assistant], clock: ManualClock) -> None:
    # The model's fact is the whole part it read (up to 6,000 characters); with a smaller
    # memory limit each fact is stored in pieces, every word of the message kept.
    miner = Miner()
    settings = Settings(max_memory_chars=1_000)
    assistant = make(
        "flows", llm=FunctionLLM(miner), embedder=HashingEmbedder(64), settings=settings
    )
    message = _text(MAX_EVENT_CHARS)
    await _mine(assistant, clock, message)
    memories = sorted(stored_records(assistant, Memory), key=lambda m: int(m.id[4:]))
    assert all(len(m.content) <= 1_000 for m in memories)
    assert _squeezed("".join(m.content for m in memories)) == _squeezed(message)


async def event_to_raw_observation(make: Callable[..., Assistant], clock: ManualClock) -> None:
    assistant = make("flows", embedder=HashingEmbedder(64))
    message = _text(MAX_EVENT_CHARS)
    assistant.enqueue_event(message, source_entity="Dana")
    assert (await assistant.tick()).status == "done"
    state = assistant._core.read()
    profile = state.get(EntityProfile, "Dana")
    assert profile is not None
    limit = LIMITS["raw_observation"].max_chars(assistant.settings)
    quoted = profile.observations[0].text
    assert len(quoted) <= limit + len('Dana said: ""')
    # The whole message stays in the conversation history (and is mined from there).
    assert message in [m.content for m in state.all(ConversationMessage)]


async def journal_entry_to_memory_context(
    make: Callable[..., Assistant], clock: ManualClock
) -> None:
    assistant = make("flows", embedder=HashingEmbedder(64))
    settings = assistant.settings
    longest = LIMITS["journal_entry"].max_chars(settings)
    with assistant._core.transaction() as unit:
        book = JournalBook(unit, clock, settings)
        for word in ("before", "middle", "after"):
            book.add(_text(longest, word), importance=5)
        await run_sleep_consolidation(
            unit, clock, settings, _memory(assistant, unit), 3, scoring_failed=True
        )
    middle = [m for m in stored_records(assistant, Memory) if m.entry_id == 2]
    assert middle
    for memory in middle:
        assert memory.context is not None
        parts = memory.context.split("\n")
        assert len(parts) == 2
        assert all(len(p) <= CONTEXT_NEIGHBOUR_CHARS for p in parts)


async def observation_to_attribute_value(
    make: Callable[..., Assistant], clock: ManualClock
) -> None:
    settings = Settings()
    observation = _text(LIMITS["observation"].max_chars(settings))

    def answer(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str:
        return json.dumps({"ledger": observation})

    assistant = make("flows", llm=FunctionLLM(answer), embedder=HashingEmbedder(64))
    with assistant._core.transaction() as unit:
        EntityBook(unit, clock, settings, assistant._core.guard).observe("Dana", observation)
        report = await run_entity_consolidation_batch(
            unit, clock, settings, assistant._core.llm, assistant._core.guard
        )
    assert report["skipped"] == {}
    profile = assistant._core.read().get(EntityProfile, "Dana")
    assert profile is not None
    value = profile.attributes["ledger"]
    assert len(value) <= LIMITS["attribute_value"].max_chars(settings)
    assert observation.startswith(value)
    assert profile.observations[0].text == observation  # the whole text stays


FLOW_TESTS: dict[tuple[str, str], Flow] = {
    ("journal_entry", "memory"): journal_entry_to_memory,
    ("event", "mining_line"): event_to_mining_line,
    ("event", "mining_transcript"): event_to_mining_transcript,
    ("event", "memory"): event_to_memory,
    ("event", "raw_observation"): event_to_raw_observation,
    ("journal_entry", "memory_context"): journal_entry_to_memory_context,
    ("observation", "attribute_value"): observation_to_attribute_value,
}


def test_every_flow_is_between_known_limits_and_has_its_test() -> None:
    assert {(f.source, f.target) for f in FLOWS} == set(FLOW_TESTS)
    for flow in FLOWS:
        assert flow.source in LIMITS
        assert flow.target in LIMITS
        source, target = LIMITS[flow.source], LIMITS[flow.target]
        assert source.max_chars() > target.max_chars(), flow


async def test_journal_entry_to_memory(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    await journal_entry_to_memory(make_assistant, clock)


async def test_event_to_mining_line(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    await event_to_mining_line(make_assistant, clock)


async def test_event_to_mining_transcript(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    await event_to_mining_transcript(make_assistant, clock)


async def test_event_to_memory(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    await event_to_memory(make_assistant, clock)


async def test_event_to_raw_observation(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    await event_to_raw_observation(make_assistant, clock)


async def test_journal_entry_to_memory_context(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    await journal_entry_to_memory_context(make_assistant, clock)


async def test_observation_to_attribute_value(
    make_assistant: Callable[..., Assistant], clock: ManualClock
) -> None:
    await observation_to_attribute_value(make_assistant, clock)
