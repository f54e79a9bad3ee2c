"""A compacting tick mines exactly what reading the whole history would, at O(batch).

The reference runs :func:`mine_conversations` on every message (as the tick did before
the unmined index) in a throwaway child unit before each tick; the tick must report the
same requests, messages and remaining count, and leave the same watermarks.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import pytest

from mindspace import Assistant, FunctionLLM, ManualClock, Settings
from mindspace.clock import format_time
from mindspace.embeddings import HashingEmbedder
from mindspace.engine.night.unmined import all_utterances, as_utterance, unmined_index
from mindspace.engine.records import ConversationMessage
from mindspace.llm.port import Message, ToolSchema
from mindspace.memory.mining import MiningResult, MiningState, mine_conversations
from mindspace.memory.semantic import SemanticMemory
from mindspace.state.unit import Unit

PEOPLE = ("Alice", "Bob", "Carol", "")
ROLES: tuple[Literal["user", "assistant", "tool", "system"], ...] = (
    "user",
    "user",
    "assistant",
    "assistant",
    "tool",
    "system",
)


def miner(messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str:
    """One fact per mining request (so memories are stored), nothing for anything else.

    The fact is the speaker's first line, so it is supported by what they said.
    """
    first = messages[0].content or ""
    if first.startswith("Extract facts from this conversation with "):
        who = first.split("with ", 1)[1].split(".", 1)[0]
        line = next(x for x in first.splitlines() if x.startswith(f"{who}: "))
        fact = f"{who} said: {line.removeprefix(f'{who}: ')}"
        return json.dumps([{"fact": fact, "entity": who, "importance": 4}])
    return "[]"


def add_messages(unit: Unit, rng: random.Random, numbers: range, clock: ManualClock) -> None:
    for number in numbers:
        unit.put(
            ConversationMessage(
                id=f"m{number}",
                entity=rng.choice(PEOPLE),
                role=rng.choice(ROLES),
                content=rng.choice(("hello there", "the well is dry", "  ", None, "ale!")),
                created_at=format_time(clock.now()),
            )
        )


async def full_scan(assistant: Assistant, settings: Settings) -> tuple[MiningResult, MiningState]:
    """What mining did before the index: every message, in a child unit thrown away."""
    core = assistant._core
    unit = core.read().child()
    said = all_utterances(unit)
    memory = SemanticMemory(unit, core.clock, settings, core.embedder, core.memory_index)
    result = await mine_conversations(unit, settings, core.llm, core.guard, memory, said)
    return result, unit.doc(MiningState)


async def test_each_tick_mines_what_reading_every_message_would(
    make_assistant: Callable[..., Assistant], clock: ManualClock, tmp_path: Path
) -> None:
    rng = random.Random(7)
    settings = Settings(data_dir=tmp_path, mining_calls_per_tick=2, mining_messages_per_call=2)

    def open_assistant() -> Assistant:
        return make_assistant(
            "gossip", llm=FunctionLLM(miner), settings=settings, embedder=HashingEmbedder(64)
        )

    assistant = open_assistant()
    with assistant._core.transaction() as unit:
        add_messages(unit, rng, range(1, 201), clock)
    await assistant.sleep("night")
    index = unmined_index(assistant._core.state)
    ticks = 0
    while True:
        ticks += 1
        assert ticks < 80, "mining never finished"
        if ticks == 3:  # more words arrive, and old ones are compacted away
            with assistant._core.transaction() as unit:
                add_messages(unit, rng, range(201, 221), clock)
                for number in range(1, 40, 3):
                    unit.delete(ConversationMessage, f"m{number}")
        if ticks == 5:  # another process writes: this cache reloads
            with open_assistant()._core.transaction() as unit:
                add_messages(unit, rng, range(221, 231), clock)
        expected, watermarks = await full_scan(assistant, settings)
        result = await assistant.tick()
        clock.advance(minutes=1)
        assert result.sleep is not None
        mined = result.sleep.operations["mine_conversations"]
        for name in ("requests", "batches", "messages", "remaining", "completed", "facts_stored"):
            assert mined[name] == expected.to_dict()[name], (ticks, name)
        assert assistant._core.read().doc(MiningState) == watermarks
        if result.sleep.phase_after != "compacting":
            break
    assert ticks > 5
    assert assistant._core.read().doc(MiningState).facts_stored > 0
    assert index is unmined_index(assistant._core.state)


@pytest.mark.parametrize(
    ("key", "entity", "role", "content", "read"),
    [
        ("m7", "Alice", "user", "the well is dry", True),
        ("m8", "Alice", "assistant", "I will look", True),
        ("m9", "Alice", "tool", "ok", False),  # a tool result is not said
        ("m10", "Alice", "system", "[summary_marker] ...", False),
        ("m11", "Alice", "user", "   ", False),  # no words
        ("m12", "Alice", "user", None, False),
        ("m13", "", "user", "hello", False),  # no one's thread
        ("note", "Alice", "user", "hello", False),  # not numbered: no place in the history
    ],
)
def test_what_mining_reads_is_one_rule(
    key: str,
    entity: str,
    role: Literal["user", "assistant", "tool", "system"],
    content: str | None,
    read: bool,
) -> None:
    message = ConversationMessage(
        id=key, entity=entity, role=role, content=content, created_at="2025-01-01T00:00:00Z"
    )
    said = as_utterance(message)
    if not read:
        assert said is None
        return
    assert said is not None
    assert (said.number, said.entity, said.role, said.content, said.at) == (
        int(key[1:]),
        entity,
        role,
        content,
        message.created_at,
    )
    assert said.minable
