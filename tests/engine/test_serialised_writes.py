"""Facade writes during a running tick wait for it to commit instead of racing it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from mindspace import Assistant
from mindspace.llm import FunctionLLM
from mindspace.llm.port import Message, ToolSchema


class HeldModel:
    """A model that answers only once the test lets it (the tick holds meanwhile)."""

    def __init__(self) -> None:
        self.thinking = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, messages: Sequence[Message], tools: Sequence[ToolSchema]) -> str:
        self.thinking.set()
        await self.release.wait()
        return "Coming right up."


async def _yield_often() -> None:
    # Lets every ready task run (no time passes); a task still pending after this waits.
    for _ in range(50):
        await asyncio.sleep(0)


async def test_writes_started_during_a_tick_complete_after_it_commits(
    make_assistant: Callable[..., Assistant],
) -> None:
    model = HeldModel()
    assistant = make_assistant(llm=FunctionLLM(model))
    event = assistant.enqueue_event("An ale, please", source_entity="Alice")

    tick = asyncio.create_task(assistant.tick())
    await asyncio.wait_for(model.thinking.wait(), timeout=10)
    sleep = asyncio.create_task(assistant.sleep("closing time"))
    goal = asyncio.create_task(assistant.call_tool("add_goal", {"description": "Wash the mugs"}))
    prompt = asyncio.create_task(assistant.set_user_system_prompt("Be brief."))
    await _yield_often()

    assert not sleep.done()
    assert not goal.done()
    assert not prompt.done()
    assert assistant.views.mode().mode == "awake"
    assert assistant.views.goals().all() == []

    model.release.set()
    result = await asyncio.wait_for(tick, timeout=10)
    mode, added, _ = await asyncio.wait_for(asyncio.gather(sleep, goal, prompt), timeout=10)

    # The tick ran awake to the end; every write then landed on top of it (no
    # ConcurrencyError, nothing lost).
    assert result.status == "done"
    assert result.mode == "awake"
    assert result.reply == "Coming right up."
    assert mode.mode == "sleep"
    assert added["success"] is True
    assert assistant.views.mode().mode == "sleep"
    assert [g.description for g in assistant.views.goals().all()] == ["Wash the mugs"]
    assert assistant.views.user_system_prompt() == "Be brief."
    stored_event = assistant.views.event(event.id)
    assert stored_event is not None
    assert stored_event.status == "done"
