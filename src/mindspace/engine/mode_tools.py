"""The assistant's own way to sleep: the ``go_to_sleep`` tool.

It lives in the engine (modes are engine state) and the Assistant registers it, so the
tools package keeps pointing inward.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from mindspace.engine.modes import OperatingMode, SleepSchedule, transition_mode
from mindspace.tools.base import Tool, ToolArgs, ToolCategory, ToolContext, empty_argument
from mindspace.tools.limits import ShortText

__all__ = ["GoToSleep"]


class GoToSleepArgs(ToolArgs):
    reason: ShortText = Field(description="Why now, e.g. 'the tavern is closed for the night'.")
    deep: bool = Field(
        default=False,
        description="Deep sleep ignores urgent events; it still ends at the wake time.",
    )


class GoToSleep(Tool[GoToSleepArgs]):
    name = "go_to_sleep"
    description = (
        "Go to sleep after this turn: memories are consolidated and reflected on. You wake "
        "at the sleep schedule's wake hour (or after a few hours without one); urgent "
        "events wake you earlier unless you sleep deeply."
    )
    category = ToolCategory.TERMINAL

    async def execute(self, ctx: ToolContext, args: GoToSleepArgs) -> dict[str, Any]:
        reason = args.reason.strip()
        if not reason:
            return empty_argument("reason", "Say why.")
        current = ctx.unit.doc(OperatingMode)
        if current.mode == "sleep":
            return {
                "success": True,
                "mode": "sleep",
                "wake_at": current.wake_at,
                "message": f"Already asleep; waking at {current.wake_at}",
            }
        state = transition_mode(
            ctx.unit,
            ctx.clock,
            "sleep",
            reason,
            depth="deep" if args.deep else "light",
            default_hours=ctx.settings.sleep_default_hours,
        )
        schedule = ctx.unit.doc(SleepSchedule)
        if schedule.enabled:
            # Spec 003's wake step restores a schedule the tool disabled: the schedule is
            # paused for a sleep the assistant chose, and waking (however it comes)
            # turns it back on.
            ctx.unit.put_doc(schedule.model_copy(update={"enabled": False}))
            state = state.model_copy(update={"schedule_suspended": True})
            ctx.unit.put_doc(state)
        return {
            "success": True,
            "mode": state.mode,
            "sleep_phase": state.sleep_phase,
            "sleep_depth": state.sleep_depth,
            "wake_at": state.wake_at,
            "message": f"Going to sleep after this turn; waking at {state.wake_at}",
        }
