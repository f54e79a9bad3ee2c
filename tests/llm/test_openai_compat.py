"""The OpenAI-compatible adapter against the test server: tool_choice, bad answers, retries."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx2
import openai
import pytest

from mindspace import Assistant
from mindspace.config import Settings
from mindspace.errors import (
    LLMAuthenticationError,
    LLMConnectionError,
    LLMProviderError,
    LLMRateLimitError,
    LLMResponseError,
)
from mindspace.llm.port import Message, ToolCall, Usage, close_llm
from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM, timeout_kind
from mindspace.runtime import build_llm
from mindspace.testing import ChatCompletionsServer, QuirkSettings, Step

TOOL = {
    "type": "function",
    "function": {
        "name": "add_goal",
        "description": "Add a goal",
        "parameters": {"type": "object", "properties": {"description": {"type": "string"}}},
    },
}
HELLO = [Message(role="user", content="hello")]

MakeLLM = Callable[..., OpenAICompatibleLLM]


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
async def make_llm(sleeps: list[float]) -> AsyncIterator[MakeLLM]:
    """Adapters on the test's loop that record backoff instead of sleeping."""
    made: list[OpenAICompatibleLLM] = []

    async def record(delay: float) -> None:
        sleeps.append(delay)

    def make(server: ChatCompletionsServer, **options: Any) -> OpenAICompatibleLLM:
        options.setdefault("max_retries", 3)
        made.append(
            OpenAICompatibleLLM(
                base_url=server.url, model="scripted", api_key="t", sleep=record, **options
            )
        )
        return made[-1]

    yield make
    for llm in made:
        await close_llm(llm)


async def test_tool_choice_auto_is_sent_whenever_tools_are_offered(make_llm: MakeLLM) -> None:
    with ChatCompletionsServer() as server:
        server.reply("a")
        server.reply("b")
        llm = make_llm(server)
        await llm.complete(HELLO, [TOOL])
        await llm.complete(HELLO)
    with_tools, without = server.requests
    assert with_tools["tool_choice"] == "auto"
    assert with_tools["tools"] == [TOOL]
    assert "tool_choice" not in without
    assert "tools" not in without


