"""Goal tools: add_goal, update_goal, decompose_goal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import Field

from mindspace.llm.port import Message
from mindspace.tools.base import Tool, ToolArgs, ToolCategory, ToolContext
from mindspace.tools.limits import Identifier, Limit

__all__ = ["AddGoal", "DecomposeGoal", "UpdateGoal"]


class AddGoalArgs(ToolArgs):
    description: Annotated[str, Limit("max_goal_description_chars")] = Field(
        description="What should be achieved."
    )
    priority: Literal["high", "medium", "low"] = Field(default="medium")
    parent_id: Identifier | None = Field(
        default=None, description="Make it a subtask of this goal."
    )


class AddGoal(Tool[AddGoalArgs]):
    name = "add_goal"
    description = "Add a goal to track, with an optional priority (and parent goal)."
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: AddGoalArgs) -> dict[str, Any]:
        goal = ctx.goals.add(args.description, args.priority, parent_id=args.parent_id)
        return {
            "success": True,
            "goal_id": goal.id,
            "goal": goal.to_spec(),
            "message": "Goal added",
        }


class UpdateGoalArgs(ToolArgs):
    goal_id: Identifier
    status: Literal["active", "completed", "abandoned"] | None = None
    progress: float | None = Field(default=None, ge=0, le=100, description="Percent done, 0-100.")


class UpdateGoal(Tool[UpdateGoalArgs]):
    name = "update_goal"
    description = (
        "Update a goal's status or progress. Parent goals roll up the average of their "
        "subtasks and complete when all subtasks are completed."
    )
    category = ToolCategory.SAFE_CHAIN

    async def execute(self, ctx: ToolContext, args: UpdateGoalArgs) -> dict[str, Any]:
        update = ctx.goals.update(args.goal_id, status=args.status, progress=args.progress)
        return {
            "success": True,
            "goal_id": update.goal.id,
            "message": "Goal updated",
            "goal": update.goal.to_spec(),
            "rolled_up": [
                {"goal_id": g.id, "progress": g.to_spec()["progress"], "status": g.status}
                for g in update.ancestors
            ],
            "completed": [g.id for g in update.newly_completed],
        }


class DecomposeGoalArgs(ToolArgs):
    goal_id: Identifier


class DecomposeGoal(Tool[DecomposeGoalArgs]):
    name = "decompose_goal"
    description = "Break an active goal into 3-7 actionable subtasks (uses the language model)."
    category = ToolCategory.ASYNC_REQUIRED

    async def execute(self, ctx: ToolContext, args: DecomposeGoalArgs) -> dict[str, Any]:
        side = ctx.side
        first = None
        if side is not None:
            # The question runs in the goal_decompose context (spec 002 §1): its
            # components, its empty tool filter and its single iteration.
            unit = ctx.unit

            async def first(prompt: str) -> tuple[Sequence[Message], str]:
                outcome = await side.run_context(unit, "goal_decompose", prompt)
                return outcome.messages, outcome.reply or ""

        done = await ctx.goals.decompose(args.goal_id, ctx.llm, first)
        return {
            "success": True,
            "goal_id": args.goal_id,
            "subtasks_created": len(done.subtasks),
            "subtasks": [{"id": g.id, "description": g.description} for g in done.subtasks],
            "structured": done.obtained,
        }
