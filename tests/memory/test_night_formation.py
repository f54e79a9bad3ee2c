"""Issue 34 (items 4, 6, 7, 8): the night keeps what was said, all of it, and only that.

On SQLite and PostgreSQL alike:

* a model that echoes its prompt's example back stores nothing the speakers did not say;
* a journal entry and a chat message of 10,000 characters go through a night and are
  found by words from their middle and their end;
* pre-compaction extraction reads every turn it compacts;
* no field of a memory carries the assistant's own first-person text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import pytest

from mindspace import Assistant, FunctionLLM, ManualClock, Settings
from mindspace.clock import format_time
from mindspace.embeddings import HashingEmbedder
from mindspace.engine.night.compaction import SUMMARY_MARKER, thread_messages
from mindspace.engine.night.windows import windows
from mindspace.engine.records import ConversationMessage, EngineState, StoredToolCall
from mindspace.llm.port import LLM, Message, ToolSchema
from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM
from mindspace.memory.mining import MiningState
from mindspace.memory.records import EntityProfile, Memory
from mindspace.offline import OfflineLLM
from mindspace.storage import SqlStore
from mindspace.testing import ChatCompletionsServer
from mindspace.testing.assistants import assistant_on
from mindspace.testing.inspect import stored_records
from mindspace.testing.scripted_server import Step
from mindspace.text import keywords
from mindspace.workspace.persona import PersonaGuard

Role = Literal["user", "assistant", "tool"]

SAID = {
    "Dana": ["My dog is called Biscuit.", "I am allergic to oak pollen."],
    "Erin": ["The mill by the river closes at dusk.", "My brother Tomas sells rope."],
}


@pytest.fixture
def backend_store(backend_url: str) -> Iterator[SqlStore]:
    store = SqlStore(backend_url)
    yield store
    store.close()


def _open(store: SqlStore, clock: ManualClock, llm: LLM, **settings: Any) -> Assistant:
    return assistant_on(
        store,
        "keeper",
        llm=llm,
        clock=clock,
        settings=Settings(**settings),
        embedder=HashingEmbedder(256),
    )


async def _say(assistant: Assistant, who: str, text: str) -> None:
    assistant.enqueue_event(text, source_entity=who)
    result = await assistant.tick()
    assert result.status == "done", result.error


async def _night(assistant: Assistant, max_ticks: int = 80) -> list[dict[str, Any]]:
    """Sleep and tick until the night is done; every tick's operations."""
    await assistant.sleep("closing time")
    ticks = []
    for _ in range(max_ticks):
        result = await assistant.tick()
        assert result.sleep is not None, result.error
        ticks.append(result.sleep.operations)
        if result.sleep.finished:
            return ticks
    raise AssertionError("the night did not finish")


def _memories(assistant: Assistant) -> list[Memory]:
    return stored_records(assistant, Memory)


# -- (a) a model that echoes its prompt -----------------------------------------------------


def _last_json(text: str) -> str | None:
    """The last JSON object or array written in ``text`` (a prompt's example), if any."""
    decoder = json.JSONDecoder()
    found = None
    for start in (m.start() for m in re.finditer(r"[\[{]", text)):
        try:
            value, _ = decoder.raw_decode(text[start:])
        except ValueError:
            continue
        if value:
            found = json.dumps(value)
    return found


def _echo(body: dict[str, Any]) -> Step:
    """Every request answered with its own text: a structured one with its example."""
    messages = body.get("messages", [])
    text = next((str(m.get("content")) for m in reversed(messages) if m["role"] == "user"), "")
    if body.get("tools"):  # a chat turn: the speaker's words back, as a parrot would
        return Step(content=text[:200] or "...")
    return Step(content=_last_json(text) or text)


def _said_by(who: str | None) -> set[str]:
    lines = SAID.get(who, []) if who else [line for said in SAID.values() for line in said]
    return {w for line in lines for w in keywords(line)}


