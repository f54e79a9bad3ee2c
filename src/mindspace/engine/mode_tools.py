"""The assistant's own way to sleep: the ``go_to_sleep`` tool.

It lives in the engine (modes are engine state) and the Assistant registers it, so the
tools package keeps pointing inward.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from mindspace.engine.modes import OperatingMode, transition_mode
from mindspace.tools.base import Tool, ToolArgs, ToolCategory, ToolContext
from mindspace.tools.limits import ShortText

__all__ = ["GoToSleep"]


class GoToSleepArgs(ToolArgs):
    reason: ShortText = Field(description="Why now, e.g. 'the tavern is closed for the night'.")
    deep: bool = Field(
        default=False, description="Deep sleep ignores urgent events (only the schedule wakes it)."
    )


class GoToSleep(Tool[GoToSleepArgs]):
    name = "go_to_sleep"
    description = (
        "Go to sleep after this turn: memories are consolidated and reflected on. Urgent "
        "events wake you unless you sleep deeply."
    )
    category = ToolCategory.TERMINAL
    args_model = GoToSleepArgs

    async def execute(self, ctx: ToolContext, args: GoToSleepArgs) -> dict[str, Any]:
        reason = args.reason.strip()
        if not reason:
            return {"success": False, "error": "'reason' is empty", "suggestion": "Say why."}
        if ctx.unit.doc(OperatingMode).mode == "sleep":
            return {"success": True, "mode": "sleep", "message": "Already asleep"}
        state = transition_mode(
            ctx.unit, ctx.clock, "sleep", reason, depth="deep" if args.deep else "light"
        )
        return {
            "success": True,
            "mode": state.mode,
            "sleep_phase": state.sleep_phase,
            "sleep_depth": state.sleep_depth,
            "message": "Going to sleep after this turn",
        }
