"""System tools: get_system_status, update_system_prompt, noop."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mindspace.tools.base import NoArgs, Tool, ToolArgs, ToolCategory, ToolContext
from mindspace.tools.limits import Limit
from mindspace.workspace.status import build_status

__all__ = ["GetSystemStatus", "Noop", "UpdateSystemPrompt"]


class GetSystemStatus(Tool[NoArgs]):
    name = "get_system_status"
    description = (
        "Report token usage with an advisory level, the loop state, session metrics and "
        "chain state, to decide how much more to do."
    )
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: NoArgs) -> dict[str, Any]:
        return build_status(ctx.unit, ctx.clock, ctx.settings, ctx.loop)


class UpdateSystemPromptArgs(ToolArgs):
    new_prompt: Annotated[str, Limit("max_system_prompt_chars")] = Field(
        description="Your complete new behavioural guidelines."
    )
    reasoning: Annotated[str, Limit("max_session_memory_chars")] = Field(
        description="Why the change helps."
    )


class UpdateSystemPrompt(Tool[UpdateSystemPromptArgs]):
    name = "update_system_prompt"
    description = (
        "Replace your own behavioural guidelines. The user's system prompt cannot be "
        "changed and always takes precedence."
    )
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: UpdateSystemPromptArgs) -> dict[str, Any]:
        update = ctx.prompts.update_assistant_prompt(args.new_prompt, args.reasoning)
        return {
            "success": True,
            "message": "Assistant system prompt updated",
            "previous_prompt": update.previous,
            "new_prompt": update.current,
            "reasoning": args.reasoning.strip(),
            "note": "The user's system prompt is unchanged and takes precedence.",
        }


class Noop(Tool[NoArgs]):
    name = "noop"
    description = "Do nothing this turn (nothing needs doing)."
    category = ToolCategory.TERMINAL

    async def execute(self, ctx: ToolContext, args: NoArgs) -> dict[str, Any]:
        return {"success": True, "message": "Nothing done"}
