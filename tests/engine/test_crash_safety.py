"""A process killed mid-tick, then restarted, completes the event exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from mindspace import Assistant
from mindspace.engine.prompting import history_messages
from mindspace.testing import ChatCompletionsServer

WORKER = textwrap.dedent(
    """
    import asyncio, sys
    from mindspace import Assistant
    from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM
    from mindspace.testing.assistants import assistant_on
    from mindspace.llm.providers.openai_compat import OpenAICompatibleLLM
    from mindspace.storage import SqlStore

    async def main() -> None:
        llm = OpenAICompatibleLLM(base_url=sys.argv[2], model="scripted", max_retries=0)
        assistant = assistant_on(SqlStore.from_path(sys.argv[1]), "npc", llm=llm)
        while True:
            result = await assistant.tick()
            print("tick", result.kind, result.status, flush=True)
            if result.kind != "event":
                return

    asyncio.run(main())
    """
)

TOOL_ROUND = [
    {
        "name": "create_project",
        "arguments": {"project_key": "cellar", "summary": "Restock the cellar"},
    },
    {"name": "add_goal", "arguments": {"description": "Buy ten barrels of ale"}},
    {
        "name": "add_session_memory",
        "arguments": {"memory_type": "fact", "content": "The cellar holds twenty barrels"},
    },
]


def _worker(db: Path, url: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(db), url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def test_sigkill_mid_tick_then_restart_completes_the_event_once(
    db_path: Path,
    chat_server: ChatCompletionsServer,
    make_assistant: Callable[..., Assistant],
) -> None:
    observer = make_assistant("npc")
    event = observer.enqueue_event("Please restock the cellar", source_entity="Cook")

    # First run: the tools of round one run, then the model "hangs" and we kill the process.
    chat_server.reply(tool_calls=TOOL_ROUND)
    gate = chat_server.hold()
    first = _worker(db_path, chat_server.url)
    try:
        assert gate.arrived.wait(timeout=60), "the worker never reached its second LLM call"
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=30)
    finally:
        gate.release()
        if first.poll() is None:
            first.kill()
    assert first.returncode == -signal.SIGKILL

    interrupted = observer.views.event(event.id)
    assert interrupted is not None
    assert (interrupted.status, interrupted.attempts) == ("processing", 1)
    assert observer.views.goals().all() == []  # nothing of the killed tick was stored
    assert observer.views.projects().all() == []

    # Second run: the model answers; the event is processed from the start, once.
    chat_server.reply(tool_calls=TOOL_ROUND)
    chat_server.reply("The cellar will be full by tonight.")
    second = _worker(db_path, chat_server.url)
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    assert out.splitlines()[0] == "tick event done"

    done = observer.views.event(event.id)
    assert done is not None
    assert (done.status, done.attempts) == ("done", 2)
    assert done.reply == "The cellar will be full by tonight."
    assert [g.description for g in observer.views.goals().all()] == ["Buy ten barrels of ale"]
    assert [p.key for p in observer.views.projects().all()] == ["cellar"]
    assert observer.views.session_memory().key_facts == ("The cellar holds twenty barrels",)
    roles = [m.role for m in history_messages(observer._core.read(), "Cook")]
    assert roles == ["user", "assistant", "tool", "tool", "tool", "assistant"]


async def test_an_event_that_keeps_crashing_is_given_up_with_a_reason(
    make_assistant: Callable[..., Assistant],
) -> None:
    assistant = make_assistant("npc")
    event = assistant.enqueue_event("Poison", source_entity="Mallory")
    queue = assistant._ticker.queue
    queue.mark(event, attempts=3, status="processing")  # as three crashed runs leave it
    result = await assistant.tick()
    assert result.status == "failed"
    failed = assistant.views.event(event.id)
    assert failed is not None
    assert failed.status == "failed"
    assert "after 3 interrupted attempts" in (failed.error or "")


class _BrokenEmbedder:
    """An embedder that is down: every formation of the event's words fails."""

    name = "broken"
    dim = 8

    def embed(self, texts: Sequence[str]) -> Any:
        raise RuntimeError("the embedder is down")


async def test_an_event_whose_words_cannot_be_kept_counts_its_attempts_and_is_given_up(
    make_assistant: Callable[..., Assistant],
) -> None:
    # The event is taken (processing, its attempt counted) in the commit that keeps its
    # words; when that commit never happens, each attempt is still counted.
    assistant = make_assistant("npc", embedder=_BrokenEmbedder())
    event = assistant.enqueue_event("My brother Tom sails the Wren.", source_entity="Bob")
    for attempt in (1, 2, 3):
        with pytest.raises(RuntimeError, match="the embedder is down"):
            await assistant.tick()
        taken = assistant.views.event(event.id)
        assert taken is not None
        assert (taken.status, taken.attempts) == ("processing", attempt)
    result = await assistant.tick()
    assert (result.kind, result.status) == ("event", "failed")
    failed = assistant.views.event(event.id)
    assert failed is not None
    assert failed.status == "failed"
    assert "after 3 interrupted attempts" in (failed.error or "")
