"""What is not text (lone surrogates, NUL) never stops a tick, on SQLite and PostgreSQL.

From the model it cannot be refused (nobody could fix it): reply text and tool calls have
each such character replaced with U+FFFD and the tick notes it. From a caller (a tool's
arguments, an event) it is refused with a message naming the field and what to do.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mindspace import Assistant, ManualClock, ScriptedLLM, Settings
from mindspace.engine.records import ConversationMessage
from mindspace.errors import InvalidInputError
from mindspace.llm import LLMResponse
from mindspace.llm.port import ToolCall
from mindspace.storage import SqlStore
from mindspace.testing.assistants import assistant_on


@pytest.fixture
def on_backend(
    backend_url: str, clock: ManualClock, settings: Settings, scripted: ScriptedLLM
) -> Iterator[Assistant]:
    store = SqlStore(backend_url)
    yield assistant_on(store, "barkeep", llm=scripted, clock=clock, settings=settings)
    store.close()


async def test_a_reply_with_a_lone_surrogate_and_nul_is_delivered_with_a_note(
    on_backend: Assistant, scripted: ScriptedLLM
) -> None:
    event = on_backend.enqueue_event("Hello?", source_entity="Alice")
    scripted.enqueue("Evening \ud83d, Alice\x00!")

    result = await on_backend.tick()

    assert result.status == "done"
    assert result.reply == "Evening \ufffd, Alice\ufffd!"
    assert any("not text" in note and "U+FFFD" in note for note in result.notes)
    stored = on_backend.views.event(event.id)
    assert stored is not None
    assert (stored.status, stored.reply) == ("done", "Evening \ufffd, Alice\ufffd!")
    replies = [
        m.content for m in on_backend._core.read().all(ConversationMessage) if m.role == "assistant"
    ]
    assert replies == ["Evening \ufffd, Alice\ufffd!"]


async def test_a_tool_call_carrying_nul_is_refused_to_the_model_and_the_tick_goes_on(
    on_backend: Assistant, scripted: ScriptedLLM
) -> None:
    event = on_backend.enqueue_event("Remember this", source_entity="Alice")
    # A raw NUL in the call's text, and an escaped one that only parsing reveals.
    scripted.enqueue_response(
        LLMResponse(
            tool_calls=(
                ToolCall("c1", "store_memory", '{"content": "vault\x00code"}'),
                ToolCall("c2", "add_goal", '{"description": "open \\u0000 the vault"}'),
            )
        )
    )
    scripted.enqueue("Noted.")

    result = await on_backend.tick()

    assert result.status == "done"
    assert result.loop is not None
    first, second = result.loop.calls
    assert first.ok  # the raw NUL became U+FFFD before anything ran
    assert not second.ok
    assert "NUL" in str(second.result)
    stored = on_backend.views.event(event.id)
    assert stored is not None
    assert stored.status == "done"
    page = on_backend.views.memory_page(limit=10)
    contents = [m["content"] for m in page["memories"]]
    # The call's memory is stored cleaned (the person's own words may be kept beside it).
    assert "vault\ufffdcode" in contents
    assert not any("\x00" in c for c in contents)


@pytest.mark.parametrize("text", ["a\x00b", "a\udc00b"])
async def test_a_caller_is_refused_with_the_field_named(on_backend: Assistant, text: str) -> None:
    outcome = await on_backend.call_tool("add_goal", {"description": text})
    assert outcome["success"] is False
    assert "description" in outcome["error"]
    with pytest.raises(InvalidInputError, match="content"):
        on_backend.enqueue_event(text, source_entity="Alice")
    with pytest.raises(InvalidInputError):
        on_backend.enqueue_event("hi", source_entity=text)
    assert on_backend.views.goal_tree()["goals"] == []
