"""Text tool calls and reply hygiene end to end: the real openai client over real HTTP."""

from __future__ import annotations

import json

from mindspace import Assistant
from mindspace.testing import ChatCompletionsServer
from mindspace.workspace.records import Goal


async def test_a_model_that_writes_tool_calls_as_text_still_gets_things_done(
    http_assistant: Assistant, chat_server: ChatCompletionsServer
) -> None:
    call = json.dumps({"name": "add_goal", "arguments": {"description": "Restock the cellar"}})
    # What Qwen or Hermes models behind a server without a tool parser send back.
    chat_server.reply(f"Of course!\n<tool_call>\n{call}\n</tool_call>")
    chat_server.reply("tavern-npc: It's on my list, Alice.")
    http_assistant.enqueue_event(
        "Please restock the cellar",
        source_entity="Alice",
        metadata={"classification": "direct_message"},
    )
    result = await http_assistant.tick()

    assert [g.description for g in http_assistant._core.read().all(Goal)] == ["Restock the cellar"]
    assert result.reply == "It's on my list, Alice."
    # The second request carried the call as a native call and its result under the same id.
    messages = chat_server.requests[1]["messages"]
    assistant_turn = next(m for m in messages if m.get("tool_calls"))
    assert assistant_turn["content"] == "Of course!"
    synthesised = assistant_turn["tool_calls"][0]
    assert synthesised["function"]["name"] == "add_goal"
    tool_turn = next(m for m in messages if m["role"] == "tool")
    assert tool_turn["tool_call_id"] == synthesised["id"]
    assert json.loads(tool_turn["content"])["success"] is True


async def test_a_truncated_text_call_over_http_is_never_the_reply(
    http_assistant: Assistant, chat_server: ChatCompletionsServer
) -> None:
    chat_server.reply('```json\n{"name": "add_goal", "arguments": {"description": "Resto')
    chat_server.reply("Sorry, say that again?")
    http_assistant.enqueue_event(
        "Restock please", source_entity="Alice", metadata={"classification": "direct_message"}
    )
    result = await http_assistant.tick()
    assert result.reply == "Sorry, say that again?"
    assert http_assistant._core.read().all(Goal) == []
    tool_turn = next(m for m in chat_server.requests[1]["messages"] if m["role"] == "tool")
    assert "cut off" in json.loads(tool_turn["content"])["error"]


async def test_five_unknown_tool_calls_over_http_end_in_the_fallback_reply(
    http_assistant: Assistant, chat_server: ChatCompletionsServer
) -> None:
    for n in range(5):
        chat_server.reply(tool_calls=[{"name": "brew_potion", "arguments": {"n": n}}])
    event = http_assistant.enqueue_event(
        "Brew me something", source_entity="Alice", metadata={"classification": "direct_message"}
    )
    result = await http_assistant.tick()
    fallback = http_assistant.settings.fallback_reply
    assert result.outcome == "fallback"
    assert result.reply == fallback
    assert len(chat_server.requests) == 5
    stored = http_assistant.views.event(event.id)
    assert stored is not None
    assert (stored.status, stored.reply) == ("done", fallback)
    assert stored.error is not None
    assert "no reply after 5 iteration(s)" in stored.error
