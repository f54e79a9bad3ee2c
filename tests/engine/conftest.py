"""Engine fixtures: the scripted chat-completions server and assistants that use it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from mindspace import Assistant
from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM
from mindspace.testing import ChatCompletionsServer


@pytest.fixture
def chat_server() -> Iterator[ChatCompletionsServer]:
    """A running scripted server on loopback."""
    with ChatCompletionsServer() as server:
        yield server


@pytest.fixture
def sleeps() -> list[float]:
    """The backoff delays the adapter asked for (recorded instead of slept)."""
    return []


@pytest.fixture
def http_llm(chat_server: ChatCompletionsServer, sleeps: list[float]) -> OpenAICompatibleLLM:
    """The real OpenAI client pointed at the scripted server."""

    async def record(delay: float) -> None:
        sleeps.append(delay)

    return OpenAICompatibleLLM(
        base_url=chat_server.url, model="scripted", api_key="test", max_retries=3, sleep=record
    )


@pytest.fixture
def http_assistant(
    make_assistant: Callable[..., Assistant], http_llm: OpenAICompatibleLLM
) -> Assistant:
    """An assistant whose model is the scripted server, reached over HTTP."""
    return make_assistant("tavern-npc", llm=http_llm)
