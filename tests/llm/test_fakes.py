"""The LLM fakes shipped in the package, and the offline model's decomposition."""

from __future__ import annotations

import json

import pytest

from mindspace.errors import LLMError, LLMProviderError
from mindspace.llm import FunctionLLM, LLMResponse, Message, ScriptedLLM
from mindspace.offline import OfflineLLM
from mindspace.offline.model import OFFLINE_MODEL_NAME, decompose_text


async def test_scripted_llm_plays_replies_in_order_and_records_requests() -> None:
    llm = ScriptedLLM()
    llm.enqueue(tool_calls=[{"name": "add_goal", "arguments": {"description": "Fix the gate"}}])
    llm.enqueue("Done.")
    llm.enqueue_error(LLMProviderError("boom"))
    tools = [{"type": "function", "function": {"name": "add_goal"}}]

    first = await llm.complete([Message("user", "Please fix the gate")], tools)
    assert first.tool_calls[0].name == "add_goal"
    assert json.loads(first.tool_calls[0].arguments) == {"description": "Fix the gate"}
    assert (await llm.complete([Message("user", "ok?")])).text == "Done."
    with pytest.raises(LLMProviderError):
        await llm.complete([Message("user", "again")])
    with pytest.raises(LLMError, match="enqueue"):
        await llm.complete([Message("user", "more")])

    assert [call.last_user_text for call in llm.history] == [
        "Please fix the gate",
        "ok?",
        "again",
        "more",
    ]
    assert llm.history[0].tool_names == ["add_goal"]


async def test_function_llm_accepts_sync_and_async_functions() -> None:
    def sync(messages: object, tools: object) -> str:
        return "plain"

    async def asynchronous(messages: object, tools: object) -> LLMResponse:
        return LLMResponse(text="rich", model="m")

    assert (await FunctionLLM(sync).complete([Message("user", "x")])).text == "plain"
    assert (await FunctionLLM(asynchronous).complete([Message("user", "x")])).model == "m"


async def test_offline_model_says_what_it_is_and_is_deterministic() -> None:
    llm = OfflineLLM(announce=False)
    prompt = "Break down this goal into 3-7 actionable subtasks:\nGoal: Build a complete tavern"
    first = await llm.complete([Message("user", prompt)])
    second = await llm.complete([Message("user", prompt)])
    assert first.model == OFFLINE_MODEL_NAME
    assert first.text == second.text
    assert 3 <= len(json.loads(first.text or "")) <= 7
    other = await llm.complete([Message("user", "What is the weather?")])
    assert other.text is not None
    assert "offline" in other.text


@pytest.mark.parametrize(
    "goal",
    [
        "Build a complete tavern",
        "Build a tavern with a bar, a kitchen and three guest rooms",
        "Design the main quest line",
        "Find the lost amulet",
        "Fix the north gate",
        "Host a harvest festival",
        "Keep the peace",
    ],
)
def test_offline_decomposition_always_gives_three_to_seven_distinct_steps(goal: str) -> None:
    steps = decompose_text(goal)
    assert 3 <= len(steps) <= 7
    assert len(set(steps)) == len(steps)


def test_a_listed_goal_is_split_into_its_parts() -> None:
    steps = decompose_text("Build a tavern with a bar, a kitchen and three guest rooms")
    assert "Build a bar" in steps
    assert "Build three guest rooms" in steps