async def test_tool_choice_omit_never_sends_it(
    make_llm: MakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ChatCompletionsServer() as server:
        server.reply("a")
        monkeypatch.setenv("MINDSPACE_LLM_TOOL_CHOICE", "omit")
        built = build_llm(Settings(llm_base_url=server.url, llm_model="scripted"))
        assert isinstance(built, OpenAICompatibleLLM)
        try:
            await built.complete(HELLO, [TOOL])
        finally:
            await close_llm(built)
    assert "tool_choice" not in server.requests[0]


async def test_a_server_that_needs_tool_choice_gets_native_tool_calls(make_llm: MakeLLM) -> None:
    with ChatCompletionsServer(quirks=["tools_need_tool_choice"]) as server:
        server.reply(tool_calls=[{"name": "add_goal", "arguments": {"description": "x"}}])
        answer = await make_llm(server).complete(HELLO, [TOOL])
    assert answer.tool_calls[0].name == "add_goal"
    assert json.loads(answer.tool_calls[0].arguments) == {"description": "x"}
    assert answer.finish_reason == "tool_calls"


async def test_two_calls_share_one_kept_alive_connection(make_llm: MakeLLM) -> None:
    with ChatCompletionsServer() as server:
        server.reply("one")
        server.reply("two")
        llm = make_llm(server)
        texts = [(await llm.complete(HELLO)).text, (await llm.complete(HELLO)).text]
        assert texts == ["one", "two"]
        assert server.connections == 1


async def test_a_body_that_is_not_json_is_a_response_error_after_bounded_retries(
    make_llm: MakeLLM, sleeps: list[float]
) -> None:
    with ChatCompletionsServer(quirks=["bad_json"]) as server:
        for _ in range(4):
            server.reply("unused")
        with pytest.raises(LLMResponseError) as caught:
            await make_llm(server, max_retries=2).complete(HELLO)
    message = str(caught.value)
    assert repr(server.url) in message
    assert "'not json {'" in message
    assert len(server.requests) == 3  # the first attempt and two retries, as for a 5xx
    assert sleeps == [0.5, 1.0]


@pytest.mark.parametrize(
    ("body", "what"),
    [
        (b"not json {", "not JSON"),
        (b'{"id": "x", "object": "chat.completion"}', "without choices"),
        (b'{"choices": []}', "without choices"),
        (b'{"choices": [{"index": 0, "finish_reason": "stop"}]}', "without a message"),
        (b'{"choices": [{"message": {"content": {"a": 1}}}]}', "content is not text"),
        (b"[1, 2, 3]", "without choices"),
    ],
)
async def test_malformed_answers_are_retried_then_answered(
    make_llm: MakeLLM, sleeps: list[float], body: bytes, what: str
) -> None:
    with ChatCompletionsServer() as server:
        server.push(Step(body=body))
        server.reply("fine now")
        answer = await make_llm(server).complete(HELLO)
        assert answer.text == "fine now"
        assert sleeps == [0.5]
        server.push(Step(body=body))
        with pytest.raises(LLMResponseError, match=what) as caught:
            await make_llm(server, max_retries=0).complete(HELLO)
    assert repr(body.decode()[:200]) in str(caught.value)


async def test_a_long_malformed_body_is_quoted_in_short(make_llm: MakeLLM) -> None:
    with ChatCompletionsServer() as server:
        server.push(Step(body=b"<html>" + b"x" * 5000))
        with pytest.raises(LLMResponseError) as caught:
            await make_llm(server, max_retries=0).complete(HELLO)
    assert repr("<html>" + "x" * 194) in str(caught.value)
    assert "x" * 195 not in str(caught.value)


async def test_lone_surrogates_are_replaced_before_sending(make_llm: MakeLLM) -> None:
    tool = json.loads(json.dumps(TOOL))
    tool["function"]["description"] = "Add a goal \udc80"
    history = [
        Message(role="system", content="be kind \ud800 always"),
        Message(
            role="assistant",
            tool_calls=(ToolCall(id="c1", name="add_goal", arguments='{"d": "\udfff"}'),),
        ),
        Message(role="tool", tool_call_id="c1", content="ok \ud83d\ude00"),
    ]
    with ChatCompletionsServer() as server:
        server.reply("kind")
        answer = await make_llm(server).complete(history, [tool])
    assert answer.text == "kind"
    sent = server.requests[0]
    assert sent["messages"][0]["content"] == "be kind \ufffd always"
    assert sent["messages"][1]["tool_calls"][0]["function"]["arguments"] == '{"d": "\ufffd"}'
    assert sent["messages"][2]["content"] == "ok \U0001f600"  # a split pair is joined
    assert sent["tools"][0]["function"]["description"] == "Add a goal \ufffd"


async def test_loading_model_503s_are_retried_with_backoff(
    make_llm: MakeLLM, sleeps: list[float]
) -> None:
    settings = QuirkSettings(loading_requests=2)
    with ChatCompletionsServer(quirks=["loading"], quirk_settings=settings) as server:
        server.reply("loaded")
        answer = await make_llm(server).complete(HELLO)
    assert answer.text == "loaded"
    assert sleeps == [0.5, 1.0]


async def test_a_model_that_keeps_loading_fails_with_its_message(
    make_llm: MakeLLM, sleeps: list[float]
) -> None:
    settings = QuirkSettings(loading_requests=10)
    with (
        ChatCompletionsServer(quirks=["loading"], quirk_settings=settings) as server,
        pytest.raises(LLMProviderError, match="answered 503: Loading model"),
    ):
        await make_llm(server, max_retries=3).complete(HELLO)
    assert len(server.requests) == 4
    assert sleeps == [0.5, 1.0, 2.0]


async def test_retry_after_is_honoured(make_llm: MakeLLM, sleeps: list[float]) -> None:
    with ChatCompletionsServer() as server:
        server.fail(503, retry_after=7)
        server.fail(429, retry_after=120)
        server.reply("ok")
        assert (await make_llm(server).complete(HELLO)).text == "ok"
    assert sleeps == [7.0, 30.0]  # capped at 30 s


async def test_a_read_timeout_is_retried_only_once(make_llm: MakeLLM, sleeps: list[float]) -> None:
    settings = QuirkSettings(slow_seconds=0.4)
    with ChatCompletionsServer(quirks=["slow"], quirk_settings=settings) as server:
        for _ in range(5):
            server.reply("too late")
        llm = make_llm(server, timeout=0.1, max_retries=4)
        with pytest.raises(LLMConnectionError, match="did not answer in time") as caught:
            await llm.complete(HELLO)
        assert "MINDSPACE_LLM_TIMEOUT" in str(caught.value)
        await asyncio.sleep(0.05)  # the requests are recorded as they arrive
        assert len(server.requests) == 2  # not 5: the server is still generating
        assert len(sleeps) == 1


async def test_a_slow_server_within_the_timeout_answers(make_llm: MakeLLM) -> None:
    settings = QuirkSettings(slow_seconds=0.2)
    with ChatCompletionsServer(quirks=["slow"], quirk_settings=settings) as server:
        server.reply("patient")
        answer = await make_llm(server, timeout=2.0).complete(HELLO)
    assert answer.text == "patient"


async def test_length_and_missing_usage_are_reported(make_llm: MakeLLM) -> None:
    settings = QuirkSettings(length_words=2)
    with ChatCompletionsServer(quirks=["length", "no_usage"], quirk_settings=settings) as server:
        server.reply("The stew is ready now")
        answer = await make_llm(server).complete(HELLO)
    assert (answer.text, answer.finish_reason, answer.usage) == ("The stew", "length", None)


async def test_the_prompt_tokens_read_from_the_cache_are_kept(make_llm: MakeLLM) -> None:
    """As llama.cpp, vLLM and OpenAI report them: ``usage.prompt_tokens_details``."""
    answer_body = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": 5000,
            "completion_tokens": 3,
            "total_tokens": 5003,
            "prompt_tokens_details": {"cached_tokens": 4864},
        },
    }
    with ChatCompletionsServer() as server:
        server.push(Step(body=json.dumps(answer_body).encode()))
        server.reply("Again")  # a server without the details: nothing cached
        first = await make_llm(server).complete(HELLO)
        second = await make_llm(server).complete(HELLO)
    assert first.usage == Usage(prompt_tokens=5000, completion_tokens=3, cached_tokens=4864)
    assert second.usage is not None
    assert second.usage.cached_tokens == 0


