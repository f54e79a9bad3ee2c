"""An event through the real OpenAI client over HTTP: tools run, the reply comes out."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from mindspace import Assistant
from mindspace.engine.prompting import history_messages
from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM
from mindspace.testing import ChatCompletionsServer

Snapshot = Callable[[], dict[str, list[tuple[Any, ...]]]]


def _script_tavern_request(server: ChatCompletionsServer) -> None:
    server.reply(
        tool_calls=[
            {
                "name": "create_project",
                "arguments": {
                    "project_key": "alice_tavern",
                    "summary": "Help Alice build a tavern",
                    "initial_context": "Alice asked in the square",
                },
            },
            {
                "name": "add_goal",
                "arguments": {"description": "Build Alice's tavern", "priority": "high"},
            },
        ]
    )
    server.reply("Gladly, Alice - I have started on your tavern.")


async def test_an_event_runs_tools_and_replies_over_http(
    http_assistant: Assistant,
    chat_server: ChatCompletionsServer,
    make_assistant: Callable[..., Assistant],
) -> None:
    _script_tavern_request(chat_server)
    event = http_assistant.enqueue_event(
        "Can you help me build a tavern?", source_entity="Alice", location="Town square"
    )

    result = await http_assistant.tick()

    assert result.status == "done"
    assert result.reply == "Gladly, Alice - I have started on your tavern."
    assert result.tool_calls == [("create_project", True), ("add_goal", True)]
    stored = http_assistant.views.event(event.id)
    assert stored is not None
    assert stored.status == "done"
    assert stored.reply == result.reply

    # What went over the wire: the tools, the system prompt and the event.
    first, second = chat_server.requests
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {"create_project", "add_goal", "get_system_status"} <= offered
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][-1]["content"].endswith("Can you help me build a tavern?")
    tool_results = [m for m in second["messages"] if m["role"] == "tool"]
    assert len(tool_results) == 2
    assert '"success": true' in tool_results[0]["content"]

    # A fresh process sees the state and the conversation with Alice.
    fresh = make_assistant("tavern-npc")
    assert [p.key for p in fresh.views.projects().all()] == ["alice_tavern"]
    assert [g.description for g in fresh.views.goals().all()] == ["Build Alice's tavern"]
    history = history_messages(fresh._core.read(), "Alice")
    assert [m.role for m in history] == ["user", "assistant", "tool", "tool", "assistant"]
    assert history[0].content == "Can you help me build a tavern?"
    assert history[-1].content == result.reply
    assert history_messages(fresh._core.read(), "Bob") == ()


async def test_history_is_sent_back_on_the_next_event(
    http_assistant: Assistant, chat_server: ChatCompletionsServer
) -> None:
    _script_tavern_request(chat_server)
    http_assistant.enqueue_event("Can you help me build a tavern?", source_entity="Alice")
    await http_assistant.tick()
    chat_server.reply("It is going well.")
    http_assistant.enqueue_event("How is my tavern going?", source_entity="Alice")
    await http_assistant.tick()

    sent = chat_server.requests[-1]["messages"]
    roles = [m["role"] for m in sent]
    assert roles[:1] == ["system"]
    assert roles[1:] == ["user", "assistant", "tool", "tool", "assistant", "user"]
    assert sent[2]["tool_calls"][0]["function"]["name"] == "create_project"
    assert "Help Alice build a tavern" in sent[0]["content"]  # the active project


async def test_two_server_errors_then_success_completes_the_tick(
    http_assistant: Assistant, chat_server: ChatCompletionsServer, sleeps: list[float]
) -> None:
    chat_server.fail(500, times=2)
    chat_server.reply("Welcome!")
    event = http_assistant.enqueue_event("Hello there", source_entity="Bob")
    result = await http_assistant.tick()
    assert result.status == "done"
    assert result.reply == "Welcome!"
    assert sleeps == [0.5, 1.0]
    assert len(chat_server.requests) == 3
    stored = http_assistant.views.event(event.id)
    assert stored is not None
    assert stored.status == "done"


async def test_a_provider_that_keeps_failing_ends_the_tick_with_the_event_failed(
    http_assistant: Assistant,
    chat_server: ChatCompletionsServer,
    sleeps: list[float],
    stored: Snapshot,
    caplog: pytest.LogCaptureFixture,
) -> None:
    chat_server.reply(
        tool_calls=[{"name": "add_goal", "arguments": {"description": "Greet Bob properly"}}]
    )
    chat_server.fail(503, times=4)  # the first try and three retries
    event = http_assistant.enqueue_event("Hello there", source_entity="Bob")
    before = {k: v for k, v in stored().items() if k != "events"}

    with caplog.at_level(logging.WARNING):
        result = await http_assistant.tick()

    assert result.status == "failed"
    assert "LLMProviderError" in (result.error or "")
    assert sleeps == [0.5, 1.0, 2.0]  # bounded: three retries after the first try
    assert len(chat_server.requests) == 5
    failed = http_assistant.views.event(event.id)
    assert failed is not None
    assert failed.status == "failed"
    assert "503" in (failed.error or "")
    assert f"Event {event.id!r} failed" in caplog.text
    # Nothing of the failed tick's model rounds is kept (the goal from its first round
    # included); only what Bob said, committed before the model was called (formation:
    # his profile with the verbatim words, working memory, the event noted as formed) ...
    after = {k: v for k, v in stored().items() if k != "events"}
    assert {k for k in after if after[k] != before.get(k)} == {"entities", "docs", "changes"}
    assert {row[2] for row in after["docs"]} == {"working_memory", "formation"}
    assert http_assistant.views.goals().all() == []
    bob = http_assistant.views.entity("Bob")
    assert bob is not None
    assert [o.text for o in bob.observations] == ['Bob said: "Hello there"']
    # ... and nothing is lost: the event is still there and can be retried.
    retried = await http_assistant.retry_event(event.id)
    assert retried.status == "pending"
    chat_server.reply("Hello, Bob!")
    assert (await http_assistant.tick()).reply == "Hello, Bob!"


async def test_a_refused_key_is_not_retried(
    http_assistant: Assistant, chat_server: ChatCompletionsServer, sleeps: list[float]
) -> None:
    chat_server.fail(401)
    http_assistant.enqueue_event("Hello", source_entity="Bob")
    result = await http_assistant.tick()
    assert result.status == "failed"
    assert "LLMAuthenticationError" in (result.error or "")
    assert sleeps == []


async def test_an_unreachable_endpoint_is_a_clear_connection_error(
    make_assistant: Callable[..., Assistant],
) -> None:
    async def no_wait(delay: float) -> None:
        return None

    llm = OpenAICompatibleLLM(
        base_url="http://127.0.0.1:9/v1", model="m", max_retries=1, sleep=no_wait
    )
    assistant = make_assistant(llm=llm)
    assistant.enqueue_event("Hello", source_entity="Bob")
    result = await assistant.tick()
    assert result.status == "failed"
    assert "Cannot reach the LLM at 'http://127.0.0.1:9/v1'" in (result.error or "")
