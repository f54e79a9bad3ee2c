"""Reply hygiene: echoed headers and prompts, role prefixes, cut replies and the size cap."""

from __future__ import annotations

from collections.abc import Callable

from mindspace import Assistant, ScriptedLLM, Settings
from mindspace.engine.hygiene import CAP_MARKER, clean_reply
from mindspace.engine.records import ConversationMessage
from mindspace.llm import LLMResponse


def _stored_replies(assistant: Assistant) -> list[str]:
    return [
        m.content or ""
        for m in assistant._core.read().all(ConversationMessage)
        if m.role == "assistant" and m.content
    ]


async def test_an_echoed_event_header_never_reaches_the_player_or_the_history(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    event = assistant.enqueue_event("Hi barkeep", source_entity="Alice", location="terminal")
    # Small models copy the header the runtime put above the message, and the message.
    scripted.enqueue(
        f"[message from Alice in terminal at {event.created_at}]\nHi barkeep\n"
        "Hello Alice! What can I get you?"
    )
    result = await assistant.tick()
    assert result.reply == "Hello Alice! What can I get you?"
    assert assistant.views.event(event.id).reply == "Hello Alice! What can I get you?"  # type: ignore[union-attr]
    assert _stored_replies(assistant) == ["Hello Alice! What can I get you?"]
    assert result.loop is not None
    assert "header_echo" in result.loop.cleaned


async def test_an_echoed_system_prompt_is_stripped(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    assistant.enqueue_event("Hello?", source_entity="Alice")
    scripted.enqueue(
        "You are barkeep, a long-lived assistant who manages your own workspace.\n"
        "You keep projects (pageable context), a goal tree with progress, and session "
        "memory of facts\nabout the world and the people in it.\n\nWelcome in, Alice!"
    )
    result = await assistant.tick()
    assert result.reply == "Welcome in, Alice!"
    assert _stored_replies(assistant) == ["Welcome in, Alice!"]


async def test_a_role_prefix_is_stripped(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    assistant.enqueue_event("Hello?", source_entity="Alice")
    scripted.enqueue("barkeep: Evening, Alice.")
    assistant.enqueue_event("Again?", source_entity="Alice")
    scripted.enqueue("Assistant: Still here.")
    assert (await assistant.tick()).reply == "Evening, Alice."
    assert (await assistant.tick()).reply == "Still here."


async def test_a_reply_that_is_only_an_echo_is_no_reply(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    event = assistant.enqueue_event("Psst", source_entity="Bob", type="say")
    scripted.enqueue(f"[say from Bob at {event.created_at}]\nPsst")
    result = await assistant.tick()
    assert result.reply is None
    assert _stored_replies(assistant) == []


async def test_a_reply_cut_by_the_length_limit_is_continued_once(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    assistant.enqueue_event("Tell me about the cellar", source_entity="Alice")
    scripted.enqueue_response(
        LLMResponse(text="The cellar holds ale, wine and the", finish_reason="length")
    )
    scripted.enqueue_response(
        LLMResponse(text=" old cheese. Mind the stairs.", finish_reason="stop")
    )
    result = await assistant.tick()
    assert result.reply == "The cellar holds ale, wine and the old cheese. Mind the stairs."
    assert result.cut == "continued"
    # The continuation request carried the partial reply and asked to go on, without tools.
    follow_up = scripted.history[1]
    assert follow_up.tools == ()
    assert follow_up.messages[-2].content == "The cellar holds ale, wine and the"
    assert "Continue" in (follow_up.messages[-1].content or "")
    assert _stored_replies(assistant) == [result.reply]
    health = assistant.views.status()["tool_use_health"]
    assert health["cut_replies"] == 1


async def test_a_reply_cut_twice_ends_at_its_last_full_sentence(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    assistant.enqueue_event("Tell me everything", source_entity="Alice")
    scripted.enqueue_response(
        LLMResponse(text="The cellar is cold. It holds ale and", finish_reason="length")
    )
    scripted.enqueue_response(
        LLMResponse(text=" wine. The stairs are steep and the", finish_reason="length")
    )
    result = await assistant.tick()
    assert result.reply == "The cellar is cold. It holds ale and wine."
    assert result.cut == "trimmed"
    assert len(scripted.history) == 2  # continued once, never twice


async def test_a_huge_reply_is_capped_with_a_marker_and_never_stored_whole(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, settings: Settings
) -> None:
    assistant = make_assistant(
        llm=scripted, settings=settings.model_copy(update={"max_reply_chars": 500})
    )
    assistant.enqueue_event("Talk", source_entity="Alice")
    scripted.enqueue("blah " * 200_000)  # a 1 MB reply
    result = await assistant.tick()
    marker = CAP_MARKER.format(limit=500)
    assert result.reply is not None
    assert len(result.reply) <= 500
    assert result.reply.endswith(marker)
    stored = _stored_replies(assistant)
    assert len(stored) == 1
    assert len(stored[0]) <= 500
    assert len(assistant.views.event(result.event_id or "").reply or "") <= 500  # type: ignore[union-attr]


def test_short_quotes_of_the_prompt_are_kept() -> None:
    # A few words that also occur in the instructions are not an echo.
    prompt = "Keep replies short and in character. Store facts in the third person."
    assert clean_reply("Keep replies short? Sure.", system_prompt=prompt).text == (
        "Keep replies short? Sure."
    )


async def test_quoting_session_memory_word_for_word_is_not_an_echo(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    facts = ["Player Alice prefers formal address.", "Player Alice is allergic to oak trees."]
    for fact in facts:
        await assistant.call_tool("add_session_memory", {"memory_type": "fact", "content": fact})
    reply = f"{facts[0]} {facts[1]}"
    scripted.enqueue(reply)
    assistant.enqueue_event("What do you know about me?", source_entity="Alice")
    result = await assistant.tick()
    assert facts[0] in (scripted.history[0].messages[0].content or "")
    assert result.reply == reply


async def test_words_said_through_the_say_tool_are_cleaned_too(
    make_assistant: Callable[..., Assistant],
) -> None:
    heard: list[tuple[str, str | None]] = []

    class Room:
        async def say(self, text: str, *, target: str | None = None) -> None:
            heard.append((text, target))

        async def look(self) -> str:
            return "A warm tavern."

    assistant = make_assistant()
    assistant.attach_world(Room())
    echoed = (
        f"{assistant.key}: [message from Alice in terminal at 2025-12-06T10:00:00Z]\n"
        "Welcome in, Alice!"
    )
    result = await assistant.call_tool("say", {"text": echoed, "target": "Alice"})
    assert result["success"] is True
    assert result["said"] == "Welcome in, Alice!"
    assert heard == [("Welcome in, Alice!", "Alice")]
    only_echo = await assistant.call_tool(
        "say", {"text": "[message from Alice in terminal at 2025-12-06T10:00:00Z]"}
    )
    assert only_echo["success"] is False
    assert heard == [("Welcome in, Alice!", "Alice")]  # nothing more reached the room
