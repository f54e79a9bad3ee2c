"""The Anthropic adapter through the real SDK against the local Messages-API server."""

from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

import anthropic
import httpx2
import pytest

from mindspace import Assistant
from mindspace.config import Settings
from mindspace.errors import (
    ConfigError,
    LLMAuthenticationError,
    LLMConnectionError,
    LLMProviderError,
    LLMRateLimitError,
    LLMResponseError,
)
from mindspace.llm.port import Message, ToolCall, Usage, close_llm
from mindspace.llm.providers.anthropic_messages import ANTHROPIC_ERRORS, AnthropicLLM
from mindspace.runtime import build_llm
from mindspace.testing import MessagesServer, QuirkSettings, Step

TOOL = {
    "type": "function",
    "function": {
        "name": "add_goal",
        "description": "Add a goal",
        "parameters": {"type": "object", "properties": {"description": {"type": "string"}}},
    },
}
HELLO = [Message("system", "You are the barkeep."), Message("user", "hello")]
ADD = {"name": "add_goal", "arguments": {"description": "Fix the gate"}}

MakeLLM = Callable[..., AnthropicLLM]


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
async def make_llm(sleeps: list[float]) -> AsyncIterator[MakeLLM]:
    """Adapters on the test's loop that record backoff instead of sleeping."""
    made: list[AnthropicLLM] = []

    async def record(delay: float) -> None:
        sleeps.append(delay)

    def make(server: MessagesServer, **options: Any) -> AnthropicLLM:
        options.setdefault("max_retries", 3)
        made.append(
            AnthropicLLM(
                base_url=server.url, model="claude-test", api_key="t", sleep=record, **options
            )
        )
        return made[-1]

    yield make
    for llm in made:
        await close_llm(llm)


async def test_the_request_has_a_top_level_system_tools_and_max_tokens(make_llm: MakeLLM) -> None:
    with MessagesServer() as server:
        server.reply("a")
        server.reply("b")
        llm = make_llm(server)
        await llm.complete(HELLO, [TOOL], temperature=1.5)
        await llm.complete(HELLO, max_tokens=64)
    with_tools, without = server.requests
    assert with_tools["system"] == "You are the barkeep."
    assert with_tools["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hello"}]}
    ]
    assert with_tools["tools"] == [
        {
            "name": "add_goal",
            "description": "Add a goal",
            "input_schema": TOOL["function"]["parameters"],  # type: ignore[index]
        }
    ]
    assert with_tools["tool_choice"] == {"type": "auto"}
    assert with_tools["max_tokens"] == 1024  # the API requires one
    assert with_tools["temperature"] == 1.0  # Anthropic's scale ends at 1
    assert with_tools["model"] == "claude-test"
    assert "tools" not in without
    assert "tool_choice" not in without
    assert without["max_tokens"] == 64


async def test_a_tool_round_trip_sends_the_result_as_a_tool_result_block(
    make_llm: MakeLLM,
) -> None:
    with MessagesServer() as server:
        server.reply("Adding it.", tool_calls=[ADD])
        server.reply("Done, the gate is on my list.")
        llm = make_llm(server)
        first = await llm.complete(HELLO, [TOOL])
        (call,) = first.tool_calls
        conversation = [
            *HELLO,
            Message("assistant", first.text, first.tool_calls),
            Message("tool", '{"success": true}', tool_call_id=call.id),
        ]
        second = await llm.complete(conversation, [TOOL])
    assert first.finish_reason == "tool_calls"
    assert (call.name, call.arguments) == ("add_goal", '{"description": "Fix the gate"}')
    assert second.text == "Done, the gate is on my list."
    assert second.finish_reason == "stop"
    sent = server.requests[1]["messages"]
    assert [t["role"] for t in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"][1] == {
        "type": "tool_use",
        "id": call.id,
        "name": "add_goal",
        "input": {"description": "Fix the gate"},
    }
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": call.id, "content": '{"success": true}'}
    ]