async def test_an_echoing_model_stores_nothing_the_speakers_did_not_say(
    backend_store: SqlStore, clock: ManualClock
) -> None:
    with ChatCompletionsServer(respond=_echo) as server:
        llm = OpenAICompatibleLLM(base_url=server.url, model="echo", api_key="k", max_retries=0)
        assistant = _open(backend_store, clock, llm)
        for who, lines in SAID.items():
            for line in lines:
                await _say(assistant, who, line)
        await _night(assistant)
        prompts = [str(m.get("content")) for r in server.requests for m in r["messages"]]

    # The echo was asked for facts and attributes, and answered with the examples.
    assert any(p.startswith("Extract facts from this conversation with Dana") for p in prompts)
    assert any(p.startswith("Consolidate these observations about Dana") for p in prompts)
    # No example names a real speaker.
    mining = [p for p in prompts if p.startswith("Extract facts")]
    assert all("Dana is" not in p and "Erin is" not in p for p in mining)
    state = assistant._core.read()
    for profile in state.all(EntityProfile):
        for key, value in profile.attributes.items():
            unsaid = set(keywords(value)) - _said_by(profile.entity_id)
            assert not unsaid, (profile.entity_id, key, value)
    dana = state.get(EntityProfile, "Dana")
    assert dana is not None
    assert "dark ale" not in json.dumps(dana.attributes)
    for memory in _memories(assistant):
        names = {w.casefold() for w in SAID}
        unsaid = set(keywords(memory.content)) - _said_by(memory.source_entity) - names
        assert not unsaid, (memory.content, memory.source_entity)
    assert state.doc(MiningState).facts_stored == 0  # every mined "fact" was the example


# -- (b) long content through a night -------------------------------------------------------


def long_text(topic: str, chars: int = 10_000) -> str:
    """A text of exactly ``chars`` characters whose every sentence has its own word."""
    sentences: list[str] = []
    n = 0
    while sum(len(s) + 1 for s in sentences) < chars:
        sentences.append(f"The {topic} ledger line {n} records cargo code{n}x for pier{n}x.")
        n += 1
    ending = f" finalword{topic}."
    body = " ".join(sentences)[: chars - len(ending) - 20].rsplit(" ", 1)[0]
    filler = "z" * (chars - len(body) - len(ending) - 1)
    return f"{body} {filler}{ending}"


