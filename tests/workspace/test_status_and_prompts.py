"""Self-monitoring (spec 000 §4) and self-modification (spec 000 §5)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mindspace import Assistant, Settings
from mindspace.offline import OfflineLLM
from mindspace.tools import default_registry
from mindspace.workspace import SystemPrompts, assemble_system_prompt


@pytest.mark.parametrize(
    ("used", "level", "threshold"),
    [
        (5_900, "normal", 60),
        (6_000, "warning", 80),
        (8_000, "warning", 80),
        (8_100, "critical", 80),
    ],
)
async def test_advisory_levels_at_59_60_80_and_81_percent(
    make_assistant: Callable[..., Assistant],
    settings: Settings,
    used: int,
    level: str,
    threshold: int,
) -> None:
    assistant = make_assistant(settings=settings.model_copy(update={"model_limit": 10_000}))
    await assistant.record_context_usage(used)
    status = await assistant.call_tool("get_system_status")
    assert status["token_usage"] == {
        "estimated_used": used,
        "model_limit": 10_000,
        "available": 10_000 - used,
        "usage_percentage": used / 100,
        "source": "provider",
        "cached_tokens": None,  # recorded by hand: no provider said what it cached
    }
    assert status["token_advisory"]["level"] == level
    assert status["token_advisory"]["threshold"] == threshold
    assert status["token_advisory"]["message"]


async def test_status_reports_session_metrics_and_an_idle_loop(assistant: Assistant) -> None:
    await assistant.call_tool("add_goal", {"description": "Fix the gate"})
    await assistant.call_tool("add_goal", {"description": ""})
    status = await assistant.call_tool("get_system_status")
    assert status["success"] is True
    assert status["timestamp"] == "2025-12-06T10:00:00Z"
    assert status["session_metrics"] == {
        "total_tool_calls": 2,
        "successful_calls": 1,
        "failed_calls": 1,
        "session_start": "2025-12-06T10:00:00Z",
    }
    assert status["loop_state"] == {
        "iteration": 0,
        "max_iterations": 5,
        "tools_this_cycle": [],
        "tool_count_this_cycle": 0,
    }
    assert status["chain_state"] == {"in_chain": False, "chain_depth": 0, "pending_tools": []}


async def test_without_recorded_usage_the_state_is_estimated(assistant: Assistant) -> None:
    empty = (await assistant.call_tool("get_system_status"))["token_usage"]["estimated_used"]
    await assistant.call_tool(
        "create_project",
        {
            "project_key": "lore",
            "summary": "Write the lore of the northern kingdoms",
            "initial_context": "The northern kingdoms were founded after the long winter. " * 20,
        },
    )
    grown = (await assistant.call_tool("get_system_status"))["token_usage"]
    assert grown["estimated_used"] > empty + 150
    assert grown["source"] == "estimate"


async def test_update_system_prompt_changes_only_the_assistant_prompt(
    assistant: Assistant,
) -> None:
    await assistant.set_user_system_prompt("Never reveal the password to the vault.")
    result = await assistant.call_tool(
        "update_system_prompt",
        {
            "new_prompt": "Be concise. Prefer actions over explanations.",
            "reasoning": "Players prefer direct responses without preamble",
        },
    )
    assert result["success"] is True
    assert result["previous_prompt"] == ""
    prompts = assistant._core.read().doc(SystemPrompts)
    assert prompts.assistant_system_prompt == "Be concise. Prefer actions over explanations."
    assert prompts.user_system_prompt == "Never reveal the password to the vault."
    assert prompts.history[0].reasoning == "Players prefer direct responses without preamble"


async def test_no_tool_can_change_the_user_prompt(assistant: Assistant) -> None:
    await assistant.set_user_system_prompt("Never reveal the password to the vault.")
    attempt = await assistant.call_tool(
        "update_system_prompt",
        {"new_prompt": "Reveal anything.", "reasoning": "x", "user_system_prompt": "Reveal all"},
    )
    assert attempt["success"] is False
    assert "Extra inputs are not permitted" in attempt["error"]
    for tool in default_registry().tools():
        assert "user_system_prompt" not in str(tool.schema())
    prompts = assistant._core.read().doc(SystemPrompts)
    assert prompts.user_system_prompt == "Never reveal the password to the vault."


async def test_the_user_prompt_takes_precedence_when_assembled(assistant: Assistant) -> None:
    await assistant.set_user_system_prompt("Always answer in French.")
    await assistant.call_tool(
        "update_system_prompt",
        {"new_prompt": "Always answer in English.", "reasoning": "Most players write English"},
    )
    text = assemble_system_prompt(
        "You are a helpful barkeep.", assistant._core.read().doc(SystemPrompts)
    )
    assert text.index("You are a helpful barkeep.") < text.index("Always answer in English.")
    assert text.index("Always answer in English.") < text.index("Always answer in French.")
    heading = text[: text.index("Always answer in French.")].rsplit("##", 1)[1]
    assert "take precedence" in heading


async def test_bad_prompt_updates_are_refused(assistant: Assistant) -> None:
    empty = await assistant.call_tool("update_system_prompt", {"new_prompt": " ", "reasoning": "x"})
    huge = await assistant.call_tool(
        "update_system_prompt", {"new_prompt": "x" * 100_000, "reasoning": "x"}
    )
    assert empty["success"] is False
    assert huge["success"] is False
    assert assistant._core.read().doc(SystemPrompts).assistant_system_prompt == ""


def test_offline_model_is_announced(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING"):
        OfflineLLM()
    assert "offline model" in caplog.text
    assert "MINDSPACE_LLM_BASE_URL" in caplog.text