async def test_an_overloaded_529_is_retried_on_the_kept_alive_connection(
    make_llm: MakeLLM, sleeps: list[float]
) -> None:
    with MessagesServer() as server:
        server.overloaded(2)
        server.reply("ok", usage={"input_tokens": 12, "output_tokens": 3})
        answer = await make_llm(server).complete(HELLO)
        assert server.connections == 1
    assert (answer.text, answer.usage) == ("ok", Usage(prompt_tokens=12, completion_tokens=3))
    assert sleeps == [0.5, 1.0]
    assert len(server.requests) == 3


async def test_retry_after_is_honoured_and_capped(make_llm: MakeLLM, sleeps: list[float]) -> None:
    with MessagesServer() as server:
        server.fail(429, retry_after=7)
        server.overloaded(retry_after=120)
        server.reply("ok")
        assert (await make_llm(server).complete(HELLO)).text == "ok"
    assert sleeps == [7.0, 30.0]


@pytest.mark.parametrize(
    ("status", "error", "words"),
    [
        (529, LLMProviderError, r"answered 529 \(overloaded"),
        (429, LLMRateLimitError, r"rate limiting requests \(429\)"),
        (500, LLMProviderError, "answered 500"),
    ],
)
async def test_transient_failures_end_in_our_error_after_bounded_retries(
    make_llm: MakeLLM, sleeps: list[float], status: int, error: type[Exception], words: str
) -> None:
    with MessagesServer() as server:
        server.fail(status, times=3)
        with pytest.raises(error, match=words) as caught:
            await make_llm(server, max_retries=2).complete(HELLO)
    assert isinstance(caught.value.__cause__, anthropic.APIStatusError)
    assert len(server.requests) == 3
    assert sleeps == [0.5, 1.0]


@pytest.mark.parametrize(
    ("status", "error", "hint"),
    [
        (401, LLMAuthenticationError, "MINDSPACE_LLM_API_KEY"),
        (403, LLMAuthenticationError, "MINDSPACE_LLM_API_KEY"),
        (404, LLMProviderError, "MINDSPACE_LLM_MODEL"),
        (400, LLMProviderError, "answered 400"),
    ],
)
async def test_refusals_are_not_retried(
    make_llm: MakeLLM, sleeps: list[float], status: int, error: type[Exception], hint: str
) -> None:
    with MessagesServer() as server:
        server.fail(status)
        with pytest.raises(error, match=hint):
            await make_llm(server).complete(HELLO)
    assert sleeps == []
    assert len(server.requests) == 1


async def test_a_malformed_answer_is_retried_then_quoted_in_the_error(
    make_llm: MakeLLM, sleeps: list[float]
) -> None:
    with MessagesServer() as server:
        server.push(Step(body=b'{"type": "message"}'))
        server.reply("fine")
        assert (await make_llm(server).complete(HELLO)).text == "fine"
    with MessagesServer(quirks=["bad_json"]) as server:
        for _ in range(3):
            server.reply("never read")
        with pytest.raises(LLMResponseError, match="not JSON") as caught:
            await make_llm(server, max_retries=2).complete(HELLO)
    assert "'not json {'" in str(caught.value)
    assert "Messages API" in str(caught.value)
    assert sleeps == [0.5, 0.5, 1.0]


async def test_a_read_timeout_is_retried_only_once(make_llm: MakeLLM, sleeps: list[float]) -> None:
    settings = QuirkSettings(slow_seconds=0.4)
    with MessagesServer(quirks=["slow"], quirk_settings=settings) as server:
        for _ in range(5):
            server.reply("too late")
        llm = make_llm(server, timeout=0.1, max_retries=4)
        with pytest.raises(LLMConnectionError, match="did not answer in time"):
            await llm.complete(HELLO)
        await asyncio.sleep(0.05)  # the requests are recorded as they arrive
        assert len(server.requests) == 2
        assert len(sleeps) == 1


async def test_text_only_models_length_and_missing_usage(make_llm: MakeLLM) -> None:
    settings = QuirkSettings(length_words=2)
    with MessagesServer(quirks=["length", "no_usage"], quirk_settings=settings) as server:
        server.reply("The stew is ready now")
        answer = await make_llm(server).complete(HELLO)
    assert (answer.text, answer.finish_reason, answer.usage) == ("The stew", "length", None)
    with MessagesServer(quirks=["text_tool_calls_tags"]) as server:
        server.reply(tool_calls=[ADD])
        answer = await make_llm(server).complete(HELLO, [TOOL])
    assert answer.tool_calls == ()
    assert (answer.text or "").startswith("<tool_call>")