async def test_tool_calls_written_as_text_stay_text(make_llm: MakeLLM) -> None:
    with ChatCompletionsServer(quirks=["text_tool_calls_tags"]) as server:
        server.reply(tool_calls=[{"name": "add_goal", "arguments": {"description": "x"}}])
        answer = await make_llm(server).complete(HELLO, [TOOL])
    assert answer.tool_calls == ()
    assert (answer.text or "").startswith("<tool_call>")


async def test_refused_connections_are_retried_then_clear(
    sleeps: list[float], unused_port: int
) -> None:
    async def record(delay: float) -> None:
        sleeps.append(delay)

    llm = OpenAICompatibleLLM(
        base_url=f"http://127.0.0.1:{unused_port}/v1", model="m", max_retries=2, sleep=record
    )
    try:
        with pytest.raises(LLMConnectionError, match="check MINDSPACE_LLM_BASE_URL"):
            await llm.complete(HELLO)
    finally:
        await llm.aclose()
    assert sleeps == [0.5, 1.0]


def test_timeouts_are_told_apart_by_their_cause() -> None:
    request = httpx_request()
    for cause, kind in [
        (type("ConnectTimeout", (Exception,), {})(), "connect"),
        (type("ReadTimeout", (Exception,), {})(), "read"),
    ]:
        error = openai.APITimeoutError(request=request)
        error.__cause__ = cause
        assert timeout_kind(error) == kind
    assert timeout_kind(ValueError("x")) is None


def httpx_request() -> Any:
    return httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")


@pytest.fixture
def unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_models_are_listed_with_their_extra_fields(make_llm: MakeLLM) -> None:
    with ChatCompletionsServer(model="qwen", model_info={"max_model_len": 32768}) as server:
        models = await make_llm(server).list_models()
    assert models[0]["id"] == "qwen"
    assert models[0]["max_model_len"] == 32768