def _codes(text: str) -> tuple[str, str]:
    """A word from the middle of ``text`` and one from its end."""
    codes = re.findall(r"code\d+x", text)
    return codes[len(codes) // 2], codes[-1]


async def _search(assistant: Assistant, query: str) -> list[str]:
    result = await assistant.call_tool("recall_memories", {"query": query, "limit": 3})
    assert result["success"] is True, result
    return [m["content"] for m in result["memories"]]


async def test_a_long_entry_and_a_long_message_go_through_a_night(
    backend_store: SqlStore, clock: ManualClock
) -> None:
    assistant = _open(backend_store, clock, OfflineLLM(announce=False))
    entry = long_text("harbour")
    message = long_text("granary")
    assert len(entry) == len(message) == 10_000
    added = await assistant.call_tool("add_journal_entry", {"content": entry})
    assert added["success"] is True, added
    await _say(assistant, "Dana", message)

    ticks = await _night(assistant)

    limit = assistant.settings.max_memory_chars
    assert all(len(m.content) <= limit for m in _memories(assistant))
    for text in (entry, message):
        for code in (*_codes(text), text.rsplit(" ", 1)[-1].rstrip(".")):
            assert any(code in found for found in await _search(assistant, code)), code
    pieces = [m for m in _memories(assistant) if m.entry_id == added["entry_id"]]
    assert len(pieces) == 3
    assert {f"part:{i}/3" for i in (1, 2, 3)} <= {t for m in pieces for t in m.tags}
    mined = [t["mine_conversations"] for t in ticks if "mine_conversations" in t]
    assert sum(m["requests"] for m in mined) >= 2  # the message was read in two requests


# -- (c) pre-compaction reads every turn it compacts ----------------------------------------


class Reader:
    """Records every message an extraction session shows, and when summaries come."""

    def __init__(self) -> None:
        self.read: list[str] = []
        self.summarised: list[str] = []
        self.extractions = 0

    def __call__(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str:
        last = messages[-1].content or ""
        if last.startswith("Summarize the following conversation"):
            self.summarised.append(last)
            return "Dana talked about cargo."
        if any("is compacted into a summary" in (m.content or "") for m in messages):
            self.extractions += 1
            self.read += [m.content or "" for m in messages if m.role in ("user", "assistant")]
            return "Nothing more to journal."
        return "Noted."


async def test_precompaction_extraction_reads_every_turn_it_compacts(
    backend_store: SqlStore, clock: ManualClock
) -> None:
    reader = Reader()
    assistant = _open(
        backend_store, clock, FunctionLLM(reader), mining_calls_per_tick=0, model_limit=60_000
    )
    now = format_time(clock.now())
    turns = [
        f"Turn {n}: " + " ".join(f"cargo{n}w{k} sails north" for k in range(300)) for n in range(40)
    ]
    with assistant._core.transaction() as unit:
        for n, text in enumerate(turns, 1):
            role = "user" if n % 2 else "assistant"
            unit.put(
                ConversationMessage(
                    id=f"m{n}", entity="Dana", role=role, content=text, created_at=now
                )
            )
        unit.put_doc(unit.doc(EngineState).model_copy(update={"next_message": len(turns)}))

    ticks = await _night(assistant)

    compactions = [
        t["compact_conversation_history"] for t in ticks if "compact_conversation_history" in t
    ]
    removed = sum(c["threads"].get("Dana", {}).get("removed", 0) for c in compactions)
    assert removed >= 30  # the old part was compacted ...
    assert reader.extractions >= 3  # ... after reading it in several windows
    compacted = turns[:removed]
    unread = [n for n, text in enumerate(compacted) if text not in reader.read]
    assert unread == []
    thread = thread_messages(assistant._core.read())["Dana"]
    assert (thread[0].content or "").startswith(SUMMARY_MARKER)


# -- (d) no memory field carries the assistant's first person ------------------------------

OWN_NOTES = [
    ("Alice lost her sword in the north wing", None),
    ("I helped Alice find her lost sword", "Alice"),
    ("Alice paid 20 gold for a new scabbard", "Alice"),
    ("I told Bob that the bridge is out. Bob sells rope.", "Bob"),
]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


async def test_no_memory_field_carries_the_assistants_first_person(
    backend_store: SqlStore, clock: ManualClock
) -> None:
    assistant = _open(backend_store, clock, OfflineLLM(announce=False))
    for text, entity in OWN_NOTES:
        args: dict[str, Any] = {"content": text, "source_type": "observation"}
        if entity:
            args["source_entity"] = entity
        assert (await assistant.call_tool("add_journal_entry", args))["success"] is True
        clock.advance(minutes=1)

    await _night(assistant)

    guard = PersonaGuard()
    memories = _memories(assistant)
    assert {m.entry_id for m in memories} == {1, 2, 3, 4}
    for memory in memories:
        for field in ("content", "context", "tags", "source_entity", "ref"):
            for text in _strings(getattr(memory, field)):
                assert guard.is_clean(text), (memory.id, field, text)
    found = await assistant.call_tool("recall_memories", {"query": "Alice sword", "limit": 10})
    for text in _strings(found["memories"]):
        assert "I helped" not in text, text
    assert any("Alice needed help" in (m.content or "") for m in memories)
    # The neighbour's facts are still there to find the memory by.
    scabbard = next(m for m in memories if m.entry_id == 3)
    assert scabbard.context is not None
    assert "Alice needed help" in scabbard.context


def test_a_window_never_shows_a_tool_result_without_its_call() -> None:
    def message(n: int, role: Role, content: str, **extra: Any) -> ConversationMessage:
        return ConversationMessage(
            id=f"m{n}",
            entity="Dana",
            role=role,
            content=content,
            created_at="2025-01-01T00:00:00Z",
            **extra,
        )

    call = StoredToolCall(id="c1", tool="recall_memories", arguments="{}")
    old = [
        message(1, "user", "What do you know about the pier?"),
        message(2, "assistant", "", tool_calls=(call,)),
        message(3, "tool", "The pier code is pier77x " * 400, tool_call_id="c1"),
        message(4, "assistant", "The pier code is pier77x."),
    ]
    shown = list(windows(old, 0, 600))
    assert shown[-1].through == 4
    texts = [m.content or "" for w in shown for m in w.messages]
    assert sum(t.count("pier77x") for t in texts) >= 401  # every piece of the result
    for window in shown:
        calls = {c.id for m in window.messages for c in m.tool_calls}
        assert all(m.tool_call_id in calls for m in window.messages if m.role == "tool")
    # Read up to the call: the result comes next, labelled, never as a lone tool message.
    rest = list(windows(old, 2, 100_000))
    assert [m.role for m in rest[0].messages] == ["user", "assistant"]
    assert (rest[0].messages[0].content or "").startswith("[tool result] The pier code")