async def test_a_refused_connection_is_retried_then_reported(sleeps: list[float]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])

    async def record(delay: float) -> None:
        sleeps.append(delay)

    llm = AnthropicLLM(
        base_url=f"http://127.0.0.1:{port}", model="m", api_key="k", max_retries=2, sleep=record
    )
    try:
        with pytest.raises(LLMConnectionError, match="check MINDSPACE_LLM_BASE_URL"):
            await llm.complete(HELLO)
    finally:
        await llm.aclose()
    assert sleeps == [0.5, 1.0]


def test_timeouts_are_told_apart_by_their_cause() -> None:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/messages")
    for cause, kind in [
        (type("ConnectTimeout", (Exception,), {})(), "connect"),
        (type("ReadTimeout", (Exception,), {})(), "read"),
    ]:
        error = anthropic.APITimeoutError(request=request)
        error.__cause__ = cause
        assert ANTHROPIC_ERRORS.timeout_kind(error) == kind
    assert ANTHROPIC_ERRORS.timeout_kind(ValueError("x")) is None


async def test_the_provider_is_built_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with MessagesServer() as server:
        server.reply("hi")
        settings = Settings(
            llm_provider="Anthropic",
            llm_base_url=server.url + "/v1/",  # as an OpenAI user would write it
            llm_model="claude-test",
            llm_api_key="secret",  # type: ignore[arg-type]
            llm_max_tokens=77,
        )
        llm = build_llm(settings)
        assert isinstance(llm, AnthropicLLM)
        try:
            answer = await llm.complete([Message("user", "hello")])
        finally:
            await close_llm(llm)
    assert answer.text == "hi"
    assert server.requests[0]["max_tokens"] == 77


def test_missing_settings_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="MINDSPACE_LLM_MODEL"):
        build_llm(Settings(llm_provider="anthropic", llm_api_key="k"))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="MINDSPACE_LLM_API_KEY"):
        build_llm(Settings(llm_provider="anthropic", llm_model="claude-test"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-the-sdk-variable")
    llm = build_llm(Settings(llm_provider="anthropic", llm_model="claude-test"))
    assert isinstance(llm, AnthropicLLM)
    assert llm.base_url == "https://api.anthropic.com"


async def test_a_tick_runs_tools_with_a_model_that_writes_its_calls_as_text(
    make_assistant: Callable[..., Assistant], make_llm: MakeLLM
) -> None:
    with MessagesServer(quirks=["text_tool_calls_tags"]) as server:
        server.reply(tool_calls=[ADD])
        cached = {"input_tokens": 1000, "cache_read_input_tokens": 44000, "output_tokens": 9}
        server.push(Step("The gate is on my list.", usage=cached))
        npc = make_assistant("barkeep", llm=make_llm(server))
        npc.enqueue_event("Could you fix the gate?", source_entity="Alice")
        result = await npc.tick()
    assert result.status == "done", result.error
    assert [g.description for g in npc.views.goals().all()] == ["Fix the gate"]
    # The provider's count, cached prompt tokens included, is the context usage.
    usage = npc.views.status()["token_usage"]
    assert (usage["estimated_used"], usage["source"]) == (45_000, "provider")
    # The call written as text went back as a tool_use/tool_result pair.
    sent = server.requests[1]["messages"]
    assert sent[-2]["content"][-1]["type"] == "tool_use"
    assert sent[-1]["content"][0]["type"] == "tool_result"


def test_tool_calls_of_our_port_keep_their_ids() -> None:
    assert ToolCall("toolu_1", "x", "{}").id == "toolu_1"


def test_without_the_sdk_the_extra_to_install_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)  # import anthropic now fails
    monkeypatch.delitem(sys.modules, "mindspace.llm.providers.anthropic_messages", raising=False)
    settings = Settings(llm_provider="anthropic", llm_model="m", llm_api_key="k")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"pip install -e '\.\[anthropic\]'"):
        build_llm(settings)