@pytest.fixture
def unanswered_port() -> Iterator[int]:
    """A port whose accept queue is full, so a new connection times out connecting."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = int(server.getsockname()[1])
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            filler.connect(("127.0.0.1", port))
        fillers.append(filler)
    yield port
    for sock in [*fillers, server]:
        sock.close()


async def test_a_connect_timeout_is_retried_like_a_connection_error(
    sleeps: list[float], unanswered_port: int
) -> None:
    async def record(delay: float) -> None:
        sleeps.append(delay)

    llm = OpenAICompatibleLLM(
        base_url=f"http://127.0.0.1:{unanswered_port}/v1",
        model="m",
        timeout=30,
        connect_timeout=0.05,
        max_retries=2,
        sleep=record,
    )
    try:
        with pytest.raises(LLMConnectionError, match="Cannot connect") as caught:
            await llm.complete(HELLO)
    finally:
        await llm.aclose()
    assert "MINDSPACE_LLM_CONNECT_TIMEOUT" in str(caught.value)
    assert sleeps == [0.5, 1.0]  # every retry, not just the one a read timeout gets


async def test_a_tick_against_a_server_answering_junk_fails_its_event_cleanly(
    make_assistant: Callable[..., Assistant],
    make_llm: MakeLLM,
    sleeps: list[float],
    stored: Callable[[], dict[str, Any]],
) -> None:
    with ChatCompletionsServer(quirks=["bad_json"]) as server:
        for _ in range(4):
            server.reply(tool_calls=[{"name": "add_goal", "arguments": {"description": "x"}}])
        npc = make_assistant("tavern-npc", llm=make_llm(server, max_retries=2))
        event = npc.enqueue_event("Hello there", source_entity="Bob")
        before = {k: v for k, v in stored().items() if k != "events"}
        result = await npc.tick()
    assert result.status == "failed"
    assert "LLMResponseError" in (result.error or "")
    failed = npc.views.event(event.id)
    assert failed is not None
    assert failed.status == "failed"  # not left 'processing'
    assert "not json {" in (failed.error or "")
    assert sleeps == [0.5, 1.0]
    # Nothing of the model's rounds is kept (no goal); only what Bob said, committed
    # before the model was called (formation: his profile, working memory).
    after = {k: v for k, v in stored().items() if k != "events"}
    assert {k for k in after if after[k] != before.get(k)} == {"entities", "docs", "changes"}
    assert npc.views.goals().all() == []
    bob = npc.views.entity("Bob")
    assert bob is not None
    assert [o.text for o in bob.observations] == ['Bob said: "Hello there"']


@pytest.mark.parametrize(
    ("status", "error", "words"),
    [
        (401, LLMAuthenticationError, "refused the API key; check MINDSPACE_LLM_API_KEY"),
        (404, LLMProviderError, r"answered 404 \(.*\); check MINDSPACE_LLM_MODEL"),
        (400, LLMProviderError, "answered 400"),
        (403, LLMProviderError, "answered 403"),
    ],
)
async def test_refusals_are_not_retried_and_say_what_to_check(
    make_llm: MakeLLM, sleeps: list[float], status: int, error: type[Exception], words: str
) -> None:
    with ChatCompletionsServer() as server:
        server.fail(status)
        with pytest.raises(error, match=words) as caught:
            await make_llm(server).complete(HELLO)
    assert isinstance(caught.value.__cause__, openai.APIStatusError)
    assert str(caught.value).startswith(f"The LLM at {server.url!r}")
    assert (sleeps, len(server.requests)) == ([], 1)


async def test_rate_limiting_is_retried_then_named(make_llm: MakeLLM, sleeps: list[float]) -> None:
    with ChatCompletionsServer() as server:
        server.fail(429, times=3)
        with pytest.raises(LLMRateLimitError, match=r"rate limiting requests \(429\)"):
            await make_llm(server, max_retries=2).complete(HELLO)
    assert (sleeps, len(server.requests)) == ([0.5, 1.0], 3)
