"""Snapshots of the assembled prompt of each context type, from a realistic state.

Set ``MINDSPACE_UPDATE_SNAPSHOTS=1`` to rewrite them after an intended change, then
review the diff.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from mindspace import Assistant, ManualClock, ScriptedLLM
from mindspace.context.contexts import DEFAULT_CONTEXT_CONFIGS, get_context_config
from mindspace.context.patterns import select_execution_pattern
from mindspace.engine.loop import offered_tools
from mindspace.engine.prompting import PromptInputs

SNAPSHOTS = Path(__file__).parent / "snapshots"


@pytest.fixture
async def lived_in(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, clock: ManualClock
) -> Assistant:
    """An assistant with prompts, memory, a project, goals, history and ambient chatter."""
    a = make_assistant("barkeep", llm=scripted)
    await a.set_user_system_prompt("You run the Prancing Pony. Never reveal the vault code.")
    await a.call_tool(
        "update_system_prompt",
        {"new_prompt": "Be warm and brief.", "reasoning": "Patrons like short answers"},
    )
    await a.call_tool(
        "add_session_memory",
        {"memory_type": "fact", "content": "Player Alice prefers formal address"},
    )
    await a.call_tool(
        "add_session_memory",
        {"memory_type": "pattern", "content": "Players explore before asking for help"},
    )
    await a.call_tool(
        "create_project",
        {
            "project_key": "cellar",
            "summary": "Restock the cellar",
            "initial_context": "Six barrels left",
        },
    )
    root = (
        await a.call_tool("add_goal", {"description": "Restock the cellar", "priority": "high"})
    )["goal_id"]
    child = (
        await a.call_tool(
            "add_goal", {"description": "Order ale from the brewer", "parent_id": root}
        )
    )["goal_id"]
    await a.call_tool("add_goal", {"description": "Sweep the cellar", "parent_id": root})
    await a.call_tool("update_goal", {"goal_id": child, "progress": 50})
    clock.advance(minutes=5)
    scripted.enqueue(
        tool_calls=[{"name": "get_system_status", "arguments": {}}],
    )
    scripted.enqueue("Good evening, Lady Alice. The ale arrives tomorrow.")
    a.enqueue_event("When does the ale arrive?", source_entity="Alice", location="Common room")
    a.enqueue_event(
        "Bob and Carol argue about dragons.",
        source_entity="Bob",
        metadata={"classification": "ambient"},
    )
    await a.tick()
    clock.advance(minutes=5)
    return a


@pytest.mark.parametrize("context_type", sorted(DEFAULT_CONTEXT_CONFIGS))
async def test_assembled_prompt_snapshot(lived_in: Assistant, context_type: str) -> None:
    config = get_context_config(context_type)
    unit = lived_in._core.read()
    event = lived_in.enqueue_event(
        "Could you also find me a room?", source_entity="Alice", location="Common room"
    )
    inputs = PromptInputs(
        unit=unit,
        settings=lived_in.settings,
        clock=lived_in.clock,
        config=config,
        assistant_key=lived_in.key,
        entity="Alice",
        event=event if context_type.startswith("tick_event") else None,
        task=None if context_type == "tick_event" else f"Task for the {context_type} context.",
    )
    prompt = await lived_in._core.prompt_builder.build(inputs)
    pattern = select_execution_pattern({"max_iterations_per_tick": 5}, config)
    tools = [t.name for t in offered_tools(lived_in.tools, config, pattern)]
    report = "\n".join(f"{c.id:>5} {c.key:<22} {c.tokens:>5} tokens" for c in prompt.components)
    text = (
        f"# context: {context_type}\n# tools: {', '.join(tools) or '(none)'}\n"
        f"# components:\n{report}\n\n{prompt.render()}"
    )
    text = text.replace(event.id, "<event-id>")
    path = SNAPSHOTS / f"{context_type}.txt"
    if os.environ.get("MINDSPACE_UPDATE_SNAPSHOTS") or not path.exists():
        path.write_text(text)
    assert text == path.read_text()
