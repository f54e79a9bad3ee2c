"""A tick that ends without a reply to an addressed event: the speaker is not left in silence."""

from __future__ import annotations

from collections.abc import Callable

from mindspace import Assistant, ScriptedLLM, Settings
from mindspace.engine.records import ConversationMessage


class Room:
    """A host world that records what the assistant said."""

    def __init__(self) -> None:
        self.said: list[tuple[str, str | None]] = []

    async def say(self, text: str, *, target: str | None = None) -> None:
        self.said.append((text, target))

    async def look(self) -> str:
        return "A warm tavern."


def _unknown_tool_five_times(scripted: ScriptedLLM) -> None:
    for n in range(5):
        scripted.enqueue(tool_calls=[{"name": "brew_potion", "arguments": {"n": n}}])


async def test_five_unknown_tool_calls_give_the_speaker_the_fallback_reply(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, settings: Settings
) -> None:
    assistant = make_assistant(llm=scripted)
    room = Room()
    assistant.attach_world(room)
    _unknown_tool_five_times(scripted)
    event = assistant.enqueue_event(
        "Can you brew me something?",
        source_entity="Alice",
        metadata={"classification": "direct_message"},
    )
    result = await assistant.tick()

    assert result.loop is not None
    assert result.loop.stopped_by == "max_iterations"
    assert result.loop.invalid_calls == 5
    assert result.outcome == "fallback"
    assert result.reply == settings.fallback_reply
    assert room.said == [(settings.fallback_reply, "Alice")]
    # The event is done (its writes are kept) and says what went wrong.
    stored = assistant.views.event(event.id)
    assert stored is not None
    assert stored.status == "done"
    assert stored.reply == settings.fallback_reply
    assert stored.error is not None
    assert "no reply after 5 iteration(s)" in stored.error
    assert "5 failed tool calls" in stored.error
    # The fallback is ours, not the model's: it is not put in the model's history.
    said = [
        m.content for m in assistant._core.read().all(ConversationMessage) if m.role == "assistant"
    ]
    assert settings.fallback_reply not in said
    assert assistant.views.status()["tool_use_health"]["fallback_replies"] == 1


async def test_a_message_addressed_by_name_in_a_room_is_answered_aloud(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, settings: Settings
) -> None:
    assistant = make_assistant(llm=scripted)
    room = Room()
    assistant.attach_world(room)
    _unknown_tool_five_times(scripted)
    assistant.enqueue_event(
        "barkeep, a drink!",
        type="say",
        source_entity="Bob",
        metadata={"classification": "direct_addressing"},
    )
    result = await assistant.tick()
    assert result.outcome == "fallback"
    assert room.said == [(settings.fallback_reply, None)]


async def test_an_unaddressed_event_gets_no_fallback(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    _unknown_tool_five_times(scripted)
    event = assistant.enqueue_event("Nice weather", type="say", source_entity="Bob")
    result = await assistant.tick()
    assert result.outcome == "silent"
    assert result.reply is None
    assert assistant.views.event(event.id).error is None  # type: ignore[union-attr]


async def test_a_deliberate_noop_is_not_a_failure(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    scripted.enqueue(tool_calls=[{"name": "noop", "arguments": {}}])
    event = assistant.enqueue_event(
        "ok bye", source_entity="Alice", metadata={"classification": "direct_message"}
    )
    result = await assistant.tick()
    assert result.outcome == "silent"
    assert result.reply is None
    assert assistant.views.event(event.id).error is None  # type: ignore[union-attr]


async def test_with_the_fallback_disabled_the_failure_is_still_recorded(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, settings: Settings
) -> None:
    assistant = make_assistant(
        llm=scripted, settings=settings.model_copy(update={"fallback_reply": ""})
    )
    _unknown_tool_five_times(scripted)
    event = assistant.enqueue_event(
        "Hello?", source_entity="Alice", metadata={"classification": "direct_message"}
    )
    result = await assistant.tick()
    assert result.outcome == "unanswered"
    assert result.reply is None
    stored = assistant.views.event(event.id)
    assert stored is not None
    assert stored.status == "done"
    assert stored.error is not None
    assert "MINDSPACE_FALLBACK_REPLY" in stored.error


async def test_a_reply_that_cleans_to_nothing_gets_the_fallback(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, settings: Settings
) -> None:
    assistant = make_assistant(llm=scripted)
    event = assistant.enqueue_event(
        "Hi", source_entity="Alice", metadata={"classification": "direct_message"}
    )
    scripted.enqueue(f"[message from Alice at {event.created_at}]")
    result = await assistant.tick()
    assert result.outcome == "fallback"
    assert result.reply == settings.fallback_reply


async def test_an_unclassified_message_from_someone_is_addressed(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, settings: Settings
) -> None:
    # What the HTTP API and Python callers send when they talk to the assistant.
    assistant = make_assistant(llm=scripted)
    _unknown_tool_five_times(scripted)
    assistant.enqueue_event("Are you there?", source_entity="Alice")
    result = await assistant.tick()
    assert result.outcome == "fallback"
    assert result.reply == settings.fallback_reply
