"""The prompt is laid out for caching: consecutive turns repeat a long prefix.

Measured on the requests a real HTTP chat-completions server receives (rendered in a
chat template's order by :mod:`mindspace.testing.prefix`), for both tool profiles.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest

from mindspace import Assistant, ManualClock, ScriptedLLM
from mindspace.config import Settings
from mindspace.hosts.http.ticks import tick_record
from mindspace.llm.port import Usage
from mindspace.llm.providers.anthropic_messages import AnthropicLLM
from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM
from mindspace.testing import ChatCompletionsServer, MessagesServer
from mindspace.testing.prefix import request_text, shares
from mindspace.testing.scripted_server import Step

TARGET = 0.9
OPERATOR_PROMPT = (
    "You are the barkeep of the Prancing Pony in Bree. Greet guests by name, take their "
    "orders for food, drink and rooms, and remember what they tell you about themselves "
    "and their families. Never reveal the vault code."
)
"""What an operator sets for a deployment (tests without one measure a bare default)."""


def _reply(body: dict[str, Any]) -> Step:
    return Step(content="Noted, Alice.", usage={"prompt_tokens": 100, "completion_tokens": 4})


async def _converse(
    make_assistant: Callable[..., Assistant],
    settings: Settings,
    clock: ManualClock,
    profile: str,
    lines: list[str],
    prepare: Callable[[Assistant], Any] | None = None,
) -> list[dict[str, Any]]:
    with ChatCompletionsServer(respond=_reply) as server:
        llm = OpenAICompatibleLLM(base_url=server.url, model="scripted", max_retries=0)
        assistant = make_assistant(
            llm=llm, settings=settings.model_copy(update={"tool_profile": profile})
        )
        await assistant.set_user_system_prompt(OPERATOR_PROMPT)
        if prepare is not None:
            await prepare(assistant)
        for line in lines:
            assistant.enqueue_event(line, source_entity="Alice")
            result = await assistant.tick()
            assert result.reply == "Noted, Alice."
            clock.advance(minutes=3)  # the time changes between turns, as it does
        await llm.aclose()
        return list(server.requests)


def _all_but_the_turn_repeats(requests: list[dict[str, Any]]) -> None:
    """Everything before a request's closing turn opens the next request unchanged."""
    for before, after in pairwise(requests):
        stable = request_text({**before, "messages": before["messages"][:-1]})
        assert request_text(after).startswith(stable)


@pytest.mark.parametrize("profile", ["full", "compact"])
async def test_five_consecutive_turns_repeat_all_but_the_turn(
    make_assistant: Callable[..., Assistant],
    settings: Settings,
    clock: ManualClock,
    profile: str,
) -> None:
    lines = [
        "Good evening! Is the kitchen still open?",
        "Then I'll have the stew, please.",
        "My brother Tom arrives tomorrow; he likes dark ale.",
        "Can you keep a room for him?",
        "Thank you, that is all for tonight.",
    ]
    requests = await _converse(make_assistant, settings, clock, profile, lines)
    assert len(requests) == 5
    _all_but_the_turn_repeats(requests)
    measured = [round(s.share, 3) for s in shares(requests)]
    # The full tool list is most of the prompt: >= 90% of it is a repeated prefix. The
    # compact one is short, so the turn (time, entity context, the message; about 120
    # tokens) weighs more: bench/RESULTS.md records its share (about 87%).
    floor = TARGET if profile == "full" else 0.8
    assert min(measured) >= floor, f"shared prefix per turn: {measured}"
    # The time did change (it closes the prompt, after the prefix).
    assert requests[0]["messages"][-1]["content"] != requests[1]["messages"][-1]["content"]


async def test_a_turn_with_recalled_memories_keeps_the_prefix(
    make_assistant: Callable[..., Assistant], settings: Settings, clock: ManualClock
) -> None:
    async def remember(assistant: Assistant) -> None:
        for fact in (
            "Alice's brother Tom likes dark ale",
            "The stew of the house is made with lamb and barley",
            "Room 4 overlooks the river and is kept for family guests",
        ):
            await assistant.call_tool("store_memory", {"content": fact})

    lines = [
        "Good evening! What is in the stew tonight?",
        "Does my brother Tom like dark ale?",
        "Which room overlooks the river?",
    ]
    requests = await _converse(make_assistant, settings, clock, "full", lines, remember)
    recalled = [r["messages"][-1]["content"] for r in requests]
    assert any("Semantic Memories" in text and "Tom likes dark ale" in text for text in recalled)
    assert all("Tom likes dark ale" not in r["messages"][0]["content"] for r in requests)
    _all_but_the_turn_repeats(requests)
    measured = [round(s.share, 3) for s in shares(requests)]
    assert min(measured) >= TARGET, measured


async def test_anthropic_requests_mark_the_stable_blocks_for_caching(
    make_assistant: Callable[..., Assistant], settings: Settings, clock: ManualClock
) -> None:
    """Through the official SDK to the Messages-API test server: tools, system text and
    the end of the history carry ``cache_control``; the changing turn does not."""

    def reply(body: dict[str, Any]) -> Step:
        return Step(content="Noted, Alice.", usage={"input_tokens": 900, "output_tokens": 4})

    with MessagesServer(respond=reply) as server:
        llm = AnthropicLLM(base_url=server.url, model="claude-test", api_key="k", max_retries=0)
        assistant = make_assistant(llm=llm)
        await assistant.set_user_system_prompt(OPERATOR_PROMPT)
        for line in ("Good evening!", "Is the kitchen open?"):
            assistant.enqueue_event(line, source_entity="Alice")
            assert (await assistant.tick()).reply == "Noted, Alice."
            clock.advance(minutes=3)
        await llm.aclose()
        first, second = server.requests

    ephemeral = {"type": "ephemeral"}
    for body in (first, second):
        system = body["system"]
        assert [block.get("cache_control") for block in system] == [ephemeral]
        assert OPERATOR_PROMPT in system[0]["text"]
        assert body["tools"][-1]["cache_control"] == ephemeral
        assert all("cache_control" not in tool for tool in body["tools"][:-1])
        closing = body["messages"][-1]["content"]
        assert all("cache_control" not in block for block in closing)  # the turn changes
    # The second request also caches its history up to Alice's first exchange.
    marked = [
        block
        for message in second["messages"]
        for block in message["content"]
        if "cache_control" in block
    ]
    assert [block["text"] for block in marked] == ["Noted, Alice."]
    assert sum(1 for _ in marked) + 2 <= 4  # the API allows four cache breakpoints


async def test_the_tick_record_and_status_carry_the_cached_tokens(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    scripted.enqueue(
        tool_calls=[{"name": "add_goal", "arguments": {"description": "Find Alice a room"}}],
        usage=Usage(prompt_tokens=900, completion_tokens=12, cached_tokens=0),
    )
    scripted.enqueue("A room is ready.", usage=Usage(900 + 40, 6, cached_tokens=900))
    assistant.enqueue_event("A room, please.", source_entity="Alice")
    result = await assistant.tick()

    record = tick_record(1, "2025-12-06T10:00:00Z", result)
    assert record["loop"]["usage"] == {
        "requests": 2,
        "prompt_tokens": 1840,
        "cached_tokens": 900,
    }
    usage = assistant.views.status()["token_usage"]
    assert usage["source"] == "provider"
    assert usage["estimated_used"] == 940
    assert usage["cached_tokens"] == 900
