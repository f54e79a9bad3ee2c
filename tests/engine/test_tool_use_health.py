"""Tool-use health: counts over the last ticks, in status, the CLI and the dashboard summary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from mindspace import Assistant, ScriptedLLM, Settings
from mindspace.engine.records import ConversationMessage, EngineState
from mindspace.workspace.status import NEVER_CALLS_TOOLS_WARNING


def _event(assistant: Assistant, text: str = "Hello") -> None:
    assistant.enqueue_event(text, source_entity="Alice")


async def test_health_counts_valid_invalid_text_only_and_written_calls(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    # Tick 1: one valid native call, one unknown tool, then an answer.
    scripted.enqueue(
        tool_calls=[
            {"name": "add_goal", "arguments": {"description": "Fix the gate"}},
            {"name": "brew_potion", "arguments": {}},
        ]
    )
    scripted.enqueue("Done.")
    _event(assistant)
    await assistant.tick()
    # Tick 2: a call written as text with bad arguments, then an answer.
    scripted.enqueue('{"name": "add_goal", "arguments": {"priority": "urgent"}}')
    scripted.enqueue("Hmm.")
    _event(assistant)
    await assistant.tick()
    # Tick 3: text only.
    scripted.enqueue("Just chatting.")
    _event(assistant)
    await assistant.tick()

    health = assistant.views.status()["tool_use_health"]
    assert health["ticks"] == 3
    assert health["valid_calls"] == 1
    assert health["invalid_calls"] == 2
    assert health["parsed_from_text"] == 1
    assert health["text_only_answers"] == 1  # only tick 3 made no call at all
    assert health["warning"] is None
    # The model sees the same figures through get_system_status.
    tool_view = await assistant.call_tool("get_system_status")
    assert tool_view["tool_use_health"]["valid_calls"] == 1
    # The spec's fields are still all there.
    assert {"token_usage", "token_advisory", "loop_state", "session_metrics", "chain_state"} <= set(
        tool_view
    )


async def test_a_model_that_never_calls_tools_is_warned_about(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    for n in range(4):
        scripted.enqueue(f"Plain answer {n}.")
        _event(assistant)
        await assistant.tick()
    assert assistant.views.status()["tool_use_health"]["warning"] is None
    scripted.enqueue("Plain answer 4.")
    _event(assistant)
    await assistant.tick()
    health = assistant.views.status()["tool_use_health"]
    assert health["ticks_without_valid_call"] == 5
    assert health["warning"] == NEVER_CALLS_TOOLS_WARNING
    assert assistant.views.summary()["tool_use_health"]["warning"] == NEVER_CALLS_TOOLS_WARNING
    # One valid call clears it.
    scripted.enqueue(tool_calls=[{"name": "get_system_status", "arguments": {}}])
    scripted.enqueue("Fine.")
    _event(assistant)
    await assistant.tick()
    assert assistant.views.status()["tool_use_health"]["warning"] is None


async def test_the_window_keeps_only_the_last_ticks(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, settings: Settings
) -> None:
    assistant = make_assistant(
        llm=scripted, settings=settings.model_copy(update={"tool_health_window": 3})
    )
    scripted.enqueue(tool_calls=[{"name": "get_system_status", "arguments": {}}])
    scripted.enqueue("One.")
    _event(assistant)
    await assistant.tick()
    for n in range(3):
        scripted.enqueue(f"Plain {n}.")
        _event(assistant)
        await assistant.tick()
    health = assistant.views.status()["tool_use_health"]
    assert health["window"] == 3
    assert health["ticks"] == 3
    assert health["valid_calls"] == 0  # the tick with the call has left the window


async def test_mindspace_status_prints_the_health_line(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, db_path: Path, tmp_path: Path
) -> None:
    assistant = make_assistant(llm=scripted)
    scripted.enqueue(tool_calls=[{"name": "add_goal", "arguments": {"description": "Sweep"}}])
    scripted.enqueue("Noted.")
    _event(assistant)
    await assistant.tick()
    for n in range(5):
        scripted.enqueue(f"Plain {n}.")
        _event(assistant)
        await assistant.tick()

    env = {k: v for k, v in os.environ.items() if not k.startswith("MINDSPACE_")}
    env.update({"MINDSPACE_DATA_DIR": str(tmp_path), "COLUMNS": "200", "PYTHONIOENCODING": "utf-8"})
    command = [sys.executable, "-m", "mindspace.hosts.cli.app", "status", "--db", str(db_path)]
    process = subprocess.run(
        [*command, "--assistant", "barkeep"],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    assert "last 6 ticks: 1 valid, 0 invalid, 5 text-only" in process.stdout
    assert "the model never calls tools: run `mindspace doctor`" in process.stdout

    process = subprocess.run(
        [*command, "--assistant", "barkeep", "--json"],
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert json.loads(process.stdout)["tool_use_health"]["valid_calls"] == 1


async def test_tool_definitions_come_off_the_history_budget(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, settings: Settings
) -> None:
    budget = 9_000
    assistant = make_assistant(
        llm=scripted, settings=settings.model_copy(update={"context_token_budget": budget})
    )
    with assistant._core.transaction() as unit:
        for n in range(200):
            unit.put(
                ConversationMessage(
                    id=f"m{n}",
                    entity="Alice",
                    role="user" if n % 2 == 0 else "assistant",
                    content=f"Message number {n} about the cellar, the ale and the stairs.",
                    created_at="2025-12-06T09:00:00Z",
                )
            )
        unit.put_doc(unit.doc(EngineState).model_copy(update={"next_message": 200}))
    scripted.enqueue("Hello again.")
    _event(assistant)
    result = await assistant.tick()
    assert result.prompt is not None
    assert result.loop is not None
    history = next(c for c in result.prompt.components if c.key == "conversation_history")
    assert history.truncated
    # What is sent - messages and tool definitions - stays within the budget (the
    # builder's share leaves out section headings and per-message overhead: a few tokens).
    assert result.prompt.estimated_tokens + result.loop.tool_tokens <= budget * 1.01
    # Without the tools taken off, the history alone would have filled the budget.
    assert history.tokens < budget - result.loop.tool_tokens
