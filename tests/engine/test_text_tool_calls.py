"""Tool calls a model wrote as text: run when they name an offered tool, never shown as replies."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from mindspace import Assistant, ScriptedLLM
from mindspace.engine.records import ConversationMessage
from mindspace.llm.parsing.text_calls import scan_text_calls
from mindspace.workspace.records import Goal

GOAL = {"description": "Restock the cellar"}

FORMS = {
    "bare json": json.dumps({"name": "add_goal", "arguments": GOAL}),
    "parameters": json.dumps({"name": "add_goal", "parameters": GOAL}),
    "function wrapper": json.dumps(
        {"type": "function", "function": {"name": "add_goal", "arguments": json.dumps(GOAL)}}
    ),
    "tool key": json.dumps({"tool": "add_goal", "arguments": GOAL}),
    "hermes tags": "<tool_call>\n"
    + json.dumps({"name": "add_goal", "arguments": GOAL})
    + "\n</tool_call>",
    "fenced json": "```json\n" + json.dumps({"name": "add_goal", "arguments": GOAL}) + "\n```",
    "fenced tool_call": "```tool_call\n"
    + json.dumps({"name": "add_goal", "arguments": GOAL})
    + "\n```",
}


@pytest.mark.parametrize("form", sorted(FORMS))
async def test_each_text_form_runs_the_tool_and_is_never_the_reply(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, form: str
) -> None:
    assistant = make_assistant(llm=scripted)
    scripted.enqueue(FORMS[form])
    scripted.enqueue("It's on my list.")
    assistant.enqueue_event("Please restock the cellar", source_entity="Alice")
    result = await assistant.tick()

    assert [g.description for g in assistant._core.read().all(Goal)] == ["Restock the cellar"]
    assert result.reply == "It's on my list."
    assert result.loop is not None
    assert result.loop.calls_from_text == 1
    assert result.loop.valid_calls == 1
    # The model saw its call answered as a tool result, under a synthesised id.
    second = scripted.history[1].messages
    call_message = next(m for m in second if m.tool_calls)
    assert call_message.tool_calls[0].name == "add_goal"
    tool_answer = next(m for m in second if m.role == "tool")
    assert tool_answer.tool_call_id == call_message.tool_calls[0].id
    assert json.loads(tool_answer.content or "{}")["success"] is True
    # Nothing of the call's text is kept as something the assistant said.
    history = [m.content or "" for m in assistant._core.read().all(ConversationMessage)]
    assert not any('"add_goal"' in text for text in history)


async def test_several_calls_in_one_text_all_run(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    text = (
        "Let me note both.\n<tool_call>"
        + json.dumps({"name": "add_goal", "arguments": {"description": "Fix the gate"}})
        + "</tool_call>\n<tool_call>"
        + json.dumps({"name": "add_goal", "arguments": {"description": "Sweep the floor"}})
        + "</tool_call>"
    )
    scripted.enqueue(text)
    scripted.enqueue("Both are on my list.")
    assistant.enqueue_event("Fix the gate and sweep", source_entity="Alice")
    result = await assistant.tick()
    goals = sorted(g.description for g in assistant._core.read().all(Goal))
    assert goals == ["Fix the gate", "Sweep the floor"]
    assert result.reply == "Both are on my list."


async def test_prose_around_a_text_call_is_the_reply_when_the_loop_ends_there(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    # noop is TERMINAL: the loop ends right after the call, so the prose is all we have.
    scripted.enqueue('Nothing to do here, friend.\n{"name": "noop", "arguments": {}}')
    assistant.enqueue_event("Just saying hi", source_entity="Alice")
    result = await assistant.tick()
    assert result.loop is not None
    assert result.loop.stopped_by == "terminal_tool"
    assert result.reply == "Nothing to do here, friend."
    assert len(scripted.history) == 1


async def test_prose_is_dropped_when_the_model_answers_again(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    scripted.enqueue(
        "Let me check my status first.\n"
        + json.dumps({"name": "get_system_status", "arguments": {}})
    )
    scripted.enqueue("All is well.")
    assistant.enqueue_event("How are you?", source_entity="Alice")
    result = await assistant.tick()
    assert result.reply == "All is well."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (json.dumps({"name": "brew_potion", "arguments": {"kind": "ale"}}), "Unknown tool"),
        ('{"name": "add_goal", "arguments": {"description": "Resto', "cut off"),
        ('<tool_call>{"name": "add_goal", "arguments": {"descr</tool_call>', "cut off"),
        ('```json\n{"name": "add_goal", "arguments": {\'description\': 1}}\n```', "not valid JSON"),
        ('{"name": "add_goal", "arguments": ["Restock"]}', "not an object"),
        ("{'name': 'add_goal', 'arguments': {}}", "not valid JSON"),
        ('{"name": "Brew a potion!", "arguments": {}}', "is not a tool name"),
    ],
)
async def test_a_broken_or_unknown_text_call_fails_and_is_never_shown(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM, text: str, expected: str
) -> None:
    assistant = make_assistant(llm=scripted)
    scripted.enqueue(text)
    scripted.enqueue("Sorry, I could not do that.")
    assistant.enqueue_event("Please restock the cellar", source_entity="Alice")
    result = await assistant.tick()

    assert result.reply == "Sorry, I could not do that."
    assert assistant._core.read().all(Goal) == []
    assert result.loop is not None
    assert result.loop.invalid_calls == 1
    assert result.loop.valid_calls == 0
    # The model was told what was wrong, in the spec's error shape.
    answer = next(m for m in scripted.history[1].messages if m.role == "tool")
    error = json.loads(answer.content or "{}")
    assert error["success"] is False
    assert expected in error["error"]
    assert error["suggestion"]


async def test_a_text_call_to_a_tool_not_offered_here_is_refused(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    # Reflection offers only noop, add_journal_entry and review_journal.
    scripted.enqueue(json.dumps({"name": "add_goal", "arguments": GOAL}))
    scripted.enqueue("Reflected.")
    await assistant.run_context("reflection", task="Reflect on the day.")
    assert assistant._core.read().all(Goal) == []
    answer = next(m for m in scripted.history[1].messages if m.role == "tool")
    assert "not available in this context" in (answer.content or "")


async def test_ordinary_json_in_a_reply_is_left_alone(
    make_assistant: Callable[..., Assistant], scripted: ScriptedLLM
) -> None:
    assistant = make_assistant(llm=scripted)
    reply = 'The menu as JSON: {"name": "Ale", "price": 3}'
    scripted.enqueue(reply)
    assistant.enqueue_event("Menu please, as JSON", source_entity="Alice")
    result = await assistant.tick()
    assert result.reply == reply
    assert result.loop is not None
    assert result.loop.calls == []


def test_a_bare_name_object_is_a_call_only_when_it_names_a_tool() -> None:
    assert scan_text_calls('{"name": "noop"}', ["noop"]).calls[0].arguments == {}
    assert not scan_text_calls('{"name": "Alice"}', ["noop"]).found


def test_a_list_of_calls_in_a_fence_is_every_call() -> None:
    text = (
        "```json\n"
        + json.dumps([{"name": "noop", "arguments": {}}, {"name": "add_goal", "arguments": GOAL}])
        + "\n```\nthanks"
    )
    scan = scan_text_calls(text, ["noop", "add_goal"])
    assert [c.name for c in scan.calls] == ["noop", "add_goal"]
    assert scan.prose == "thanks"


def test_deeply_nested_text_is_a_problem_not_a_crash() -> None:
    text = '{"name": "add_goal", "arguments": ' + "[" * 100_000 + "]" * 100_000 + "}"
    scan = scan_text_calls(text, ["add_goal"])
    assert scan.calls[0].problem is not None
